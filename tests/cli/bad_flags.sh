# Bad input gets a clear error naming the flag, and a non-zero exit.
. tests/cli/lib.inc
expect_exit 2 $BB train --no-such-flag
expect_output "unknown option '--no-such-flag'"
expect_exit 2 $BB train --lr abc
expect_output "\-\-lr: 'abc' is not a number"
expect_exit 2 $BB train --batch 0
expect_output "\-\-batch: 0 is out of range (an integer from 1 to 1048576)"
# numbers beyond a flag's range are refused, never wrapped (4294967312 = 2^32 + 16)
expect_exit 2 $BB train --batch 4294967312
expect_output "\-\-batch: 4294967312 is out of range (an integer from 1 to 1048576)"
expect_exit 2 $BB train --batch 1048577
expect_output "\-\-batch: 1048577 is out of range"
expect_exit 2 $BB train --epochs 4294967297
expect_output "\-\-epochs: 4294967297 is out of range (an integer from 1 to 2147483647)"
expect_exit 2 $BB train --threads 2147483649
expect_output "\-\-threads: 2147483649 is out of range (an integer from 1 to 1024)"
expect_exit 2 $BB train --threads 1025
expect_output "\-\-threads: 1025 is out of range (an integer from 1 to 1024)"
expect_exit 2 $BB train --steps 99999999999999999999
expect_output "\-\-steps: 99999999999999999999 is out of range (an integer >= 1)"
expect_exit 2 $BB train --seed -1
expect_output "\-\-seed: -1 is out of range (an integer >= 0)"
# real-valued flags have ranges too (--help shows them)
expect_exit 2 $BB train --beta1 2
expect_output "\-\-beta1: 2 is not in \[0, 1)"
expect_exit 2 $BB train --eta -0.001
expect_output "\-\-eta: -0.001 is negative"
expect_exit 2 $BB train --adam-eps 0
expect_output "\-\-adam-eps: 0 is not positive"
expect_exit 2 $BB train --milestones 30,-3
expect_output "\-\-milestones: -3 is a negative epoch"
expect_exit 0 $BB train --help
expect_output "\-\-beta1 X .*(in \[0, 1))"
expect_exit 2 $BB compare a.ckpt b.ckpt --model lenet --tol -1
expect_output "\-\-tol: a tolerance is not negative"
expect_exit 2 $BB bench --allreduce 1e12
expect_output "at most 65536"
expect_exit 2 $BB train --batch 12x
expect_output "\-\-batch: '12x' is not an integer"
expect_exit 2 $BB sweep experiments/example.ini --threads 4294967297 --dry-run
expect_output "\-\-threads: 4294967297 is out of range (an integer from 1 to 1024)"
expect_exit 2 $BB sweep experiments/example.ini --ranks 0 --dry-run
expect_output "\-\-ranks: 0 is out of range"
expect_exit 2 $BB bench --model lenet --batch 4294967312
expect_output "\-\-batch: 4294967312 is out of range (an integer from 1 to 1048576)"
expect_exit 2 $BB bench --model lenet --threads 5000
expect_output "\-\-threads: 5000 is out of range (an integer from 1 to 1024)"
# the same values in an experiment file: the error names the file, the line and the key
printf '[experiment]\nname = wrap\n[train]\nmodel = lenet\nbatch = 4294967312\n' > "$TMP/wrap.ini"
expect_exit 2 $BB sweep "$TMP/wrap.ini" --db "$TMP/wrap.db" --dry-run
expect_output "wrap.ini:5: key 'batch': \-\-batch: 4294967312 is out of range (an integer from 1 to 1048576)"
[ ! -e "$TMP/wrap.db" ] || fail "a refused experiment file left a database"
printf '[experiment]\nname = wrap\n[train]\nmodel = lenet\n[grid]\nepochs = 1, 2147483648\n' > "$TMP/wrap2.ini"
expect_exit 2 $BB sweep "$TMP/wrap2.ini" --db "$TMP/wrap.db" --dry-run
expect_output "wrap2.ini:6: key 'epochs': \-\-epochs: 2147483648 is out of range"
printf '[experiment]\nname = wrap\nrepeats = 1000001\n[train]\nmodel = lenet\n' > "$TMP/wrap3.ini"
expect_exit 2 $BB sweep "$TMP/wrap3.ini" --db "$TMP/wrap.db" --dry-run
expect_output "wrap3.ini:3: key 'repeats': '1000001' is not an integer from 1 to 1000000"
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
expect_exit 2 $BB train --precision fp8 --steps 1
expect_output "\-\-precision: unknown precision 'fp8' (fp32, tf32, bf16 or fp16)"
expect_exit 1 $BB train --precision tf32 --data synthetic --steps 1
expect_output "\-\-precision: precision tf32 needs a GPU (\-\-device cuda)"
expect_exit 2 $BB bench --model lenet --precision tf32 --steps 1
expect_output "\-\-precision: precision tf32 needs a GPU"
expect_exit 2 $BB nosuchcommand
expect_exit 0 $BB train --help
expect_output "\-\-weight-decay"
# the arguments after the flags: counted by each command's flag table, one wording for all
for cmd in sweep report verify plot; do
    expect_exit 2 $BB $cmd
    expect_output "bigbatch $cmd: give the experiment file (bigbatch $cmd --help)"
    expect_exit 2 $BB $cmd experiments/example.ini extra
    expect_output "bigbatch $cmd: unexpected argument 'extra' (bigbatch $cmd --help)"
done
expect_exit 2 $BB compare a.ckpt
expect_output "give two checkpoints (bigbatch compare --help)"
expect_exit 2 $BB compare a.ckpt b.ckpt c.ckpt
expect_output "unexpected argument 'c.ckpt' (bigbatch compare --help)"
for cmd in train bench scale fingerprint runs; do
    expect_exit 2 $BB $cmd extra
    expect_output "bigbatch $cmd: unexpected argument 'extra' (bigbatch $cmd --help)"
done
