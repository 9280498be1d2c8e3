#!/bin/sh
# How far two runs of tests/cli/cuda_train.sh's recipe drift apart on the CPU when they differ
# only in the order of their float sums: OpenBLAS's kernels (OPENBLAS_CORETYPE), the thread
# count. Prints each variant's loss curve against the first, as cuda_train.sh compares the GPU
# with the CPU, so its bounds can be set from data (tests/cli/loss_curves.inc). Run it on a quiet
# CPU machine (about a minute a run); a failing comparison here means the bounds are too tight.
#   BB=bin/bigbatch bench/calibrate_train_drift.sh
cd "$(dirname "$0")/.." || exit 1
. tests/cli/lib.inc
. tests/cli/loss_curves.inc
recipe() {
    "$BB" train --model resnet20 --data synthetic --train-subset 1000 --test-subset 100 --batch 50 \
        --epochs 10 --lr 0.01 --momentum 0.9 --seed 3 --quiet --device cpu "$@"
}
status=0
# core type and threads of each variant; the first is the reference
for v in Haswell:2 Sandybridge:2 Prescott:2 Haswell:1 Sandybridge:1; do
    core=${v%:*} threads=${v#*:}
    OPENBLAS_CORETYPE=$core recipe --threads "$threads" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "$v failed"; }
    loss_curve "$TMP/out" >"$TMP/$core-$threads"
    [ -f "$TMP/reference" ] || { cp "$TMP/$core-$threads" "$TMP/reference"; echo "reference: $v"; continue; }
    echo "$v against the reference:"
    compare_loss_curves "$TMP/reference" "$TMP/$core-$threads" reference "$v" || status=1
done
exit $status
