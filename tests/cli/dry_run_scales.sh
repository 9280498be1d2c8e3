#!/bin/sh
# sweep --dry-run checks every scale of the file, not only the chosen one: a value only the
# full scale uses fails it at smoke and proxy too (exit 2, no database), and the error names
# the scale and the line of the value at fault (a derived value's inputs included).
. tests/cli/lib.inc
F=tests/fixtures/experiments
for scale in smoke proxy full; do
    expect_exit 2 "$BB" sweep $F/bad_full_batch.ini --scale $scale --dry-run --db "$TMP/x.db"
    expect_output "at --scale full: $F/bad_full_batch.ini: run 2 (batch=100): .*(keys at lines 7, 12)"
done
expect_exit 2 "$BB" sweep $F/bad_full_derived_input.ini --dry-run --db "$TMP/x.db"
expect_output "at --scale full: .*--lr .*(keys at lines 10, 12, 15)"
[ ! -e "$TMP/x.db" ] || fail "a refused file left a database"
# a file good at every scale passes
expect_exit 0 "$BB" sweep experiments/example.ini --dry-run --db "$TMP/e.db"
exit 0
