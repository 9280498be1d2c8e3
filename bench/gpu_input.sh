#!/bin/bash
# The third prepared GPU check (issue 57 item 3): does ResNet-50 wait for its input on a GPU
# when every batch is decoded from JPEGs and random-resized-cropped on the host? Two parts:
#
#   here, on the CPU machine, once:   make gpu-bundle && bench/gpu_input.sh --prepare
#   on the GPU node, in about 2 minutes (at most 3.5):   bench/gpu_input.sh OUTDIR
#
# --prepare writes 512 ImageNet-like training JPEGs and 25 validation ones
# (bench/make_bench_jpegs.py, Debian's python3-pil: shorter side 300-500, 60-150 kB each) and
# packs them at `bigbatch data pack`'s default --max-side 256 into data/gpu-input/ (ignored by
# git): train.bbjpeg 16.7 MiB and val.bbjpeg 0.8 MiB, each image as a packed ImageNet's are (the
# same sides, the same quality). The store travels rather than being made on the node, which may
# lack PIL. What a device run carries is 64 MiB in all: on 2026-12-08 the working tree (29.2 MiB
# tracked), build/gpu-bundle.tar.xz (13 MiB, with Open MPI's runtime) and the store (17.5 MiB)
# made 60 MiB; 1,024 images would not fit. --prepare prints the sum. The run, with the device tool:
#
#   command:   bench/gpu_input.sh "$OUT"
#   carry:     ["build/gpu-bundle.tar.xz", "data/gpu-input"]
#   timeout_s: 300
#
# Steps, each under its own time limit:
#   1. the node and the bundle's libraries (bench/gpu_env.inc, as gpu_check.sh)
#   2. the loader alone: `bigbatch data bench` over the store, rrc to 224 and flip, decoded
#      img/s on 1 thread and on N = 4, 8 and 14 (no GPU involved)
#   3. ResNet-50 at batch 256 on the GPU, FP32, `bench --loader` with synthetic pixels (crop
#      and flip only: the GPU's training rate when input costs next to nothing), then from the
#      store (`--data imagefolder --data-root data/gpu-input --augment rrc`) at --loader-threads
#      4, 8 and 14: img/s and data_wait, the share of the timed steps' time spent waiting for
#      the loader (cli/cli_bench.c). The store holds 512 images, so the 30 timed steps of 256
#      pass over it 15 times, each pass with fresh crops (rrc's draws depend on the epoch).
#   4. the same bits: ResNet-8 trained from the store on the GPU gives byte-identical
#      checkpoints at 1, 3 and 8 loader threads, and with --cuda-graph on (the pinned slots,
#      their uploads and events, and the graph's replays over real batches)
#   5. the verdict: PASS when data_wait < 0.05 at 14 loader threads (the node's 16 cores less
#      the main thread, which launches the GPU's work, and one for the driver and the system),
#      and a table of all the numbers
# Everything goes to OUTDIR/gpu_input.txt; the exit status is 0 only when every step ran and
# the verdict is PASS. Limits: 20 + 3 x 15 + 4 x 35 + 30 = 235 s.
set -u
cd "$(dirname "$0")/.."
store=data/gpu-input

# --prepare: the store, here (the CPU machine with PIL), and what the device run will carry
if [ "${1:-}" = --prepare ]; then
    BB=${BB:-bin/bigbatch}
    py=${PYTHON:-/usr/bin/python3}
    if [ ! -f "$store/train.bbjpeg" ]; then
        "$py" -c 'import PIL' 2>/dev/null || { echo "--prepare: $py has no PIL (python3-pil)" >&2; exit 1; }
        jpegs=$(mktemp -d) || exit 1
        trap 'rm -rf "$jpegs"' EXIT
        "$py" bench/make_bench_jpegs.py "$jpegs" 512 1 || exit 1
        mkdir -p "$store" && "$BB" data pack --data-root "$jpegs" --out "$store" --quiet || exit 1
    fi
    "$BB" data check "$store/train.bbjpeg" || exit 1
    . bench/gpu_carried.inc
    carried_within_64 store "$store"
    exit
fi

out=${1:?usage: bench/gpu_input.sh OUTDIR (bench/gpu_input.sh --prepare first, on the CPU machine)}
mkdir -p "$out"
report=$out/gpu_input.txt
. bench/gpu_env.inc
threads="4 8 14"
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2" | tail -n 1; }

# r50 NAME LIMIT ARGS...: ResNet-50 at 256 on the GPU with --loader, its line into $out/NAME.txt
r50() {
    local name=$1 limit=$2; shift 2
    run "$limit" "$name" "$BB" bench --device cuda --model resnet50 --batch 256 --warmup 3 --steps 30 \
        --profile-steps 0 --loader "$@" >"$out/$name.txt" 2>&1
    cat "$out/$name.txt"
}

checks() {
gpu_node || return 1
[ -f "$store/train.bbjpeg" ] || { echo "no $store: run bench/gpu_input.sh --prepare here and carry $store"; return 1; }
"$BB" data check "$store/train.bbjpeg" || return 1

step "the loader alone: decoded, rrc-cropped img/s at 224 (bigbatch data bench)"
for n in $threads; do
    run 15 "data bench $n" "$BB" data bench --store "$store/train.bbjpeg" --threads "$n" --images 1024 >"$out/loader$n.txt" 2>&1
    cat "$out/loader$n.txt"
done

step "ResNet-50, batch 256, on the GPU: synthetic pixels, then the store with rrc"
r50 synthetic 35 --loader-threads 14
for n in $threads; do
    r50 "store$n" 35 --data imagefolder --data-root "$store" --augment rrc --loader-threads "$n"
done

step "the same bits on the GPU at any --loader-threads, and with --cuda-graph on"
# ResNet-8 from the store with rrc, 2 epochs of 6 steps in micro-batches of 8 with an evaluation
# between: the checkpoints at 1, 3 and 8 loader threads, and at 8 with each pass replayed from a
# CUDA graph, must be byte-identical (the CPU's tests/cli/loader_threads.sh and graph.sh, here
# with the pinned slots, their uploads and events on the GPU)
# one shell under one limit (timeout runs programs, not functions)
run 30 "same bits" bash -c 'BB=$0 store=$1 out=$2
for r in "1 off" "3 off" "8 off" "8 on"; do
    set -- $r
    "$BB" train --device cuda --model resnet8 --data imagefolder --data-root "$store" --augment rrc \
        --train-subset 96 --epochs 2 --batch 16 --micro-batch 8 --loader-threads "$1" --cuda-graph "$2" \
        --quiet --save "$out/bits-$1-$2.ckpt" || exit 1
    cmp "$out/bits-1-off.ckpt" "$out/bits-$1-$2.ckpt" || { echo "loader threads $1, cuda graph $2: other bits"; exit 1; }
done
echo "identical checkpoints at 1, 3 and 8 loader threads and with --cuda-graph on"' "$BB" "$store" "$out"
rm -f "$out"/bits-*.ckpt

step "summary"
printf "%-22s %12s %12s %10s %9s\n" "loader threads" "loader img/s" "train img/s" "data_wait" "crop_ms"
printf "%-22s %12s %12s %10s %9s\n" "14, synthetic" - "$(field img_s "$out/synthetic.txt")" \
    "$(field data_wait "$out/synthetic.txt")" "$(field crop_ms "$out/synthetic.txt")"
for n in $threads; do
    printf "%-22s %12s %12s %10s %9s\n" "$n, store rrc" "$(field img_s "$out/loader$n.txt")" \
        "$(field img_s "$out/store$n.txt")" "$(field data_wait "$out/store$n.txt")" "$(field crop_ms "$out/store$n.txt")"
done
wait14=$(field data_wait "$out/store14.txt")
if [ -z "$wait14" ]; then
    echo "verdict: no data_wait at 14 loader threads (the run failed)"
    failed=$((failed + 1))
elif awk -v w="$wait14" 'BEGIN { exit !(w < 0.05) }'; then
    echo "verdict: PASS: ResNet-50 waited for input $wait14 of its step time at 14 loader threads (< 0.05)"
else
    echo "verdict: FAIL: ResNet-50 waited for input $wait14 of its step time at 14 loader threads (>= 0.05)"
    failed=$((failed + 1))
fi
echo "$failed step(s) failed"
[ "$failed" -eq 0 ]
}

# a pipe, not a process substitution: the script ends only after tee has written every line
checks 2>&1 | tee "$report"
exit "${PIPESTATUS[0]}"
