#!/bin/sh
# How far two runs of tests/cli/cuda_micro_batch.sh's recipe (micro_recipe in tests/cli/cuda.inc:
# ResNet-8 at global batch 64 in micro-batches of 16) differ on the CPU when they differ only in
# the order of their float sums (OpenBLAS's kernels, OPENBLAS_CORETYPE; the thread count, which
# changes nothing in this engine), so the test's bounds can be set from data: after one step, the
# largest relative difference of a checkpoint tensor (`bigbatch compare`), and over 3 epochs of 8
# steps, each epoch's train loss (tests/cli/loss_curves.inc). Then the same against the run
# without micro-batches (batch norm over 64 images, not 16): what a GPU that ignored the
# micro-batches would show, which the bounds must catch. About a minute a variant on 2 cores.
#   BB=bin/bigbatch bench/calibrate_micro_drift.sh
cd "$(dirname "$0")/.." || exit 1
. tests/cli/lib.inc
. tests/cli/loss_curves.inc
. tests/cli/cuda.inc
largest() { "$BB" compare "$1" "$2" --tol 1 | sed -n 's/^largest relative difference \([^ ]*\) .*/\1/p'; }
# variant NAME CORE THREADS ARGS...: its one-step checkpoint and its 3-epoch loss curve
# (CORE "": the machine's own kernels)
variant() {
    name=$1 core=$2 threads=$3; shift 3
    (   [ -z "$core" ] || export OPENBLAS_CORETYPE="$core"
        micro_recipe --device cpu --threads "$threads" --steps 1 --save "$TMP/$name.st" "$@" >"$TMP/out" 2>&1 ||
            { cat "$TMP/out"; fail "$name: one step failed"; }
        micro_recipe --device cpu --threads "$threads" --epochs 3 "$@" >"$TMP/out" 2>&1 ||
            { cat "$TMP/out"; fail "$name: 3 epochs failed"; }
    ) || exit 1
    loss_curve "$TMP/out" >"$TMP/$name.loss"
}
variant reference "" 2
for v in Haswell:2 SkylakeX:2 Sandybridge:2 Prescott:1; do
    core=${v%:*} threads=${v#*:}
    variant "$core$threads" "$core" "$threads"
    echo "$v: one step, largest relative difference $(largest "$TMP/reference.st" "$TMP/$core$threads.st")"
    compare_loss_curves "$TMP/reference.loss" "$TMP/$core$threads.loss" reference "$v"
done
# what the bounds must catch: batch norm over the global batch instead of each micro-batch
variant whole "" 2 --micro-batch 64
echo "no micro-batches: one step, largest relative difference $(largest "$TMP/reference.st" "$TMP/whole.st")"
compare_loss_curves "$TMP/reference.loss" "$TMP/whole.loss" reference "batch 64 whole"
exit 0
