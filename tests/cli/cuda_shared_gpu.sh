#!/bin/sh
# Two ranks on one GPU (mpirun -np 2 with --device cuda:0): NCCL refuses two ranks on one
# device, so their gradient buckets (and BN sums with --sync-bn) go through MPI from page-locked
# host memory, overlapped with backward as on the CPU, and the run's first line says so. Each
# gives its one-rank equivalent's loss curve within the tolerance the CPU's MPI tests use
# (tests/cli/loss_curves.inc): without --sync-bn each rank's BN sees its 25 images, as one rank
# with --workers-emulated 2 (against the whole batch's BN the CPU's runs differ by 2.4e-2 in epoch
# 1, beyond the 2e-3 bound); with --sync-bn, one rank with the whole batch. Skipped (exit 77,
# saying why) without an MPI build, mpirun or a GPU; on the CPU the same host path runs in
# mpi_ranks.sh, under the guarded backend in CI.
. tests/cli/lib.inc
. tests/cli/loss_curves.inc
. tests/cli/cuda.inc
if "$BB" version | grep -q "without MPI" || ! command -v mpirun >/dev/null; then
    echo "skipped: two ranks on one GPU need an MPI build and mpirun"
    exit 77
fi
need_cuda
recipe --device cuda:0 >"$TMP/one" 2>&1 || { cat "$TMP/one"; fail "the 1-rank run failed"; }
loss_curve "$TMP/one" >"$TMP/one--sync-bn.loss"
recipe --device cuda:0 --workers-emulated 2 >"$TMP/one" 2>&1 || { cat "$TMP/one"; fail "the 1-rank run of 2 workers failed"; }
loss_curve "$TMP/one" >"$TMP/one.loss"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for bn in "" --sync-bn; do
    mpirun --oversubscribe -np 2 "$BB" train --model resnet20 --data synthetic --train-subset 1000 --test-subset 100 \
        --batch 50 --epochs 10 --lr 0.01 --momentum 0.9 --seed 3 --threads 2 --device cuda:0 $bn >"$TMP/two" 2>&1 ||
        { cat "$TMP/two"; fail "2 ranks on one GPU failed ($bn)"; }
    grep -q "ranks share a GPU: sums through MPI from page-locked host memory" "$TMP/two" ||
        { cat "$TMP/two"; fail "the run's first line does not say the ranks share a GPU ($bn)"; }
    loss_curve "$TMP/two" >"$TMP/two.loss"
    compare_loss_curves "$TMP/one$bn.loss" "$TMP/two.loss" "1 rank" "2 ranks on one GPU $bn" ||
        fail "2 ranks on one GPU differ from 1 beyond the tolerance ($bn)"
done
exit 0
