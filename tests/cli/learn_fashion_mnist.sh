# A learning test on real data: lenet on a Fashion-MNIST subset gets well above
# chance (10%) in two short epochs.
. tests/cli/lib.inc
expect_exit 0 $BB train --model lenet --data fashion-mnist --train-subset 8000 --test-subset 2000 \
    --epochs 2 --batch 64 --lr 0.05 --momentum 0.9 --weight-decay 5e-4 --seed 3 --quiet
acc=$(sed -n 's/^final test_acc=\([0-9.]*\).*/\1/p' "$TMP/out")
[ -n "$acc" ] || { cat "$TMP/out"; fail "no final line"; }
awk -v a="$acc" 'BEGIN { exit !(a >= 0.70) }' || { cat "$TMP/out"; fail "test accuracy $acc < 0.70"; }
