#!/bin/sh
# --stop-at-acc: the run ends at the first evaluation (within an epoch with --eval-every, or at
# an epoch's end) whose test accuracy reaches the target; that evaluation is the last epoch
# row (a partial epoch), not also an evals row; the run is complete with its step count. A
# target it never reaches changes nothing: the same steps and accuracy as without the flag.
. tests/cli/lib.inc
DB="$TMP/s.db"
q() { sqlite3 "$DB" "$1"; }
args="--model lenet --train-subset 2048 --test-subset 500 --epochs 4 --batch 64 --lr 0.05 --momentum 0.9 --eval-every 8 --threads 1"
expect_exit 0 "$BB" train $args --stop-at-acc 0.6 --db "$DB"
expect_output "stopped=reached-target"
steps=$(q "select steps from runs")
# 32 steps per epoch, 128 in all: the target is reached earlier, at a multiple of 8
[ "$steps" -lt 128 ] && [ $((steps % 8)) -eq 0 ] || fail "stopped at step $steps"
[ "$(q "select status from runs")" = complete ] || fail "status $(q 'select status from runs')"
[ "$(q "select max(step) from epochs")" = "$steps" ] || fail "last epoch row not at step $steps"
[ "$(q "select test_acc >= 0.6 from epochs where step = $steps")" = 1 ] || fail "last epoch below the target"
[ "$(q "select count(*) from evals where step = $steps")" = 0 ] || fail "the stopping evaluation also in evals"
[ "$(q "select count(*) from (select test_acc from evals union all select test_acc from epochs where step < $steps) where test_acc >= 0.6")" = 0 ] \
    || fail "an earlier evaluation already reached the target"
[ "$(q "select count(*) from steps")" = "$steps" ] || fail "step rows"
[ "$(q "select abs(test_acc - (select test_acc from epochs where step = $steps)) < 1e-9 from runs")" = 1 ] || fail "runs.test_acc"
# a target never reached: the whole budget, identical to a run without the flag
expect_exit 0 "$BB" train $args --stop-at-acc 1 --db "$DB"
grep -q "stopped=" "$TMP/out" && fail "stopped at an unreachable target"
a=$(sed -n 's/^final \(.*\)/\1/p' "$TMP/out")
expect_exit 0 "$BB" train $args --db "$DB"
b=$(sed -n 's/^final \(.*\)/\1/p' "$TMP/out")
[ "$a" = "$b" ] && [ -n "$a" ] || fail "unreached target changed the run: '$a' vs '$b'"
case "$a" in *steps=128*) ;; *) fail "budget not run: $a" ;; esac
# without --eval-every it stops at an epoch's end
expect_exit 0 "$BB" train --model lenet --train-subset 2048 --test-subset 500 --epochs 4 --batch 64 --lr 0.05 \
    --momentum 0.9 --threads 1 --stop-at-acc 0.6
expect_output "steps=\(32\|64\|96\) .*stopped=reached-target"
expect_exit 2 "$BB" train $args --stop-at-acc 0
expect_output "stop-at-acc: 0 is not a test accuracy"
expect_exit 2 "$BB" train $args --stop-at-acc 1.5
exit 0
