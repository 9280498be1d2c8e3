#!/usr/bin/env python3
"""bigbatch's loader beside torchvision's DataLoader, in one run: for W = 1 and 2 (or --workers),
`bigbatch data bench --threads W` and bench/loader_bench.py with W worker processes over the same
store's JPEGs (RandomResizedCrop(224) + flip to 8-bit CHW on both sides; see loader_bench.py),
taking turns R times; prints each run, then per W the medians of img/s in total, per core
(total / W) and per CPU-second (robust to a busy machine), and ours / torchvision's.
With --make DIR it first writes ImageNet-like JPEGs (bench/make_bench_jpegs.py) and packs them
at their own size (--max-side 512) into DIR/store.
usage: loader_compare.py (--store FILE | --make DIR) [--images N] [--reps R] [--workers 1,2]
                         [--bin bin/bigbatch] [--python /usr/bin/python3] [--to-tensor]"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fields(line):
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv and not kv.startswith("("))


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print("  " + out, flush=True)
    return fields(out)


def make_store(a):
    jpegs, store = os.path.join(a.make, "jpegs"), os.path.join(a.make, "store")
    if not os.path.isdir(jpegs):
        subprocess.run([a.python, os.path.join(HERE, "make_bench_jpegs.py"), jpegs, "400"], check=True)
    subprocess.run([a.bin, "data", "pack", "--data-root", jpegs, "--out", store, "--max-side", "512", "--quiet"],
                   check=True)
    return os.path.join(store, "train.bbjpeg")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--store")
    p.add_argument("--make")
    p.add_argument("--images", type=int, default=1000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--bin", default="bin/bigbatch")
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--to-tensor", action="store_true")
    a = p.parse_args()
    if not a.store and not a.make:
        p.error("needs --store or --make")
    store = a.store or make_store(a)
    print(f"store={store} images={a.images} reps={a.reps} cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f}")
    rows = {}
    for w in [int(x) for x in a.workers.split(",")]:
        ours, theirs = [], []
        for _ in range(a.reps):
            ours.append(run([a.bin, "data", "bench", "--store", store, "--threads", str(w), "--images", str(a.images)]))
            theirs.append(run([a.python, os.path.join(HERE, "loader_bench.py"), store, str(a.images), str(w)] +
                              (["--to-tensor"] if a.to_tensor else [])))
        rows[w] = [[statistics.median(float(r[k]) for r in side) for k in ("img_s", "img_per_cpu_s")]
                   for side in (ours, theirs)]
    print(f"load after={os.getloadavg()[0]:.2f}\n"
          "W  ours_img_s  tv_img_s  ours_per_core  tv_per_core  ratio  ours_img_per_cpu_s  tv_img_per_cpu_s  ratio_cpu")
    for w, ((o, oc), (t, tc)) in rows.items():
        print(f"{w}  {o:10.0f}  {t:8.0f}  {o / w:13.0f}  {t / w:11.0f}  {o / t:5.2f}  {oc:18.0f}  {tc:16.0f}  {oc / tc:9.2f}")


if __name__ == "__main__":
    sys.exit(main())
