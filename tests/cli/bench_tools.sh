# The benchmark scripts' own tables, which no timed number checks: bench/layer_scaling.py reads
# `bench --layers` (a change of its columns would leave the rows empty), and run_bench.py's
# thread-scaling table (--scaling only: no PyTorch needed) pins a one-thread run to each CPU, one
# after the other and all at once.
# Tiny runs: only the rows and their fields are checked, never a value. Both scripts run
# bench/core_stalls on each core every round (make test builds it; BENCH_CORE_STALLS names it).
. tests/cli/lib.inc
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "skipped: no $PY"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "skipped: the scaling tables need 2 CPUs, this machine has $(nproc)"; exit 77; }
STALLS=${BENCH_CORE_STALLS:-build/release/bench/core_stalls}
expect_exit 0 "$STALLS" 0.05
expect_output '^cpu=[0-9]* median_us=[0-9.]* stalled_pct=[0-9.]* stalls=[0-9]* longest_ms=[0-9.]*$'
expect_exit 2 "$STALLS" 0
expect_output 'core_stalls: the run.s length must be 0-60 seconds, not 0'
expect_exit 0 "$PY" bench/layer_scaling.py --bigbatch "$BB" --model lenet --batch 8 --rounds 1 --steps 2
expect_output '^lenet batch 8: img/s on 1 thread [0-9]*, on 2 threads [0-9]* (1 rounds of 2 profiled steps'
for layer in conv1 maxpool1 relu2 conv2 fc1 fc3 loss zero_grad update STEP; do
    expect_output "^$layer  *[0-9.]*  *[0-9.]*  *[0-9]*%"
done
expect_exit 0 "$PY" bench/run_bench.py --bigbatch "$BB" --models lenet --batches 8 --steps 2 --warmup 1 \
    --threads 2 --scaling only --scaling-pairs 2
expect_output '^Thread scaling, ours: img/s on 1 thread pinned to each of CPUs [0-9]*,[0-9]* and on 2 threads'
expect_output '^lenet *| *8 *| *[0-9.]* / [0-9.]* *| *[0-9.]* *| *[0-9]*% *| *[0-9]*%-[0-9]*% *| *[0-9]*% *| *[0-9]*% *| *[0-9.]* *| *[0-9]*% *| *[0-9]*% / [0-9]*%$'
expect_output 'lenet *batch 8 *cores [0-9]*,[0-9]*: [0-9 ]* / [0-9 ]* img/s on 1 thread, together [0-9]* [0-9]*, 2 threads: [0-9]* [0-9]*; stalled % [0-9]* [0-9]* / [0-9]* [0-9]*$'
# no rounds is an error, not an empty table
expect_exit 1 "$PY" bench/run_bench.py --bigbatch "$BB" --models lenet --scaling only --scaling-pairs 0
expect_output 'scaling-pairs must be positive'
# bench/ab_scaling.py: one table per case, a row per binary (the same binary twice here)
expect_exit 0 "$PY" bench/ab_scaling.py --bin one="$BB" --bin two="$BB" --case lenet:8 --rounds 2 --seconds 0.05
expect_output '^lenet batch 8: 2 rounds of [0-9]* steps a run; img/s, medians; efficiency = 2 threads / (CPU [0-9]* + CPU [0-9]*)$'
expect_output '^one *| *[0-9]* *| *[0-9]* *| *[0-9]* *| *[0-9]*% *| [0-9]*% [0-9]*% | [0-9]*/[0-9]* [0-9]*/[0-9]*$'
expect_output '^two *| *[0-9]* *| *[0-9]* *| *[0-9]* *| *[0-9]*% *| [0-9]*% [0-9]*% | [0-9]*/[0-9]* [0-9]*/[0-9]*$'
# --together: two more columns, the pinned runs at once and two threads' share of them
expect_exit 0 "$PY" bench/ab_scaling.py --bin one="$BB" --case lenet:8 --rounds 1 --seconds 0.05 --together
expect_output '^binary | *1T cpu[0-9]* | *1T cpu[0-9]* | 2 threads | efficiency |  together |  2T / together | each round | stalled cpu[0-9]* / cpu[0-9]*, each round$'
expect_output '^one *| *[0-9]* *| *[0-9]* *| *[0-9]* *| *[0-9]*% *| *[0-9]* *| *[0-9]*% *| [0-9]*% | [0-9]*/[0-9]*$'
expect_exit 1 "$PY" bench/ab_scaling.py --bin "$BB" --case lenet:8
expect_output 'is not NAME=PATH'
