#!/bin/sh
# sweep --print-sbatch --array on the one-node test cluster (tests/cli/slurm.inc): the job array
# of 2 runs per task runs 5 runs in 3 tasks, each into its own database under <db>.array/; the
# dependent job `bigbatch merge --array` folds them into the sweep's database, where every run
# is complete once (attempt 1) and the task databases are gone. Then one task per run, folded in
# by the next sweep on the database, which finds nothing left to run.
. tests/cli/lib.inc
expect_exit 2 "$BB" sweep /dev/null --array
expect_output "array: for --print-sbatch"
expect_exit 2 "$BB" sweep /dev/null --array-runs-per-task 2
expect_output "array-runs-per-task"
. tests/cli/slurm.inc

cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = slurm-array
[train]
model = lenet
data = synthetic
train-subset = 512
test-subset = 128
epochs = 2
batch = 64
[grid]
lr = 0.01, 0.02, 0.03, 0.05, 0.1
INI
DB=$TMP/array.db
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --print-sbatch --array --array-runs-per-task 2 \
    --threads 1 --time 10 --chdir "$TMP" --checkpoint-every 1e
cp "$TMP/out" "$TMP/array.sbatch"
grep -q '^#SBATCH --array=0-2$' "$TMP/array.sbatch" || { cat "$TMP/array.sbatch"; fail "not an array of 3 tasks"; }
grep -q -- '--array-task "$SLURM_ARRAY_TASK_ID"' "$TMP/array.sbatch" || fail "the tasks do not run their own runs"
grep -q "merge --array" "$TMP/array.sbatch" || fail "the script does not say how to merge"
jid=$(sbatch --parsable "$TMP/array.sbatch") || fail "sbatch of the array failed"
timeout 300 sbatch --wait --chdir "$TMP" --output "$TMP/merge.out" --dependency="afterany:$jid" \
    --wrap "'$BBA' merge --array '$DB'" > "$TMP/sbatch.log" 2>&1 ||
    { cat "$TMP/sbatch.log" "$TMP"/merge.out "$TMP"/bigbatch-slurm-array-*.out; fail "the merge job failed"; }
grep -q "3 task databases merged, 0 left" "$TMP/merge.out" || { cat "$TMP/merge.out"; fail "not 3 task databases merged"; }
[ "$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT and attempt = 1")" = 5 ] ||
    { cat "$TMP"/bigbatch-slurm-array-*.out; sqlite3 "$DB" 'select id, status, attempt from runs'; fail "not every run complete once"; }
# each run started by one task only (a run twice would merge as "the same" result)
[ "$(cat "$TMP"/bigbatch-slurm-array-*.out | grep -c " start ")" = 5 ] ||
    { cat "$TMP"/bigbatch-slurm-array-*.out; fail "not 5 runs started by the tasks"; }
[ "$(ls "$TMP"/bigbatch-slurm-array-*.out | wc -l)" = 3 ] || fail "not 3 task outputs"
[ "$(sqlite3 "$DB" "select count(*) from attempts")" = 5 ] || fail "attempts: $(sqlite3 "$DB" 'select * from attempts')"
[ "$(sqlite3 "$DB" "select count(*) from epochs")" = 10 ] || fail "epochs: $(sqlite3 "$DB" 'select count(*) from epochs')"
[ "$(sqlite3 "$DB" "select count(*) from experiment_runs")" = 5 ] || fail "the experiment's run list"
[ ! -e "$TMP/array.array" ] || fail "task databases left: $(ls "$TMP/array.array")"
ls "$TMP"/array.logs/*.ckpt >/dev/null 2>&1 || fail "no checkpoints beside the sweep's database"
# one task per run; the next sweep merges them and runs nothing
DB2=$TMP/array2.db
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB2" --launcher slurm --print-sbatch --array --threads 1 --time 10 --chdir "$TMP"
grep -q '^#SBATCH --array=0-4$' "$TMP/out" || { cat "$TMP/out"; fail "not one task per run"; }
cp "$TMP/out" "$TMP/array2.sbatch"
timeout 300 sbatch --wait "$TMP/array2.sbatch" > "$TMP/sbatch2.log" 2>&1 || { cat "$TMP/sbatch2.log"; fail "the array failed"; }
[ "$(ls "$TMP"/array2.array/*.db | wc -l)" = 5 ] || fail "not 5 task databases: $(ls "$TMP/array2.array")"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB2" --threads 1
expect_output "job array: 5 task databases merged"
expect_done 5 0 0 0
grep -q " start " "$TMP/out" && { cat "$TMP/out"; fail "the sweep ran a run the array had run"; }
[ "$(sqlite3 "$DB2" "select count(*) from runs where status in $RESULT and attempt = 1")" = 5 ] || fail "array2: not every run complete once"
# a task whose runs have all ended in the sweep's database runs nothing
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB2" --array-task 3 --threads 1
expect_output "array task 3: every run of it has ended"
[ ! -e "$TMP/array2.array" ] || fail "a task with nothing to do made a database"
exit 0
