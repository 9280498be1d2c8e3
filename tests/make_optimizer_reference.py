#!/usr/bin/python3
"""Reference trajectories for tests/test_optimizers.c.

Run from the repository root with Debian's python3 (python3-torch, numpy):
    /usr/bin/python3 tests/make_optimizer_reference.py
It writes tests/fixtures/optimizers/<case>.safetensors, one file per case, in the
layout of tests/make_reference.py (8-byte little-endian header length, JSON header
{"__metadata__": {...}, name: {dtype, shape, data_offsets}}, raw little-endian F32).

Every case steps the six parameters of a tiny net (conv with bias, BN with affine,
linear with bias; the C test builds the same net with nb_* calls) for 10 updates
with fixed gradients and a changing (warm-up then decaying) LR:
    init.<param>            initial values
    grad.<step>.<param>     gradient handed to update <step> (0..9)
    want.<step>.<param>     parameter after update <step>
    lr                      the 10 learning rates
Metadata: opt, variant (LARS preset, "" if none), momentum, weight_decay, nesterov,
exclude ("", "bias,bn"), beta1, beta2, adam_eps.

SGD, Nesterov SGD and AdamW come from torch.optim (float64). LARS, LARC and LAMB
are the update rules of docs/papers.md (sections 2a-2g, 4) written out in
numpy (float64), one function per implementation, deliberately NOT a port of
engine/cpu/optim_lars.c. Gradient data put the zero-norm guards to work in every case
(bn.bias starts at zero: ||w|| = 0 on the first update; conv.bias has an all-zero
gradient for the first 4 updates, fc.bias at update 6); the "-guard" cases add an
all-zero fc.weight and an update where every gradient is zero.
"""
import json
import os
import struct

import numpy as np
import torch

STEPS = 10
# name, kind, shape (the C net: conv 2->3 k3 pad1 on 4x4, BN(3), linear 48->5)
PARAMS = [("conv.weight", "weight", (3, 2, 3, 3)), ("conv.bias", "bias", (3,)),
          ("bn.weight", "bn", (3,)), ("bn.bias", "bn", (3,)),
          ("fc.weight", "weight", (5, 48)), ("fc.bias", "bias", (5,))]
LR_SHAPE = [0.2, 0.4, 0.6, 0.8, 1.0, 0.9, 0.7, 0.5, 0.3, 0.1]
# Guard cases start high, so that the zero-weight guard on the first update meets
# an LR above 1 (apex must not clip a guarded gradient; NVCaffe clips r = 1 to min(lr, 1)).
LR_SHAPE_GUARD = [1.0, 0.5, 0.8, 0.6, 0.4, 0.7, 0.3, 0.2, 0.15, 0.1]


def save_fixture(path, tensors, metadata):
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    blobs, offset = [], 0
    for name, a in tensors:
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        assert name not in header, name
        header[name] = {"dtype": "F32", "shape": list(np.shape(a)),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def make_data(seed, gscale, guard):
    rng = np.random.default_rng(seed)
    init = {
        "conv.weight": rng.standard_normal((3, 2, 3, 3)) * 0.3,
        "conv.bias": rng.standard_normal(3) * 0.1,
        "bn.weight": 1 + rng.standard_normal(3) * 0.1,
        "bn.bias": np.zeros(3),  # zero-weight guard on the first update
        "fc.weight": rng.standard_normal((5, 48)) * 0.1,
        "fc.bias": rng.standard_normal(5) * 0.1,
    }
    gs = {"conv.weight": 0.002, "conv.bias": 0.001, "bn.weight": 0.005, "bn.bias": 0.005,
          "fc.weight": 0.0005, "fc.bias": 0.002}
    grads = []
    for t in range(STEPS):
        g = {n: rng.standard_normal(s) * gs[n] * gscale for n, _, s in PARAMS}
        if t < 4:
            g["conv.bias"][:] = 0  # zero-gradient guard
        if t == 6:
            g["fc.bias"][:] = 0
        if guard and t == 2:
            for n in g:
                g[n][:] = 0
        grads.append(g)
    if guard:
        init["fc.weight"][:] = 0
    # The engine holds float32: start from float32-representable data.
    f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)
    return {k: f32(v) for k, v in init.items()}, [{k: f32(v) for k, v in g.items()} for g in grads]


KIND = {n: k for n, k, _ in PARAMS}
norm = lambda a: float(np.sqrt(np.sum(a * a)))


def run_torch(init, grads, lrs, make_opt):
    ps = {n: torch.tensor(init[n], dtype=torch.float64, requires_grad=True) for n, _, _ in PARAMS}
    opt = make_opt([ps[n] for n, _, _ in PARAMS])
    out = []
    for t in range(STEPS):
        for n, p in ps.items():
            p.grad = torch.tensor(grads[t][n], dtype=torch.float64)
        for g in opt.param_groups:
            g["lr"] = lrs[t]
        opt.step()
        out.append({n: p.detach().numpy().copy() for n, p in ps.items()})
    return out


def run_numpy(init, grads, lrs, step_param):
    """step_param(name, w, g, lr, state, t) -> new w (state: per-param dict)."""
    w = {n: init[n].copy() for n in init}
    state = {n: {} for n in init}
    out = []
    for t in range(STEPS):
        for n, _, _ in PARAMS:
            w[n] = step_param(n, w[n], grads[t][n], lrs[t], state[n], t)
        out.append({n: w[n].copy() for n in w})
    return out


def guarded(wn, gn, ratio):
    return ratio() if wn > 0 and gn > 0 else 1.0


# 2a paper: lambda = eta |w| / (|g| + wd |w|); v = m v + lr lambda (g + wd w); w -= v.
# excluded kinds (the -exclude case): no ratio, no wd.
def lars_paper(m, wd, eta, exclude=()):
    def step(n, w, g, lr, s, t):
        d = 0.0 if KIND[n] in exclude else wd
        wn, gn = norm(w), norm(g)
        lam = 1.0 if KIND[n] in exclude else guarded(wn, gn, lambda: eta * wn / (gn + d * wn))
        s["v"] = m * s.get("v", 0) + lr * lam * (g + d * w)
        return w - s["v"]
    return step


# 2b NVCaffe 0.16/0.17.0 LARC (GPU kernel): r = eta |w| / |g| (1 if a norm is 0);
# scale: rate = lr r; clip: rate = min(lr, r); h = m h + rate (g + wd w); w -= h.
def larc_nvcaffe(m, wd, eta, policy):
    def step(n, w, g, lr, s, t):
        wn, gn = norm(w), norm(g)
        r = guarded(wn, gn, lambda: eta * wn / gn)
        rate = lr * r if policy == "scale" else min(lr, r)
        s["h"] = m * s.get("h", 0) + rate * (g + wd * w)
        return w - s["h"]
    return step


# 2c apex LARC around torch SGD (weight_decay 0 inside): if |p| != 0 and |g| != 0:
# r = tc |p| / (|g| + wd |p| + eps), r = min(r / lr, 1), g <- (g + wd p) r; else g as is.
def run_apex(init, grads, lrs, m, wd, tc=0.02, eps=1e-8):
    ps = {n: torch.tensor(init[n], dtype=torch.float64) for n, _, _ in PARAMS}
    opt = torch.optim.SGD(list(ps.values()), lr=lrs[0], momentum=m, weight_decay=0)
    out = []
    for t in range(STEPS):
        lr = lrs[t]
        for n, p in ps.items():
            g = grads[t][n]
            pn, gn = norm(p.numpy()), norm(g)
            if pn != 0 and gn != 0:
                r = tc * pn / (gn + wd * pn + eps)
                r = min(r / lr, 1)
                g = (g + wd * p.numpy()) * r
            p.grad = torch.tensor(g, dtype=torch.float64)
        opt.param_groups[0]["lr"] = lr
        opt.step()
        out.append({n: p.numpy().copy() for n, p in ps.items()})
    return out


# 2d TF contrib: r = eeta |w| / (|g| + wd |w| + eps) (1 if a norm is 0), no wd in the
# update; accum = m accum + g; w -= lr r accum.
def lars_tf(m, wd, eta, eps=0.0):
    def step(n, w, g, lr, s, t):
        wn, gn = norm(w), norm(g)
        r = guarded(wn, gn, lambda: eta * wn / (gn + wd * wn + eps))
        s["a"] = m * s.get("a", 0) + g
        return w - lr * r * s["a"]
    return step


# 2e TF Model Garden. classic: g' = g + wd w; r = eeta |w| / |g'| (1 if |w| or |g'| is 0);
# v = m v + lr r g'; w -= v. non-classic: v = m v + g'; r = eeta |w| / |v|; w -= lr r v.
def lars_garden(m, wd, eta, classic):
    def step(n, w, g, lr, s, t):
        gd = g + wd * w
        if classic:
            r = guarded(norm(w), norm(gd), lambda: eta * norm(w) / norm(gd))
            s["v"] = m * s.get("v", 0) + lr * r * gd
            return w - s["v"]
        s["v"] = m * s.get("v", 0) + gd
        r = guarded(norm(w), norm(s["v"]), lambda: eta * norm(w) / norm(s["v"]))
        return w - lr * r * s["v"]
    return step


# 2f MLPerf TF2: eps 0 -> 1e-7. Non-skipped: r = eeta |w| / (|g| + wd |w| + eps),
# g' = g + wd w, mom = m mom - lr r g', w += mom. Skipped (bias, BN): mom = m mom - lr g.
def lars_mlperf(m, wd, eta, eps=1e-7):
    def step(n, w, g, lr, s, t):
        if KIND[n] in ("bias", "bn"):
            s["mom"] = m * s.get("mom", 0) - lr * g
        else:
            wn, gn = norm(w), norm(g)
            r = guarded(wn, gn, lambda: eta * wn / (gn + wd * wn + eps))
            s["mom"] = m * s.get("mom", 0) - lr * r * (g + wd * w)
        return w + s["mom"]
    return step


# 2g timm Lars: adapt only if wd != 0; r = tc |w| / (|g| + wd |w| + eps) (1 if a norm
# is 0); g' = (g + wd w) r; torch momentum (first buf = g'); w -= lr buf.
def lars_timm(m, wd, tc=0.001, eps=1e-8):
    def step(n, w, g, lr, s, t):
        gp = g + wd * w
        if wd != 0:
            wn, gn = norm(w), norm(g)
            gp = gp * guarded(wn, gn, lambda: tc * wn / (gn + wd * wn + eps))
        s["buf"] = gp.copy() if t == 0 else m * s["buf"] + gp
        return w - lr * s["buf"]
    return step


# 4 LAMB: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; u = m_hat / (sqrt(v_hat) + eps) + wd w;
# q = |w| / |u| (1 if a norm is 0); w -= lr q u.
def lamb(b1, b2, eps, wd):
    def step(n, w, g, lr, s, t):
        s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
        mh, vh = s["m"] / (1 - b1 ** (t + 1)), s["v"] / (1 - b2 ** (t + 1))
        u = mh / (np.sqrt(vh) + eps) + wd * w
        q = guarded(norm(w), norm(u), lambda: norm(w) / norm(u))
        return w - lr * q * u
    return step


def cases():
    M, WD = 0.9, 5e-3
    sgd = lambda nesterov: (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=M, weight_decay=5e-4,
                                                       nesterov=nesterov))
    adamw = lambda ps: torch.optim.AdamW(ps, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    lars_meta = lambda v, **kw: dict(dict(opt="larc" if v.startswith(("nvcaffe", "apex")) else "lars",
                                          variant=v, momentum=M, weight_decay=WD), **kw)
    yield "sgd", 0.5, 20, False, dict(opt="sgd", momentum=M, weight_decay=5e-4), \
        lambda i, g, l: run_torch(i, g, l, sgd(False))
    yield "sgd-nesterov", 0.5, 20, False, dict(opt="sgd", momentum=M, weight_decay=5e-4, nesterov=1), \
        lambda i, g, l: run_torch(i, g, l, sgd(True))
    yield "adamw", 0.01, 20, False, dict(opt="adamw", weight_decay=0.01, adam_eps=1e-8), \
        lambda i, g, l: run_torch(i, g, l, adamw)
    yield "lamb", 0.01, 20, False, dict(opt="lamb", weight_decay=0.01, adam_eps=1e-6), \
        lambda i, g, l: run_numpy(i, g, l, lamb(0.9, 0.999, 1e-6, 0.01))
    for guard in (False, True):
        sfx = "-guard" if guard else ""
        yield "lars-paper" + sfx, 2.0, 1, guard, lars_meta("paper"), \
            lambda i, g, l: run_numpy(i, g, l, lars_paper(M, WD, 0.001))
        yield "larc-nvcaffe-clip" + sfx, 2.0 if guard else 0.25, 1, guard, lars_meta("nvcaffe-clip"), \
            lambda i, g, l: run_numpy(i, g, l, larc_nvcaffe(M, WD, 0.001, "clip"))
        yield "larc-apex" + sfx, 2.0, 1, guard, lars_meta("apex"), \
            lambda i, g, l: run_apex(i, g, l, M, WD)
    yield "larc-nvcaffe-scale", 2.0, 1, False, lars_meta("nvcaffe-scale"), \
        lambda i, g, l: run_numpy(i, g, l, larc_nvcaffe(M, WD, 0.001, "scale"))
    yield "lars-tf", 2.0, 1, False, lars_meta("tf"), \
        lambda i, g, l: run_numpy(i, g, l, lars_tf(M, WD, 0.001))
    yield "lars-timm", 2.0, 1, False, lars_meta("timm"), \
        lambda i, g, l: run_numpy(i, g, l, lars_timm(M, WD))
    yield "lars-timm-nowd", 0.5, 20, False, lars_meta("timm", weight_decay=0.0), \
        lambda i, g, l: run_numpy(i, g, l, lars_timm(M, 0.0))
    yield "lars-mlperf", 2.0, 1, False, lars_meta("mlperf"), \
        lambda i, g, l: run_numpy(i, g, l, lars_mlperf(M, WD, 0.001))
    yield "lars-tf-garden", 2.0, 1, False, lars_meta("tf-garden"), \
        lambda i, g, l: run_numpy(i, g, l, lars_garden(M, WD, 0.001, True))
    yield "lars-tf-garden-nc", 2.0, 1, False, lars_meta("tf-garden-nc"), \
        lambda i, g, l: run_numpy(i, g, l, lars_garden(M, WD, 0.001, False))
    yield "lars-paper-exclude", 2.0, 1, False, lars_meta("paper", exclude="bias,bn"), \
        lambda i, g, l: run_numpy(i, g, l, lars_paper(M, WD, 0.001, exclude=("bias", "bn")))


def main():
    outdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "optimizers")
    os.makedirs(outdir, exist_ok=True)
    torch.set_default_dtype(torch.float64)
    for i, (name, lr_base, gscale, guard, meta, run) in enumerate(cases()):
        init, grads = make_data(100 + i, gscale, guard)
        lrs = [lr_base * f for f in (LR_SHAPE_GUARD if guard else LR_SHAPE)]
        traj = run(init, grads, lrs)
        tensors = [("lr", np.array(lrs))]
        tensors += [("init." + n, init[n]) for n, _, _ in PARAMS]
        for t in range(STEPS):
            tensors += [("grad.%d.%s" % (t, n), grads[t][n]) for n, _, _ in PARAMS]
            tensors += [("want.%d.%s" % (t, n), traj[t][n]) for n, _, _ in PARAMS]
        full = dict(opt="", variant="", momentum=0, weight_decay=0, nesterov=0, exclude="",
                    beta1=0.9, beta2=0.999, adam_eps=1e-8)
        full.update(meta)
        save_fixture(os.path.join(outdir, name + ".safetensors"), tensors,
                     {k: repr(v) if isinstance(v, float) else v for k, v in full.items()})
        rel = max(norm(traj[-1][n] - init[n]) / norm(init[n]) for n in init if norm(init[n]) > 0)
        print("%-22s lr %.3g..%.3g  max |w10 - w0|/|w0| %.3g" % (name, min(lrs), max(lrs), rel))


if __name__ == "__main__":
    main()
