# The packed JPEG store from an ImageNet-layout folder of RGB, grayscale and CMYK JPEGs of
# varied sizes (tests/make_jpeg_folder.py): the PNG named .JPEG and the truncated file are
# named and left out with counts, nothing temporary is left, a second pack keeps the stores,
# training reads them (--augment rrc), crops agree with PIL/torchvision's transforms
# (tests/rrc_reference.py: max |diff| <= 1) for training and evaluation, and a truncated or
# bit-flipped store is an error naming the file (and the record).
. tests/cli/lib.inc
PY=${PYTHON:-/usr/bin/python3}
"$PY" -c 'import PIL' 2>/dev/null || { echo "skipped: $PY has no PIL (python3-pil)"; exit 77; }
"$PY" tests/make_jpeg_folder.py "$TMP/inet" 6 || fail "cannot make the JPEG folder"

expect_exit 0 $BB data pack --data-root "$TMP/inet" --out "$TMP/store" --threads 2
expect_output 'skipped .*n01440764_png.JPEG: not a JPEG but a PNG image'
expect_output 'skipped .*n01440764_cut.JPEG: bad JPEG'
expect_output 'train.bbjpeg: 12 images of 2 classes.*left out: 1 PNG, 1 unreadable'
expect_output 'val.bbjpeg: 4 images of 2 classes'
expect_output 'ETA'
[ -z "$(ls "$TMP/store" | grep tmp)" ] || fail "temporary files left: $(ls "$TMP/store")"
expect_exit 0 $BB data pack --data-root "$TMP/inet" --out "$TMP/store" --threads 1
expect_output 'already packed'
expect_exit 0 $BB data check "$TMP/store/train.bbjpeg"
expect_output '12 records, 2 classes'

expect_exit 0 $BB train --model resnet50 --data imagefolder --data-root "$TMP/store" --augment rrc --steps 1 \
    --batch 2 --eval-batch 4 --lr 0.01 --threads 2
expect_output '12 train / 4 test images'
expect_output 'augmentation: random-resized crop+flip'
expect_output '^final test_acc='
# bench --loader reads it as training does (ResNet-50's data_wait on a GPU from such a store):
# 4 steps of 4 cross the end of the 12 images, on 2 loader threads
expect_exit 0 $BB bench --model resnet8 --batch 4 --steps 3 --warmup 1 --profile-steps 0 --threads 1 --loader \
    --data imagefolder --data-root "$TMP/store" --augment rrc --loader-threads 2
expect_output '^model=resnet8 batch=4 .* data_wait=0\.[0-9]* crop_ms=[0-9.]* loader_threads=2 augment=rrc$'
grep -q 'crop_ms=0\.00 ' "$TMP/out" && fail "bench cropped nothing from the store"

# pixels: rrc and evaluation crops of every training record against PIL
size_of() { "$PY" -c "import struct,sys;d=open(sys.argv[1],'rb').read();i=struct.unpack_from('<Q',d,24)[0];print(*struct.unpack_from('<HH',d,i+32*int(sys.argv[2])+18))" "$@"; }
for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
    set -- $(size_of "$TMP/store/train.bbjpeg" $k)
    $BB data rrc --width $1 --height $2 --count $((k + 1)) --seed 3 --epoch 2 | tail -n 1 > "$TMP/box"
    expect_exit 0 $BB data crop --store "$TMP/store/train.bbjpeg" --record $k --seed 3 --epoch 2 --out "$TMP/c.ppm"
    "$PY" tests/rrc_reference.py pixels "$TMP/store/train.bbjpeg" $k "$TMP/c.ppm" rrc $(cat "$TMP/box") ||
        fail "record $k's random-resized crop differs from PIL's"
    expect_exit 0 $BB data crop --store "$TMP/store/train.bbjpeg" --record $k --augment off --out "$TMP/e.ppm"
    "$PY" tests/rrc_reference.py pixels "$TMP/store/train.bbjpeg" $k "$TMP/e.ppm" eval ||
        fail "record $k's evaluation crop differs from PIL's"
done

# damage: truncated, a flipped bit in a record's JPEG bytes, a flipped bit in the index
S="$TMP/store/train.bbjpeg"
head -c $(($(stat -c %s "$S") - 7)) "$S" > "$TMP/cut.bbjpeg"
expect_exit 1 $BB data check "$TMP/cut.bbjpeg"
expect_output "cut.bbjpeg: header inconsistent with the file.*truncated"
cp "$S" "$TMP/flip.bbjpeg"
printf '\377' | dd of="$TMP/flip.bbjpeg" bs=1 seek=2000 conv=notrunc 2>/dev/null
expect_exit 1 $BB data check "$TMP/flip.bbjpeg"
expect_output "flip.bbjpeg: record 0: checksum mismatch"
cp "$S" "$TMP/index.bbjpeg"
printf '\377' | dd of="$TMP/index.bbjpeg" bs=1 seek=$(($(stat -c %s "$S") - 20)) conv=notrunc 2>/dev/null
expect_exit 1 $BB data check "$TMP/index.bbjpeg"
expect_output "index.bbjpeg: index checksum mismatch"
mkdir -p "$TMP/bad" && cp "$TMP/flip.bbjpeg" "$TMP/bad/train.bbjpeg" && cp "$TMP/store/val.bbjpeg" "$TMP/bad/"
expect_exit 1 $BB train --model resnet8 --data imagefolder --data-root "$TMP/bad" --augment rrc --steps 1 --batch 12 \
    --threads 2 --quiet
expect_output "train.bbjpeg: record 0: checksum mismatch"
# rrc needs a store
expect_exit 1 $BB train --model resnet8 --data synthetic --augment rrc --steps 1 --quiet
expect_output '--augment rrc needs a packed store'
exit 0
