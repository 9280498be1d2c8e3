#!/bin/sh
# An official CIFAR-10 batch file holds exactly 10,000 records: one cut at a record boundary
# (half of data_batch_2.bin) is refused, naming the file, rather than trained on without a
# word; --partial-batches reads smaller files (the fixtures of tests/make_cifar_bin.py).
. tests/cli/lib.inc
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || { echo "skipped: no $PY"; exit 77; }
D="$TMP/cifar-10-batches-bin"
mkdir -p "$D"
# write N FILE...: N records each, labels 0..9 in turn, grey images
write() {
    "$PY" - "$@" <<'PY' || fail "cannot write the batch files"
import sys
n = int(sys.argv[1])
rec = [bytes([k % 10]) + bytes([(7 * k) % 256]) * 3072 for k in range(10)]
for path in sys.argv[2:]:
    with open(path, "wb") as f:
        for k in range(n):
            f.write(rec[k % 10])
PY
}
write 10000 "$D/data_batch_1.bin"
write 5000 "$D/data_batch_2.bin"
write 200 "$D/data_batch_3.bin" "$D/data_batch_4.bin" "$D/data_batch_5.bin" "$D/test_batch.bin"
flags="--model resnet8 --data cifar10 --data-root $TMP --batch 50 --steps 1 --threads 1 --quiet"
expect_exit 1 $BB train $flags
expect_output "data_batch_2.bin: 5000 records, not the 10000 of an official CIFAR-10 batch file"
expect_output "--partial-batches"
expect_exit 0 $BB train $flags --partial-batches
expect_output "^final"
exit 0
