#!/usr/bin/env python3
"""References for bigbatch's random-resized crop (tests/cli/data_rrc.sh, data_store.sh).

dist W H DRAWS: DRAWS holds bigbatch's draws for a W x H image (`bigbatch data rrc`, one
  "top left h w flip" a line). As many draws of torchvision's RandomResizedCrop.get_params,
  restated below (scale 0.08-1, log-uniform ratio 3/4-4/3, ten attempts, centre fallback), are
  made with Python's generator; the two samples' crop scale (h*w/area) and log aspect ratio
  (log(w/h)) must have two-sample Kolmogorov-Smirnov statistics below 0.01 (the 0.1% critical
  value for two samples of 100,000 is 1.95 * sqrt(2/100000) = 0.0087), the crops must lie in
  the image, and the flip rate must be within 0.01 of 1/2.
pixels STORE RECORD PPM MODE [TOP LEFT H W FLIP]: the record's stored JPEG decoded by PIL and
  transformed as torchvision does (MODE rrc: crop the box, resize to the PPM's size with
  BILINEAR, flip; MODE eval: Resize(size / 0.875) then CenterCrop(size)); the PPM from
  `bigbatch data crop` must agree within 1 (max abs difference) and 0.05 mean.
"""
import math
import random
import struct
import sys


def get_params(width, height, rng):
    area = height * width
    log_ratio = (math.log(3 / 4), math.log(4 / 3))
    for _ in range(10):
        target_area = area * rng.uniform(0.08, 1.0)
        aspect_ratio = math.exp(rng.uniform(log_ratio[0], log_ratio[1]))
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            i = rng.randint(0, height - h)
            j = rng.randint(0, width - w)
            return i, j, h, w
    in_ratio = float(width) / float(height)
    if in_ratio < 3 / 4:
        w = width
        h = int(round(w / (3 / 4)))
    elif in_ratio > 4 / 3:
        h = height
        w = int(round(h * (4 / 3)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def ks(a, b):
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] <= x:
            i += 1
        while j < len(b) and b[j] <= x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d


def dist(width, height, path):
    ours = [tuple(int(v) for v in line.split()) for line in open(path)]
    rng = random.Random(12345)
    ref = [get_params(width, height, rng) for _ in ours]
    area = width * height
    for t, l, h, w, _ in ours:
        assert 0 <= t and t + h <= height and 0 <= l and l + w <= width, (t, l, h, w)
    stats = {}
    for name, f in (("scale", lambda d: d[2] * d[3] / area), ("log_ratio", lambda d: math.log(d[3] / d[2]))):
        stats[name] = ks([f(d) for d in ours], [f(d) for d in ref])
    flip = sum(d[4] for d in ours) / len(ours)
    print(f"{width}x{height}: {len(ours)} draws, KS scale {stats['scale']:.4f}, KS log-ratio "
          f"{stats['log_ratio']:.4f} (bound 0.01), flip rate {flip:.4f}")
    return 0 if max(stats.values()) < 0.01 and abs(flip - 0.5) < 0.01 else 1


def record_jpeg(path, k):
    data = open(path, "rb").read()
    count, classes = struct.unpack_from("<II", data, 8)
    index = struct.unpack_from("<Q", data, 24)[0]
    off, size = struct.unpack_from("<QI", data, index + 32 * k)
    return data[off:off + size]


def read_ppm(path):
    data = open(path, "rb").read()
    parts = data.split(b"\n", 3)
    w, h = (int(v) for v in parts[1].split())
    return w, h, parts[3]


def pixels(store, k, ppm, mode, box):
    import io
    from PIL import Image
    im = Image.open(io.BytesIO(record_jpeg(store, k))).convert("RGB")
    ow, oh, ours = read_ppm(ppm)
    if mode == "rrc":
        t, l, h, w, flip = box
        ref = im.crop((l, t, l + w, t + h)).resize((ow, oh), Image.BILINEAR)
        if flip:
            ref = ref.transpose(Image.FLIP_LEFT_RIGHT)
    else:
        s = int(oh / 0.875)
        W, H = im.size
        nw, nh = (s, int(s * H / W)) if W <= H else (int(s * W / H), s)
        ref = im.resize((nw, nh), Image.BILINEAR)
        top, left = int(round((nh - oh) / 2.0)), int(round((nw - ow) / 2.0))
        ref = ref.crop((left, top, left + ow, top + oh))
    diffs = [abs(a - b) for a, b in zip(ours, ref.tobytes())]
    worst, mean = max(diffs), sum(diffs) / len(diffs)
    print(f"record {k} {mode} {im.size[0]}x{im.size[1]} -> {ow}x{oh}: max |diff| {worst}, mean {mean:.4f}")
    return 0 if worst <= 1 and mean <= 0.05 else 1


if __name__ == "__main__":
    if sys.argv[1] == "dist":
        sys.exit(dist(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
    box = tuple(int(v) for v in sys.argv[6:11]) if len(sys.argv) > 6 else None
    sys.exit(pixels(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], box))
