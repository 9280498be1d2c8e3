#!/usr/bin/env python3
"""An ImageNet-layout folder for the packed store's tests: ROOT/{train,val}/<wnid>/*.JPEG of
varied sizes and colour spaces (RGB, L, CMYK), smooth gradients plus a class-dependent
pattern, and ImageNet's oddities in train: a PNG named .JPEG and a truncated JPEG.
usage: make_jpeg_folder.py ROOT [N_PER_CLASS]"""
import io
import os
import sys

from PIL import Image

root = sys.argv[1]
per_class = int(sys.argv[2]) if len(sys.argv) > 2 else 6
sizes = [(500, 375), (375, 500), (640, 480), (300, 300), (200, 150), (1024, 683), (260, 900)]
modes = ["RGB", "RGB", "L", "CMYK"]


def image(w, h, cls, k):
    im = Image.new("RGB", (w, h))
    px = im.load()
    for y in range(h):
        for x in range(w):
            v = (x * 255 // w, y * 255 // h, ((x // (8 + 4 * cls)) + (y // 16) + k) % 2 * 200)
            px[x, y] = v
    return im


for split, n in (("train", per_class), ("val", 2)):
    for cls, wnid in enumerate(["n01440764", "n01443537"]):
        d = os.path.join(root, split, wnid)
        os.makedirs(d, exist_ok=True)
        for k in range(n):
            w, h = sizes[(k + cls) % len(sizes)]
            mode = modes[k % len(modes)]
            im = image(w // 2, h // 2, cls, k).resize((w, h), Image.BILINEAR).convert(mode)
            im.save(os.path.join(d, f"{wnid}_{k}.JPEG"), "JPEG", quality=92)
if per_class > 0:
    d = os.path.join(root, "train", "n01440764")
    Image.new("RGB", (64, 48), (10, 200, 30)).save(os.path.join(d, "n01440764_png.JPEG"), "PNG")
    buf = io.BytesIO()
    image(120, 90, 0, 1).save(buf, "JPEG", quality=90)
    with open(os.path.join(d, "n01440764_cut.JPEG"), "wb") as f:
        f.write(buf.getvalue()[: len(buf.getvalue()) // 2])
