#!/bin/sh
# --progress-every: while a run trains, the sweep prints a line for it with the epochs the run
# has recorded, its steps, last test accuracy and time left; 0 turns the lines off.
. tests/cli/lib.inc
write_exp() { # write_exp TRAIN_SUBSET
    cat > "$TMP/exp.ini" <<INI
[experiment]
name = sweep-progress
title = Progress test
[train]
model = lenet
data = fashion-mnist
train-subset = $1
test-subset = 500
epochs = 2
batch = 128
lr = 0.05
INI
}
# 20,000 images: each epoch takes seconds, many times the 0.2 s between lines.
write_exp 20000
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/p.db" --threads 1 --progress-every 0.2
id=$(sqlite3 "$TMP/p.db" "select id from runs")
expect_output "run   $id  *1/2 epochs done, [0-9][0-9]* steps, last test_acc 0\.[0-9]*; [0-9]*s so far, about [0-9]*s left"
# A tick may land after the last epoch is recorded and before the run ends: 2/2 is true then,
# with nothing left to estimate; no count may exceed the run's epochs.
grep "run   $id" "$TMP/out" | grep -qv "[012]/2 epochs done" && { cat "$TMP/out"; fail "a progress line counts other than 0, 1 or 2 of 2 epochs"; }
grep "run   $id  *2/2 epochs done" "$TMP/out" | grep -q "left" && { cat "$TMP/out"; fail "a progress line at 2/2 epochs estimates time left"; }
write_exp 512
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/q.db" --threads 1 --progress-every 0
grep -q "epochs done" "$TMP/out" && { cat "$TMP/out"; fail "--progress-every 0 printed progress lines"; }
expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/q.db" --progress-every -1
expect_output "progress-every"
exit 0
