#!/bin/sh
# Fair tuning, checked, on the archived optimizer comparison. Cut back to its first grid (LR
# multipliers 0.1 to 3), the best table marks the groups whose best multiplier is the grid's
# top (Nesterov, LAMB, AdamW) and not LARS's (its top diverged: the grid brackets its best), and
# the findings are printed as provisional, naming the winner's edge and listing every best cell
# at an edge. The whole archive (the grid widened to 300 until no best sat at its top) has none.
. tests/cli/lib.inc
command -v sqlite3 >/dev/null || exit 77
zcat results/archive/optimizer-reality-check.sql.gz | sqlite3 "$TMP/o.db" || fail "loading the archive"
cp "$TMP/o.db" "$TMP/first.db"
sqlite3 "$TMP/first.db" "delete from experiment_runs where cast(json_extract(cell, '\$.lr_mult') as real) > 3" ||
    fail "cutting the archive back to its first grid"
expect_exit 0 "$BB" report experiments/optimizer-reality-check.ini --db "$TMP/first.db"
expect_output "| grid edge |"
expect_output "| 1280 | sgd | true | 1 | 0.0005 | 3 | 0\.[0-9]* | lr_mult at top |"
expect_output "| 1280 | lars | false | 10 | 0.0005 | 1 | 0\.[0-9]* | - |"
expect_output "| 1280 | adamw | false | 0.003 | 0.05 | 3 | 0\.[0-9]* | lr_mult at top |"
expect_output "What it shows (provisional: the winner, batch = 1280, opt = sgd, .* has its best lr_mult at top"
expect_output "^- the best lr_mult of batch = 1280, opt = lamb, .* (lr_mult = 3, the top); widen the grid"
[ "$(grep -c '^- the best lr_mult of' "$TMP/out")" = 3 ] || { cat "$TMP/out"; fail "not three provisional lines"; }

expect_exit 0 "$BB" report experiments/optimizer-reality-check.ini --db "$TMP/o.db"
expect_output "| 1280 | adamw | false | 0.003 | 0.05 | 100 | 0\.[0-9]* | - |"
[ "$(grep -c '^| 1280 | [a-z]* | [a-z]* | [0-9.]* | [0-9.]* | [0-9]* | 0\.[0-9]* | - |' "$TMP/out")" = 4 ] ||
    { cat "$TMP/out"; fail "the widened grid: not every optimizer's best inside it"; }
! grep -q "provisional\|at top\|at bottom" "$TMP/out" || { cat "$TMP/out"; fail "the widened grid's findings flagged"; }
exit 0
