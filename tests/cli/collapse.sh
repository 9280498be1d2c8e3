#!/bin/sh
# A run that ends at the chance level is `collapsed` (train prints it, the database and the
# sweep's report name it); --collapse-patience N stops a run after N epochs in a row there, and
# without it a slow start that sits at chance for an epoch and then learns stays complete.
. tests/cli/lib.inc
A="--model lenet --train-subset 2048 --test-subset 500 --batch 64 --momentum 0.9 --threads 1"
# LR 1: no NaN and no loss 10x the first, but every epoch at 9-10% (the ReLUs die)
expect_exit 0 "$BB" train $A --epochs 4 --lr 1 --db "$TMP/c.db"
expect_output "steps=128 status=collapsed"
[ "$(sqlite3 "$TMP/c.db" "select status, steps from runs")" = "collapsed|128" ] || fail "not recorded collapsed"
# stopped early when asked: two epochs at chance
expect_exit 0 "$BB" train $A --epochs 4 --lr 1 --collapse-patience 2
expect_output "steps=64 status=collapsed"
# a slow start (LR warm-up from 0.006): epoch 1 at chance (test 10.6%), then it learns (73.8%)
slow="$A --epochs 5 --lr 0.02 --warmup-epochs 3"
expect_exit 0 "$BB" train $slow
grep -q "status=" "$TMP/out" && { cat "$TMP/out"; fail "the slow start was not complete"; }
grep -q "^ *1 *32 .* 0\.1[01][0-9]0 " "$TMP/out" || { cat "$TMP/out"; fail "epoch 1 was not at chance (the test lost its slow start)"; }
expect_exit 0 "$BB" train $slow --collapse-patience 2
grep -q "status=" "$TMP/out" && { cat "$TMP/out"; fail "patience 2 stopped a run that recovers in epoch 2"; }
# patience 1 changes the result: that is why it is not the default
expect_exit 0 "$BB" train $slow --collapse-patience 1
expect_output "steps=32 status=collapsed"
# in a sweep: counted at the end, and the report names it per cell
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = collapse-test
title = Collapse test
repeats = 2
[train]
model = lenet
train-subset = 2048
test-subset = 500
batch = 64
momentum = 0.9
epochs = 2
[grid]
lr = 0.02, 0.5
INI
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/s.db" --workers 2 --threads 1
expect_done 4 0 0 0
expect_output "done: 2 complete, 2 collapsed"
expect_output "collapsed to chance"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/s.db"
expect_output "| 0.5 | 2 | 0\.0960 ± 0\.0141 (2 seeds, 2 of 2 collapsed) |"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/s.db" --format csv
expect_output "^0.5,2,2,2,0,0,"
exit 0
