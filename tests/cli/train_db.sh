#!/bin/sh
# train --db: epochs, step losses and layer statistics land in the database; running the same
# flags again replaces the rows (attempt 2, nothing duplicated); a NaN loss is stored as NULL
# with its class noted, and the run is diverged.
. tests/cli/lib.inc
DB="$TMP/one.db"
args="--model lenet --train-subset 512 --test-subset 200 --epochs 2 --batch 128 --lr 0.05 --layer-stats-every 3 --threads 1"
expect_exit 0 "$BB" train $args --db "$DB"
id=$(sqlite3 "$DB" "select id from runs")
expect_output "run $id (attempt 1)"
q() { sqlite3 "$DB" "$1"; }
[ "$(q "select replace(status, 'collapsed', 'complete'), steps, count(*) from runs")" = "complete|8|1" ] || fail "run row: $(q 'select * from runs')"
[ "$(q "select count(*) from epochs")" = 2 ] || fail "epochs"
[ "$(q "select count(*), min(step), max(step) from steps")" = "8|0|7" ] || fail "steps"
# lenet has 10 parameter tensors; statistics at steps 0, 1, 3, 6 and the last (7)
[ "$(q "select count(*), count(distinct step) from layer_stats")" = "50|5" ] || fail "layer_stats: $(q 'select step, count(*) from layer_stats group by step')"
[ "$(q "select name from layer_stats where step=0 and param=0")" = conv1.weight ] || fail "names"
# the run records the engine that ran it: `bigbatch version`'s, with the commit in a git checkout
version=$("$BB" version | cut -d' ' -f2)
[ "$(q "select engine_version from runs")" = "$version" ] || fail "engine_version $(q 'select engine_version from runs'), version $version"
if commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
    case "$version" in *"+$commit"*) ;; *) fail "version $version lacks the commit $commit" ;; esac
fi
# the same flags in another order and spelling: the same run, taken over
expect_exit 0 "$BB" train --threads 2 --lr 0.050 $args --db "$DB"
expect_output "run $id (attempt 2)"
[ "$(q "select count(*) from runs")" = 1 ] || fail "a second run row"
[ "$(q "select count(*) from steps")" = 8 ] || fail "step rows duplicated"
[ "$(q "select count(*) from layer_stats")" = 50 ] || fail "layer_stats duplicated"
# a sweep gives the same settings the same id as a run by hand (one canonical form, FNV-1a)
expect_exit 0 "$BB" train $args --seed 1 --db "$TMP/hand.db"
hand=$(sqlite3 "$TMP/hand.db" "select id from runs")
printf '[experiment]\nname = same\n[train]\nmodel = lenet\ntrain-subset = 512\ntest-subset = 200\nepochs = 2\nbatch = 128\nlr = 0.050\nlayer-stats-every = 3\n' > "$TMP/same.ini"
expect_exit 0 "$BB" sweep "$TMP/same.ini" --db "$TMP/same.db" --dry-run
expect_output "$hand"
# NaN: with the loss-multiple test off, a huge LR overflows to NaN/Inf
expect_exit 0 "$BB" train --model lenet --train-subset 512 --test-subset 200 --epochs 1 --lr 1e30 \
    --diverge-factor 0 --db "$DB"
expect_output "status=diverged"
[ "$(q "select status, test_acc is null from runs where status not in $RESULT")" = "diverged|1" ] || fail "diverged row"
[ "$(q "select count(*) from steps where loss is null and nonfinite like 'loss=%'")" -ge 1 ] \
    || fail "non-finite loss not noted: $(q 'select * from steps where loss is null or loss > 100')"
[ "$(q "select nonfinite from runs where status='diverged'")" != "" ] || fail "runs.nonfinite empty"
# every run records the device it ran on; --device is an execution detail: the same run id
[ "$(q "select count(*) from runs where device = 'cpu'")" = "$(q 'select count(*) from runs')" ] \
    || fail "device not recorded: $(q 'select id, device from runs')"
n=$(q 'select count(*) from runs')
expect_exit 0 "$BB" train $args --device cpu --db "$DB"
[ "$(q 'select count(*) from runs')" = "$n" ] || fail "--device cpu made a new run id"
# a version-1 file (no runs.device, claim, lease, owner_ns or skipped_steps, no steps.skipped,
# no attempts table) gains them all, NULL (skipped 0) for its runs, when
# opened to write; read-only commands read it as it is
V1=$TMP/v1.db
cp "$DB" "$V1"
sqlite3 "$V1" "alter table runs drop column device; alter table runs drop column claim; alter table runs drop column lease;
    alter table runs drop column owner_ns; alter table runs drop column skipped_steps; alter table steps drop column skipped;
    drop table attempts; update meta set value='1' where key='schema_version'"
expect_exit 0 "$BB" runs --db "$V1"
expect_exit 0 "$BB" train $args --seed 77 --db "$V1"
[ "$(sqlite3 "$V1" "select value from meta where key='schema_version'")" = 6 ] || fail "schema not migrated"
[ "$(sqlite3 "$V1" "select count(*) from steps where skipped != 0")" = 0 ] || fail "old steps not unskipped"
[ "$(sqlite3 "$V1" "select count(*) from runs where claim is null and lease is null and owner_ns is null")" -ge "$n" ] ||
    fail "old runs' claim columns not NULL"
[ "$(sqlite3 "$V1" "select count(*) from attempts")" = 0 ] || fail "no attempts table after migrating"
[ "$(sqlite3 "$V1" "select count(*) from runs where device is null")" = "$n" ] || fail "old runs' device not NULL"
[ "$(sqlite3 "$V1" "select device from runs where device is not null")" = cpu ] || fail "new run's device"
# version 4 knew no collapsed status: runs it recorded complete at the chance level (here the
# 8-step runs at 8.5% on 10 classes) are renamed collapsed when a writer opens it
V4=$TMP/v4.db
cp "$DB" "$V4"
at_chance=$(q "select count(*) from runs where status='collapsed'")
[ "$at_chance" -ge 1 ] || fail "no run of this test collapsed: $(q 'select status, test_acc, train_loss from runs')"
sqlite3 "$V4" "update runs set status='complete' where status='collapsed'; alter table runs drop column skipped_steps;
    alter table steps drop column skipped; update meta set value='4' where key='schema_version'"
expect_exit 0 "$BB" runs --db "$V4"
expect_exit 0 "$BB" runs --db "$V4" --upgrade
[ "$(sqlite3 "$V4" "select count(*) from runs where status='collapsed'")" = "$at_chance" ] || fail "collapsed runs not named"
[ "$(sqlite3 "$V4" "select value from meta where key='schema_version'")" = 6 ] || fail "version 4 not upgraded"
[ "$(sqlite3 "$V4" 'pragma foreign_key_check; pragma integrity_check')" = ok ] || fail "upgraded file not consistent"
# version 5 knew no pruned status (sweep --prune): its CHECK constraints refuse it until a
# writer opens the file and rebuilds runs and attempts; rows and statuses stay as they were
V5=$TMP/v5.db
cp "$DB" "$V5"
sqlite3 "$V5" "pragma writable_schema=on;
    update sqlite_master set sql=replace(sql, ',''pruned''', '') where name in ('runs', 'attempts');
    update meta set value='5' where key='schema_version'"
! sqlite3 "$V5" "update runs set status='pruned'" 2>/dev/null || fail "the version 5 file took status pruned"
before=$(sqlite3 "$V5" "select id, status, test_acc from runs order by id")
expect_exit 0 "$BB" runs --db "$V5" --upgrade
[ "$(sqlite3 "$V5" "select value from meta where key='schema_version'")" = 6 ] || fail "version 5 not upgraded"
[ "$(sqlite3 "$V5" "select id, status, test_acc from runs order by id")" = "$before" ] || fail "the upgrade changed runs"
sqlite3 "$V5" "update runs set status='pruned'; insert into attempts(run_id, attempt, finished, outcome)
    select id, 99, 0, 'pruned' from runs" || fail "the upgraded file refuses status pruned"
[ "$(sqlite3 "$V5" 'pragma foreign_key_check; pragma integrity_check')" = ok ] || fail "upgraded version 5 not consistent"
# the database is valid, and --run-id without a claimed row is refused
[ "$(q 'pragma integrity_check')" = ok ] || fail integrity
expect_exit 1 "$BB" train $args --db "$DB" --run-id 0000000000000000
expect_output "no run 0000000000000000"
expect_exit 2 "$BB" train $args --run-id abc
expect_output "needs --db"
exit 0
