#!/usr/bin/python3
"""Writes a JPEG class folder (train/<class>/*.jpg, test/<class>/*.jpg, classes in label order
by name) as CIFAR-10's official binary distribution: cifar-10-batches-bin/data_batch_1..5.bin
(the training images split as evenly as they go), test_batch.bin and batches.meta.txt. A record
is one label byte, then the 1024 red, 1024 green and 1024 blue bytes of the 32x32 image, row by
row. Decoded by PIL (an independent JPEG reader), in the folder loader's order: classes by name,
files by name within a class. Used by tests/cli/cifar10_forms.sh. The files are smaller than
the official 10,000 records, so bigbatch reads them with --partial-batches.

    make_cifar_bin.py JPEG_ROOT OUT_DIR
"""
import os
import sys

from PIL import Image


def records(root, split, classes):
    out = bytearray()
    for label, name in enumerate(classes):
        folder = os.path.join(root, split, name)
        for f in sorted(os.listdir(folder)):
            img = Image.open(os.path.join(folder, f)).convert("RGB")
            if img.size != (32, 32):
                sys.exit(f"{folder}/{f}: {img.size}, not 32x32")
            r, g, b = img.split()
            out += bytes([label]) + r.tobytes() + g.tobytes() + b.tobytes()
    return out


def main():
    root, out = sys.argv[1], sys.argv[2]
    classes = sorted(os.listdir(os.path.join(root, "train")))
    os.makedirs(out, exist_ok=True)
    train = records(root, "train", classes)
    n = len(train) // 3073
    start = 0
    for k in range(5):
        end = start + (n - start) // (5 - k)
        with open(os.path.join(out, f"data_batch_{k + 1}.bin"), "wb") as f:
            f.write(train[start * 3073:end * 3073])
        start = end
    with open(os.path.join(out, "test_batch.bin"), "wb") as f:
        f.write(records(root, "test", classes))
    with open(os.path.join(out, "batches.meta.txt"), "w") as f:
        f.write("\n".join(classes) + "\n\n")


if __name__ == "__main__":
    main()
