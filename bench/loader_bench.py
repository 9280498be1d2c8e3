#!/usr/bin/env python3
"""Decoded img/s of torchvision's ImageNet training transform over the JPEGs of a packed store,
beside `bigbatch data bench` (bench/loader_compare.py runs both). The transform is
RandomResizedCrop(224) + RandomHorizontalFlip + PILToTensor: 8-bit CHW, as bigbatch's loader
hands its batches over (both normalize later: bigbatch on the device). --to-tensor instead ends
with the ImageNet example's ToTensor + Normalize (float32 on the host). torchvision's DataLoader
with W worker processes and batches of 64; the first pass over the images starts the workers
and warms the caches, the second is timed (persistent workers). img_per_cpu_s divides by the
CPU seconds of the workers and the main process in the timed pass, which holds on a busy
machine too. Without torchvision: the same transform restated on PIL alone, one process.
usage: loader_bench.py STORE [IMAGES] [WORKERS] [--to-tensor]"""
import io
import math
import os
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


def cpu_of(pid):
    """CPU seconds (user + system) of process pid so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def torchvision_rate(jpegs, n, workers, to_tensor):
    import torch.utils.data as tud
    import torchvision.transforms as T
    tail = [T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])] if to_tensor else [T.PILToTensor()]
    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip()] + tail)

    class DS(tud.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, k):
            return tf(Image.open(io.BytesIO(jpegs[k % len(jpegs)])).convert("RGB"))

    dl = tud.DataLoader(DS(), batch_size=64, num_workers=workers, persistent_workers=workers > 0)
    for _ in dl:  # starts the workers, warms the caches
        pass
    pids = [w.pid for w in dl._iterator._workers] if workers > 0 else []
    c0, p0, t0 = sum(cpu_of(p) for p in pids), time.process_time(), time.time()
    for _ in dl:
        pass
    dt = time.time() - t0
    cpu = sum(cpu_of(p) for p in pids) - c0 + time.process_time() - p0
    return n / dt, n / cpu, f"torchvision DataLoader, {workers} workers"


def pil_rate(jpegs, n):
    rng = random.Random(1)
    t0, p0 = time.time(), time.process_time()
    for k in range(n):
        rrc(Image.open(io.BytesIO(jpegs[k % len(jpegs)])).convert("RGB"), rng).tobytes()
    return n / (time.time() - t0), n / (time.process_time() - p0), "PIL alone (no torchvision here), 1 process"


def main():
    args = [a for a in sys.argv[1:] if a != "--to-tensor"]
    to_tensor = len(args) < len(sys.argv) - 1
    jpegs = list(records(args[0]))
    n = int(args[1]) if len(args) > 1 else 2000
    workers = int(args[2]) if len(args) > 2 else 1
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        rate, per_cpu, what = torchvision_rate(jpegs, n, workers, to_tensor)
    except ImportError:
        (rate, per_cpu, what), workers = pil_rate(jpegs, n), 1
    tail = "ToTensor+Normalize" if to_tensor else "PILToTensor"
    print(f"loader=torchvision ({what}, {tail}) images={n} workers={workers} img_s={rate:.0f} "
          f"img_s_per_core={rate / max(workers, 1):.0f} img_per_cpu_s={per_cpu:.0f}")


main()
