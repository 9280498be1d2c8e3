# The loader's pool does not change a run: training from a packed store with --augment rrc
# (Philox draws per image), across an epoch boundary, in micro-batches (the loader crops up to
# two micro-batches ahead, across steps), gives the same checkpoint byte for byte at
# --loader-threads 1, 2 and 3. The flag is an execution detail: an experiment file may set it.
. tests/cli/lib.inc
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import PIL' 2>/dev/null || { echo "skipped: $PY has no PIL (python3-pil)"; exit 77; }
"$PY" tests/make_jpeg_folder.py "$TMP/inet" 6 || fail "cannot make the JPEG folder"
expect_exit 0 $BB data pack --data-root "$TMP/inet" --out "$TMP/store" --threads 2 --quiet

for n in 1 2 3; do
    expect_exit 0 $BB train --model resnet8 --data imagefolder --data-root "$TMP/store" --augment rrc --epochs 3 \
        --steps 7 --batch 4 --micro-batch 2 --lr 0.01 --threads 1 --loader-threads $n --save "$TMP/c$n.ckpt" --quiet
    expect_output '^final test_acc='
done
cmp "$TMP/c1.ckpt" "$TMP/c2.ckpt" || fail "--loader-threads 2 changed the run"
cmp "$TMP/c1.ckpt" "$TMP/c3.ckpt" || fail "--loader-threads 3 changed the run"

expect_exit 2 $BB train --model resnet8 --data synthetic --loader-threads 0 --steps 1 --quiet
expect_output 'loader-threads'
exit 0
