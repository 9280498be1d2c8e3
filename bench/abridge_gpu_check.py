#!/usr/bin/env python3
"""Abridge a bench/gpu_check.sh report for bench/results/: the table lines of test_backend_ops
that are within tolerance ('ok') and the cuDNN algorithm lines of its test step are left out and
counted; the comparison closest to its tolerance per model is listed first; every other line
follows verbatim, but for the cuDNN algorithm lines of the benches, which go to the end.

    bench/abridge_gpu_check.py REPORT "FIRST LINE" > bench/results/DATE-gpu-check-....txt
"""
import re
import sys

# the first column of test_backend_ops's table: the models, then its optimizer and vector checks
MODELS = ("lenet", "simple-cnn", "alexnet-cifar", "alexnet-bn-cifar", "resnet20", "resnet8", "alexnet", "alexnet-bn",
          "resnet50", "lowp-shapes", "tiny", "lamb", "vectors")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, first = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    kept, closest, ok, algos, choices = [], {}, 0, 0, []
    in_tests = False
    for line in lines:
        if line.startswith("== "):
            in_tests = line.startswith("== every backend operation")
        if line.endswith(" ok"):
            ok += 1
            fields = line.split()
            # model layer kind direction what... difference tolerance ok
            try:
                ratio = float(fields[-3]) / float(fields[-2])
            except (ValueError, ZeroDivisionError, IndexError):
                ratio = 0.0
            model = fields[0]
            # a line the cuDNN log broke into (stderr within stdout) names no model: counted only
            if model not in MODELS:
                continue
            if model not in closest or ratio > closest[model][0]:
                closest[model] = (ratio, " ".join(fields[:-1]))
            continue
        if re.match(r"^bigbatch: cuDNN .* algorithm", line):
            if in_tests:
                algos += 1
            else:
                choices.append(line)
            continue
        kept.append(line)
    print(first)
    print(f"# Abridged: the {ok} lines of test_backend_ops's table within tolerance ('ok') and the "
          f"{algos} cuDNN algorithm lines of its step are left out; the other {len(kept)} lines follow "
          "verbatim, after the comparison closest to its tolerance per model")
    print()
    print("Closest to its tolerance, per model (and the optimizers' and vectors' checks): "
          "difference / tolerance, then the comparison")
    for model in MODELS:
        if model in closest:
            ratio, text = closest[model]
            print(f"{ratio:<8.3g} {text}")
    print()
    for line in kept:
        print(line)
    if choices:
        print()
        print("The cuDNN algorithms the benches chose (BIGBATCH_CUDNN_VERBOSE=1; moved here from their steps):")
        for line in choices:
            print(line)


if __name__ == "__main__":
    main()
