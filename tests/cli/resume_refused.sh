#!/bin/sh
# --resume refuses a checkpoint whose position does not fit the run's schedule (another
# batch size, another epoch count, a step edited by hand), naming the file and the key, and
# leaves nothing behind; the same checkpoint with the same flags resumes.
. tests/cli/lib.inc
flags="--model lenet --data synthetic --train-subset 1000 --test-subset 100 --quiet --threads 1"
$BB train $flags --batch 100 --epochs 2 --steps 13 --save "$TMP/c.ckpt" > /dev/null 2>&1 || fail "first part"
# step 13 = epoch 1 x 10 steps + 3; with batch 50 an epoch has 20 steps
expect_exit 1 $BB train $flags --batch 50 --epochs 2 --resume "$TMP/c.ckpt" --save "$TMP/out.ckpt"
expect_output "c.ckpt: metadata 'step' 13 and 'epoch_step' 3 do not fit epoch 1 of 20 steps"
[ ! -e "$TMP/out.ckpt" ] || fail "a refused resume wrote a checkpoint"
$BB train $flags --batch 100 --epochs 3 --save "$TMP/e3.ckpt" > /dev/null 2>&1 || fail "three epochs"
expect_exit 1 $BB train $flags --batch 100 --epochs 2 --resume "$TMP/e3.ckpt"
expect_output "e3.ckpt: metadata 'epoch' is 3, beyond this run's 2 epochs"
# the header is text: the same number of digits keeps the file's layout
sed 's/"step":"13"/"step":"97"/' "$TMP/c.ckpt" > "$TMP/edited.ckpt"
cmp -s "$TMP/c.ckpt" "$TMP/edited.ckpt" && fail "the edit did not apply"
expect_exit 1 $BB train $flags --batch 100 --epochs 2 --resume "$TMP/edited.ckpt"
expect_output "edited.ckpt: metadata 'step' 97 and 'epoch_step' 3 do not fit epoch 1 of 10 steps"
expect_exit 0 $BB train $flags --batch 100 --epochs 2 --resume "$TMP/c.ckpt"
# a NaN in the weights (conv1.weight's first value) is refused, naming file and tensor
hlen=$(od -An -t u8 -N 8 "$TMP/c.ckpt" | tr -d ' ')
cp "$TMP/c.ckpt" "$TMP/nan.ckpt"
printf '\000\000\300\177' | dd of="$TMP/nan.ckpt" bs=1 seek=$((8 + hlen)) conv=notrunc 2>/dev/null || fail "dd"
cmp -s "$TMP/c.ckpt" "$TMP/nan.ckpt" && fail "the NaN was not written"
expect_exit 1 $BB train $flags --batch 100 --epochs 2 --resume "$TMP/nan.ckpt" --save "$TMP/out.ckpt"
expect_output "nan.ckpt: tensor 'conv1.weight' holds a NaN or an infinity"
[ ! -e "$TMP/out.ckpt" ] || fail "a refused resume wrote a checkpoint"
exit 0
