#!/usr/bin/env python3
"""PyTorch's side of bench/gpu_check.sh: the measurement `bigbatch bench --device cuda` makes,
on the same GPU, with torchvision's models.

    python3 bench/torch_gpu_bench.py --model resnet50 --batch 256 [--steps 10] [--warmup 3]
        [--precision fp32|tf32|bf16] [--channels-last] [--repeats R]

Times steps of zero_grad, forward (train mode), cross-entropy, backward and an SGD step
(lr 0.01, momentum 0.9, weight decay 5e-4) on one synthetic batch in GPU memory, after warm-up
steps, synchronizing before the clock is read. FP32 by default with TF32 off (cuDNN and
matmul), as bigbatch computes. --precision bf16: automatic mixed precision, forward and loss
under torch.autocast(dtype=torch.bfloat16) (FP32 master weights and optimizer, as bigbatch's
--precision bf16; no loss scaling, which bf16 does not need). --channels-last: the model and
the batch in NHWC memory format, which cuDNN's tensor-core kernels prefer (PyTorch's
recommended pairing with AMP; bigbatch keeps fp32 NCHW activations between layers and makes
NHWC bf16 copies inside its convolutions). --repeats R: R timed rounds of
--steps steps, img_s the median round's (rounds= lists them), so one process start and one
algorithm search give a median. torchvision's alexnet is the one-tower variant (61.1 M
parameters; bigbatch's is BVLC's grouped AlexNet, 61.0 M); resnet50 is the same network.
Prints one line in bigbatch bench's format:

    model=M batch=B img_s=X ms_per_step=Y peak_device_mb=Z torch=VERSION device="NAME"

peak_device_mb is torch.cuda.max_memory_allocated(): what PyTorch's allocator handed out.
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F
import torchvision


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=["resnet50", "alexnet"])
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_gpu_bench: PyTorch sees no CUDA device")
    tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True  # one algorithm search per shape, as cudnnFind in bigbatch
    torch.manual_seed(1)
    dev = torch.device("cuda")
    model = getattr(torchvision.models, a.model)(num_classes=1000).to(dev).train()
    size = 227 if a.model == "alexnet" else 224
    x = torch.randn(a.batch, 3, size, size, device=dev)
    if a.channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    amp = a.precision == "bf16"
    y = torch.randint(0, 1000, (a.batch,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

    def step():
        opt.zero_grad(set_to_none=False)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(a.warmup):
        step()
    rounds = []
    for _ in range(max(a.repeats, 1)):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            loss = step()
        torch.cuda.synchronize()
        rounds.append(time.perf_counter() - t0)
    elapsed = sorted(rounds)[len(rounds) // 2]
    if not torch.isfinite(loss):
        print("torch_gpu_bench: warning: loss became %g" % loss.item(), file=sys.stderr)
    extra = ""
    if a.precision != "fp32":
        extra += " precision=%s" % a.precision
    if a.channels_last:
        extra += " channels_last=1"
    if len(rounds) > 1:
        extra += " rounds=" + ",".join("%.1f" % (a.batch * a.steps / r) for r in rounds)
    print('model=%s batch=%d img_s=%.1f ms_per_step=%.3f peak_device_mb=%.1f%s torch=%s device="%s"' % (
        a.model, a.batch, a.batch * a.steps / elapsed, 1e3 * elapsed / a.steps,
        torch.cuda.max_memory_allocated() / 1048576.0, extra, torch.__version__, torch.cuda.get_device_name()),
        flush=True)


if __name__ == "__main__":
    main()
