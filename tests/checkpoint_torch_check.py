#!/usr/bin/python3
"""Manual check (not part of the suite) that a bigbatch checkpoint is a safetensors
file PyTorch can use: parameter and buffer names and shapes are torchvision's.

    bin/bigbatch train --model resnet8 ... --save /tmp/r8.safetensors
    /usr/bin/python3 tests/checkpoint_torch_check.py /tmp/r8.safetensors

Reads the file with struct/json/numpy only (the `safetensors` package is not
installed), builds a torch tensor dict, and for resnet8/resnet20 (and lenet) loads
the parameter/buffer part into an equivalent nn.Module with strict=False, which
raises on any shape mismatch; then checks the names and values. Prints OK."""
import json
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise SystemExit(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise SystemExit(f"{path}: header length {n} exceeds the file ({len(raw)} bytes)")
    if n % 8 != 0:
        raise SystemExit(f"{path}: header length {n} is not a multiple of 8")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    end_max = 0
    for name, e in header.items():
        if e["dtype"] != "F32":
            raise SystemExit(f"{name}: dtype {e['dtype']}, expected F32")
        begin, end = e["data_offsets"]
        shape = e["shape"]
        count = int(np.prod(shape)) if shape else 1
        if end - begin != 4 * count or end > len(data):
            raise SystemExit(f"{name}: offsets {begin}..{end} do not fit shape {shape}")
        arr = np.frombuffer(data, dtype="<f4", count=count, offset=begin).reshape(shape)
        tensors[name] = torch.from_numpy(arr.astype(np.float32))
        end_max = max(end_max, end)
    if end_max != len(data):
        raise SystemExit(f"data buffer is {len(data)} bytes, tensors cover {end_max}")
    return meta, tensors


# ---- torchvision-style modules with the same names as bigbatch's models ----

class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.downsample(x) if self.downsample is not None else x))


class CifarResNet(nn.Module):
    def __init__(self, blocks, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        inplanes = 16
        for stage in range(3):
            planes = 16 << stage
            layers = []
            for b in range(blocks):
                layers.append(BasicBlock(inplanes, planes, 2 if stage > 0 and b == 0 else 1))
                inplanes = planes
            setattr(self, f"layer{stage + 1}", nn.Sequential(*layers))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class LeNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc3(F.relu(self.fc2(x)))


MODULES = {
    "resnet8": (lambda c: CifarResNet(1, c), "fc.weight", (3, 32, 32)),
    "resnet20": (lambda c: CifarResNet(3, c), "fc.weight", (3, 32, 32)),
    "lenet": (LeNet, "fc3.weight", (1, 28, 28)),
}


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: checkpoint_torch_check.py CHECKPOINT")
    meta, tensors = read_safetensors(sys.argv[1])
    if meta.get("format") != "bigbatch-checkpoint-1":
        raise SystemExit(f"not a bigbatch checkpoint: metadata {meta}")
    for key in ("model", "optimizer", "step", "epoch", "epoch_step", "seed", "optimizer_updates"):
        if key not in meta:
            raise SystemExit(f"metadata '{key}' missing")
    state = {k: v for k, v in tensors.items() if not k.startswith("optimizer.")}
    slots = {k: v for k, v in tensors.items() if k.startswith("optimizer.")}
    print(f"{sys.argv[1]}: {len(state)} parameters/buffers, {len(slots)} optimizer tensors; "
          + ", ".join(f"{k}={v}" for k, v in sorted(meta.items())))

    # Every optimizer slot belongs to a stored tensor and has its shape.
    for k, v in slots.items():
        param = k[len("optimizer."):].rsplit(".", 1)[0]
        if param not in state or state[param].shape != v.shape:
            raise SystemExit(f"{k}: no parameter {param} of shape {tuple(v.shape)}")

    model = meta["model"]
    if model not in MODULES:
        print(f"no reference module for '{model}': read {len(tensors)} tensors")
        print("OK")
        return
    make, fc_name, in_shape = MODULES[model]
    net = make(state[fc_name].shape[0])
    # strict=False tolerates missing keys (num_batches_tracked) but still raises
    # on any shape mismatch; unexpected keys would be wrong names.
    result = net.load_state_dict(state, strict=False)
    if result.unexpected_keys:
        raise SystemExit(f"names PyTorch does not know: {result.unexpected_keys}")
    missing = [k for k in result.missing_keys if not k.endswith("num_batches_tracked")]
    if missing:
        raise SystemExit(f"tensors missing from the checkpoint: {missing}")
    sd = net.state_dict()
    for k, v in state.items():
        if not torch.equal(sd[k], v):
            raise SystemExit(f"{k}: value differs after load_state_dict")
    net.eval()
    with torch.no_grad():
        out = net(torch.randn(2, *in_shape))
    if not torch.isfinite(out).all():
        raise SystemExit("forward pass produced non-finite logits")
    print(f"loaded into {type(net).__name__} ({len(state)} tensors, "
          f"{sum(p.numel() for p in net.parameters())} parameters); logits {tuple(out.shape)}")
    print("OK")


if __name__ == "__main__":
    main()
