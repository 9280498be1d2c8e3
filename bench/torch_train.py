#!/usr/bin/python3
"""Trains one of the recipes of issue 2 in PyTorch, on the same data bigbatch reads,
so that the two engines' accuracies can be put side by side (README, issue notes).

  /usr/bin/python3 bench/torch_train.py --model lenet --data fashion-mnist --epochs 10 \
      --batch 128 --lr 0.05 --momentum 0.9 --weight-decay 5e-4

Same as bigbatch train: per-channel mean/std of the training set, the last partial
batch dropped, a fresh permutation each epoch, for CIFAR-10 random crop (zero pad 4,
the padding is raw zeros before normalization) + horizontal flip; torch.optim.SGD;
initialization as engine/net/models.c (PyTorch's default for LeNet and the simple CNN,
Kaiming normal fan_out for ResNet convolutions). CIFAR-10 is read from bigbatch's
decoded cache (DATA_ROOT/{train,test}.bbimg, made by any bigbatch run on cifar10 with that
--data-root), so both engines see identical pixels; --train-subset and --test-subset take
the same evenly spread images as bigbatch's flags of those names.
"""
import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_models  # noqa: E402


class SimpleCNN(nn.Module):
    """engine/net/models.c build_simple_cnn: conv5x5 32 + pool, conv5x5 64 + pool, fc 1024."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 7 * 7, 1024)
        self.fc2 = nn.Linear(1024, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2, 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2, 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    if magic == 0x803:
        rows, cols = struct.unpack(">II", data[8:16])
        return np.frombuffer(data, np.uint8, offset=16).reshape(count, 1, rows, cols)
    return np.frombuffer(data, np.uint8, offset=8)


def read_cache(path):
    """bigbatch's image cache (engine/data/imagefolder.c): "BBIMGv2\\0", uint32 count, c, h,
    w, classes, image_size, uint64 sums[3] and sums of squares[3], classes x 32-byte names,
    count uint16 labels, count*c*h*w pixels."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"BBIMGv2\0":
        raise SystemExit("%s: not a bigbatch image cache (BBIMGv2)" % path)
    count, c, h, w, classes, _size = struct.unpack("<6I", data[8:32])
    off = 8 + 6 * 4 + 6 * 8 + 32 * classes
    labels = np.frombuffer(data, "<u2", count, off).astype(np.uint8)
    off += 2 * count
    pixels = np.frombuffer(data, np.uint8, count * c * h * w, off).reshape(count, c, h, w)
    return pixels, labels


def keep_spread(x, y, keep):
    """The subset bigbatch's --train-subset/--test-subset take: image k * count // keep."""
    if keep <= 0 or keep >= len(y):
        return x, y
    idx = np.arange(keep, dtype=np.int64) * len(y) // keep
    return x[idx], y[idx]


def load(name, data_root):
    if name == "fashion-mnist":
        root = "/usr/share/datasets/fashion-mnist"
        return (read_idx(root + "/train-images-idx3-ubyte.gz"), read_idx(root + "/train-labels-idx1-ubyte.gz"),
                read_idx(root + "/t10k-images-idx3-ubyte.gz"), read_idx(root + "/t10k-labels-idx1-ubyte.gz"))
    tr = read_cache(os.path.join(data_root, "train.bbimg"))
    te = read_cache(os.path.join(data_root, "test.bbimg"))
    return tr[0], tr[1], te[0], te[1]


def build(name):
    if name == "simple-cnn":
        return SimpleCNN()
    model, _ = torch_models.build(name)
    if name.startswith("resnet"):
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True, choices=["fashion-mnist", "cifar10"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data-root", default="data/cifar10-jpeg",
                    help="CIFAR-10's folder, where a bigbatch run left train.bbimg and test.bbimg")
    ap.add_argument("--train-subset", type=int, default=0)
    ap.add_argument("--test-subset", type=int, default=0)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)

    xtr, ytr, xte, yte = load(args.data, args.data_root)
    xtr, ytr = keep_spread(xtr, ytr, args.train_subset)
    xte, yte = keep_spread(xte, yte, args.test_subset)
    scaled = xtr.astype(np.float64) / 255.0
    mean = scaled.mean(axis=(0, 2, 3)).astype(np.float32)
    std = scaled.std(axis=(0, 2, 3)).astype(np.float32)
    del scaled
    mean_t = torch.from_numpy(mean).view(1, -1, 1, 1)
    std_t = torch.from_numpy(std).view(1, -1, 1, 1)
    augment = args.data == "cifar10"
    xtr_t = torch.from_numpy(np.array(xtr))
    ytr_t = torch.from_numpy(ytr.astype(np.int64))
    xte_t = ((torch.from_numpy(np.array(xte)).float() / 255.0) - mean_t) / std_t
    yte_t = torch.from_numpy(yte.astype(np.int64))

    model = build(args.model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    steps = len(ytr_t) // args.batch
    print("%s on %s in PyTorch %s, %d threads" % (args.model, args.data, torch.__version__, args.threads))
    t0 = time.time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = torch.from_numpy(rng.permutation(len(ytr_t)))
        loss_sum, hits = 0.0, 0
        for s in range(steps):
            idx = order[s * args.batch:(s + 1) * args.batch]
            x = xtr_t[idx].float()
            if augment:  # zero pad 4, random 32x32 crop, flip with probability 1/2
                x = F.pad(x, (4, 4, 4, 4))
                out = torch.empty(len(idx), x.shape[1], 32, 32)
                offs = rng.integers(0, 9, size=(len(idx), 2))
                flips = rng.random(len(idx)) < 0.5
                for i in range(len(idx)):
                    crop = x[i, :, offs[i, 0]:offs[i, 0] + 32, offs[i, 1]:offs[i, 1] + 32]
                    out[i] = crop.flip(-1) if flips[i] else crop
                x = out
            x = (x / 255.0 - mean_t) / std_t
            y = ytr_t[idx]
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            hits += (logits.argmax(1) == y).sum().item()
        model.eval()
        with torch.no_grad():
            test_loss, right = 0.0, 0
            for i in range(0, len(yte_t), 500):
                logits = model(xte_t[i:i + 500])
                test_loss += F.cross_entropy(logits, yte_t[i:i + 500], reduction="sum").item()
                right += (logits.argmax(1) == yte_t[i:i + 500]).sum().item()
        print("%5d train_loss %.4f train_acc %.4f test_loss %.4f test_acc %.4f %.1fs" % (
            epoch, loss_sum / steps, hits / (steps * args.batch), test_loss / len(yte_t), right / len(yte_t),
            time.time() - t0), flush=True)
    print("final test_acc=%.4f test_loss=%.4f train_loss=%.4f" % (right / len(yte_t), test_loss / len(yte_t),
                                                                 loss_sum / steps))


if __name__ == "__main__":
    main()
