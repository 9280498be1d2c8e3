#!/bin/sh
# --progress-every: while a run trains, the sweep prints a line for it with the epochs the run
# has recorded, its steps, last loss and test accuracy and time left, then the sweep's ETA; 0
# turns the lines off.
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
expect_output "run   $id  .*  epoch 1/2, step [0-9][0-9]*, loss [0-9]*\.[0-9]*, test_acc 0\.[0-9]*; [0-9]*s so far, about [0-9]*s left"
expect_output "sweep 0/1 runs ended, 1 running, 0 waiting; ETA [0-9]"
# A tick may land after the last epoch is recorded and before the run ends: 2/2 is true then,
# with nothing left to estimate; no count may exceed the run's epochs.
grep "run   $id" "$TMP/out" | grep -qv "epoch [012]/2," && { cat "$TMP/out"; fail "a progress line counts other than 0, 1 or 2 of 2 epochs"; }
grep "run   $id  .*  epoch 2/2," "$TMP/out" | grep -q "left" && { cat "$TMP/out"; fail "a progress line at 2/2 epochs estimates time left"; }
write_exp 512
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/q.db" --threads 1 --progress-every 0
grep -q "run   .* epoch [0-9]" "$TMP/out" && { cat "$TMP/out"; fail "--progress-every 0 printed progress lines"; }
expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/q.db" --progress-every -1
expect_output "progress-every"
# The ETA counts runs that another sweep process is running on the same database as lanes
# beside ours: with one run running elsewhere and one waiting, the time left is one run's, not
# two. The run "elsewhere" has a fresh heartbeat; it goes stale after 15 s and runs here last.
cat > "$TMP/eta.ini" <<'INI'
[experiment]
name = sweep-eta
[train]
model = lenet
data = fashion-mnist
train-subset = 24000
test-subset = 200
epochs = 1
batch = 64
[grid]
lr = 0.01, 0.02, 0.05
INI
expect_exit 0 "$BB" sweep "$TMP/eta.ini" --db "$TMP/eta.db" --threads 1 --progress-every 0
sqlite3 "$TMP/eta.db" "update runs set status='pending'"
held="id=(select id from runs order by id limit 1)"
hold_elsewhere "$TMP/eta.db" "$(date +%s)" "$held"
# The run elsewhere stays alive (its heartbeat kept fresh) until a run here has ended, however
# slow the machine (the guarded build on a loaded machine took 35 s a run, beyond the 15 s
# below); then it falls silent and is taken over after --stale-after.
(
    while [ "$(sqlite3 -cmd '.timeout 5000' "$TMP/eta.db" "select count(*) from runs where status in $RESULT")" = 0 ]; do
        sqlite3 -cmd '.timeout 5000' "$TMP/eta.db" \
            "update runs set heartbeat=$(date +%s) where $held and status='running' and host='elsewhere'"
        sleep 1
    done
) &
keeper=$!
expect_exit 0 timeout 300 "$BB" sweep "$TMP/eta.ini" --db "$TMP/eta.db" --threads 1 --progress-every 0 --stale-after 15
wait "$keeper"
took=$(sed -n 's/.* end .* complete test_acc=[0-9.]* in \([0-9ms]*\)$/\1/p' "$TMP/out" | head -n 1)
eta=$(sed -n 's/.* 1\/3 runs ended .*, 1 running, 1 waiting; ETA \(.*\)$/\1/p' "$TMP/out" | head -n 1)
case "$took" in ""|0s|1s) cat "$TMP/out"; fail "no run time of 2 s or more to compare" ;; esac
[ "$eta" = "$took" ] || { cat "$TMP/out"; fail "ETA $eta with one run elsewhere and one waiting; one run took $took"; }
expect_output "1 run left by a dead or silent process re-queued"
exit 0
