# --opt and the LARS presets from the command line, and the per-layer table.
. tests/cli/lib.inc
# LARS (paper form) from zero momentum: every weight moves by exactly lr*eta of its norm
# on the first step without weight decay: ||dw|| = lr * eta * ||w|| / ||g|| * ||g||.
expect_exit 0 $BB train --model lenet --data synthetic --batch 32 --steps 1 --test-subset 32 \
    --opt lars --lr 0.5 --eta 0.002 --momentum 0.9 --weight-decay 0 --layer-stats --quiet
expect_output '^paper \[You et al. 2017.*then by hand: eta=0.002'
expect_output '^conv1.weight .* weight'
expect_output '^fc3.bias '
expect_output 'a spread of'
awk '$2 == "weight" && NF == 8 { n++; if (($8 - 0.001) ^ 2 > 1e-12) { print $1 ": " $8; bad = 1 } }
     END { exit bad || n != 5 }' "$TMP/out" || { cat "$TMP/out"; fail "||dw||/||w|| is not lr*eta"; }
# MLPerf excludes biases: their local rate is 1
expect_exit 0 $BB train --model lenet --data synthetic --batch 32 --steps 1 --test-subset 32 \
    --opt lars --lars-variant mlperf --lr 0.5 --momentum 0.9 --weight-decay 5e-4 --layer-stats --quiet
awk '$2 == "bias" && NF == 8 { n++; if ($6 != 1) bad = 1 } END { exit bad || n != 5 }' "$TMP/out" \
    || { cat "$TMP/out"; fail "mlperf: biases not excluded"; }
for o in sgd adamw lamb larc; do
    expect_exit 0 $BB train --model lenet --data synthetic --batch 32 --steps 2 --test-subset 32 --opt $o --lr 0.01 --weight-decay 1e-4 --quiet
    expect_output '^final test_acc='
done
expect_exit 2 $BB train --opt lars --lars-variant nosuch
expect_output "nosuch"
expect_exit 2 $BB train --opt sgd --lars-variant paper
expect_output "\-\-lars-variant needs --opt lars or --opt larc"
expect_exit 2 $BB train --opt lars --lars-exclude weights
expect_output "\-\-lars-exclude: 'weights' is not one of"
expect_exit 2 $BB train --opt nosuchopt --data synthetic --model lenet
expect_output "nosuchopt"
# Every switch is also a flag: the paper preset with NVCaffe's denominator is NVCaffe's
# LARC (scale policy) exactly, and differs from the paper form.
A="--model lenet --data fashion-mnist --train-subset 2048 --test-subset 500 --epochs 1 --batch 128 --lr 2 --momentum 0.9 --weight-decay 5e-4 --quiet"
nv=$($BB train $A --opt larc --lars-variant nvcaffe | grep '^final')
hand=$($BB train $A --opt lars --lars-variant paper --lars-denom g | grep '^final')
paper=$($BB train $A --opt lars --lars-variant paper | grep '^final')
[ -n "$nv" ] && [ "$nv" = "$hand" ] || fail "paper + --lars-denom g ($hand) is not nvcaffe ($nv)"
[ "$nv" != "$paper" ] || fail "--lars-denom changed nothing"
expect_exit 2 $BB train --opt lars --lars-momentum bogus
expect_output "\-\-lars-momentum: 'bogus' is not one of inside, after, trust-after"
