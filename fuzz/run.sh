#!/bin/sh
# make fuzz: runs each libFuzzer target for SECONDS from its seed corpus (fuzz/corpus/<name>,
# read only: what the fuzzer finds goes to a scratch folder), one after another, and prints a
# line per target: executions, and crashes (the input that crashed is kept in
# build/fuzz/crashes/), then "N passed, N failed" over the targets as tests/run.sh ends.
# Exit status 1 when any target crashed or did not run.
#   sh fuzz/run.sh SECONDS build/fuzz/fuzz_idx ...
# FUZZ_RUNS=N in the environment also stops each target after N executions.
seconds=$1; shift
crashes=build/fuzz/crashes
mkdir -p "$crashes"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
passed=0
failed=0
for target in "$@"; do
    name=$(basename "$target" | sed 's/^fuzz_//')
    mkdir -p "$scratch/$name"
    rm -f "$crashes/$name-"*
    "$target" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -print_final_stats=1 -artifact_prefix="$crashes/$name-" \
        -timeout=10 -rss_limit_mb=2048 "$scratch/$name" "fuzz/corpus/$name" > "$scratch/$name.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log")
    found=$(ls "$crashes" | grep -c "^$name-")
    echo "fuzz $name: ${runs:-0} executions in at most ${seconds} s, $found crash$( [ "$found" = 1 ] || echo es) (exit $rc)"
    if [ $rc -ne 0 ] || [ "$found" -gt 0 ] || [ -z "$runs" ]; then
        tail -n 40 "$scratch/$name.log"
        status=1
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
done
echo "$passed passed, $failed failed"
exit $status
