#!/bin/sh
# A run whose process fails is recorded as failed and the sweep goes on (exit 1); a run
# killed from outside is failed too; --retry-failed runs them again. Malformed experiment
# files each get their own error naming the line and key, and touch no database.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-failures
[train]
model = lenet
train-subset = 512
test-subset = 200
epochs = 1
[grid]
data-root = /usr/share/datasets/fashion-mnist, /nonexistent/fashion
INI
DB="$TMP/f.db"
expect_exit 1 "$BB" sweep "$TMP/exp.ini" --db "$DB"
expect_output "done: 1 complete, 0 diverged, 1 failed"
[ "$(sqlite3 "$DB" "select count(*) from runs where status='failed' and error like '%nonexistent%'")" = 1 ] \
    || fail "failure not recorded: $(sqlite3 "$DB" 'select status, error from runs')"
expect_exit 0 "$BB" runs --db "$DB" --status failed
expect_output "nonexistent"
expect_exit 1 "$BB" sweep "$TMP/exp.ini" --db "$DB" --retry-failed
expect_output "retrying 1 failed run"
[ "$(sqlite3 "$DB" "select attempt from runs where status='failed'")" = 2 ] || fail "not retried"
[ "$(sqlite3 "$DB" "select attempt from runs where status='complete'")" = 1 ] || fail "complete run ran again"

# A run killed from outside (OOM killer, a user): failed with the signal, the sweep goes on.
cat > "$TMP/long.ini" <<'INI'
[experiment]
name = sweep-killed-run
[train]
model = lenet
train-subset = 512
test-subset = 200
epochs = 200
INI
"$BB" sweep "$TMP/long.ini" --db "$TMP/long.db" > "$TMP/long.out" 2>&1 &
sweep=$!
n=0
until child=$(pgrep -f -- "--db $TMP/long.db --run-id" | head -n 1) && [ -n "$child" ]; do
    n=$((n + 1)); [ $n -lt 100 ] || fail "the run never started"; sleep 0.1
done
sleep 0.3
kill -9 "$child"
wait $sweep; rc=$?
[ $rc -eq 1 ] || { cat "$TMP/long.out"; fail "sweep exit $rc, expected 1"; }
grep -q "killed by signal 9" "$TMP/long.out" || { cat "$TMP/long.out"; fail "no word of the signal"; }
[ "$(sqlite3 "$TMP/long.db" "select status || ' ' || exit_code from runs")" = "failed 137" ] || fail "not failed"

# bad files: error with file:line and key, exit 2, no database
check_bad() {  # name, expected text, ini body
    printf '%s\n' "$3" > "$TMP/$1.ini"
    expect_exit 2 "$BB" sweep "$TMP/$1.ini" --db "$TMP/bad.db"
    expect_output "$2"
    [ ! -e "$TMP/bad.db" ] || fail "$1: a database was created"
}
check_bad unknown_key "unknown_key.ini:4.*'learning-rate'" "[experiment]
name = x
[train]
learning-rate = 0.1"
check_bad bad_value "bad_value.ini:5.*'lr'" "[experiment]
name = x
[train]
model = lenet
lr = fast"
check_bad zip_len "zip_len.ini:7.*'lr'" "[experiment]
name = x
[grid]
batch = 128, 256
[zip batch]

lr = 0.1, 0.2, 0.3"
check_bad combo "micro-batch" "[experiment]
name = x
[train]
micro-batch = 100
[grid]
batch = 128, 200"
check_bad no_name "name" "[experiment]
title = nameless
[train]
lr = 0.1"
check_bad bad_section "bad_section.ini:3" "[experiment]
name = x
[gird]
lr = 0.1"
expect_exit 2 "$BB" sweep "$TMP/missing.ini" --db "$TMP/bad.db"
expect_output "missing.ini"
exit 0
