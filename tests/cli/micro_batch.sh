# Gradient accumulation over micro-batches: without BN, 4 micro-batches of 32 train like one
# batch of 128 (to float rounding), with or without dropout; the noise scale is reported.
# One epoch (32 steps): over two, rounding differences between the sgemm shapes grew into a
# 0.02 test-loss difference with some OpenBLAS kernel sets (SkylakeX, Prescott) and not others;
# after 32 steps every kernel set agrees to the printed digits, and a quarter LR differs by 0.6.
. tests/cli/lib.inc
run() { $BB train --model lenet --data fashion-mnist --train-subset 4096 --test-subset 1000 --epochs 1 \
        --batch 128 --lr 0.05 --momentum 0.9 --quiet "$@"; }
run > "$TMP/full" || fail "full batch run"
run --micro-batch 32 > "$TMP/micro" || fail "micro-batch run"
run --workers-emulated 4 > "$TMP/workers" || fail "emulated workers run"
awk 'FNR == 1 { f++ } /^final/ { split($0, a, /[= ]/); acc[f] = a[3]; loss[f] = a[5]; tl[f] = a[7] }
     END { bad = 0
           for (i = 2; i <= 3; i++) {
               if ((loss[i] - loss[1]) ^ 2 > 1e-5 || (tl[i] - tl[1]) ^ 2 > 1e-6) bad = 1
               print "run " i ": test_loss " loss[i] " vs " loss[1] ", train_loss " tl[i] " vs " tl[1] }
           exit bad }' "$TMP/full" "$TMP/micro" "$TMP/workers" || fail "micro-batches differ from the full batch"
# With dropout (alexnet-cifar has no BN): 4 micro-batches draw the masks of the whole batch,
# each element by its place in the batch (with a stream per micro-batch they differed by 1.5
# relative after 4 steps; now by about 2e-6, float rounding)
ax="--model alexnet-cifar --data synthetic --steps 4 --batch 32 --lr 0.05 --momentum 0.9 --threads 1 --quiet"
expect_exit 0 $BB train $ax --save "$TMP/ax-full.st"
expect_exit 0 $BB train $ax --micro-batch 8 --save "$TMP/ax-micro.st"
expect_exit 0 $BB compare "$TMP/ax-full.st" "$TMP/ax-micro.st" --model alexnet-cifar --tol 1e-4
expect_exit 0 $BB train --model lenet --data fashion-mnist --train-subset 8192 --test-subset 500 --epochs 1 \
    --batch 512 --workers-emulated 8 --noise-scale --lr 0.1 --momentum 0.9 --quiet
expect_output 'B_simple'
awk '$1 == 1 && NF == 11 { ok = ($11 > 0 && $11 < 1e6) } END { exit !ok }' "$TMP/out" || { cat "$TMP/out"; fail "no B_simple"; }
expect_exit 2 $BB train --model lenet --data fashion-mnist --batch 128 --micro-batch 48
expect_output "\-\-batch 128 is not divisible by --micro-batch 48"
expect_exit 2 $BB train --model lenet --data fashion-mnist --batch 128 --noise-scale
expect_output "\-\-noise-scale needs --micro-batch"
expect_exit 2 $BB train --batch 128 --workers-emulated 3
