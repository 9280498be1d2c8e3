#!/bin/sh
# A smoke sweep with a diverging LR completes; the report marks the diverged cell; a rerun
# runs nothing again; the database holds exactly one attempt's rows per run.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-basic
title = Sweep test
repeats = 2
tuned = lr
[train]
model = lenet
data = fashion-mnist
train-subset = 512
test-subset = 200
epochs = 2
momentum = 0.9
[grid]
batch = 128, 256
lr = 0.05, 80
[paper]
columns = batch, test_acc
row = 128, 0.5
row = 256, diverged
INI
DB="$TMP/r/basic.db"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 2
expect_output "8/8 runs ended"
expect_done 4 4 0 0
[ -f "$TMP/r/basic.logs/$(sqlite3 "$DB" "select id from runs limit 1").log" ] || fail "no run log"
[ "$(sqlite3 "$DB" 'pragma integrity_check')" = ok ] || fail "integrity_check"
# 512/128 = 4 and 512/256 = 2 steps per epoch, 2 epochs, 2 seeds: (8 + 4) * 2 = 24 steps
[ "$(sqlite3 "$DB" "select count(*) from steps s join runs r on r.id=s.run_id where r.status in $RESULT")" = 24 ] \
    || fail "step rows of complete runs: $(sqlite3 "$DB" "select run_id, count(*) from steps group by run_id")"
[ "$(sqlite3 "$DB" "select count(*) from epochs")" = 8 ] || fail "epoch rows"
[ "$(sqlite3 "$DB" "select count(*) from runs where status='diverged' and diverged_step is not null and test_acc is null")" = 4 ] \
    || fail "diverged runs not recorded"
[ "$(sqlite3 "$DB" "select count(distinct json_extract(config,'$.seed')) from runs")" = 2 ] || fail "seeds"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$DB"
expect_output "| 128 | 80 | 2 | diverged (2 seeds) |"
expect_output "| 256 | 0.05 |"
expect_output "Best over lr for each batch"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$DB" --format csv
expect_output "^batch,lr,runs,complete,collapsed,diverged,failed,mean,std,best,paper,diff"
expect_exit 0 "$BB" runs --db "$DB"
expect_output "8 runs"
# A rerun finds nothing to do and starts nothing.
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB"
grep -q "start" "$TMP/out" && { cat "$TMP/out"; fail "a rerun started runs again"; }
[ "$(sqlite3 "$DB" "select max(attempt) from runs")" = 1 ] || fail "a run ran twice"
# Times are Unix time: another process, or this machine after a reboot, compares them.
now=$(date +%s)
bad=$(sqlite3 "$DB" "select id from runs where created < $now - 3600 or started < created or finished < started
      or finished > $now + 5")
[ -z "$bad" ] || fail "run times are not Unix time: $(sqlite3 "$DB" 'select created, started, finished from runs limit 1'), now $now"
# A run left running by another host, silent for 1000 s, is re-queued and run again.
hold_elsewhere "$DB" "$now - 1000" "id=(select id from runs where status in $RESULT limit 1)"
expect_exit 0 timeout 120 "$BB" sweep "$TMP/exp.ini" --db "$DB" --stale-after 120
expect_output "1 run left by a dead or silent process re-queued"
expect_done 4 4 0 0
# --dry-run lists the runs with their status and writes nothing.
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/r/none.db" --dry-run
expect_output "8 runs"
[ ! -e "$TMP/r/none.db" ] || fail "dry run created a database"
exit 0
