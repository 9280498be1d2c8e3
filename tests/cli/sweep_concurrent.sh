#!/bin/sh
# Four sweep processes on one database at once: each run executes exactly once, and no
# process fails with "database is locked".
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-concurrent
[train]
model = lenet
train-subset = 512
test-subset = 200
epochs = 2
batch = 64
[grid]
lr = 0.01, 0.02, 0.05
momentum = 0, 0.5, 0.9
INI
DB="$TMP/conc.db"
pids=""
for i in 1 2 3 4; do
    "$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 > "$TMP/p$i.log" 2>&1 &
    pids="$pids $!"
done
status=0
for pid in $pids; do wait "$pid" || status=1; done
[ $status -eq 0 ] || { cat "$TMP"/p*.log; fail "a sweep process failed"; }
grep -il "locked" "$TMP"/p*.log "$TMP"/conc.logs/*.log && fail "database is locked"
[ "$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT and attempt=1")" = 9 ] \
    || fail "runs: $(sqlite3 "$DB" 'select id, status, attempt from runs')"
starts=$(cat "$TMP"/p*.log | grep -c " start ")
[ "$starts" = 9 ] || fail "$starts starts for 9 runs"
for i in 1 2 3 4; do expect_done 9 0 0 0 "$TMP/p$i.log"; done
exit 0
