#!/usr/bin/env python3
"""`make bench`: our training throughput and memory beside PyTorch's, in one invocation.

For each model and batch, runs `bigbatch bench` and bench/torch_bench.py alternately,
each in its own process, REPEATS times, and reports medians; then the OpenBLAS sgemm
rate (`bigbatch bench --sgemm`) that our convolutions are compared with. Only runs
subprocesses, so any python3 will do; PyTorch runs under --python
(/usr/bin/python3: Debian's python3-torch).

Settings (flag, or environment variable as `make bench` passes them):
  --repeats      BENCH_REPEATS      runs of each side per model and batch [3]
  --threads      BENCH_THREADS      threads of both sides [the number of CPUs]
  --batches      BENCH_BATCHES      comma-separated batch sizes [32,128]
  --steps        BENCH_STEPS        timed steps per run [5 at full size; else as many as
                                    take our engine about 2 seconds (a short probe run
                                    finds the step time), at least 20: shorter timed
                                    runs of the fast models moved the thread-scaling
                                    efficiencies by 10-15 points from run to run]
  --warmup       BENCH_WARMUP       untimed steps first [10; 1 at full size]
  --models       BENCH_MODELS       comma-separated [every CIFAR/MNIST-size model]
  --full         BENCH_FULL=1       also the ImageNet-size models (alexnet, alexnet-bn,
                                    resnet50: minutes each) at --full-batches
  --full-batches BENCH_FULL_BATCHES [16,32]
  --python       BENCH_PYTHON       interpreter with torch [/usr/bin/python3]
  --epoch-root   BENCH_CIFAR10      CIFAR-10's folder for the end-to-end epochs (bigbatch's
                                    --data-root; unpacked there from BIGBATCH_CIFAR10_TAR when
                                    it has no train/) [data/cifar10-jpeg]; "off" skips them
  --epoch-images BENCH_EPOCH_IMAGES training,test images of those epochs [10000,2000]
  --scaling      BENCH_SCALING      1: also our img/s on one thread, beside --threads, for
                                    every model and batch (the thread-scaling table); "only":
                                    that table alone [1]
  --scaling-pairs BENCH_SCALING_PAIRS rounds of the thread-scaling table [5]. Each round runs
                                    one thread pinned to each of the first --threads CPUs,
                                    then --threads threads, back to back (the order alternating
                                    between rounds). Efficiency is the threads' img/s over the
                                    sum of the cores' own: "linear" on these virtual machines,
                                    whose cores run at different speeds from hour to hour (one
                                    at 63% of the other's lenet speed on 2026-12-05 while both
                                    ran a scalar loop alike). Its median over the rounds is
                                    the table's, so a change of the machine's speed between
                                    rounds (minutes apart) cancels. Beside it, what an even
                                    split of the images can reach at best: threads x the
                                    slowest core over that sum. Each round also runs the
                                    pinned one-thread runs all at once ("together": separate
                                    processes, sharing only the machine); threads over
                                    together is the part of the shortfall that is the engine's
                                    own, whatever the machine or its host does meanwhile. And
                                    before its runs, each core's stalls: the share of 0.3 s of a
                                    pinned busy loop that the host took away in pauses
                                    (bench/core_stalls.c). A core the host pauses for
                                    milliseconds holds up every parallel region it is in, and
                                    no split of the work can win that time back

End to end, both engines then train resnet20 on CIFAR-10 for one epoch with the same recipe
(batch 128, SGD lr 0.05 momentum 0.9 weight decay 5e-4, random crop + flip, evaluation on
the test images), REPEATS times each, alternately; the wall-clock time of each process is
what is compared: batch assembly, augmentation and evaluation included.
"""
import argparse
import datetime
import math
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["lenet", "simple-cnn", "alexnet-cifar", "alexnet-bn-cifar", "resnet20", "resnet8"]
FULL_SIZE = ["alexnet", "alexnet-bn", "resnet50"]
FULL_SIZE_STEPS = 5  # steps of seconds each
TIMED_SECONDS = 2.0  # the least time our timed steps take, at the small models' default
PROBED_STEPS = {}     # (model, batch) -> the steps that take our engine TIMED_SECONDS


def env(name, default):
    v = os.environ.get(name, "")
    return v if v != "" else default


def parse_line(text, prefix):
    """The key=value line starting with `prefix` in a run's output, as a dict."""
    for line in text.splitlines():
        if line.startswith(prefix):
            return dict(kv.split("=", 1) for kv in line.split())
    raise RuntimeError("no '%s...' line in:\n%s" % (prefix, text))


def start(cmd, cpu=None):
    """cmd started with its output piped; on CPU `cpu` alone when given (the child pins itself
    before exec)."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pin)


def finish(cmd, p):
    """The stdout of p (started from cmd) once it ends; its failure ends this script."""
    out, err = p.communicate()
    if p.returncode != 0:
        sys.stderr.write(out + err)
        raise SystemExit("run_bench: failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
    return out


def run(cmd, cpu=None):
    """A run's stdout; on CPU `cpu` alone when given."""
    return finish(cmd, start(cmd, cpu))


def run_together(cmd, cpus):
    """Each run's stdout, one copy of cmd pinned to each of cpus, all started at once."""
    return [finish(cmd, p) for p in [start(cmd, cpu) for cpu in cpus]]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def int_list(text, what):
    try:
        values = [int(v) for v in text.split(",") if v]
    except ValueError:
        raise SystemExit("run_bench: %s must be comma-separated integers, not %r" % (what, text))
    if not values or min(values) < 1:
        raise SystemExit("run_bench: %s must be positive integers, not %r" % (what, text))
    return values


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--repeats", type=int, default=int(env("BENCH_REPEATS", "3")))
    ap.add_argument("--threads", type=int, default=int(env("BENCH_THREADS", str(os.cpu_count() or 1))))
    ap.add_argument("--batches", default=env("BENCH_BATCHES", "32,128"))
    ap.add_argument("--steps", type=int, default=int(env("BENCH_STEPS", "0")),
                    help="timed steps per run (0: per model)")
    ap.add_argument("--warmup", type=int, default=int(env("BENCH_WARMUP", "0")),
                    help="untimed steps first (0: per model)")
    ap.add_argument("--models", default=env("BENCH_MODELS", ",".join(MODELS)))
    ap.add_argument("--full", action="store_true", default=env("BENCH_FULL", "") == "1")
    ap.add_argument("--full-batches", default=env("BENCH_FULL_BATCHES", "16,32"))
    ap.add_argument("--python", default=env("BENCH_PYTHON", "/usr/bin/python3"))
    ap.add_argument("--bigbatch", default=os.path.join(ROOT, "bin", "bigbatch"))
    ap.add_argument("--epoch-root", default=env("BENCH_CIFAR10", os.path.join(ROOT, "data", "cifar10-jpeg")))
    ap.add_argument("--epoch-images", default=env("BENCH_EPOCH_IMAGES", "10000,2000"))
    ap.add_argument("--scaling", default=env("BENCH_SCALING", "1"), choices=["0", "1", "only"])
    ap.add_argument("--scaling-pairs", type=int, default=int(env("BENCH_SCALING_PAIRS", "5")))
    a = ap.parse_args()
    if a.repeats < 1 or a.threads < 1 or a.steps < 0 or a.warmup < 0 or a.scaling_pairs < 1:
        raise SystemExit("run_bench: --repeats, --threads and --scaling-pairs must be positive, --steps and "
                         "--warmup not negative")
    cases = [(m, b) for m in a.models.split(",") if m for b in int_list(a.batches, "--batches")]
    if a.full:
        cases += [(m, b) for m in FULL_SIZE for b in int_list(a.full_batches, "--full-batches")]
    return a, cases


def timed_steps(a, model, batch):
    """--steps, or 5 at full size, or the steps that take our engine about TIMED_SECONDS on
    a.threads threads (at least 20), from a probe of 30 steps after 10 untimed ones (a new
    process's first steps are several times slower), once per model and batch."""
    if a.steps:
        return a.steps
    if model in FULL_SIZE:
        return FULL_SIZE_STEPS
    if (model, batch) not in PROBED_STEPS:
        probe = [a.bigbatch, "bench", "--model", model, "--batch", str(batch), "--steps", "30", "--warmup", "10",
                 "--threads", str(a.threads), "--profile-steps", "0"]
        ms = float(parse_line(run(probe), "model=")["ms_per_step"])
        PROBED_STEPS[(model, batch)] = max(20, min(20000, math.ceil(TIMED_SECONDS * 1000 / ms)))
    return PROBED_STEPS[(model, batch)]


def ours_command(a, model, batch, threads):
    steps = timed_steps(a, model, batch)
    warmup = a.warmup or (1 if model in FULL_SIZE else 10)
    return [a.bigbatch, "bench", "--model", model, "--batch", str(batch), "--steps", str(steps),
            "--warmup", str(warmup), "--threads", str(threads), "--profile-steps", "0"]


def scaling_cpus(a):
    """The CPUs the one-thread runs are pinned to: the first a.threads this process may use."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < a.threads:
        raise SystemExit("run_bench: the thread-scaling table needs %d CPUs, this process may use %d"
                         % (a.threads, len(cpus)))
    return cpus[:a.threads]


def img_s(cmd, cpu=None):
    return float(parse_line(run(cmd, cpu), "model=")["img_s"])


def core_stalls_binary():
    """bench/core_stalls.c's binary (make bench builds it; BENCH_CORE_STALLS names another)."""
    path = env("BENCH_CORE_STALLS", "build/release/bench/core_stalls")
    if not os.access(path, os.X_OK):
        raise SystemExit("run_bench: %s is missing: the thread-scaling table runs it on each core every round "
                         "(make build/release/bench/core_stalls, or set BENCH_CORE_STALLS)" % path)
    return path


def stalled_pct(cpu, seconds=0.3):
    """The share of CPU `cpu`'s time, in percent, that the host took away in pauses over
    `seconds` of a pinned busy loop (bench/core_stalls.c)."""
    return float(parse_line(run([core_stalls_binary(), str(seconds)], cpu), "cpu=")["stalled_pct"])


def img_s_together(cmd, cpus):
    """The img/s of one-thread runs pinned to each of cpus and started together, summed: what
    the cores give when all of them work at once, as separate processes sharing nothing but the
    machine (its caches, memory and the host's share of it)."""
    return sum(float(parse_line(out, "model=")["img_s"]) for out in run_together(cmd, cpus))


def measure_scaling(a, cases):
    """Per case, a.scaling_pairs rounds of one run on one thread pinned to each CPU, the same
    runs all at once, and one run on a.threads threads: {case: {"cores": [[img/s of each round]
    per CPU], "together": [summed img/s of each round], "many": [img/s of each round]}}."""
    if a.scaling == "0" or a.threads < 2:
        return {}
    cpus = scaling_cpus(a)
    scaling = {}
    for model, batch in cases:
        cores, together, many, stalls = [[] for _ in cpus], [], [], [[] for _ in cpus]
        one = ours_command(a, model, batch, 1)
        for r in range(a.scaling_pairs):
            for k, cpu in enumerate(cpus):
                stalls[k].append(stalled_pct(cpu))
            if r % 2:
                many.append(img_s(ours_command(a, model, batch, a.threads)))
            for k, cpu in enumerate(cpus):
                cores[k].append(img_s(one, cpu))
            together.append(img_s_together(one, cpus))
            if r % 2 == 0:
                many.append(img_s(ours_command(a, model, batch, a.threads)))
        scaling[(model, batch)] = {"cores": cores, "together": together, "many": many, "cpus": cpus,
                                   "stalls": stalls}
        print("  %-17s batch %-4d cores %s: %s img/s on 1 thread, together %s, %d threads: %s; stalled %% %s" % (
            model, batch, ",".join(map(str, cpus)),
            " / ".join(" ".join("%.0f" % x for x in c) for c in cores), " ".join("%.0f" % x for x in together),
            a.threads, " ".join("%.0f" % x for x in many),
            " / ".join(" ".join("%.0f" % x for x in c) for c in stalls)), file=sys.stderr, flush=True)
    return scaling


def scaling_row(m, b, s):
    """One row of the thread-scaling table from a case's rounds."""
    rounds = range(len(s["many"]))
    sums = [sum(c[r] for c in s["cores"]) for r in rounds]
    eff = [s["many"][r] / sums[r] for r in rounds]
    own = [s["many"][r] / s["together"][r] for r in rounds]
    even = [len(s["cores"]) * min(c[r] for c in s["cores"]) / sums[r] for r in rounds]
    slowest = [min(c[r] for c in s["cores"]) / max(c[r] for c in s["cores"]) for r in rounds]
    pct = lambda x: "%.0f%%" % (100 * x)
    return (m, str(b), " / ".join("%.1f" % statistics.median(c) for c in s["cores"]),
            "%.1f" % statistics.median(s["many"]), pct(statistics.median(eff)),
            "%s-%s" % (pct(min(eff)), pct(max(eff))), pct(statistics.median(slowest)),
            pct(statistics.median(even)), "%.1f" % statistics.median(s["together"]), pct(statistics.median(own)),
            " / ".join("%.0f%%" % max(c) for c in s["stalls"]))


def print_scaling(a, scaling):
    if not scaling:
        return
    cpus = next(iter(scaling.values()))["cpus"]
    print("Thread scaling, ours: img/s on 1 thread pinned to each of CPUs %s and on %d threads (synthetic data, "
          "%d rounds back to back, medians; efficiency = %d threads' img/s / the sum of the cores' own, the "
          "median of the rounds' own ratios; together = the pinned one-thread runs at the same time, summed; "
          "stalled = the share of a pinned busy loop's time that the host took away in pauses, each round before "
          "its runs, bench/core_stalls.c)"
          % (",".join(map(str, cpus)), a.threads, a.scaling_pairs, a.threads))
    print()
    header = ("model", "batch", "1 thread img/s, each core", "%d threads img/s" % a.threads, "efficiency",
              "rounds' efficiency range", "slowest core / fastest", "even split's best", "together img/s",
              "%d threads / together" % a.threads, "stalled, worst round, each core")
    print_table(header, [scaling_row(m, b, s) for (m, b), s in scaling.items()])
    print()


def measure(a, model, batch):
    """Medians over a.repeats alternating runs of each side, for one model and batch."""
    steps = timed_steps(a, model, batch)
    warmup = a.warmup or (1 if model in FULL_SIZE else 10)
    common = ["--model", model, "--batch", str(batch), "--steps", str(steps),
              "--warmup", str(warmup), "--threads", str(a.threads)]
    ours_cmd = [a.bigbatch, "bench"] + common + ["--profile-steps", str(max(2, steps // 2))]
    torch_cmd = [a.python, os.path.join(ROOT, "bench", "torch_bench.py")] + common + ["--bigbatch", a.bigbatch]
    ours, theirs = [], []
    for r in range(a.repeats):
        # alternate the two sides (and which goes first) so drift hits both alike
        order = [("ours", ours_cmd), ("torch", torch_cmd)]
        if r % 2:
            order.reverse()
        for side, cmd in order:
            d = parse_line(run(cmd), "model=")
            (ours if side == "ours" else theirs).append(d)
            print("  %-17s batch %-4d %-5s run %d/%d: %8.1f img/s %6.0f MB" % (
                model, batch, side, r + 1, a.repeats, float(d["img_s"]), float(d["peak_rss_mb"])),
                file=sys.stderr, flush=True)

    def med(runs, key):
        return statistics.median(float(d[key]) for d in runs)

    def spread(runs):
        return (min(float(d["img_s"]) for d in runs), max(float(d["img_s"]) for d in runs))

    return {
        "ours": med(ours, "img_s"), "torch": med(theirs, "img_s"),
        "ours_mb": med(ours, "peak_rss_mb"), "torch_mb": med(theirs, "peak_rss_mb"),
        "conv_gflops": med(ours, "conv_gflops"), "conv_fraction": med(ours, "conv_fraction"),
        "spread_ours": spread(ours), "spread_torch": spread(theirs), "steps": steps,
        "torch_version": theirs[0].get("torch", "?"),
    }


EPOCH_RECIPE = ["--model", "resnet20", "--data", "cifar10", "--epochs", "1", "--batch", "128",
                "--lr", "0.05", "--momentum", "0.9", "--weight-decay", "5e-4"]


def measure_epochs(a):
    """Wall-clock seconds of one resnet20 epoch per engine (medians), or None with the reason."""
    if a.epoch_root == "off":
        return None, "skipped (--epoch-root off)"
    images = int_list(a.epoch_images, "--epoch-images")
    if len(images) != 2:
        raise SystemExit("run_bench: --epoch-images is TRAINING,TEST, not %r" % a.epoch_images)
    data = ["--data-root", a.epoch_root, "--threads", str(a.threads),
            "--train-subset", str(images[0]), "--test-subset", str(images[1])]
    # one short run first: unpacks and decodes the images into the cache both engines read
    prep = subprocess.run([a.bigbatch, "train", "--quiet", "--steps", "1"] + EPOCH_RECIPE + data,
                          capture_output=True, text=True)
    if prep.returncode != 0:
        return None, "skipped: bigbatch cannot read CIFAR-10 at %s: %s" % (
            a.epoch_root, (prep.stderr.strip().splitlines() or ["?"])[-1])
    ours_cmd = [a.bigbatch, "train", "--quiet"] + EPOCH_RECIPE + data
    torch_cmd = [a.python, os.path.join(ROOT, "bench", "torch_train.py")] + EPOCH_RECIPE + data
    times = {"ours": [], "torch": []}
    accs = {"ours": [], "torch": []}
    for r in range(a.repeats):
        order = [("ours", ours_cmd), ("torch", torch_cmd)]
        if r % 2:
            order.reverse()
        for side, cmd in order:
            t0 = time.monotonic()
            out = run(cmd)
            times[side].append(time.monotonic() - t0)
            acc = [l for l in out.splitlines() if "test_acc" in l]
            accs[side].append(acc[-1].strip() if acc else "?")
            print("  resnet20 epoch    %-5s run %d/%d: %6.1f s" % (side, r + 1, a.repeats, times[side][-1]),
                  file=sys.stderr, flush=True)
    return {"ours": statistics.median(times["ours"]), "torch": statistics.median(times["torch"]),
            "images": images, "acc_ours": accs["ours"][-1], "acc_torch": accs["torch"][-1]}, None


def print_table(header, rows):
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]

    def fmt(row):
        return " | ".join((c.ljust(w) if i == 0 else c.rjust(w)) for i, (c, w) in enumerate(zip(row, widths)))

    print(fmt(header))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(fmt(row))


def main():
    a, cases = parse_args()
    load = os.getloadavg()[0]
    if load > 0.5:
        print("run_bench: warning: load average %.2f before starting; other work skews the numbers"
              % load, file=sys.stderr)
    if a.scaling == "only":
        print_scaling(a, measure_scaling(a, cases))
        print("threads %d, %s, %s" % (a.threads, datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cpu_name()))
        return
    results = {case: measure(a, *case) for case in cases}
    scaling = measure_scaling(a, cases)
    epochs, epochs_skipped = measure_epochs(a)

    sg = [parse_line(run([a.bigbatch, "bench", "--sgemm", "--threads", str(a.threads)]), "sgemm_")
          for _ in range(a.repeats)]
    sg1 = statistics.median(float(d["sgemm_gflops_1thread"]) for d in sg)
    sgn = statistics.median(float(d["sgemm_gflops_Nthreads"]) for d in sg)

    header = ("model", "batch", "ours img/s", "PyTorch img/s", "ours/PyTorch", "ours peak MB", "PyTorch peak MB",
              "ours/PyTorch MB", "conv GFLOP/s", "conv % of sgemm", "conv % of step")
    rows = []
    for (m, b), r in results.items():
        rows.append((m, str(b), "%.1f" % r["ours"], "%.1f" % r["torch"], "%.2fx" % (r["ours"] / r["torch"]),
                     "%.0f" % r["ours_mb"], "%.0f" % r["torch_mb"], "%.2f" % (r["ours_mb"] / r["torch_mb"]),
                     "%.1f" % r["conv_gflops"], "%.0f%%" % (100 * r["conv_gflops"] / sgn),
                     "%.0f%%" % (100 * r["conv_fraction"])))
    print()
    print("Training throughput and peak memory, forward+backward+SGD update (synthetic data, %d threads, "
          "median of %d runs each)" % (a.threads, a.repeats))
    print()
    print_table(header, rows)
    print()
    print("OpenBLAS sgemm (1024x1024x1024, median): %.1f GFLOP/s on 1 thread, %.1f on %d threads"
          % (sg1, sgn, a.threads))
    print()
    print_scaling(a, scaling)
    first = next(iter(results.values()))
    print("threads %d, repeats %d, %s, %s; PyTorch %s (%s)"
          % (a.threads, a.repeats, datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cpu_name(),
             first["torch_version"], a.python))
    steps = {m: r["steps"] for (m, b), r in results.items()}
    print("timed steps per run: " + ", ".join("%s %d" % kv for kv in steps.items()))
    print("img/s range over the runs (min-max): " + "; ".join(
        "%s/%d ours %.1f-%.1f, PyTorch %.1f-%.1f" % ((m, b) + r["spread_ours"] + r["spread_torch"])
        for (m, b), r in results.items()))
    print()
    if epochs:
        print("End to end: resnet20, one CIFAR-10 epoch of %d training images + evaluation on %d test images, "
              "batch 128, %d threads, median of %d runs: ours %.1f s, PyTorch %.1f s, ours/PyTorch speed %.2fx"
              % (epochs["images"][0], epochs["images"][1], a.threads, a.repeats, epochs["ours"], epochs["torch"],
                 epochs["torch"] / epochs["ours"]))
        print("  last runs' final lines: ours: %s | PyTorch: %s" % (epochs["acc_ours"], epochs["acc_torch"]))
    else:
        print("End to end: resnet20 epochs " + epochs_skipped)
    print()
    print("peak MB is each process's maximum resident set (getrusage), the Python interpreter and "
          "libtorch included on PyTorch's side; conv GFLOP/s counts forward, backward-data and "
          "backward-weights over the time inside convolution layers (profiled steps).")


if __name__ == "__main__":
    main()
