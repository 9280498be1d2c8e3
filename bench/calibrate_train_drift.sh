#!/bin/sh
# How far two runs of tests/cli/cuda_train.sh's recipe drift apart on the CPU when they differ
# only in the order of their float sums: OpenBLAS's kernels (OPENBLAS_CORETYPE), the thread
# count. Prints each variant's loss curve against the first, as cuda_train.sh compares the GPU
# with the CPU, so its bounds can be set from data (tests/cli/loss_curves.inc). Run it on a quiet
# CPU machine (about a minute a run); a failing comparison here means the bounds are too tight.
#   BB=bin/bigbatch bench/calibrate_train_drift.sh
# CALIBRATE_PRECISION=bf16 (or fp16): the reference stays the first variant in fp32, and every
# variant runs in that precision against it (tests/cli/cuda_train_bf16.sh's bounds).
cd "$(dirname "$0")/.." || exit 1
. tests/cli/lib.inc
. tests/cli/loss_curves.inc
recipe() {
    "$BB" train --model resnet20 --data synthetic --train-subset 1000 --test-subset 100 --batch 50 \
        --epochs 10 --lr 0.01 --momentum 0.9 --seed 3 --quiet --device cpu "$@"
}
status=0
precision=${CALIBRATE_PRECISION:-fp32} bounds=
if [ "$precision" != fp32 ]; then
    OPENBLAS_CORETYPE=Haswell recipe --threads 2 >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "the fp32 reference failed"; }
    loss_curve "$TMP/out" >"$TMP/reference"
    echo "reference: Haswell:2 in fp32; the variants in $precision"
    bounds="1e-2 0.12 0.05" # tests/cli/cuda_train_bf16.sh's
fi
# core type and threads of each variant; the first is the reference (in fp32)
for v in Haswell:2 Sandybridge:2 Prescott:2 Haswell:1 Sandybridge:1; do
    core=${v%:*} threads=${v#*:}
    OPENBLAS_CORETYPE=$core recipe --threads "$threads" --precision "$precision" >"$TMP/out" 2>&1 ||
        { cat "$TMP/out"; fail "$v failed"; }
    loss_curve "$TMP/out" >"$TMP/$core-$threads"
    [ -f "$TMP/reference" ] || { cp "$TMP/$core-$threads" "$TMP/reference"; echo "reference: $v"; continue; }
    echo "$v against the reference:"
    compare_loss_curves "$TMP/reference" "$TMP/$core-$threads" reference "$v" $bounds || status=1
done
exit $status
