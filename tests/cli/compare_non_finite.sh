#!/bin/sh
# compare: the model from the checkpoint's metadata; a NaN or an infinity in either checkpoint is a difference, even against itself and
# when later values are finite (a NaN used to drop out of the running maximum: "same")
# (the MPI equality tests rely on compare saying "same" only when the values are).
. tests/cli/lib.inc
$BB train --model lenet --data synthetic --train-subset 200 --test-subset 50 --batch 50 --steps 2 --quiet \
    --save "$TMP/a.ckpt" > /dev/null 2>&1 || fail "train"
expect_exit 0 $BB compare "$TMP/a.ckpt" "$TMP/a.ckpt" --model lenet
expect_output "largest relative difference 0 (tolerance 1e-05): same"
# the model and optimizer come from the checkpoint's metadata; a --model that is not its, an error
expect_exit 0 $BB compare "$TMP/a.ckpt" "$TMP/a.ckpt"
expect_output "largest relative difference 0 (tolerance 1e-05): same"
expect_exit 2 $BB compare "$TMP/a.ckpt" "$TMP/a.ckpt" --model resnet8
expect_output "checkpoint is for model 'lenet', not 'resnet8'"
# the first value of the data (conv1.weight[0]) becomes a NaN, then an infinity
hlen=$(od -An -t u8 -N 8 "$TMP/a.ckpt" | tr -d ' ')
[ -n "$hlen" ] || fail "header length"
for bits in '\000\000\300\177' '\000\000\200\177'; do
    cp "$TMP/a.ckpt" "$TMP/b.ckpt"
    printf "$bits" | dd of="$TMP/b.ckpt" bs=1 seek=$((8 + hlen)) conv=notrunc 2>/dev/null || fail "dd"
    cmp -s "$TMP/a.ckpt" "$TMP/b.ckpt" && fail "the value was not written"
    expect_exit 1 $BB compare "$TMP/b.ckpt" "$TMP/b.ckpt" --model lenet
    expect_output "conv1.weight .*(1 values NaN or infinite: never the same)"
    expect_output "DIFFERENT"
    expect_exit 1 $BB compare "$TMP/a.ckpt" "$TMP/b.ckpt" --model lenet
    expect_output "DIFFERENT"
done
exit 0
