#!/bin/sh
# Runs every test binary (Criterion) and every CLI test script (tests/cli/*.sh), and
# ends with one line "N passed, N failed" (", N skipped" follows when tests were skipped).
# Each CLI script is one test: exit 0 = pass, 77 = skipped (it says why), else failed. A
# skipped test (no GPU here, say) is counted as skipped, never as passed.
passed=0
failed=0
skipped=0
failures=""
for bin in "$@"; do
    out=$("$bin" --jobs 1 --verbose 2>&1)
    echo "$out" | grep -v -e '^\[----\]' -e '^\[RUN \]' -e '^\[PASS\]' |
        grep -E 'Synthesis|FAIL|SKIP|Assertion|failed|crash|Warning' || true
    skipped=$((skipped + $(echo "$out" | grep -c '^\[SKIP\]')))
    line=$(echo "$out" | grep 'Synthesis' | tail -n 1)
    if [ -z "$line" ]; then
        echo "$out" | tail -n 20
        failed=$((failed + 1)); failures="$failures $bin(no-summary)"; continue
    fi
    ok=$(echo "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    bad=$(echo "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    crash=$(echo "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    passed=$((passed + ok)); failed=$((failed + bad + crash))
    [ $((bad + crash)) -gt 0 ] && failures="$failures $bin"
done
# TEST_SCRIPTS: a glob of the scripts to run instead of all (make test-gpu: tests/cli/cuda_*.sh)
for script in ${TEST_SCRIPTS:-tests/cli/*.sh}; do
    [ -f "$script" ] || continue
    start=$(date +%s)
    log=$(sh "$script" 2>&1); rc=$?
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1)); echo "[PASS] $script ($(( $(date +%s) - start ))s)"
    elif [ "$rc" -eq 77 ]; then
        skipped=$((skipped + 1)); echo "[SKIP] $script: $(echo "$log" | tail -n 1)"
    else
        failed=$((failed + 1)); failures="$failures $script"
        echo "[FAIL] $script"; echo "$log" | tail -n 25 | sed 's/^/    /'
    fi
done
[ -n "$failures" ] && echo "failing:$failures"
if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"
else echo "$passed passed, $failed failed"; fi
[ "$failed" -eq 0 ]
