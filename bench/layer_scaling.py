#!/usr/bin/env python3
"""Which layers of a model gain from a second thread: `bigbatch bench --layers` on 1 and on
--threads threads, alternating, --rounds times each, and every layer's median forward and
backward time on both beside the efficiency (one-thread time / (threads x threads' time)).

  python3 bench/layer_scaling.py --model lenet --batch 32 [--rounds 3] [--steps 1500]
      [--threads 2] [--bigbatch bin/bigbatch]

Run it on an otherwise idle machine: every run's profiled steps are timed layer by layer
(the backend synchronized around each layer), so the step is slower than `bench` reports
without --layers. The rows after the layers are the step's zeroing of the gradients (zero_grad)
and the optimizer's update (update); the last row, STEP, is the whole profiled step.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBER = re.compile(r"^[\d.]+$")


def profile(a, threads):
    """(img/s, {layer: (fwd ms, bwd ms)}) of one run."""
    cmd = [a.bigbatch, "bench", "--model", a.model, "--batch", str(a.batch), "--threads", str(threads),
           "--steps", str(a.steps), "--profile-steps", str(a.steps), "--layers"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit("layer_scaling: failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
    rows = {}
    for line in p.stderr.splitlines():
        f = line.split()
        if len(f) >= 5 and NUMBER.match(f[2]) and NUMBER.match(f[3]):
            rows[f[0]] = (float(f[2]), float(f[3]))
        step = re.search(r"the rest of ([\d.]+) ms/step", line)
        if step:
            rows["STEP"] = (float(step.group(1)), 0.0)
    return float(re.search(r"img_s=([\d.]+)", p.stdout).group(1)), rows


def efficiency(one, many, threads):
    return "%5.0f%%" % (100 * one / many / threads) if many > 0 else "     -"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bigbatch", default=os.path.join(ROOT, "bin", "bigbatch"))
    a = ap.parse_args()
    if a.rounds < 1 or a.steps < 1 or a.threads < 2:
        raise SystemExit("layer_scaling: --rounds and --steps must be positive, --threads at least 2")
    runs = {1: [], a.threads: []}
    for _ in range(a.rounds):
        for t in (1, a.threads):
            runs[t].append(profile(a, t))
    one, many = runs[1], runs[a.threads]
    print("%s batch %d: img/s on 1 thread %s, on %d threads %s (%d rounds of %d profiled steps, alternating)"
          % (a.model, a.batch, " ".join("%.0f" % r[0] for r in one), a.threads,
             " ".join("%.0f" % r[0] for r in many), a.rounds, a.steps))
    print("%-16s %9s %9s %6s %9s %9s %6s" % ("layer", "fwd 1T", "fwd %dT" % a.threads, "eff",
                                           "bwd 1T", "bwd %dT" % a.threads, "eff"))
    for name in one[0][1]:
        f1, b1 = (statistics.median(r[1][name][k] for r in one) for k in (0, 1))
        fn, bn = (statistics.median(r[1][name][k] for r in many) for k in (0, 1))
        print("%-16s %9.3f %9.3f %s %9.3f %9.3f %s" % (name, f1, fn, efficiency(f1, fn, a.threads), b1, bn,
                                                     efficiency(b1, bn, a.threads)))


if __name__ == "__main__":
    main()
