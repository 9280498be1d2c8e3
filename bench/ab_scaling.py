#!/usr/bin/env python3
"""Thread scaling of several bigbatch binaries (commits) side by side, interleaved.

    python3 bench/ab_scaling.py --bin before=/tmp/old/bin/bigbatch --bin after=bin/bigbatch \\
        --case lenet:32 --case lenet:128 --rounds 4

Each round runs, for every binary in turn, one thread pinned to CPU 0, one thread pinned to
CPU 1 and then two threads (`bigbatch bench` on synthetic data, each run timed for about
--seconds); a binary's efficiency in a round is its two threads' img/s over the sum of its own
two pinned runs. The binaries alternate within every round, so a change of the machine's speed
between rounds (these virtual machines' cores move by tens of percent within minutes) reaches
them all alike. Prints one table per case: medians over the rounds, and each round's efficiency.

With --together each round also runs the two pinned one-thread runs at the same time, as two
processes that share nothing but the machine: their img/s summed is what two cores give when
both work (shared caches, memory and the host's other tenants included), and two threads'
img/s over it ("2T / together") is the part of the shortfall that is the engine's own.
"""
import argparse
import os
import statistics
import sys

import run_bench


def bench_command(binary, model, batch, steps, threads):
    return [binary, "bench", "--model", model, "--batch", str(batch), "--steps", str(steps),
            "--warmup", "10", "--threads", str(threads), "--profile-steps", "0"]


def img_s(binary, model, batch, steps, threads, cpu=None):
    """One `bigbatch bench` run's img/s (pinned to CPU `cpu` when given), through run_bench's runner."""
    return run_bench.img_s(bench_command(binary, model, batch, steps, threads), cpu)


def img_s_together(binary, model, batch, steps, cpus):
    """The summed img/s of one-thread runs pinned to each of cpus, started together."""
    return run_bench.img_s_together(bench_command(binary, model, batch, steps, 1), cpus)


def steps_for(binary, model, batch, seconds):
    """Steps that take the first binary about `seconds` on two threads (at least 20)."""
    rate = img_s(binary, model, batch, 30, 2)
    return max(20, int(seconds * rate / batch))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True, metavar="NAME=PATH", help="a binary to compare")
    ap.add_argument("--case", action="append", required=True, metavar="MODEL:BATCH")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2.0, help="the time of each timed run [2]")
    ap.add_argument("--together", action="store_true",
                    help="also run the pinned one-thread runs at the same time, each round")
    a = ap.parse_args()
    a.bins = []
    for spec in a.bin:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SystemExit("ab_scaling: --bin %r is not NAME=PATH" % spec)
        a.bins.append((name, path))
    a.cases = []
    for spec in a.case:
        model, sep, batch = spec.partition(":")
        if not sep or not batch.isdigit() or int(batch) < 1:
            raise SystemExit("ab_scaling: --case %r is not MODEL:BATCH" % spec)
        a.cases.append((model, int(batch)))
    if a.rounds < 1 or a.seconds <= 0:
        raise SystemExit("ab_scaling: --rounds and --seconds must be positive")
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("ab_scaling: needs 2 CPUs, this process may use %d" % len(os.sched_getaffinity(0)))
    return a


def main():
    a = parse_args()
    cpus = sorted(os.sched_getaffinity(0))[:2]
    for model, batch in a.cases:
        steps = steps_for(a.bins[0][1], model, batch, a.seconds)
        runs = {name: [] for name, _ in a.bins}
        for r in range(a.rounds):
            for name, path in a.bins:
                stalled = [run_bench.stalled_pct(cpu) for cpu in cpus]
                one = [img_s(path, model, batch, steps, 1, cpu) for cpu in cpus]
                both = img_s_together(path, model, batch, steps, cpus) if a.together else None
                two = img_s(path, model, batch, steps, 2)
                runs[name].append((one, two, both, stalled))
                print("  %s/%d round %d %s: %s on 1 thread, %.0f on 2 (%.0f%%)%s; stalled %s" % (
                    model, batch, r + 1, name, " / ".join("%.0f" % x for x in one), two, 100 * two / sum(one),
                    ", %.0f together (2T / together %.0f%%)" % (both, 100 * two / both) if both else "",
                    " / ".join("%.0f%%" % x for x in stalled)), file=sys.stderr, flush=True)
        print("%s batch %d: %d rounds of %d steps a run; img/s, medians; efficiency = 2 threads / (CPU %d + CPU %d)"
              % (model, batch, a.rounds, steps, cpus[0], cpus[1]))
        width = max(len(name) for name, _ in a.bins)
        extra = " | %9s | %14s" % ("together", "2T / together") if a.together else ""
        print("%-*s | %9s | %9s | %9s | %10s%s | %s | %s" % (
            width, "binary", "1T cpu%d" % cpus[0], "1T cpu%d" % cpus[1], "2 threads", "efficiency", extra,
            "each round", "stalled cpu%d / cpu%d, each round" % (cpus[0], cpus[1])))
        for name, _ in a.bins:
            v = runs[name]
            eff = [two / sum(one) for one, two, _, _ in v]
            extra = ""
            if a.together:
                extra = " | %9.0f | %13.0f%%" % (statistics.median(both for _, _, both, _ in v),
                                                 100 * statistics.median(two / both for _, two, both, _ in v))
            print("%-*s | %9.0f | %9.0f | %9.0f | %9.0f%%%s | %s | %s" % (
                width, name, statistics.median(one[0] for one, _, _, _ in v),
                statistics.median(one[1] for one, _, _, _ in v),
                statistics.median(two for _, two, _, _ in v), 100 * statistics.median(eff), extra,
                " ".join("%.0f%%" % (100 * e) for e in eff),
                " ".join("%.0f/%.0f" % tuple(stalled) for _, _, _, stalled in v)))
        print()


if __name__ == "__main__":
    main()
