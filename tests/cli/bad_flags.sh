# Bad input gets a clear error naming the flag, and a non-zero exit.
. tests/cli/lib.inc
expect_exit 2 $BB train --no-such-flag
expect_output "unknown option '--no-such-flag'"
expect_exit 2 $BB train --lr abc
expect_output "\-\-lr: 'abc' is not a number"
expect_exit 2 $BB train --batch 0
expect_output "\-\-batch: '0' is not an integer >= 1"
expect_exit 2 $BB train --augment maybe
expect_output "\-\-augment"
expect_exit 2 $BB train --model nonet --data synthetic
expect_output "unknown model 'nonet'"
expect_exit 1 $BB train --model resnet20 --data fashion-mnist --steps 1
expect_output "expects 3x32x32 images but fashion-mnist has 1x28x28"
expect_exit 1 $BB train --model lenet --data fashion-mnist --train-subset 100 --batch 200
expect_output "larger than the training set"
expect_exit 2 $BB train --model lenet --data nodata
expect_output "nodata"
expect_exit 2 $BB train --device gpu --steps 1
expect_output "\-\-device: unknown device 'gpu'"
expect_exit 2 $BB train --device cuda:x --steps 1
expect_output "\-\-device: device 'cuda:x' is not NAME or NAME:N"
expect_exit 1 $BB train --device cpu:1 --data synthetic --steps 1
expect_output "the CPU backend has one device"
expect_exit 2 $BB sweep experiments/example.ini --device gpu --dry-run
expect_output "\-\-device: unknown device 'gpu'"
expect_exit 2 $BB train --precision fp16 --steps 1
expect_output "\-\-precision: unknown precision 'fp16' (fp32 or tf32)"
expect_exit 2 $BB train --precision bf16 --steps 1
expect_output "\-\-precision: precision bf16 is not implemented yet"
expect_exit 1 $BB train --precision tf32 --data synthetic --steps 1
expect_output "\-\-precision: precision tf32 needs a GPU (\-\-device cuda)"
expect_exit 2 $BB bench --model lenet --precision tf32 --steps 1
expect_output "\-\-precision: precision tf32 needs a GPU"
expect_exit 2 $BB nosuchcommand
expect_exit 0 $BB train --help
expect_output "\-\-weight-decay"
