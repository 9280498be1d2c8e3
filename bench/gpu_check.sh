#!/bin/bash
# The prepared GPU check (issue 22): run on one GPU node, from a copy of the working tree that
# carries build/gpu-bundle.tar.xz (made here by `make gpu-bundle`), in at most 8 minutes:
#
#   bench/gpu_check.sh OUTDIR
#
# The node needs the NVIDIA driver and CUDA 13's cuDNN 9 and cuBLAS, in $CUDA_HOME/lib64 or as
# PyTorch's nvidia-* wheels; nothing of Debian's and no network. Steps, each with its own time
# limit so one hang cannot eat the rest:
#   1. the node: GPU, driver, the bundle's commit, `ldd` of the binary (every library found?)
#   2. tests/test_backend_ops: every operation of every model, forward and backward, every
#      optimizer and preset, vectors and dropout masks, against the CPU (the report's table)
#   3. tests/cli/cuda_train.sh: 200 steps of ResNet-20 on the GPU against the CPU
#   4. bigbatch bench --device cuda --loader: resnet50 at batch 256 and alexnet at batch 512,
#      img/s, peak GPU memory and data_wait (the fraction of time the steps waited for the batch
#      loader's thread), beside PyTorch's torchvision models (bench/torch_gpu_bench.py) where
#      PyTorch is installed. bigbatch's steps include loading (crop, flip, upload, normalize);
#      PyTorch's reuse one batch on the GPU, so the comparison leans PyTorch's way. While each
#      of ours runs, nvidia-smi samples the GPU's utilisation every 100 ms: the median and the
#      share of samples at 90% or more are printed (warm-up and algorithm search included). Ours
#      runs twice: with deterministic cuDNN algorithms (the default), then admitting the
#      atomics-based ones too and 8 GiB of workspace, as PyTorch's defaults do; ResNet-50 a
#      third time between them with its 1x1 convolutions on cuDNN instead of cuBLAS
#      (BIGBATCH_CUDA_POINTWISE=cudnn), and with the algorithms it chose listed.
#      GPU_CHECK_MODELS="resnet50:256" (model:batch, spaces between) narrows steps 4 and 6
#   5. the GPU memory each model needs: peak_device_mb of every model at two batch sizes
#      (GPU_CHECK_SKIP_MEMORY=1 skips it, where a run has measured it and time is short)
#   6. where the time goes: bench --layers (each layer's forward and backward time, the GPU
#      synchronized around each) for resnet50 at 256 and alexnet at 512
# Everything goes to OUTDIR/gpu_check.txt (and the terminal); the exit status is 0 only when
# every step passed. The steps' limits add up to 8 minutes (70 + 70 + 5 x 30 + 2 x 40 + 60 + 2 x 25 s)
# and end sooner: 4.5 minutes on an H200 (2026-12-04, with the memory step).
set -u
out=${1:?usage: bench/gpu_check.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
report=$out/gpu_check.txt
# the device tests fail, rather than skip, when the GPU is not usable
export BB_TEST_REQUIRE_DEVICE=1
bundle=build/gpu-bundle
if [ ! -d "$bundle" ] && [ -f "$bundle.tar.xz" ]; then tar -C build -xJf "$bundle.tar.xz" || exit 1; fi
BB=$bundle/bin/bigbatch
models=${GPU_CHECK_MODELS:-resnet50:256 alexnet:512}
failed=0
. bench/gpu_env.inc

check() {
gpu_node || return 1

step "every backend operation against the CPU (tests/test_backend_ops)"
# BIGBATCH_CUDNN_VERBOSE: each convolution's algorithms, in case a layer differs
BIGBATCH_CUDNN_VERBOSE=1 run 70 test_backend_ops "$bundle/bin/test_backend_ops" --jobs 1 --verbose --filter 'backend_ops/*'

step "200 steps of ResNet-20, GPU against CPU (tests/cli/cuda_train.sh)"
BB=$BB run 70 cuda_train sh tests/cli/cuda_train.sh

step "throughput and memory: bigbatch bench --device cuda beside PyTorch"
for mb in $models; do
    m=${mb%:*} b=${mb#*:}
    # timed algorithm choice on both sides (PyTorch: cudnn.benchmark)
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 >"$out/util-$m.txt" 2>/dev/null &
    sampler=$!
    # the algorithms chosen (stderr) for the convolutions of the ResNet
    verbose=0
    [ "$m" = resnet50 ] && verbose=1
    BIGBATCH_CUDNN_VERBOSE=$verbose BIGBATCH_CUDNN_FIND=1 run 30 "bench $m" "$BB" bench --device cuda --model "$m" --batch "$b" --steps 10 --warmup 3 --profile-steps 0 --loader
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
    sort -n "$out/util-$m.txt" | awk -v m="$m" '$1 ~ /^[0-9]+$/ { v[n++] = $1; if ($1 >= 90) hi++ }
        END { if (n) printf "gpu utilisation during bench %s: median %d%%, %d of %d samples at 90%% or more\n", m, v[int(n / 2)], hi, n }'
    rm -f "$out/util-$m.txt"
    # which of the two differences from PyTorch's defaults costs what: deterministic
    # algorithms with 8 GiB of workspace, then PyTorch's defaults (atomics-based algorithms
    # admitted, any workspace that fits; 8 GiB here)
    # and the 1x1 convolutions on cuDNN's deterministic algorithms instead of cuBLAS
    [ "$m" = resnet50 ] && BIGBATCH_CUDNN_FIND=1 BIGBATCH_CUDA_POINTWISE=cudnn run 30 "bench $m, 1x1 on cuDNN" \
        "$BB" bench --device cuda --model "$m" --batch "$b" --steps 10 --warmup 3 --profile-steps 0 --loader
    BIGBATCH_CUDNN_VERBOSE=$verbose BIGBATCH_CUDNN_FIND=1 BIGBATCH_CUDNN_DETERMINISTIC=0 BIGBATCH_CUDNN_WORKSPACE_MB=8192 run 30 "bench $m, any algorithm" "$BB" bench --device cuda \
        --model "$m" --batch "$b" --steps 10 --warmup 3 --profile-steps 0 --loader
    if [ -n "$py" ] && "$py" -c "import torch, torchvision" 2>/dev/null; then
        run 40 "torch $m" "$py" bench/torch_gpu_bench.py --model "$m" --batch "$b" --steps 10 --warmup 3
    else
        echo "PyTorch with torchvision is not installed: no comparison for $m"
    fi
done

if [ -n "${GPU_CHECK_SKIP_MEMORY:-}" ]; then
    step "GPU memory per model and batch: skipped (GPU_CHECK_SKIP_MEMORY is set)"
else
step "GPU memory per model and batch (bigbatch bench, 2 steps, peak_device_mb)"
# one shell under one limit (timeout runs programs, not functions)
run 60 memory bash -c 'for m in lenet simple-cnn alexnet-cifar alexnet-bn-cifar resnet20 resnet8 alexnet alexnet-bn resnet50; do
    case $m in alexnet|alexnet-bn|resnet50) batches="64 256" ;; *) batches="128 1024" ;; esac
    for b in $batches; do
        "$0" bench --device cuda --model "$m" --batch "$b" --steps 2 --warmup 1 --profile-steps 0 || exit 1
    done
done' "$BB"
fi

step "time per layer (bench --layers, 3 profiled steps)"
for mb in $models; do
    BIGBATCH_CUDNN_FIND=1 run 25 "layers ${mb%:*}" "$BB" bench --device cuda --model "${mb%:*}" --batch "${mb#*:}" \
        --steps 3 --warmup 2 --profile-steps 3 --layers
done

step "summary"
echo "$failed step(s) failed"
[ "$failed" -eq 0 ]
}

# a pipe, not a process substitution: the script ends only after tee has written every line
check 2>&1 | tee "$report"
exit "${PIPESTATUS[0]}"
