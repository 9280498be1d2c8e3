#!/bin/sh
# sweep --checkpoint-every: runs killed at random points (kill -9 of a run, mid-step or in the
# middle of writing a checkpoint, and kill -9 of the sweep itself) resume from their last
# checkpoint; every run ends with its rows complete, none missing or twice, and with the same
# bits as an uninterrupted run: final test_acc and train_loss, and the final checkpoint byte for
# byte (bigbatch compare and cmp). The syntax of the flag is checked too. The runs are long
# enough (768 steps) that the first kills land inside them on an idle machine too.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-checkpoint
[train]
model = lenet
train-subset = 16384
test-subset = 200
epochs = 3
batch = 64
lr = 0.05
[grid]
momentum = 0, 0.9
INI
for bad in 0 -5m 2x 1.5e e 30mm; do
    expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/bad.db" --checkpoint-every "$bad"
    expect_output "checkpoint-every"
done
[ ! -e "$TMP/bad.db" ] || fail "a bad --checkpoint-every touched the database"
# the reference: checkpoints at epoch ends, never interrupted
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/ref.db" --threads 1 --checkpoint-every 1e
expect_done 2 0 0 0
DB="$TMP/kill.db"
i=0
while [ $i -lt 10 ]; do
    # checkpoints every 0.05 s: nearly every step writes one, so kills land inside writes too
    "$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 --checkpoint-every 0.05s --max-attempts 100 \
        > "$TMP/sweep$i.log" 2>&1 &
    pid=$!
    sleep "$(awk -v s=$i 'BEGIN { srand(s + 11); printf "%.2f", 0.4 + rand() * 1.2 }')"
    if [ $((i % 3)) -eq 2 ]; then
        kill -9 $pid 2>/dev/null               # the sweep: its runs die with it
    else
        for p in $(run_pids "$DB"); do kill -9 "$p" 2>/dev/null; done
        sleep 0.3
        kill -9 $pid 2>/dev/null
    fi
    wait $pid 2>/dev/null
    i=$((i + 1))
done
sleep 0.2
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 --checkpoint-every 0.05s --max-attempts 100
expect_done 2 0 0 0
cat "$TMP"/sweep*.log "$TMP/out" > "$TMP/all.log"
grep -q "resumed from its checkpoint after step [1-9]" "$TMP/all.log" || { cat "$TMP/all.log"; fail "no run resumed from a checkpoint"; }
grep -h "resumed from" "$TMP/all.log" | head -3
[ "$(sqlite3 "$DB" 'pragma integrity_check')" = ok ] || fail "integrity_check"
# 16384/64 = 256 steps per epoch x 3 epochs: every step once, every epoch once
bad=$(sqlite3 "$DB" "select r.id, (select count(*) from steps where run_id=r.id), (select count(distinct step) from steps where run_id=r.id),
      (select min(step) || '-' || max(step) from steps where run_id=r.id), (select count(*) from epochs where run_id=r.id),
      (select count(distinct epoch) from epochs where run_id=r.id) from runs r" | grep -v '|768|768|0-767|3|3$')
[ -z "$bad" ] || fail "runs with lost or extra rows: $bad"
# the same bits as the uninterrupted run
q="select id, test_acc, train_loss, test_loss, steps from runs order by id"
[ "$(sqlite3 "$DB" "$q")" = "$(sqlite3 "$TMP/ref.db" "$q")" ] || fail "final metrics differ: $(sqlite3 "$DB" "$q") vs $(sqlite3 "$TMP/ref.db" "$q")"
q="select run_id, epoch, step, train_loss, train_acc, test_loss, test_acc from epochs order by 1, 2"
[ "$(sqlite3 "$DB" "$q")" = "$(sqlite3 "$TMP/ref.db" "$q")" ] || fail "epoch rows differ"
q="select run_id, step, loss, lr from steps order by 1, 2"
[ "$(sqlite3 "$DB" "$q")" = "$(sqlite3 "$TMP/ref.db" "$q")" ] || fail "step rows differ"
for id in $(sqlite3 "$DB" "select id from runs"); do
    a="$TMP/ref.logs/$id.ckpt"; b="$TMP/kill.logs/$id.ckpt"
    "$BB" compare "$a" "$b" > "$TMP/cmp" 2>&1 || { cat "$TMP/cmp"; fail "compare $id"; }
    grep -q "largest relative difference 0 .*: same" "$TMP/cmp" || { cat "$TMP/cmp"; fail "$id: checkpoints differ"; }
    cmp -s "$a" "$b" || fail "$id: the final checkpoints are not byte for byte the same"
done
left=$(ls "$TMP/kill.logs" | grep '\.step' || true)
[ -z "$left" ] || fail "hand-off files left behind: $left"

# SIGTERM (or SLURM's SIGUSR2) to the sweep: its runs save a checkpoint where they are (a
# 1 h period never comes), stop, stay queued, and the next sweep resumes them there.
for sig in TERM USR2; do
    DB="$TMP/sig$sig.db"
    "$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 --checkpoint-every 1h --workers 2 > "$TMP/sig.log" 2>&1 &
    pid=$!
    sleep 1.2
    kill -$sig $pid
    wait $pid; rc=$?
    [ $rc = 130 ] || { cat "$TMP/sig.log"; fail "SIG$sig: exit $rc, not 130"; }
    grep -q "checkpointing and stopping" "$TMP/sig.log" || { cat "$TMP/sig.log"; fail "SIG$sig: runs not asked to checkpoint"; }
    [ "$(sqlite3 "$DB" "select count(*) from attempts where outcome='interrupted'")" -ge 1 ] || fail "SIG$sig: no interrupted attempt"
    expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --threads 1 --checkpoint-every 1h --workers 2
    expect_done 2 0 0 0
    grep -q "resumed from its checkpoint after step [1-9]" "$TMP/out" || { cat "$TMP/sig.log" "$TMP/out"; fail "SIG$sig: not resumed"; }
    q="select id, test_acc, train_loss, test_loss, steps from runs order by id"
    [ "$(sqlite3 "$DB" "$q")" = "$(sqlite3 "$TMP/ref.db" "$q")" ] || fail "SIG$sig: final metrics differ"
    q="select run_id, step, loss from steps order by 1, 2"
    [ "$(sqlite3 "$DB" "$q")" = "$(sqlite3 "$TMP/ref.db" "$q")" ] || fail "SIG$sig: step rows differ"
done
exit 0
