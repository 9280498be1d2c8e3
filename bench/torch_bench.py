#!/usr/bin/python3
"""PyTorch's side of `make bench`: the measurement `bigbatch bench` makes, in PyTorch.

    /usr/bin/python3 bench/torch_bench.py --model resnet20 [--batch 128] [--steps 20]
        [--warmup 3] [--threads N] [--bigbatch bin/bigbatch | --no-check] [--denormals flush|keep]

Builds the model from bench/torch_models.py, checks that its parameters (names,
shapes, total count) are exactly those of `bigbatch bench --model M --list-params`
(the architectures match), fills one synthetic batch (normal inputs, random
labels), and times steps of: zero_grad, forward (train mode), cross-entropy,
backward, SGD step (lr 0.01, momentum 0.9, weight decay 5e-4) after warmup steps, with
subnormal floats flushed to zero as bigbatch's CPU backend computes (engine/cpu/denormals.c).
Prints one line in bigbatch bench's format:

    model=M batch=B threads=T img_s=X ms_per_step=Y peak_rss_mb=Z torch=VERSION

peak_rss_mb is getrusage(RUSAGE_SELF).ru_maxrss: the whole process, interpreter
and libtorch included.
"""
import argparse
import os
import resource
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def our_params(bigbatch, model):
    """{name: shape} and the total from `bigbatch bench --model M --list-params`."""
    out = subprocess.run([bigbatch, "bench", "--model", model, "--list-params"], check=True,
                         capture_output=True, text=True).stdout.splitlines()
    total = int(out[0].split("parameters=")[1])
    shapes = {}
    for line in out[1:]:
        name, *dims = line.split()
        dims = [int(d) for d in dims]
        while len(dims) > 1 and dims[0] == 1:  # the engine pads vectors/matrices to NCHW
            dims.pop(0)
        shapes[name] = tuple(dims)
    return shapes, total


def check_architecture(model, name, bigbatch):
    shapes, total = our_params(bigbatch, name)
    mine = {n: tuple(p.shape) for n, p in model.named_parameters()}
    count = torch_models.param_count(model)
    assert count == total, "%s: PyTorch has %d parameters, bigbatch %d" % (name, count, total)
    assert list(mine) == list(shapes), "%s: parameter names differ:\n  torch    %s\n  bigbatch %s" % (
        name, list(mine), list(shapes))
    for n in mine:
        assert mine[n] == shapes[n], "%s: %s is %s in PyTorch, %s in bigbatch" % (
            name, n, mine[n], shapes[n])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=list(torch_models.INPUTS))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bigbatch", default=os.path.join(ROOT, "bin", "bigbatch"),
                    help="engine binary whose parameters must match [bin/bigbatch]")
    ap.add_argument("--no-check", action="store_true", help="skip the architecture check")
    ap.add_argument("--denormals", choices=["flush", "keep"], default="flush",
                    help="flush subnormal floats to zero, as bigbatch's CPU backend does [flush]")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(a.denormals == "flush")
    torch.manual_seed(a.seed)
    model, (c, h, w) = torch_models.build(a.model)
    if not a.no_check:
        check_architecture(model, a.model, a.bigbatch)
    model.train()
    classes = torch_models.INPUTS[a.model][1]
    x = torch.randn(a.batch, c, h, w)
    y = torch.randint(0, classes, (a.batch,))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    loss = None
    for _ in range(a.warmup):
        loss = step()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    elapsed = time.perf_counter() - t0
    if loss is not None and not torch.isfinite(loss):
        print("torch_bench: warning: loss became %g" % loss.item(), file=sys.stderr)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("model=%s batch=%d threads=%d img_s=%.1f ms_per_step=%.3f peak_rss_mb=%.1f torch=%s" % (
        a.model, a.batch, torch.get_num_threads(), a.batch * a.steps / elapsed,
        1e3 * elapsed / a.steps, peak, torch.__version__), flush=True)


if __name__ == "__main__":
    main()
