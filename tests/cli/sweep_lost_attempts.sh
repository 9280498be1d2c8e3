#!/bin/sh
# An attempt lost with its sweep (kill -9: the sweep never saw its run end) still gets its row in
# `attempts`, as interrupted with the reason, once the next sweep finds the claim stale: every
# attempt of every run has its end recorded, and `runs` shows it.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = lost-attempts
[train]
model = lenet
train-subset = 1024
test-subset = 200
epochs = 20
batch = 64
INI
DB="$TMP/l.db"
"$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 > "$TMP/first.log" 2>&1 &
sweep=$!
n=0
while [ -z "$(run_pids "$DB")" ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
[ -n "$(run_pids "$DB")" ] || { cat "$TMP/first.log"; fail "the run did not start"; }
kill -9 $sweep
wait $sweep 2>/dev/null
# the run dies with its sweep (SIGTERM on the parent's death); then the next sweep takes over
n=0
while [ -n "$(run_pids "$DB")" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
q() { sqlite3 "$DB" "$1"; }
[ "$(q "select status || ' ' || attempt from runs")" = "running 1" ] || fail "not left running: $(q 'select status, attempt from runs')"
[ "$(q "select count(*) from attempts")" = 0 ] || fail "an attempt was recorded before the next sweep"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1
[ "$(q "select status || ' ' || attempt from runs")" = "complete 2" ] || fail "not taken over: $(q 'select status, attempt from runs')"
[ "$(q "select outcome || ':' || retried from attempts where attempt = 1")" = "interrupted:1" ] ||
    fail "attempt 1: $(q 'select * from attempts')"
q "select reason from attempts where attempt = 1" | grep -q "gone" || fail "no reason: $(q 'select * from attempts')"
[ "$(q "select count(*) from runs r where (select count(*) from attempts a where a.run_id = r.id) != r.attempt")" = 0 ] ||
    fail "attempts without their end: $(q 'select id, attempt from runs'); $(q 'select * from attempts')"
expect_exit 0 "$BB" runs --db "$DB"
expect_output "    attempt 1: interrupted: .*gone (tried again)"
exit 0
