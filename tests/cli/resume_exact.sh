# A run resumed from a mid-epoch checkpoint repeats the uninterrupted run exactly:
# same per-epoch losses and accuracies and the same final line, to the last digit
# (fixed thread count). Covers shuffling, augmentation, dropout, BN statistics and
# the momentum buffers.
. tests/cli/lib.inc
check() {
    name=$1; shift
    $BB train "$@" --epochs 2 --quiet --threads 2 >"$TMP/$name.full" 2>&1 || fail "$name: full run"
    $BB train "$@" --epochs 2 --quiet --threads 2 --steps 13 --save "$TMP/$name.ckpt" >/dev/null 2>&1 || fail "$name: first part"
    [ -f "$TMP/$name.ckpt" ] || fail "$name: no checkpoint written"
    $BB train "$@" --epochs 2 --quiet --threads 2 --resume "$TMP/$name.ckpt" >"$TMP/$name.resumed" 2>&1 || fail "$name: resumed run"
    # epoch, step, train/test loss and accuracy, gap, lr: all but the timings
    full=$(awk '$1 == 2 { print $1, $2, $3, $4, $5, $6, $7, $8 }' "$TMP/$name.full")
    resumed=$(awk '$1 == 2 { print $1, $2, $3, $4, $5, $6, $7, $8 }' "$TMP/$name.resumed")
    [ -n "$full" ] && [ "$full" = "$resumed" ] || { cat "$TMP/$name.full" "$TMP/$name.resumed"; fail "$name: epoch 2 differs"; }
    [ "$(grep '^final' "$TMP/$name.full")" = "$(grep '^final' "$TMP/$name.resumed")" ] || fail "$name: final line differs"
}
check lenet --model lenet --data fashion-mnist --train-subset 1000 --test-subset 500 --batch 100 --lr 0.05 --momentum 0.9 --weight-decay 5e-4 --lr-policy poly --warmup-epochs 0.5
check alexbn --model alexnet-bn-cifar --data synthetic --augment on --train-subset 512 --test-subset 128 --batch 64 --lr 0.02 --momentum 0.9 --nesterov
# The divergence test's reference is the run's first step's loss, kept in the checkpoint: a
# resumed run judges by it too (judged by its own first step's, 1.05 x a loss already fallen
# to ~1.3 ended this one as diverged at step 59 where the uninterrupted run completes)
check reference --model lenet --data fashion-mnist --train-subset 2048 --test-subset 200 --batch 64 --lr 0.05 --momentum 0.9 --diverge-factor 1.05
grep -q 'status=diverged' "$TMP/reference.resumed" && fail "a resumed run judged divergence by its own first step"
exit 0
