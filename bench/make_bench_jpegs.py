#!/usr/bin/env python3
"""ImageNet-like JPEGs for the loader benchmarks (bench/loader_compare.py): ROOT/{train,val}/<wnid>/
*.JPEG, RGB, shorter side 300 to 500 pixels and aspect 3:4 to 16:9 either way (ImageNet's
training images average about 400 x 350), quality 90, content of colour blobs at several
scales plus fine noise, so the entropy decoder has ImageNet-like work (60-150 kB a file).
Deterministic for a seed. usage: make_bench_jpegs.py ROOT [N_TRAIN] [SEED]"""
import os
import random
import sys

from PIL import Image, ImageChops


def content(rng, w, h):
    bands = []
    for _ in range(3):
        coarse = Image.effect_noise((max(2, w // 40), max(2, h // 40)), 80).resize((w, h), Image.BICUBIC)
        mid = Image.effect_noise((max(2, w // 6), max(2, h // 6)), 60).resize((w, h), Image.BILINEAR)
        fine = Image.effect_noise((w, h), 18)
        bands.append(ImageChops.add(ImageChops.blend(coarse, mid, 0.35), fine, scale=1.0, offset=-128 + rng.randint(-20, 20)))
    return Image.merge("RGB", bands)


def main():
    root = sys.argv[1]
    n_train = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    for split, n in (("train", n_train), ("val", max(2, n_train // 20))):
        for k in range(n):
            wnid = "n%08d" % (k % 4)
            d = os.path.join(root, split, wnid)
            os.makedirs(d, exist_ok=True)
            short, aspect = rng.randint(300, 500), rng.uniform(4 / 3, 16 / 9) if rng.random() < 0.8 else 1.0
            w, h = (int(short * aspect), short) if rng.random() < 0.75 else (short, int(short * aspect))
            content(rng, w, h).save(os.path.join(d, "%s_%d.JPEG" % (wnid, k)), quality=90)


main()
