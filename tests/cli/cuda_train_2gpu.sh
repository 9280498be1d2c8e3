# Two GPUs (an MPI build, mpirun and at least two GPUs): tests/cli/cuda_train.sh's recipe on 2
# ranks of 25 images, gradients (and, with --sync-bn, BN sums) on the GPUs with NCCL, with and
# without --sync-bn, against the same run on one GPU at the first epoch's tolerance (the sums
# run in another order; tests/cli/loss_curves.inc).
# Skipped (exit 77, saying why) where the node cannot run it: a run that cannot happen is never
# counted as passed.
. tests/cli/lib.inc
. tests/cli/loss_curves.inc
. tests/cli/cuda.inc
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if "$BB" version | grep -q "without MPI" || ! command -v mpirun >/dev/null || [ "$gpus" -lt 2 ]; then
    echo "skipped: the 2-GPU NCCL run needs an MPI build, mpirun and 2 GPUs ($gpus here)"
    exit 77
fi
need_cuda
recipe --device cuda >"$TMP/gpu" 2>&1 || { cat "$TMP/gpu"; fail "the 1-GPU run failed"; }
loss_curve "$TMP/gpu" >"$TMP/gpu.loss"
[ "$(wc -l <"$TMP/gpu.loss")" -eq 10 ] || { cat "$TMP/gpu"; fail "the 1-GPU run printed $(wc -l <"$TMP/gpu.loss") epochs, not 10"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for bn in "" --sync-bn; do
    mpirun --oversubscribe -np 2 "$BB" train --model resnet20 --data synthetic --train-subset 1000 --test-subset 100 \
        --batch 50 --epochs 10 --lr 0.01 --momentum 0.9 --seed 3 --threads 2 --device cuda $bn >"$TMP/nccl" 2>&1 ||
        { cat "$TMP/nccl"; fail "the 2-GPU run failed ($bn)"; }
    grep -q "sums on the devices" "$TMP/nccl" || { cat "$TMP/nccl"; fail "the 2-GPU run did not sum with NCCL ($bn)"; }
    loss_curve "$TMP/nccl" >"$TMP/nccl.loss"
    compare_loss_curves "$TMP/gpu.loss" "$TMP/nccl.loss" "1 GPU" "2 GPUs $bn" || fail "2 GPUs differ from 1 beyond the tolerance ($bn)"
done
