#!/bin/sh
# A run whose process fails is tried once more, then recorded as failed when it fails the
# same way again, and the sweep goes on (exit 1); a run killed from outside is tried again
# up to --max-attempts, then failed; --retry-failed runs failed runs again; `runs` shows each
# attempt's end. Malformed experiment files each get their own error naming the line and key,
# and touch no database.
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
expect_done 1 0 1 0
[ "$(sqlite3 "$DB" "select count(*) from runs where status='failed' and error like '%nonexistent%'")" = 1 ] \
    || fail "failure not recorded: $(sqlite3 "$DB" 'select status, error from runs')"
# tried twice (the second attempt failed as the first did), not a third time
[ "$(sqlite3 "$DB" "select attempt from runs where status='failed'")" = 2 ] || fail "not tried exactly twice"
[ "$(sqlite3 "$DB" "select group_concat(o) from (select outcome || ':' || retried as o from attempts a
    join runs r on r.id = a.run_id where r.status = 'failed' order by a.attempt)")" = "failed:1,failed:0" ] || fail "attempts: $(sqlite3 "$DB" 'select * from attempts')"
expect_exit 0 "$BB" runs --db "$DB" --status failed
expect_output "nonexistent"
expect_output "    attempt 1: failed: .*nonexistent.* (tried again)"
expect_exit 1 "$BB" sweep "$TMP/exp.ini" --db "$DB" --retry-failed
expect_output "retrying 1 failed run"
[ "$(sqlite3 "$DB" "select attempt from runs where status='failed'")" = 3 ] || fail "not retried"
[ "$(sqlite3 "$DB" "select attempt from runs where status in $RESULT")" = 1 ] || fail "complete run ran again"

# A run killed from outside (OOM killer, a user): with no attempt left (--max-attempts 1),
# failed with the signal, and the sweep goes on.
cat > "$TMP/long.ini" <<'INI'
[experiment]
name = sweep-killed-run
[train]
model = lenet
train-subset = 512
test-subset = 200
epochs = 200
INI
kill_first_run() {  # database: kills the run's process once it has started
    n=0
    until child=$(run_pids "$1" | head -n 1) && [ -n "$child" ]; do
        n=$((n + 1)); [ $n -lt 100 ] || fail "the run never started"; sleep 0.1
    done
    sleep 0.3
    kill -9 "$child"
}
"$BB" sweep "$TMP/long.ini" --db "$TMP/long.db" --max-attempts 1 > "$TMP/long.out" 2>&1 &
sweep=$!
kill_first_run "$TMP/long.db"
wait $sweep; rc=$?
[ $rc -eq 1 ] || { cat "$TMP/long.out"; fail "sweep exit $rc, expected 1"; }
grep -q "killed by signal 9" "$TMP/long.out" || { cat "$TMP/long.out"; fail "no word of the signal"; }
[ "$(sqlite3 "$TMP/long.db" "select status || ' ' || exit_code from runs")" = "failed 137" ] || fail "not failed"
# with attempts left (the default 3), the killed run is tried again and completes
sed 's/epochs = 200/epochs = 20/' "$TMP/long.ini" > "$TMP/again.ini"
"$BB" sweep "$TMP/again.ini" --db "$TMP/again.db" > "$TMP/again.out" 2>&1 &
sweep=$!
kill_first_run "$TMP/again.db"
wait $sweep; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/again.out"; fail "sweep exit $rc, expected 0"; }
grep -q "tried again (1 of at most 3 attempts so far)" "$TMP/again.out" || { cat "$TMP/again.out"; fail "no retry said"; }
[ "$(sqlite3 "$TMP/again.db" "select replace(status, 'collapsed', 'complete') || ' ' || attempt from runs")" = "complete 2" ] || fail "not retried"
expect_exit 0 "$BB" runs --db "$TMP/again.db"
expect_output "    attempt 1: killed: the run's process was killed by signal 9 (Killed) (tried again)"

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
