#!/bin/sh
# Runs every test binary (Criterion) and every CLI test script (tests/cli/*.sh), and
# ends with one line "N passed, N failed". Each CLI script is one test: exit 0 = pass.
passed=0
failed=0
failures=""
for bin in "$@"; do
    out=$("$bin" --jobs 1 2>&1)
    echo "$out" | grep -v '^\[----\]' | grep -E 'Synthesis|FAIL|Assertion|failed|crash|Warning' || true
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
for script in tests/cli/*.sh; do
    [ -f "$script" ] || continue
    start=$(date +%s)
    if log=$(sh "$script" 2>&1); then
        passed=$((passed + 1)); echo "[PASS] $script ($(( $(date +%s) - start ))s)"
    else
        failed=$((failed + 1)); failures="$failures $script"
        echo "[FAIL] $script"; echo "$log" | tail -n 25 | sed 's/^/    /'
    fi
done
[ -n "$failures" ] && echo "failing:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
