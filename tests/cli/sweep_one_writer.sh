#!/bin/sh
# The sweep is the only writer of its database: the runs it starts never open the file (they
# send their rows as records on standard output, train --record-stream), and what the sweep
# writes from those records is exactly what the same runs write by hand with --db: every step
# loss, epoch, evaluation, layer statistic and end, a diverged run's non-finite values included.
# The records are lines of JSON that any JSON reader takes (docs/formats.md, "Run records").
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = one-writer
[train]
model = lenet
train-subset = 2048
test-subset = 200
epochs = 3
batch = 64
eval-every = 10
layer-stats-every = 8
diverge-factor = 10
[grid]
lr = 0.05, 1e30, 40
INI
S="$TMP/s.db"
"$BB" sweep "$TMP/exp.ini" --db "$S" --threads 1 > "$TMP/sweep.out" 2>&1 &
sweep=$!
# While it runs, no run process has the database (or its -wal, -shm) open.
seen=0
while kill -0 $sweep 2>/dev/null; do
    for pid in $(run_pids "$S"); do
        held=$(ls -l /proc/"$pid"/fd 2>/dev/null | grep -F "$S") && fail "run process $pid holds the database: $held"
        [ -d /proc/"$pid" ] && seen=$((seen + 1))
    done
    sleep 0.05
done
wait $sweep || { cat "$TMP/sweep.out"; fail "sweep failed"; }
[ $seen -gt 0 ] || fail "never saw a run's process to check"
expect_done 1 2 0 0 "$TMP/sweep.out"

# The same runs by hand, each writing its own rows.
H="$TMP/h.db"
sqlite3 "$S" "select args from runs" > "$TMP/args"
while read -r line; do
    set -- $line
    shift
    "$BB" "$@" --db "$H" --threads 1 --quiet > /dev/null 2>&1 || fail "by hand: $line"
done < "$TMP/args"
# Every row equal, value for value (EXCEPT compares the stored doubles exactly), both ways; the
# columns that differ by nature (times, throughput, process) are left out.
same() {  # table, columns
    n=$(sqlite3 "$S" "attach '$H' as h; select count(*) from (select $2 from main.$1 except select $2 from h.$1);
                      select count(*) from (select $2 from h.$1 except select $2 from main.$1); select count(*) from main.$1")
    set -- $1 $n
    [ "$2" = 0 ] && [ "$3" = 0 ] || fail "$1 differs: $2 rows only from the sweep, $3 only by hand"
    [ "$4" -gt 0 ] || fail "$1 is empty"
}
same runs "id, status, steps, test_acc, test_loss, train_loss, diverged_step, diverged_loss, nonfinite, device, engine_version, exit_code, error"
same steps "*"
same epochs "run_id, epoch, step, train_loss, train_acc, test_loss, test_acc, loss_gap, lr, noise_scale, nonfinite"
same evals "*"
same layer_stats "*"
[ "$(sqlite3 "$S" "select count(*) from steps where nonfinite is not null")" -gt 0 ] || fail "no non-finite loss was sent"

# The record stream itself: one JSON object a line, every kind there, non-finite as strings.
"$BB" train --model lenet --train-subset 512 --test-subset 200 --epochs 1 --batch 64 --eval-every 4 \
    --layer-stats-every 4 --lr 1e30 --record-stream --threads 1 --quiet > "$TMP/stream" || fail "--record-stream run"
python3 - "$TMP/stream" <<'PY' || fail "the record stream does not read as JSON lines"
import json, sys
kinds, nan = set(), False
for line in open(sys.argv[1]):
    if line.startswith("@bigbatch "):
        r = json.loads(line[len("@bigbatch "):])
        kinds.add(r["record"])
        nan = nan or "nan" in r.values()
want = {"start", "step", "layer_stats", "diverged", "end"}
assert want <= kinds, kinds
assert nan, "no non-finite value as a string"
PY
expect_exit 2 "$BB" train --model lenet --db "$TMP/x.db" --record-stream
expect_output "not both"
[ ! -e "$TMP/x.db" ] || fail "a database was created"
exit 0
