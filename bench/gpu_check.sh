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
#      optimizer and preset, vectors and dropout masks, against the CPU (the report's table);
#      in bf16 and fp16 the proxies' products and a few training steps against the CPU's
#      emulation of the same precision
#   3. tests/cli/cuda_train.sh: 200 steps of ResNet-20 on the GPU against the CPU, and
#      tests/cli/cuda_train_bf16.sh: the same 200 on the GPU in bf16 against fp32
#   4. bigbatch bench --device cuda --loader: resnet50 at batch 256 and alexnet at batch 512,
#      img/s, peak GPU memory and data_wait (the fraction of time the steps waited for the batch
#      loader's thread), beside PyTorch's torchvision models (bench/torch_gpu_bench.py) where
#      PyTorch is installed. bigbatch's steps include loading (crop, flip, upload, normalize);
#      PyTorch's reuse one batch on the GPU, so the comparison leans PyTorch's way. While the
#      first of ours runs, nvidia-smi samples the GPU's utilisation every 100 ms: the median and
#      the share at 90% or more of the samples within the timed steps (bench's timed_unix). Ours
#      runs twice: with deterministic cuDNN algorithms (the default), then admitting the
#      atomics-based ones too and 8 GiB of workspace, as PyTorch's defaults do; ResNet-50 with
#      the algorithms it chose listed. (Its third run, 1x1 convolutions on cuDNN instead of
#      cuBLAS, gave its 16 s to step 5's --cuda-graph run; BIGBATCH_CUDA_POINTWISE=cudnn.)
#      GPU_CHECK_MODELS="resnet50:256" (model:batch, spaces between) narrows steps 4, 5 and 7
#   5. mixed precision: bigbatch bench --precision bf16, three runs, beside PyTorch's AMP
#      (autocast bf16) with channels_last, three timed rounds in one process; the medians'
#      img/s and their ratio (ours / PyTorch's). PyTorch holds bf16 NHWC activations; ours stay
#      fp32 NCHW between layers, converted to bf16 (NHWC where channels allow) around each
#      product: the ratio says what that costs. Then
#      ResNet-50 bf16 once more with --cuda-graph on (each pass replayed from a CUDA graph,
#      never run on a GPU before) and its ratio to the median without.
#   6. the GPU memory each model needs: peak_device_mb of every model at two batch sizes.
#      Skipped unless GPU_CHECK_SKIP_MEMORY=0 (its 60 s do not fit the 8 minutes beside the
#      bf16 steps; the 2026-12-04 runs measured it)
#   7. where the time goes: bench --layers (each layer's forward and backward time, the GPU
#      synchronized around each) for resnet50 at 256 and alexnet at 512
# Everything goes to OUTDIR/gpu_check.txt (and the terminal); the exit status is 0 only when
# every step passed. The steps' limits add up to 8 minutes: 55 + 65 + 30 (steps 2-3) +
# 4 x 16 + 2 x 40 (step 4) + 36 + 45 + 16 + 24 + 30 (step 5, resnet50 with its --cuda-graph run,
# and alexnet) + 2 x 15 (step 7) = 475 s; with the memory step 60 s more. On an H200 (2026-12-04, before the bf16 steps) the
# runs took 35, 53, 8-11 a bench, 34 for PyTorch's resnet50 and 7 a layer profile.
set -u
out=${1:?usage: bench/gpu_check.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
report=$out/gpu_check.txt
# the device tests fail, rather than skip, when the GPU is not usable
export BB_TEST_REQUIRE_DEVICE=1
models=${GPU_CHECK_MODELS:-resnet50:256 alexnet:512}
. bench/gpu_env.inc

# utilisation_in_window SAMPLES BENCH_OUTPUT MODEL: the median of the utilisation samples taken
# within the bench line's timed_unix window (its timed steps alone: no warm-up, no algorithm
# search) and the share at 90% or more
utilisation_in_window() {
    local window
    window=$(grep -o 'timed_unix=[0-9.]*-[0-9.]*' "$2" | tail -n 1 | cut -d= -f2)
    [ -n "$window" ] || { echo "gpu utilisation of bench $3: no timed window in its output"; return; }
    awk -v from="${window%-*}" -v to="${window#*-}" '$2 ~ /^[0-9]+$/ && $1 >= from && $1 <= to { print $2 }' "$1" |
        sort -n | awk -v m="$3" '{ v[n++] = $1; if ($1 >= 90) hi++ }
        END { if (n) printf "gpu utilisation during the timed steps of bench %s: median %d%%, %d of %d samples at 90%% or more\n", m, v[int(n / 2)], hi, n
              else printf "gpu utilisation during the timed steps of bench %s: no sample in its window\n", m }'
}

check() {
gpu_node || return 1

step "every backend operation against the CPU (tests/test_backend_ops)"
# BIGBATCH_CUDNN_VERBOSE: each convolution's algorithms, in case a layer differs
BIGBATCH_CUDNN_VERBOSE=1 run 55 test_backend_ops "$bundle/bin/test_backend_ops" --jobs 1 --verbose --filter 'backend_ops/*'

step "200 steps of ResNet-20, GPU against CPU (tests/cli/cuda_train.sh)"
BB=$BB run 65 cuda_train sh tests/cli/cuda_train.sh

step "200 steps of ResNet-20 in bf16 against fp32, both on the GPU (tests/cli/cuda_train_bf16.sh)"
BB=$BB run 30 cuda_train_bf16 sh tests/cli/cuda_train_bf16.sh

step "throughput and memory: bigbatch bench --device cuda beside PyTorch"
for mb in $models; do
    m=${mb%:*} b=${mb#*:}
    # timed algorithm choice on both sides (PyTorch: cudnn.benchmark)
    # utilisation every 100 ms, each sample stamped with the wall clock (bash's EPOCHREALTIME)
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 100 2>/dev/null |
        while IFS= read -r sample; do echo "$EPOCHREALTIME $sample"; done >"$out/util-$m.txt" &
    sampler=$!
    # the algorithms chosen (stderr) for the convolutions of the ResNet
    verbose=0
    [ "$m" = resnet50 ] && verbose=1
    BIGBATCH_CUDNN_VERBOSE=$verbose BIGBATCH_CUDNN_FIND=1 run 16 "bench $m" "$BB" bench --device cuda --model "$m" \
        --batch "$b" --steps 10 --warmup 3 --profile-steps 0 --loader >"$out/bench-$m.txt"
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
    cat "$out/bench-$m.txt"
    utilisation_in_window "$out/util-$m.txt" "$out/bench-$m.txt" "$m"
    rm -f "$out/util-$m.txt" "$out/bench-$m.txt"
    # which of the two differences from PyTorch's defaults costs what: deterministic
    # algorithms with 8 GiB of workspace, then PyTorch's defaults (atomics-based algorithms
    # admitted, any workspace that fits; 8 GiB here)
    # (the 1x1 convolutions on cuDNN instead of cuBLAS, BIGBATCH_CUDA_POINTWISE=cudnn, ran here
    # until 2026-12-07: its 16 s went to the --cuda-graph run of step 5)
    BIGBATCH_CUDNN_VERBOSE=$verbose BIGBATCH_CUDNN_FIND=1 BIGBATCH_CUDNN_DETERMINISTIC=0 BIGBATCH_CUDNN_WORKSPACE_MB=8192 run 16 "bench $m, any algorithm" "$BB" bench --device cuda \
        --model "$m" --batch "$b" --steps 10 --warmup 3 --profile-steps 0 --loader
    if [ -n "$py" ] && "$py" -c "import torch, torchvision" 2>/dev/null; then
        run 40 "torch $m" "$py" bench/torch_gpu_bench.py --model "$m" --batch "$b" --steps 10 --warmup 3
    else
        echo "PyTorch with torchvision is not installed: no comparison for $m"
    fi
done

step "mixed precision: bigbatch bench --precision bf16 beside PyTorch AMP bf16 + channels_last (medians of 3)"
for mb in $models; do
    m=${mb%:*} b=${mb#*:}
    limit_ours=24 limit_torch=30
    [ "$m" = resnet50 ] && limit_ours=36 limit_torch=45
    BIGBATCH_CUDNN_FIND=1 run $limit_ours "bench $m bf16 x3" bash -c 'for i in 1 2 3; do
        "$0" bench --device cuda --model "$1" --batch "$2" --steps 10 --warmup 3 --profile-steps 0 --precision bf16 || exit 1
    done' "$BB" "$m" "$b" >"$out/bf16-ours-$m.txt" 2>&1
    cat "$out/bf16-ours-$m.txt"
    if [ -n "$py" ] && "$py" -c "import torch, torchvision" 2>/dev/null; then
        run $limit_torch "torch $m amp bf16" "$py" bench/torch_gpu_bench.py --model "$m" --batch "$b" --steps 10 \
            --warmup 3 --precision bf16 --channels-last --repeats 3 >"$out/bf16-torch-$m.txt" 2>&1
        cat "$out/bf16-torch-$m.txt"
    else
        echo "PyTorch with torchvision is not installed: no comparison for $m" >"$out/bf16-torch-$m.txt"
    fi
    # the median of our three runs' img_s, and PyTorch's (already the median of its rounds)
    ours=$(sed -n 's/.* img_s=\([0-9.]*\).*/\1/p' "$out/bf16-ours-$m.txt" | sort -n | awk '{ v[n++] = $1 } END { if (n) print v[int(n / 2)] }')
    theirs=$(sed -n 's/^model=.* img_s=\([0-9.]*\).*/\1/p' "$out/bf16-torch-$m.txt" | head -n 1)
    if [ -n "$ours" ] && [ -n "$theirs" ]; then
        awk -v m="$m" -v b="$b" -v o="$ours" -v t="$theirs" 'BEGIN {
            printf "bf16 %s batch %s: bigbatch median %.1f img/s, PyTorch AMP bf16 channels_last median %.1f img/s, ours/PyTorch %.2f\n", m, b, o, t, o / t }'
    else
        echo "bf16 $m: no ratio (ours: ${ours:-none}, PyTorch: ${theirs:-none})"
    fi
    # the pass replayed from a CUDA graph (--cuda-graph on), never run on a GPU before: one run
    # beside the median above
    if [ "$m" = resnet50 ]; then
        BIGBATCH_CUDNN_FIND=1 run 16 "bench $m bf16 --cuda-graph on" "$BB" bench --device cuda --model "$m" \
            --batch "$b" --steps 10 --warmup 3 --profile-steps 0 --precision bf16 --cuda-graph on >"$out/bf16-graph-$m.txt" 2>&1
        cat "$out/bf16-graph-$m.txt"
        graph=$(sed -n 's/.* img_s=\([0-9.]*\).*/\1/p' "$out/bf16-graph-$m.txt")
        if [ -n "$graph" ] && [ -n "$ours" ]; then
            awk -v m="$m" -v g="$graph" -v o="$ours" 'BEGIN {
                printf "bf16 %s: --cuda-graph on %.1f img/s, off (median) %.1f img/s, on/off %.2f\n", m, g, o, g / o }'
        else
            echo "bf16 $m: no graph ratio (on: ${graph:-none}, off: ${ours:-none})"
        fi
        rm -f "$out/bf16-graph-$m.txt"
    fi
    rm -f "$out/bf16-ours-$m.txt" "$out/bf16-torch-$m.txt"
done

if [ "${GPU_CHECK_SKIP_MEMORY:-1}" != 0 ]; then
    step "GPU memory per model and batch: skipped (GPU_CHECK_SKIP_MEMORY=0 runs it, 60 s past the 8 minutes)"
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
    BIGBATCH_CUDNN_FIND=1 run 15 "layers ${mb%:*}" "$BB" bench --device cuda --model "${mb%:*}" --batch "${mb#*:}" \
        --steps 3 --warmup 2 --profile-steps 3 --layers
done

step "summary"
echo "$failed step(s) failed"
[ "$failed" -eq 0 ]
}

# a pipe, not a process substitution: the script ends only after tee has written every line
check 2>&1 | tee "$report"
exit "${PIPESTATUS[0]}"
