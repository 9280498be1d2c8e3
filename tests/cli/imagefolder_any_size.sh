# An ImageNet-layout folder (train/ and val/, one folder per class, JPEGs) read with
# --image-size: the full-size AlexNet takes a step on images stored at 256x256 and
# cropped to 227 (Caffe's ImageNet pipeline), resnet8 trains on 40x40 cropped to 32,
# evaluation uses the centre crop, and sizes below the model's input or --image-size
# on a dataset without image folders are clear errors.
. tests/cli/lib.inc
need_cifar10
tar xzf "$TAR" -C "$TMP" --wildcards 'cifar10-jpeg/test/cat/00[0-2]?.jpg' 'cifar10-jpeg/test/dog/00[0-2]?.jpg' ||
    fail "cannot unpack from $TAR"
for c in cat dog; do
    mkdir -p "$TMP/inet/train/n_$c" "$TMP/inet/val/n_$c"
    mv "$TMP"/cifar10-jpeg/test/$c/00[0-1]?.jpg "$TMP/inet/train/n_$c/"
    mv "$TMP"/cifar10-jpeg/test/$c/002?.jpg "$TMP/inet/val/n_$c/"
done

expect_exit 0 $BB train --model alexnet --data imagefolder --data-root "$TMP/inet" --image-size 256 \
    --steps 1 --batch 2 --eval-batch 4 --test-subset 4 --lr 0.01 --threads 2
expect_output '40 train / 4 test images'
expect_output 'augmentation: crop+flip'
expect_output '^final test_acc='
[ -s "$TMP/inet/train.256.bbimg" ] && [ -s "$TMP/inet/val.256.bbimg" ] || fail "no 256 caches"
[ "$(stat -c %s "$TMP/inet/train.256.bbimg")" -gt $((40 * 3 * 256 * 256)) ] || fail "train cache too small"

expect_exit 0 $BB train --model resnet8 --data imagefolder --data-root "$TMP/inet" --image-size 40 \
    --epochs 2 --batch 8 --lr 0.05 --threads 2 --quiet
expect_output '^final test_acc='
# the same run again comes from the cache and gives the same numbers
grep '^final' "$TMP/out" > "$TMP/first"
expect_exit 0 $BB train --model resnet8 --data imagefolder --data-root "$TMP/inet" --image-size 40 \
    --epochs 2 --batch 8 --lr 0.05 --threads 2 --quiet
grep '^final' "$TMP/out" | cmp -s - "$TMP/first" || fail "a cached rerun differs: $(cat "$TMP/first") vs $(grep '^final' "$TMP/out")"

expect_exit 1 $BB train --model resnet8 --data imagefolder --data-root "$TMP/inet" --image-size 24 --steps 1 --quiet
expect_output 'model resnet8 expects 3x32x32 images but imagefolder has 3x24x24 (--image-size stores image folders larger)'
expect_exit 2 $BB train --model lenet --data fashion-mnist --image-size 32 --steps 1 --quiet
expect_output '--image-size applies to image folders'
expect_exit 2 $BB train --model resnet8 --data imagefolder --data-root "$TMP/inet" --image-size 5000 --steps 1 --quiet
expect_output '--image-size 5000 is not in 8..4096'
