# The LR column follows the schedule, evaluated per iteration: linear scaling rule
# (0.1 * 100/50 = 0.2), then poly power 2 over 40 iterations; each epoch line shows
# the LR of its last iteration, 0.2 * (1 - iter/40)^2 for iter = 9, 19, 29, 39.
. tests/cli/lib.inc
expect_exit 0 $BB train --model lenet --data fashion-mnist --train-subset 1000 --test-subset 200 \
    --epochs 4 --batch 100 --lr 0.1 --lr-scaling linear --base-batch 50 --lr-policy poly --poly-power 2 --quiet
awk '$1 ~ /^[1-4]$/ && NF == 10 {
        it = 10 * $1 - 1; want = 0.2 * (1 - it / 40) ^ 2
        if ((($8 - want) / want) ^ 2 > 1e-8) { print "epoch " $1 ": lr " $8 ", want " want; bad = 1 }
        n++
     }
     END { exit bad || n != 4 }' "$TMP/out" || { cat "$TMP/out"; fail "LR column differs from the closed form"; }
# warmup: linear from 0 to 0.1 over the first epoch (10 iterations): last iteration 9 -> 0.09
expect_exit 0 $BB train --model lenet --data fashion-mnist --train-subset 1000 --test-subset 200 \
    --epochs 2 --batch 100 --lr 0.1 --warmup-epochs 1 --quiet
awk '$1 == 1 && NF == 10 { exit !($8 == 0.09) }' "$TMP/out" || { cat "$TMP/out"; fail "warmup LR"; }
expect_exit 2 $BB train --lr-policy bogus
expect_output "\-\-lr-policy: 'bogus' is not one of"
expect_exit 2 $BB train --warmup-shape cubic
expect_exit 1 $BB train --model lenet --data fashion-mnist --train-subset 1000 --epochs 2 --warmup-epochs 3
expect_output "\-\-warmup-epochs 3 (21 iterations) is longer than training"
