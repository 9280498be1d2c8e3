#!/bin/sh
# --data cifar10 reads the official binary distribution and a JPEG class folder as the same data:
# a slice of the real CIFAR-10 fixture (50 training and 10 test images per class), written as
# cifar-10-batches-bin by tests/make_cifar_bin.py (PIL decodes the JPEGs, with the same
# libjpeg-turbo as ours), trains to the same losses and accuracy, digit for digit, from either
# form: labels, the channel planes and the image order all agree. The fixture's place comes
# from need_cifar10 (tests/cli/lib.inc); skipped without it.
. tests/cli/lib.inc
need_cifar10
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import PIL' 2>/dev/null || { echo "skipped: $PY has no PIL (python3-pil)"; exit 77; }
tar xzf "$TAR" -C "$TMP" --wildcards 'cifar10-jpeg/train/*/00[0-4]?.jpg' 'cifar10-jpeg/test/*/000?.jpg' ||
    fail "cannot unpack $TAR"
[ "$(ls "$TMP"/cifar10-jpeg/train/*/*.jpg | wc -l)" -eq 500 ] || fail "expected 500 training images"
"$PY" tests/make_cifar_bin.py "$TMP/cifar10-jpeg" "$TMP/bin/cifar-10-batches-bin" || fail "make_cifar_bin.py failed"
for form in cifar10-jpeg bin; do
    expect_exit 0 "$BB" train --model resnet8 --data cifar10 --data-root "$TMP/$form" --epochs 3 --partial-batches \
        --batch 50 --lr 0.05 --momentum 0.9 --seed 3 --threads 1 --quiet
    # each epoch's row without its timing columns (img/s, elapsed), and the final line
    awk '$1 ~ /^[0-9]+$/ && NF == 10 {print $1, $2, $3, $4, $5, $6, $7, $8} /^final/' "$TMP/out" > "$TMP/$form.txt"
    [ "$(wc -l < "$TMP/$form.txt")" -eq 4 ] || { cat "$TMP/out"; fail "$form: expected 3 epoch rows and a final line"; }
done
cmp -s "$TMP/cifar10-jpeg.txt" "$TMP/bin.txt" ||
    { diff "$TMP/cifar10-jpeg.txt" "$TMP/bin.txt"; fail "the binary and JPEG forms of the same images trained differently"; }
# Accuracy above chance (10%): the comparison is of a network that learned something.
awk '/^final/ {split($2, a, "="); exit !(a[2] > 0.15)}' "$TMP/bin.txt" || fail "no learning: $(grep final "$TMP/bin.txt")"
# A test batch with one label changed must change the result: the comparison can fail.
"$PY" - "$TMP/bin/cifar-10-batches-bin/test_batch.bin" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[0] = (b[0] + 1) % 10
open(p, "wb").write(b)
PY
expect_exit 0 "$BB" train --model resnet8 --data cifar10 --data-root "$TMP/bin" --epochs 3 --partial-batches \
    --batch 50 --lr 0.05 --momentum 0.9 --seed 3 --threads 1 --quiet
grep -E '^final' "$TMP/out" > "$TMP/changed.txt"
grep -E '^final' "$TMP/bin.txt" | cmp -s - "$TMP/changed.txt" && fail "a changed test label left the result unchanged"
exit 0
