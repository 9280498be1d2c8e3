#!/bin/sh
# Fault injection (BIGBATCH_FAULT, engine/base/fault.h): a short sweep with checkpoints, and a train
# --save/--resume/--db, with their Nth write, fsync or SQLite allocation failing, every N from 1
# until one runs through untouched (at most LIMIT), and then at random with fixed seeds. After
# each: the database passes integrity_check, every checkpoint left opens (bigbatch compare X X),
# and a rerun without faults finishes every run while the runs that had finished keep their
# attempt count and rows.
. tests/cli/lib.inc
LIMIT=${FAULT_LIMIT:-60}
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = faults
[train]
model = lenet
data = synthetic
train-subset = 256
test-subset = 64
epochs = 2
batch = 64
lr = 0.05
[grid]
momentum = 0, 0.9
INI
expect_exit 2 env BIGBATCH_FAULT=write:0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/bad.db"
expect_output "BIGBATCH_FAULT"
[ ! -e "$TMP/bad.db" ] || fail "a bad BIGBATCH_FAULT touched the database"

# ckpts_open DIR: every checkpoint under DIR opens
ckpts_open() {
    for c in "$1"/*.ckpt "$1"/*.ckpt.step*; do
        case "$c" in *'*'*|*.tmp) continue ;; esac
        "$BB" compare "$c" "$c" >/dev/null 2>&1 || fail "$what: checkpoint $c does not open"
    done
}
# finished DB: the finished runs with their attempt and row counts
finished() {
    sqlite3 "$1" "select id, status, attempt, test_acc, (select count(*) from steps where run_id=r.id),
        (select count(*) from epochs where run_id=r.id) from runs r where status in $RESULT or status='diverged'
        order by id" 2>/dev/null
}
# check WHAT DB: what a faulted sweep on DB left opens, and a clean rerun finishes without redoing
check_sweep() {
    what=$1 db=$2
    if [ -e "$db" ]; then
        [ "$(sqlite3 "$db" 'pragma integrity_check')" = ok ] || fail "$what: integrity_check"
    fi
    ckpts_open "${db%.db}.logs"
    before=$(finished "$db")
    expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$db" --threads 1 --checkpoint-every 1e --retry-failed
    expect_done 2 0 0 0
    after=$(finished "$db")
    # every run finished before the rerun is unchanged by it
    echo "$before" | while IFS= read -r row; do
        [ -z "$row" ] || echo "$after" | grep -qxF -- "$row" || fail "$what: finished run changed: $row; now: $after"
    done || exit 1
    [ "$(sqlite3 "$db" "select count(*) from steps")" = 16 ] || fail "$what: step rows $(sqlite3 "$db" 'select count(*) from steps')"
}
FIRED="BIGBATCH_FAULT\|out of memory\|I/O error\|write failed\|fsync failed\|cannot rename"
# one sweep under BIGBATCH_FAULT=$1 in a fresh database, checked; 1 when no fault fired
sweep_with() {
    db="$TMP/s.db"
    rm -rf "$TMP/s.db"* "$TMP/s.logs"
    BIGBATCH_FAULT=$1 "$BB" sweep "$TMP/exp.ini" --db "$db" --threads 1 --checkpoint-every 1e >"$TMP/f.out" 2>&1
    rc=$?
    fired=$(cat "$TMP/f.out" "$TMP"/s.logs/*.log 2>/dev/null | grep -c "$FIRED")
    check_sweep "sweep $1 (exit $rc)" "$db"
    [ "$rc" -ne 0 ] || [ "$fired" -gt 0 ]
}
# the same for a train --db --save, then --resume; an older checkpoint is kept or replaced whole;
# 1 when no fault fired
train_with() {
    rm -f "$TMP/t.db"* "$TMP/t.ckpt"*
    args="--model lenet --data synthetic --train-subset 256 --test-subset 64 --batch 64 --lr 0.05 --threads 1"
    "$BB" train $args --epochs 1 --save "$TMP/t.ckpt" >/dev/null 2>&1 || fail "train without faults"
    BIGBATCH_FAULT=$1 "$BB" train $args --epochs 2 --db "$TMP/t.db" --save "$TMP/t.ckpt" >"$TMP/t.out" 2>&1
    rc=$?
    what="train $1 (exit $rc)"
    [ ! -e "$TMP/t.db" ] || [ "$(sqlite3 "$TMP/t.db" 'pragma integrity_check')" = ok ] || fail "$what: integrity_check"
    "$BB" compare "$TMP/t.ckpt" "$TMP/t.ckpt" >/dev/null 2>&1 || fail "$what: the checkpoint does not open"
    BIGBATCH_FAULT=$1 "$BB" train $args --epochs 3 --resume "$TMP/t.ckpt" --save "$TMP/t.ckpt" >/dev/null 2>&1
    "$BB" compare "$TMP/t.ckpt" "$TMP/t.ckpt" >/dev/null 2>&1 || fail "$what: the checkpoint after --resume does not open"
    [ "$rc" -ne 0 ] || grep -q "$FIRED" "$TMP/t.out"
}
total=0
for point in write fsync alloc; do
    n=1
    while [ $n -le "$LIMIT" ] && sweep_with "$point:$n"; do n=$((n + 1)); done
    swept=$n
    n=1
    while [ $n -le "$LIMIT" ] && train_with "$point:$n"; do n=$((n + 1)); done
    echo "$point: sweep faulted at N=1..$((swept - 1))$([ $swept -gt "$LIMIT" ] && echo ' (the cap)'), train at N=1..$((n - 1))"
    total=$((total + swept + n))
done
for seed in 1 2 3 4 5 6 7 8; do
    sweep_with "random:$seed:0.01" || true
    train_with "random:$seed:0.01" || true
done
echo "faults: $total injected runs and 16 random ones, every database and checkpoint opens, nothing finished lost"
