#!/usr/bin/env python3
"""Decoded img/s of torchvision's ImageNet training transform (RandomResizedCrop(224) +
RandomHorizontalFlip on PIL) over the JPEGs of a packed store, beside `bigbatch data bench`.
Uses torchvision's DataLoader with W worker processes when torchvision is installed, else the
same transform restated on PIL alone (one process: PIL's per-core rate).
usage: loader_bench.py STORE [IMAGES] [WORKERS]"""
import io
import math
import random
import struct
import sys
import time

from PIL import Image


def records(path):
    data = open(path, "rb").read()
    count = struct.unpack_from("<I", data, 8)[0]
    index = struct.unpack_from("<Q", data, 24)[0]
    for k in range(count):
        off, size = struct.unpack_from("<QI", data, index + 32 * k)
        yield data[off:off + size]


def rrc(im, rng, size=224):
    width, height = im.size
    area = width * height
    for _ in range(10):
        target = area * rng.uniform(0.08, 1.0)
        ratio = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        w, h = int(round(math.sqrt(target * ratio))), int(round(math.sqrt(target / ratio)))
        if 0 < w <= width and 0 < h <= height:
            i, j = rng.randint(0, height - h), rng.randint(0, width - w)
            break
    else:
        i, j, h, w = 0, 0, height, width
    out = im.crop((j, i, j + w, i + h)).resize((size, size), Image.BILINEAR)
    return out.transpose(Image.FLIP_LEFT_RIGHT) if rng.random() < 0.5 else out


def main():
    jpegs = list(records(sys.argv[1]))
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        have_tv = True
    except ImportError:
        have_tv = False
    if have_tv:
        import torch.utils.data as tud
        import torchvision.transforms as T
        tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.PILToTensor()])

        class DS(tud.Dataset):
            def __len__(self):
                return n

            def __getitem__(self, k):
                return tf(Image.open(io.BytesIO(jpegs[k % len(jpegs)])).convert("RGB"))

        dl = tud.DataLoader(DS(), batch_size=64, num_workers=workers)
        t0 = time.time()
        for _ in dl:
            pass
        rate, what = n / (time.time() - t0), f"torchvision DataLoader, {workers} workers"
    else:
        rng = random.Random(1)
        t0 = time.time()
        for k in range(n):
            rrc(Image.open(io.BytesIO(jpegs[k % len(jpegs)])).convert("RGB"), rng).tobytes()
        rate, what, workers = n / (time.time() - t0), "PIL alone (no torchvision here), 1 process", 1
    print(f"loader=pil ({what}) images={n} img_s={rate:.0f} img_s_per_core={rate / workers:.0f}")


main()
