# One training step of the full-size networks on synthetic data, on the CPU.
. tests/cli/lib.inc
for m in alexnet alexnet-bn resnet50; do
    expect_exit 0 $BB train --model $m --data synthetic --steps 1 --batch 2 --eval-batch 2 --test-subset 2 --lr 0.01 --quiet
    expect_output '^final test_acc='
done
