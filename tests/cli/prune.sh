#!/bin/sh
# sweep --prune asha (sweeps/prune.h): a small LR grid of two groups (batch 32 and 64) is swept in
# full and pruned. The pruned sweep stops exactly the cells the rule names from the rows at each
# rung (top floor(6/3) = 2 at epoch 1, a diverged cell last; the better one at epoch 3), records them `pruned` with
# their rows up to that rung, never failed; its survivors are the cells `report --replay-prune`
# picks from the full sweep's curves; a pruned sweep killed with kill -9 and restarted (with
# another worker count) ends with the same statuses and rows. Bad flags name themselves.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = prune-test
tuned = lr
[train]
model = lenet
train-subset = 512
test-subset = 300
momentum = 0.9
epochs = 4
[grid]
batch = 32, 64
lr = 0.003, 0.01, 0.03, 0.1, 0.3, 1
INI
for bad in "--prune nope" "--prune-eta 3" "--prune asha --prune-eta 1" "--prune asha --prune-rungs 3,1" \
           "--prune asha --prune-rungs 1 --prune-min-epochs 1" "--prune asha --ranks 2"; do
    # shellcheck disable=SC2086 # the words of $bad are flags
    expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/bad.db" $bad
    expect_output "prune"
done
[ ! -e "$TMP/bad.db" ] || fail "a bad flag touched the database"
P="--prune asha --prune-min-epochs 1"   # rungs at epochs 1 and 3 of 4
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/full.db" --workers 2 --threads 1
expect_done 10 2 0 0   # lr 1 diverges in both groups
# shellcheck disable=SC2086
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/p.db" --workers 2 --threads 1 $P
expect_output "done: .* 1 diverged, 0 failed, 0 not run; 9 pruned"
expect_output "^\[.*\] prune "
q() { sqlite3 "$1" "select e.label, r.status, (select max(epoch) from epochs where run_id=r.id),
    (select count(*) from epochs where run_id=r.id), r.test_acc = (select test_acc from epochs where run_id=r.id
    order by epoch desc limit 1) from experiment_runs e join runs r on r.id=e.run_id order by e.seq"; }
q "$TMP/p.db" > "$TMP/p.txt"
cat "$TMP/p.txt"
# per group 4 of 6 are stopped at epoch 1 (6 - floor(6/3)), 1 at epoch 3, 1 goes to the end. At
# batch 32, lr 1 diverges before epoch 1: it ranks last and stays diverged (at 64 it diverges in
# epoch 2, so it is pruned at 1). A pruned run's result is its last evaluation.
for b in 32 64; do
    got=$(grep "^batch=$b " "$TMP/p.txt" | cut -d'|' -f2,3 | sort | uniq -c | tr -s ' ' | tr '\n' ';')
    want=" 1 complete|4; 4 pruned|1; 1 pruned|3;"
    [ $b = 32 ] && want=" 1 complete|4; 1 diverged|; 3 pruned|1; 1 pruned|3;"
    [ "$(echo "$got" | sed 's/collapsed/complete/')" = "$want" ] || fail "batch $b: $got, not $want"
done
[ "$(grep -c '|pruned|\([13]\)|\1|1$' "$TMP/p.txt")" = 9 ] || fail "pruned runs' rows or results are not their rung's"
# the rule, from the pruned sweep's own rows: at epoch 1 the top 2 of each batch went on
for b in 32 64; do
    top=$(sqlite3 "$TMP/p.db" "select e.label from experiment_runs e join epochs p on p.run_id=e.run_id
        where p.epoch=1 and e.label like 'batch=$b %' order by p.test_acc desc, e.seq limit 2" | sort | tr '\n' ';')
    went=$(grep "^batch=$b " "$TMP/p.txt" | grep -v '|pruned|1|\||diverged|' | cut -d'|' -f1 | sort | tr '\n' ';')
    [ "$top" = "$went" ] || fail "batch $b: the top 2 at epoch 1 were $top, the cells that went on $went"
done
# the replay over the full sweep picks the pruned sweep's survivors
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/full.db" --replay-prune --prune-min-epochs 1
cat "$TMP/out"
for b in 32 64; do
    lr=$(grep "^batch=$b .*|c[a-z]*|4|" "$TMP/p.txt" | sed 's/.* lr=\([^|]*\)|.*/\1/')
    expect_output "^| batch=$b | 6 | 1, 3 | .* | lr=$lr ([0-9.]*) |"
done
expect_output "the pruned sweep trains 22 of the full grid's 43 epochs"
expect_exit 1 "$BB" report "$TMP/exp.ini" --db "$TMP/p.db" --replay-prune
expect_output "is pruned: the replay needs"
# on a fixed database, the archive of eta-vs-batch (docs/cli.md prints it, docs_cli.sh checks that)
expect_exit 0 "$BB" report experiments/eta-vs-batch.ini --db results/archive/eta-vs-batch.sql.gz --replay-prune
expect_output "^| batch=160 lr=10 | 6 | 2, 6 | eta=0.0005 (0.7077) | eta=0.0005 (0.7077) | yes | 22 / 42 |$"
expect_output "3 of 3 groups find the same best cell; the pruned sweep trains 68 of the full grid's 144 epochs (47.2%)"
expect_exit 0 "$BB" report experiments/eta-vs-batch.ini --db results/archive/eta-vs-batch.sql.gz --replay-prune \
    --prune-eta 2 --prune-rungs 1,2
expect_output "^| batch=40 lr=2 | 6 | 1, 2 | eta=0.001 (0.7227) | eta=0.0005 (0.6899) | \*\*no\*\* | 17 / 60 |$"
expect_output "1 of 3 groups find the same best cell; the pruned sweep trains 51 of the full grid's 144 epochs (35.4%)"
expect_exit 2 "$BB" report "$TMP/exp.ini" --db "$TMP/full.db" --prune-eta 2
expect_output "are for --replay-prune"
expect_exit 2 "$BB" report "$TMP/exp.ini" --db "$TMP/full.db" --replay-prune --prune-rungs 2,1
expect_output "--prune-rungs: '2,1' is not ascending"
# the report marks pruned cells
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/p.db"
expect_output "| pruned at epoch 1 (0\.[0-9]*) |"
expect_output "| pruned at epoch 3 (0\.[0-9]*) |"
# kill -9 of a pruned sweep once it has pruned or held a run, then a restart with one worker
: >"$TMP/k1.log"
# shellcheck disable=SC2086
"$BB" sweep "$TMP/exp.ini" --db "$TMP/k.db" --workers 3 --threads 1 $P > "$TMP/k1.log" 2>&1 &
pid=$!
i=0
while [ $i -lt 600 ] && ! grep -q "^\[.*\] \(prune\|hold\) " "$TMP/k1.log"; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid
wait $pid 2>/dev/null
grep -q "^\[.*\] \(prune\|hold\) " "$TMP/k1.log" || { cat "$TMP/k1.log"; fail "nothing pruned or held before the kill"; }
sleep 0.3
# shellcheck disable=SC2086
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/k.db" --workers 1 --threads 1 $P
expect_output "0 failed, 0 not run; 9 pruned"
q "$TMP/k.db" > "$TMP/k.txt"
diff "$TMP/p.txt" "$TMP/k.txt" || fail "the restarted sweep decided otherwise"
[ "$(sqlite3 "$TMP/k.db" "select count(*) from runs where status='failed'")" = 0 ] || fail "a failed run"
exit 0
