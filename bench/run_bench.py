#!/usr/bin/env python3
"""`make bench`: our training throughput beside PyTorch's, in one invocation.

For each model, runs `bigbatch bench` and bench/torch_bench.py alternately, each in
its own process, REPEATS times, and reports medians; then the OpenBLAS sgemm rate
(`bigbatch bench --sgemm`) that our convolutions are compared with. Only runs
subprocesses, so any python3 will do; PyTorch runs under --python
(/usr/bin/python3: Debian's python3-torch).

Settings (flag, or environment variable as `make bench` passes them):
  --repeats  BENCH_REPEATS  runs of each side per model [3]
  --threads  BENCH_THREADS  threads of both sides [the number of CPUs]
  --batch    BENCH_BATCH    batch size [128]
  --steps    BENCH_STEPS    timed steps per run [per model: 100 for lenet, else 20]
  --warmup   BENCH_WARMUP   untimed steps first [3]
  --models   BENCH_MODELS   comma-separated [lenet,alexnet-cifar,alexnet-bn-cifar,resnet20]
  --python   BENCH_PYTHON   interpreter with torch [/usr/bin/python3]
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["lenet", "alexnet-cifar", "alexnet-bn-cifar", "resnet20"]
DEFAULT_STEPS = {"lenet": 100}  # fast models get more steps so a run lasts seconds


def env(name, default):
    v = os.environ.get(name, "")
    return v if v != "" else default


def parse_line(text, prefix):
    """The key=value line starting with `prefix` in a run's output, as a dict."""
    for line in text.splitlines():
        if line.startswith(prefix):
            return dict(kv.split("=", 1) for kv in line.split())
    raise RuntimeError("no '%s...' line in:\n%s" % (prefix, text))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit("run_bench: failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
    return p.stdout


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--repeats", type=int, default=int(env("BENCH_REPEATS", "3")))
    ap.add_argument("--threads", type=int, default=int(env("BENCH_THREADS", str(os.cpu_count() or 1))))
    ap.add_argument("--batch", type=int, default=int(env("BENCH_BATCH", "128")))
    ap.add_argument("--steps", type=int, default=int(env("BENCH_STEPS", "0")),
                    help="timed steps per run (0: per model)")
    ap.add_argument("--warmup", type=int, default=int(env("BENCH_WARMUP", "3")))
    ap.add_argument("--models", default=env("BENCH_MODELS", ",".join(MODELS)))
    ap.add_argument("--python", default=env("BENCH_PYTHON", "/usr/bin/python3"))
    ap.add_argument("--bigbatch", default=os.path.join(ROOT, "bin", "bigbatch"))
    a = ap.parse_args()
    if a.repeats < 1 or a.threads < 1 or a.batch < 1:
        raise SystemExit("run_bench: --repeats, --threads and --batch must be positive")
    models = [m for m in a.models.split(",") if m]
    torch_py = os.path.join(ROOT, "bench", "torch_bench.py")

    load = os.getloadavg()[0]
    if load > 0.5:
        print("run_bench: warning: load average %.2f before starting; other work skews the numbers"
              % load, file=sys.stderr)

    results = {}
    torch_version = "?"
    for m in models:
        steps = a.steps or DEFAULT_STEPS.get(m, 20)
        common = ["--model", m, "--batch", str(a.batch), "--steps", str(steps),
                  "--warmup", str(a.warmup), "--threads", str(a.threads)]
        ours_cmd = [a.bigbatch, "bench"] + common + ["--profile-steps", str(max(5, steps // 2))]
        torch_cmd = [a.python, torch_py] + common + ["--bigbatch", a.bigbatch]
        ours, theirs = [], []
        for r in range(a.repeats):
            # alternate the two sides (and which goes first) so drift hits both alike
            order = [("ours", ours_cmd), ("torch", torch_cmd)]
            if r % 2:
                order.reverse()
            for side, cmd in order:
                d = parse_line(run(cmd), "model=")
                (ours if side == "ours" else theirs).append(d)
                print("  %-17s %-5s run %d/%d: %8.1f img/s" % (m, side, r + 1, a.repeats, float(d["img_s"])),
                      file=sys.stderr, flush=True)
        torch_version = theirs[0].get("torch", torch_version)

        def med(runs, key):
            return statistics.median(float(d[key]) for d in runs)

        results[m] = {
            "ours": med(ours, "img_s"), "torch": med(theirs, "img_s"),
            "ours_mb": med(ours, "peak_rss_mb"), "torch_mb": med(theirs, "peak_rss_mb"),
            "conv_gflops": med(ours, "conv_gflops"), "conv_fraction": med(ours, "conv_fraction"),
            "spread_ours": (min(float(d["img_s"]) for d in ours), max(float(d["img_s"]) for d in ours)),
            "spread_torch": (min(float(d["img_s"]) for d in theirs), max(float(d["img_s"]) for d in theirs)),
            "steps": steps,
        }

    sg = [parse_line(run([a.bigbatch, "bench", "--sgemm", "--threads", str(a.threads)]), "sgemm_")
          for _ in range(a.repeats)]
    sg1 = statistics.median(float(d["sgemm_gflops_1thread"]) for d in sg)
    sgn = statistics.median(float(d["sgemm_gflops_Nthreads"]) for d in sg)

    header = ("model", "ours img/s", "PyTorch img/s", "ours/PyTorch", "ours peak MB", "PyTorch peak MB",
              "conv GFLOP/s", "conv % of step")
    rows = []
    for m in models:
        r = results[m]
        rows.append((m, "%.0f" % r["ours"], "%.0f" % r["torch"], "%.2fx" % (r["ours"] / r["torch"]),
                     "%.0f" % r["ours_mb"], "%.0f" % r["torch_mb"], "%.1f" % r["conv_gflops"],
                     "%.0f%%" % (100 * r["conv_fraction"])))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]

    def fmt(row):
        return " | ".join((c.ljust(w) if i == 0 else c.rjust(w)) for i, (c, w) in enumerate(zip(row, widths)))

    print()
    print("Training throughput, forward+backward+SGD update (synthetic data, batch %d, %d threads, "
          "median of %d runs each)" % (a.batch, a.threads, a.repeats))
    print()
    print(fmt(header))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(fmt(row))
    print()
    pct = {m: 100 * results[m]["conv_gflops"] / sgn for m in models}
    lo, hi = min(pct.values()), max(pct.values())
    print("OpenBLAS sgemm (1024x1024x1024, median): %.1f GFLOP/s on 1 thread, %.1f on %d threads; "
          "our convolutions reach %s of it (%s)"
          % (sg1, sgn, a.threads, "%.0f%%" % hi if round(lo) == round(hi) else "%.0f-%.0f%%" % (lo, hi),
             ", ".join("%s %.0f%%" % (m, pct[m]) for m in models)))
    print()
    print("threads %d, batch %d, repeats %d, steps per run %s, %s, %s; PyTorch %s (%s)"
          % (a.threads, a.batch, a.repeats,
             "/".join("%s %d" % (m, results[m]["steps"]) for m in models),
             datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cpu_name(), torch_version, a.python))
    print("img/s range over the runs (min-max): " + "; ".join(
        "%s ours %.0f-%.0f, PyTorch %.0f-%.0f" % ((m,) + results[m]["spread_ours"] + results[m]["spread_torch"])
        for m in models))
    print("peak MB is each process's maximum resident set (getrusage), the Python interpreter and "
          "libtorch included on PyTorch's side; conv GFLOP/s counts forward, backward-data and "
          "backward-weights over the time inside convolution layers (profiled steps).")


if __name__ == "__main__":
    main()
