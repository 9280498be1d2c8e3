#!/bin/sh
# Two sweeps on one database with a lease (--stale-after) shorter than a run: each renews the
# leases of its own runs with its heartbeat, so neither re-queues the other's; every run
# completes at attempt 1. (Sweeps whose heartbeat did not renew the lease would livelock here,
# each re-queuing the other's runs, though every test of one sweep passes.)
. tests/cli/lib.inc
LEASE=10 # the shortest --stale-after allows
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = lease-renewed
[train]
model = lenet
train-subset = 4096
test-subset = 100
epochs = 40
batch = 64
[grid]
lr = 0.01, 0.02
INI
DB="$TMP/lease.db"
"$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 --stale-after $LEASE --max-attempts 1 > "$TMP/a.log" 2>&1 &
a=$!
sleep 0.5
"$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 --stale-after $LEASE --max-attempts 1 > "$TMP/b.log" 2>&1 &
b=$!
# a livelock never ends: stop both after a while, and say so
(
    n=0
    while kill -0 $a 2>/dev/null || kill -0 $b 2>/dev/null; do
        [ $n -ge 300 ] && { touch "$TMP/timeout"; kill $a $b 2>/dev/null; break; }
        sleep 1; n=$((n + 1))
    done
) > /dev/null 2>&1 &
watch=$!
wait $a; rc_a=$?
wait $b; rc_b=$?
wait $watch
[ ! -e "$TMP/timeout" ] || fail "livelock: after 300 s the runs are $(sqlite3 "$DB" 'select status || " at attempt " || attempt from runs')"
[ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] || { cat "$TMP/a.log" "$TMP/b.log"; fail "sweep exits $rc_a and $rc_b"; }
q() { sqlite3 "$DB" "$1"; }
[ "$(q "select count(*) from runs where status='complete' and attempt=1")" = 2 ] ||
    { cat "$TMP/a.log" "$TMP/b.log"; fail "runs: $(q 'select id, status, attempt, error from runs')"; }
grep -h "re-queued" "$TMP/a.log" "$TMP/b.log" && fail "a sweep re-queued the other's run"
[ "$(grep -l " start " "$TMP/a.log" "$TMP/b.log" | wc -l)" = 2 ] || fail "one sweep ran every run: the test shows nothing"
# the test means something only when runs outlive the lease
short=$(q "select count(*) from runs where finished - started <= $LEASE")
[ "$short" = 0 ] || { echo "skipped: $short runs took less than the $LEASE s lease (a faster machine: more epochs)"; exit 77; }
exit 0
