"""Where PyTorch's training step goes, operator by operator: the counterpart of
`bigbatch bench --model M --layers`, for the same networks (bench/torch_models.py).

usage: python3 bench/torch_profile.py MODEL BATCH [THREADS] [ROWS]

Synthetic inputs, SGD with momentum 0.9 and weight decay 5e-4 (run_bench's recipe), three
steps untimed, then five under torch.profiler; prints its table of the operators' own CPU time
over the five steps (divide by 5 for a step), each operator split by its input shapes, so
that a layer's forward (aten::mkldnn_convolution, aten::addmm) and backward
(aten::convolution_backward, aten::mm) can be told apart by their shapes. Times include the
profiler's own overhead."""
import os
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_models  # noqa: E402

STEPS = 5


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    model, batch = sys.argv[1], int(sys.argv[2])
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(1)
    net, (c, h, w) = torch_models.build(model)
    net.train()
    x = torch.randn(batch, c, h, w)
    y = torch.randint(0, 10, (batch,))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        for _ in range(STEPS):
            step()
    print(f"# {model} batch {batch}, {threads} threads, {STEPS} steps (PyTorch {torch.__version__})")
    print(p.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=rows,
                                                          max_name_column_width=40, max_shapes_column_width=60))


if __name__ == "__main__":
    main()
