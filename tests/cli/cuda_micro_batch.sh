# Micro-batches on the GPU against the CPU (issue 60 item 3; make test-gpu GPU=1): ResNet-8 at
# global batch 64 in micro-batches of 16 (tests/cli/cuda.inc's micro_recipe: synthetic data, SGD
# lr 0.05, momentum 0.9): batch norm normalizes each micro-batch on its own, as 4 workers would,
# and the 4 gradients are accumulated into one update. The GPU's run must match the CPU's:
#   one step: every tensor of the two checkpoints within 1e-2 of its largest value (bigbatch
#     compare). A batch norm's bias starts at 0, so after one step it is the step's gradient
#     times -lr: the comparison sees the gradient itself, not a small change to a weight.
#   3 epochs of 8 steps: each epoch's mean train loss within tests/cli/loss_curves.inc's bounds
#     (2e-3 relative in epoch 1, 10% in epochs 2-3, 3% their mean).
# Calibrated as cuda_train.sh was (bench/calibrate_micro_drift.sh, 2026-12-07): runs on the CPU
# that differ only in the order of their float sums (OpenBLAS's Haswell, SkylakeX, Sandybridge and
# Prescott kernels, 1 and 2 threads) differed by at most 7e-7 after one step and 1.6e-4 in any
# epoch. A GPU's operations differ from the CPU's by more: on this model up to 5.6e-4 of a
# tensor's scale in one operation (fc backward weight, the H200 run of tests/test_backend_ops.c,
# docs/performance.md), compounding over the layers of a backward pass, hence 1e-2 after one
# step; the loss bounds are cuda_train.sh's, which its H200 run met at 1.3e-3 in epoch 1. What
# the bounds must catch, measured there too: without micro-batches (batch norm over all 64) the
# CPU's run differs by 0.78 after one step and 1.3e-2 in epoch 1 (43% by epoch 3); the script
# checks that margin on every run, so it cannot pass by comparing nothing.
# Skipped (exit 77, saying why) where the build has no CUDA or the machine no GPU.
. tests/cli/lib.inc
. tests/cli/loss_curves.inc
. tests/cli/cuda.inc
need_cuda
largest() { "$BB" compare "$1" "$2" --tol 1 | sed -n 's/^largest relative difference \([^ ]*\) .*/\1/p'; }

# one step: the GPU against the CPU, and the CPU against its own run without micro-batches
for d in cpu cuda; do
    micro_recipe --device $d --steps 1 --save "$TMP/$d.st" >"$TMP/$d.step" 2>&1 ||
        { cat "$TMP/$d.step"; fail "one step on $d failed"; }
done
micro_recipe --device cpu --steps 1 --micro-batch 64 --save "$TMP/whole.st" >"$TMP/whole.step" 2>&1 ||
    { cat "$TMP/whole.step"; fail "one step without micro-batches failed"; }
"$BB" compare "$TMP/cpu.st" "$TMP/cuda.st" --tol 1e-2 >"$TMP/compare" 2>&1
rc=$?
grep -v '^largest' "$TMP/compare" | sort -g -k5 | tail -n 3
grep '^largest' "$TMP/compare"
[ "$rc" -eq 0 ] || fail "one step at batch 64 in micro-batches of 16: the GPU's checkpoint differs from the CPU's beyond 1e-2"
whole=$(largest "$TMP/cpu.st" "$TMP/whole.st")
echo "the CPU without micro-batches: largest relative difference $whole"
awk -v w="$whole" 'BEGIN { exit !(w > 0.1) }' ||
    fail "micro-batches changed the CPU's step by only $whole: the 1e-2 bound cannot tell them apart"

# 3 epochs: the loss curves
micro_recipe --device cpu --epochs 3 >"$TMP/cpu" 2>&1 || { cat "$TMP/cpu"; fail "the CPU's 3 epochs failed"; }
micro_recipe --device cuda --epochs 3 >"$TMP/gpu" 2>&1 || { cat "$TMP/gpu"; fail "the GPU's 3 epochs failed"; }
loss_curve "$TMP/cpu" >"$TMP/cpu.loss"
loss_curve "$TMP/gpu" >"$TMP/gpu.loss"
[ "$(wc -l <"$TMP/cpu.loss")" -eq 3 ] || { cat "$TMP/cpu"; fail "the CPU run printed $(wc -l <"$TMP/cpu.loss") epochs, not 3"; }
compare_loss_curves "$TMP/cpu.loss" "$TMP/gpu.loss" cpu cuda || fail "the loss curves differ beyond the tolerance"
