#!/bin/sh
# Two sweeps on one database from separate PID namespaces (as two containers, or two nodes with
# the same host name, would be): a process id means nothing across them, so each must see the
# other's claims as alive through their leases, and every run executes exactly once. Then a
# claim whose lease has run out by the database's clock (its owner silent in another namespace)
# is taken over. Skipped, saying why, where unshare cannot make a PID namespace (not root).
. tests/cli/lib.inc
unshare --pid --fork --mount-proc true 2>/dev/null ||
    { echo "skipped: unshare --pid --fork --mount-proc is not allowed here (needs root or user namespaces)"; exit 77; }
BBA=$(cd "$(dirname "$BB")" && pwd)/$(basename "$BB")
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-pidns
[train]
model = lenet
train-subset = 512
test-subset = 200
epochs = 3
batch = 64
[grid]
lr = 0.01, 0.02, 0.05, 0.1
momentum = 0, 0.5, 0.9
INI
DB="$TMP/ns.db"
# In namespace 1 the sweep is pid 2 (under sh), in namespace 2 pid 12 (ten short processes
# first): each one's pid is in the other namespace a process that has ended or never was.
for i in 1 2; do
    skip=$(( (i - 1) * 10 ))
    unshare --pid --fork --mount-proc sh -c 'n=$1; shift; while [ "$n" -gt 0 ]; do /bin/true; n=$((n - 1)); done; "$@"' \
        sh "$skip" "$BBA" sweep "$TMP/exp.ini" --db "$DB" --workers 2 --threads 1 > "$TMP/p$i.log" 2>&1 &
    eval "pid$i=$!"
done
wait "$pid1"; s1=$?
wait "$pid2"; s2=$?
[ $s1 -eq 0 ] && [ $s2 -eq 0 ] || { cat "$TMP"/p*.log; fail "a sweep failed ($s1, $s2)"; }
runs=$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT and attempt=1")
[ "$runs" = 12 ] || { sqlite3 "$DB" 'select id, status, attempt, host, pid, owner_ns from runs'; cat "$TMP"/p*.log; fail "$runs of 12 runs complete at their first attempt"; }
starts=$(cat "$TMP"/p*.log | grep -c " start ")
[ "$starts" = 12 ] || { cat "$TMP"/p*.log; fail "$starts starts for 12 runs"; }
[ "$(grep -l ' start ' "$TMP"/p*.log | wc -l)" = 2 ] || fail "one sweep ran everything: the test shows nothing"
[ "$(sqlite3 "$DB" "select count(distinct claim) from runs")" = 2 ] || fail "claims are not two sweeps' tokens"
[ "$(sqlite3 "$DB" "select count(distinct owner_ns) from runs where owner_ns like 'pid:[%'")" = 2 ] ||
    fail "the owners' two pid namespaces were not recorded"

# A claim held in another namespace whose lease ran out 1 s ago: taken over, and said why.
sqlite3 "$DB" "update runs set status='running', owner_ns='pid:[1]', pid=1, claim='feed',
    lease=(julianday('now') - 2440587.5) * 86400.0 - 1 where rowid = (select min(rowid) from runs)"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 1 --threads 1
expect_output "1 run left by a dead or silent process re-queued ([0-9a-f]*: its lease ran out [0-9]* s ago (process 1 on "
[ "$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT")" = 12 ] || fail "the run taken over did not complete"
[ "$(sqlite3 "$DB" "select attempt from runs where rowid = (select min(rowid) from runs)")" = 2 ] ||
    fail "the run taken over was not run again"
# ... while one whose lease still runs is left alone (the sweep waits for it): a lease 3 s ahead
sqlite3 "$DB" "update runs set status='running', owner_ns='pid:[1]', pid=1, claim='feed',
    lease=(julianday('now') - 2440587.5) * 86400.0 + 3 where rowid = (select min(rowid) from runs)"
start=$(date +%s)
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 1 --threads 1
[ $(( $(date +%s) - start )) -ge 3 ] || fail "a live lease was taken over before it ran out"

# A sweep stopped longer than its lease (SIGSTOP, a suspended laptop) keeps its own runs when it
# goes on: its lease ran out, but the claim is its own token.
# (one simple-cnn run of about 30 s, so it is still running when the sweep goes on)
sed 's/^name = sweep-pidns/name = sweep-stopped/; s/^model = lenet/model = simple-cnn/; s/^epochs = 3/epochs = 50/;
     s/^lr = .*/lr = 0.01/; /^momentum/d' "$TMP/exp.ini" > "$TMP/long.ini"
"$BB" sweep "$TMP/long.ini" --db "$TMP/long.db" --threads 1 --stale-after 10 > "$TMP/long.log" 2>&1 &
sweep=$!
sleep 3
kill -STOP $sweep
sleep 13
kill -CONT $sweep
wait $sweep || { cat "$TMP/long.log"; fail "the stopped sweep failed"; }
grep -q 're-queued' "$TMP/long.log" && { cat "$TMP/long.log"; fail "the sweep re-queued its own run after a stop"; }
[ "$(sqlite3 "$TMP/long.db" "select finished - started > 17 from runs")" = 1 ] || fail "the run ended before the sweep went on: the test shows nothing"
[ "$(sqlite3 "$TMP/long.db" "select replace(status, 'collapsed', 'complete') || ' ' || attempt from runs")" = "complete 1" ] ||
    { cat "$TMP/long.log"; fail "the stopped sweep's run did not complete at its first attempt"; }
exit 0
