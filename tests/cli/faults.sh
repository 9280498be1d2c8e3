#!/bin/sh
# Fault injection (BIGBATCH_FAULT, engine/base/fault.h): a short sweep with checkpoints, and a train
# --save/--resume/--db, with their Nth write, fsync or SQLite allocation failing, every N from 1
# until one runs through untouched (at most LIMIT); then SQLite's own writes and syncs of the
# database and its WAL (dbwrite, dbsync: the fault VFS, sweeps/store_fault_vfs.c), dbsync every N
# and dbwrite every N up to 10 and then every DB_STEP-th (a sweep makes about 150 of them, a
# train about 80; FAULT_DB_STEP=1 walks them all, two or three minutes more); then at random with
# fixed seeds, every kind at once. A call is reached when the process says a fault fired
# (SQLite absorbs some: a checkpoint at close that fails keeps the WAL). After each: the
# database passes integrity_check, every checkpoint left opens (bigbatch compare X X), a failure
# SQLite reported names the database, and a rerun without faults finishes every run while the
# runs that had finished keep their attempt count and rows. FAULT_KINDS picks kinds (default
# "write fsync alloc dbsync dbwrite random"), FAULT_SEEDS the random seeds (default 1 to 8).
. tests/cli/lib.inc
LIMIT=${FAULT_LIMIT:-60}
DB_STEP=${FAULT_DB_STEP:-9}
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
# sqlite_said WHAT OUT DB: an I/O error SQLite reported reaches the user naming the database
sqlite_said() {
    ! grep -q "I/O error" "$2" || grep "I/O error" "$2" | grep -qF "$3: " || { cat "$2"; fail "$1: an I/O error without the database"; }
}
# said_ended WHAT DB: every run the faulted sweep said ended with a result has it in DB (the
# "end" line is printed after its commit)
said_ended() {
    grep -o "end   [0-9a-f]* .*  \(complete\|collapsed\|diverged\)" "$TMP/f.out" | while read -r _ id _; do
        [ -n "$(sqlite3 "$2" "select 1 from runs where id='$id' and (status in $RESULT or status='diverged')")" ] ||
            fail "$1: run $id was said to end with a result, but the database has $(sqlite3 "$2" "select status from runs where id='$id'")"
    done || exit 1
}
FIRED="BIGBATCH_FAULT\|out of memory\|I/O error\|write failed\|fsync failed\|cannot rename"
# one sweep under BIGBATCH_FAULT=$1 in a fresh database, checked; 1 when no fault fired
sweep_with() {
    db="$TMP/s.db"
    rm -rf "$TMP/s.db"* "$TMP/s.logs"
    BIGBATCH_FAULT=$1 "$BB" sweep "$TMP/exp.ini" --db "$db" --threads 1 --checkpoint-every 1e >"$TMP/f.out" 2>&1
    rc=$?
    fired=$(cat "$TMP/f.out" "$TMP"/s.logs/*.log 2>/dev/null | grep -c "$FIRED")
    sqlite_said "sweep $1 (exit $rc)" "$TMP/f.out" "$db"
    said_ended "sweep $1 (exit $rc)" "$db"
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
    sqlite_said "$what" "$TMP/t.out" "$TMP/t.db"
    [ ! -e "$TMP/t.db" ] || [ "$(sqlite3 "$TMP/t.db" 'pragma integrity_check')" = ok ] || fail "$what: integrity_check"
    "$BB" compare "$TMP/t.ckpt" "$TMP/t.ckpt" >/dev/null 2>&1 || fail "$what: the checkpoint does not open"
    BIGBATCH_FAULT=$1 "$BB" train $args --epochs 3 --resume "$TMP/t.ckpt" --save "$TMP/t.ckpt" >/dev/null 2>&1
    "$BB" compare "$TMP/t.ckpt" "$TMP/t.ckpt" >/dev/null 2>&1 || fail "$what: the checkpoint after --resume does not open"
    [ "$rc" -ne 0 ] || grep -q "$FIRED" "$TMP/t.out"
}
# walk KIND NEXT: sweeps then trains with KIND:N failing, N=1, then N=$(NEXT N), while one fires
walk() {
    n=1
    while [ $n -le "$LIMIT" ] && sweep_with "$1:$n"; do n=$($2 $n); done
    swept=$n
    n=1
    while [ $n -le "$LIMIT" ] && train_with "$1:$n"; do n=$($2 $n); done
    echo "$1: sweep faulted up to N=$((swept - 1))$([ $swept -gt "$LIMIT" ] && echo ' (the cap)'), train up to N=$((n - 1))"
}
every() { echo $(($1 + 1)); }
# SQLite's writes: every one while the database is made, then every DB_STEP-th
db_stride() { [ "$1" -lt 10 ] && echo $(($1 + 1)) || echo $(($1 + DB_STEP)); }
KINDS=${FAULT_KINDS:-write fsync alloc dbsync dbwrite random}
for point in $KINDS; do
    case $point in
    dbwrite) LIMIT=${FAULT_DB_LIMIT:-400} walk dbwrite db_stride ;;
    random) ;;
    *) walk "$point" every ;;
    esac
done
case " $KINDS " in *" random "*) ;; *) exit 0 ;; esac
seeds=0
for seed in ${FAULT_SEEDS:-1 2 3 4 5 6 7 8}; do
    sweep_with "random:$seed:0.01" || true
    train_with "random:$seed:0.01" || true
    seeds=$((seeds + 1))
done
echo "faults: $KINDS with $seeds seeds (a sweep and a train each); every database and checkpoint opens, nothing finished lost"
