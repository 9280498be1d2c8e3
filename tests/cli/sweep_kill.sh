#!/bin/sh
# kill -9 of the sweep at random moments, then the same command again: every run ends
# complete exactly once, no step or epoch row is lost or duplicated, every attempt's end is in
# attempts, integrity_check is ok.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-kill
repeats = 2
[train]
model = lenet
train-subset = 1024
test-subset = 200
epochs = 3
batch = 64
lr = 0.05
[grid]
momentum = 0, 0.5, 0.9
INI
DB="$TMP/kill.db"
i=0
while [ $i -lt 6 ]; do
    "$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 2 > "$TMP/sweep$i.log" 2>&1 &
    pid=$!
    # 0.3 to 1.2 s: inside runs, between runs, while claiming
    sleep "$(awk -v s=$i 'BEGIN { srand(s + 7); printf "%.2f", 0.3 + rand() * 0.9 }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    i=$((i + 1))
done
sleep 0.2
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 2
expect_done 6 0 0 0
[ "$(sqlite3 "$DB" 'pragma integrity_check')" = ok ] || fail "integrity_check"
# 1024/64 = 16 steps per epoch x 3 epochs per run
bad=$(sqlite3 "$DB" "select r.id, (select count(*) from steps where run_id=r.id), (select count(*) from epochs where run_id=r.id),
      (select count(distinct step) from steps where run_id=r.id) from runs r" | grep -v '|48|3|48$')
[ -z "$bad" ] || fail "runs with lost or extra rows: $bad"
[ "$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT")" = 6 ] || fail "not all complete"
# every attempt's end is in attempts, those lost with their sweep too (as interrupted)
lost=$(sqlite3 "$DB" "select id || ' attempt ' || attempt from runs r
      where (select count(*) from attempts a where a.run_id = r.id and a.attempt <= r.attempt) != r.attempt")
[ -z "$lost" ] || fail "attempts without their end: $lost; $(sqlite3 "$DB" 'select * from attempts')"
# Each kill left at most the 2 running runs to be taken over: re-queued, not duplicated.
grep -h "re-queued" "$TMP"/sweep*.log "$TMP/out" | head -3
exit 0
