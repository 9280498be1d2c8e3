#!/usr/bin/env python3
"""`make bench`, MPI part: the gradient allreduce (bucketed and overlapped, as training
uses it, against one plain MPI_Allreduce of the whole buffer) and training throughput at
1 and 2 ranks on this machine. Medians of REPEATS runs.

Settings (environment, as `make bench` passes them):
  BENCH_REPEATS  runs of each measurement [3]
  BENCH_MPI_MB   allreduce sizes in MB, comma-separated [0.1,1,10,25,100]  (ResNet-50's
                 gradient is 102 MB, AlexNet's 244 MB)
  BENCH_MPI_RANKS  rank counts of the allreduce tables, comma-separated [2,4]
"""
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BB = os.path.join(ROOT, "bin", "bigbatch")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_WAIT_POLICY="passive")
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit("mpi_bench: failed (exit %d): %s" % (p.returncode, " ".join(cmd)))
    return p.stdout


def keyvals(text, prefix):
    for line in text.splitlines():
        if line.startswith(prefix):
            return dict(kv.split("=", 1) for kv in line.split())
    raise SystemExit("mpi_bench: no '%s' line in:\n%s" % (prefix, text))


def train_img_s(ranks, threads, model, batch):
    """Images/s of the one epoch's training (the epoch line's img/s column)."""
    cmd = [BB, "train", "--model", model, "--data", "fashion-mnist", "--epochs", "1", "--batch", str(batch),
           "--lr", "0.05", "--threads", str(threads), "--quiet"]
    out = run(MPIRUN + ["-np", str(ranks)] + cmd if ranks > 1 else cmd)
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 10 and f[0] == "1" and re.match(r"^\d+$", f[1]):
            return float(f[8])
    raise SystemExit("mpi_bench: no epoch line in:\n" + out)


def main():
    repeats = int(os.environ.get("BENCH_REPEATS") or 3)
    sizes = [float(x) for x in (os.environ.get("BENCH_MPI_MB") or "0.1,1,10,25,100").split(",")]
    ranks = [int(x) for x in (os.environ.get("BENCH_MPI_RANKS") or "2,4").split(",")]
    cores = os.cpu_count()
    for k in ranks:
        print("Gradient allreduce, %d ranks on this machine (shared memory%s), bus bandwidth = 2(K-1)/K x bytes / "
              "time, median of %d runs, each the median of 20-2000 (about 0.5 s), plain and bucketed in turn:"
              % (k, ", more ranks than its %d cores" % cores if k > cores else "", repeats))
        print()
        print("| MB | plain MPI_Allreduce ms | GB/s | bucketed (25 MB, allreduce thread) ms | GB/s | bucketed / plain time |")
        print("|---|---|---|---|---|---|")
        for mb in sizes:
            rows = [keyvals(run(MPIRUN + ["-np", str(k), BB, "bench", "--allreduce", str(mb)]), "allreduce_mb=")
                    for _ in range(repeats)]
            med = {key: statistics.median(float(r[key]) for r in rows)
                   for key in ("plain_ms", "plain_busbw_GBps", "bucketed_ms", "bucketed_busbw_GBps")}
            print("| %g | %.3f | %.2f | %.3f | %.2f | %.2f |" % (mb, med["plain_ms"], med["plain_busbw_GBps"],
                                                                med["bucketed_ms"], med["bucketed_busbw_GBps"],
                                                                med["bucketed_ms"] / med["plain_ms"]))
        print()
    print("Training throughput, Fashion-MNIST, one epoch, global batch 256, median of %d runs:" % repeats)
    print()
    print("| model | 1 rank x 1 thread | 1 rank x 2 threads | 2 ranks x 1 thread | 2 ranks / 1 rank (1 thread each) |")
    print("|---|---|---|---|---|")
    for model in ("lenet", "simple-cnn"):
        one = statistics.median(train_img_s(1, 1, model, 256) for _ in range(repeats))
        two_threads = statistics.median(train_img_s(1, 2, model, 256) for _ in range(repeats))
        two = statistics.median(train_img_s(2, 1, model, 256) for _ in range(repeats))
        print("| %s | %.0f | %.0f | %.0f | %.2fx |" % (model, one, two_threads, two, two / one))
    print()


if __name__ == "__main__":
    main()
