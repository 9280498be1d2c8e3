#!/usr/bin/python3
"""PyTorch reference fixtures for tests/test_reference.c (llm.c style).

Builds the same small networks as the engine in PyTorch (Debian's python3-torch),
runs one forward/backward and 10 SGD steps, and writes what the engine must
reproduce. The fixtures are committed, so the C test (and CI) needs no PyTorch.
Regenerate with:

    /usr/bin/python3 tests/make_reference.py            # writes tests/fixtures/reference/

The output is deterministic (fixed seeds, float32, one thread): running the script
again rewrites byte-identical files with the same PyTorch build.

Cases (one file each, tests/fixtures/reference/<case>.safetensors):
  lenet         model_build("lenet"), batch 8 of 1x28x28, SGD lr 0.05
  resnet8       model_build("resnet8"), batch 8 of 3x32x32, SGD lr 0.05; BN affine
                weights/biases are randomized so the affine path is non-trivial
  mini-alexnet  built in C with nb_* calls (see test_reference.c): conv 5x5/2 pad 2
                + bias, relu, LRN(5, 0.1, 0.75, 2), maxpool 3/2, BN without affine
                (eps 1e-4, momentum 0.1), conv 3x3 pad 1 groups 2 + bias, relu,
                avgpool 3/2 pad 1, fc1 (32) + relu, fc2 (10); softmax cross-entropy
                with label smoothing 0.1; batch 6 of 3x24x24; SGD lr 0.02, Nesterov
All use momentum 0.9 and weight decay 5e-4 (torch.optim.SGD, coupled decay).

File format (the safetensors layout, written with struct/json only):
  bytes 0..7   header length H, unsigned 64-bit little endian
  bytes 8..8+H JSON object: {"__metadata__": {key: string value, ...},
               name: {"dtype": "F32" | "I32", "shape": [..], "data_offsets": [begin, end]}, ...}
               offsets are byte offsets into the data section, relative to 8+H
  rest         the data section: raw little-endian tensors, row-major (C order)

Tensor names:
  input                 [N, C, H, W] F32  the batch (used by every forward)
  labels                [N] I32
  init/<param>          initial parameters, PyTorch shapes (conv [out, in/groups, k, k],
                        linear [out, in], bias / BN weight and bias [out])
  logits                [N, classes]  input of the loss of the first forward (train mode)
  loss                  [1]           mean loss of the first forward
  grad/<param>          gradients after the first backward (from zero gradients)
  buffer_fwd/<buffer>   BN running_mean / running_var after the first forward
  step_losses           [steps]  loss of each SGD step; step s: zero_grad, forward
                        (train) on the same batch, backward, optimizer step
  final/<param>         parameters after the steps
  buffer_final/<buffer> BN running statistics after the steps (1 + steps forwards)
Metadata (strings): model, lr, momentum, dampening, nesterov ("0"/"1"), weight_decay,
  label_smoothing, steps, batch, torch (the version that wrote the file).
"""
import json
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

# LeNet and the CIFAR ResNet are the benchmark's definitions (one PyTorch mirror of
# engine/net/models.c for both uses).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from torch_models import CifarResNet, LeNet  # noqa: E402

STEPS = 10
MOMENTUM = 0.9
WEIGHT_DECAY = 5e-4


class MiniAlexNet(nn.Module):
    """Mirror of build_mini_alexnet in tests/test_reference.c."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 5, stride=2, padding=2, bias=True)   # 24 -> 12
        self.norm1 = nn.LocalResponseNorm(5, alpha=0.1, beta=0.75, k=2.0)
        self.bn2 = nn.BatchNorm2d(16, eps=1e-4, momentum=0.1, affine=False)
        self.conv2 = nn.Conv2d(16, 16, 3, stride=1, padding=1, groups=2, bias=True)
        self.fc1 = nn.Linear(16 * 3 * 3, 32)
        self.fc2 = nn.Linear(32, classes)

    def forward(self, x):
        x = self.norm1(F.relu(self.conv1(x)))
        x = F.max_pool2d(x, 3, 2)                                            # 12 -> 5
        x = self.bn2(x)
        x = F.relu(self.conv2(x))
        x = F.avg_pool2d(x, 3, 2, 1, count_include_pad=True)                 # 5 -> 3
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def save_fixture(path, tensors, metadata):
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    blobs, offset = [], 0
    for name, t in tensors:
        t = t.detach().contiguous().cpu()
        if t.dtype == torch.float32:
            dtype, np_dtype = "F32", "<f4"
        elif t.dtype == torch.int32:
            dtype, np_dtype = "I32", "<i4"
        else:
            raise ValueError("%s: unsupported dtype %s" % (name, t.dtype))
        if name in header:
            raise ValueError("duplicate tensor " + name)
        raw = t.numpy().astype(np_dtype).tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # align the data section to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def bn_buffers(model):
    return [(n, b) for n, b in model.named_buffers() if not n.endswith("num_batches_tracked")]


def make_case(name, model, x, labels, lr, nesterov, smoothing):
    model.train()
    params = list(model.named_parameters())
    out = [("input", x), ("labels", labels.to(torch.int32))]
    out += [("init/" + n, p.detach().clone()) for n, p in params]

    # First forward/backward from zero gradients.
    model.zero_grad(set_to_none=False)
    logits = model(x)
    loss = F.cross_entropy(logits, labels, label_smoothing=smoothing)
    loss.backward()
    out.append(("logits", logits.detach().clone()))
    out.append(("loss", loss.detach().reshape(1).clone()))
    out += [("grad/" + n, p.grad.detach().clone()) for n, p in params]
    out += [("buffer_fwd/" + n, b.detach().clone()) for n, b in bn_buffers(model)]

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM, dampening=0,
                          weight_decay=WEIGHT_DECAY, nesterov=nesterov)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=False)
        step_loss = F.cross_entropy(model(x), labels, label_smoothing=smoothing)
        step_loss.backward()
        opt.step()
        losses.append(step_loss.item())
    out.append(("step_losses", torch.tensor(losses, dtype=torch.float32)))
    out += [("final/" + n, p.detach().clone()) for n, p in params]
    out += [("buffer_final/" + n, b.detach().clone()) for n, b in bn_buffers(model)]

    meta = {"model": name, "lr": repr(lr), "momentum": repr(MOMENTUM), "dampening": "0",
            "nesterov": "1" if nesterov else "0", "weight_decay": repr(WEIGHT_DECAY),
            "label_smoothing": repr(smoothing), "steps": str(STEPS), "batch": str(x.shape[0]),
            "torch": torch.__version__}
    print("%-13s loss %.6f -> %.6f (%d steps)" % (name, loss.item(), losses[-1], STEPS))
    return out, meta


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.set_default_dtype(torch.float32)
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fixtures", "reference")
    os.makedirs(outdir, exist_ok=True)

    cases = []

    torch.manual_seed(1)
    model = LeNet()
    x = torch.randn(8, 1, 28, 28)
    y = torch.randint(0, 10, (8,))
    cases.append(("lenet", model, x, y, 0.05, False, 0.0))

    torch.manual_seed(2)
    model = CifarResNet(blocks=1)
    with torch.no_grad():  # non-trivial BN affine parameters
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    x = torch.randn(8, 3, 32, 32)
    y = torch.randint(0, 10, (8,))
    cases.append(("resnet8", model, x, y, 0.05, False, 0.0))

    torch.manual_seed(3)
    model = MiniAlexNet()
    x = torch.randn(6, 3, 24, 24)
    y = torch.randint(0, 10, (6,))
    cases.append(("mini-alexnet", model, x, y, 0.02, True, 0.1))

    for name, model, x, y, lr, nesterov, smoothing in cases:
        tensors, meta = make_case(name, model, x, y, lr, nesterov, smoothing)
        path = os.path.join(outdir, name + ".safetensors")
        save_fixture(path, tensors, meta)
        print("  wrote %s (%d bytes)" % (path, os.path.getsize(path)))


if __name__ == "__main__":
    main()
