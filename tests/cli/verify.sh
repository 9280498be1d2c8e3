#!/bin/sh
# bigbatch verify: a cell re-run with today's engine lands within its archived seeds (the same
# engine: the same bits as seed 1), and a cell whose archived numbers were moved by 0.2 does
# not (exit 1, OUTSIDE); a label that names no cell is an error. The scratch database is gone
# afterwards unless --keep.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = verify-test
title = Verify test
repeats = 2
[train]
model = lenet
train-subset = 1024
test-subset = 300
batch = 64
momentum = 0.9
epochs = 2
[grid]
lr = 0.02, 0.05
INI
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/a.db" --workers 2 --threads 1
expect_exit 0 "$BB" verify "$TMP/exp.ini" --db "$TMP/a.db" --cell "lr=0.05" --threads 1 --keep "$TMP/today.db"
expect_output "| lr=0.05 | .* | within |"
expect_output "REPRODUCED: 0 runs outside"
[ "$(sqlite3 "$TMP/today.db" "select count(*) from runs")" = 1 ] || fail "verify ran more than the one cell's first seed"
# the archive as committed (a .sql.gz dump) is restored into the scratch folder first
sqlite3 "$TMP/a.db" .dump | gzip > "$TMP/a.sql.gz"
expect_exit 0 "$BB" verify "$TMP/exp.ini" --db "$TMP/a.sql.gz" --cell "lr=0.05" --threads 1
expect_output "REPRODUCED: 0 runs outside"
# the archive says 0.2 more than any seed can reach today
sqlite3 "$TMP/a.db" "update runs set test_acc = test_acc + 0.2 where json_extract(config, '$.lr') = '0.05'"
expect_exit 1 "$BB" verify "$TMP/exp.ini" --db "$TMP/a.db" --cell "lr=0.05" --threads 1
expect_output "OUTSIDE: 0\.[0-9]* outside \["
expect_output "DIFFERS: 1 run outside"
# a stated bound wider than the move (a one-seed cell, or a GPU against a CPU archive)
expect_exit 0 "$BB" verify "$TMP/exp.ini" --db "$TMP/a.db" --cell "lr=0.05" --threads 1 --spread 0.25
expect_output "widened by their standard deviation (at least 0.250)"
expect_output "REPRODUCED: 0 runs outside"
ls "${TMPDIR:-/tmp}" | grep -q "bigbatch-verify-" && fail "the scratch folder was left behind"
expect_exit 1 "$BB" verify "$TMP/exp.ini" --db "$TMP/a.db" --cell "lr=9"
expect_output "no cell 'lr=9'"
expect_exit 2 "$BB" verify
expect_output "give the experiment file (bigbatch verify --help)"
exit 0
