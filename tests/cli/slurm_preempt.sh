#!/bin/sh
# SLURM as its users expect, on the one-node test cluster (slurm.inc):
# 1. the allocation cancelled under a sweep (scancel of the salloc job): no attempt counts as
#    failed or killed, the runs stay queued, and a new allocation resumes them from their
#    checkpoints;
# 2. the --print-sbatch script, sent USR2 as --signal=B:USR2@90 sends it before a time limit
#    (scancel --batch -s USR2): the sweep checkpoints its runs, requeues the job, and the
#    requeued job resumes and finishes them.
. tests/cli/lib.inc
. tests/cli/slurm.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = slurm-preempt
[train]
model = lenet
train-subset = 4096
test-subset = 200
; 768 steps: seconds, long enough to be cut 1.5 s after its step starts (4 epochs' 256 steps had
; each run done within that on an idle machine, and nothing left to resume)
epochs = 12
batch = 64
lr = 0.05
[grid]
momentum = 0, 0.9
INI
wait_for_steps() { # the job's run steps are running
    for i in $(seq 300); do
        squeue -h -s -o '%j' 2>/dev/null | grep -q '^bigbatch-[0-9a-f]' && return 0
        sleep 0.1
    done
    return 1
}
DB=$TMP/lost.db
salloc -n 2 -J alloc-lost "$BBA" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --threads 1 --checkpoint-every 0.3s \
    > "$TMP/lost.log" 2>&1 &
sweep=$!
wait_for_steps || { cat "$TMP/lost.log"; fail "no run step appeared"; }
sleep 1.5
scancel -n alloc-lost
wait $sweep
echo "after scancel of the allocation: exit $?; $(grep -h 'allocation is gone\|interrupted' "$TMP/lost.log" | head -2)"
bad=$(sqlite3 "$DB" "select run_id, attempt, outcome from attempts where outcome in ('failed','killed')")
[ -z "$bad" ] || { cat "$TMP/lost.log"; fail "attempts counted against runs: $bad"; }
[ "$(sqlite3 "$DB" "select count(*) from runs where status='failed'")" = 0 ] || fail "a run failed"
timeout 300 salloc -n 2 "$BBA" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --threads 1 --checkpoint-every 0.3s \
    > "$TMP/again.log" 2>&1 || { cat "$TMP/again.log"; fail "the second allocation's sweep failed"; }
expect_done 2 0 0 0 "$TMP/again.log"
grep -q "resumed from its checkpoint after step [1-9]" "$TMP/again.log" || { cat "$TMP/lost.log" "$TMP/again.log"; fail "not resumed"; }
bad=$(sqlite3 "$DB" "select r.id from runs r where (select count(distinct step) from steps where run_id=r.id) != 768
      or (select count(*) from steps where run_id=r.id) != 768")
[ -z "$bad" ] || fail "rows lost or doubled: $bad"

# 2. the sbatch script, warned with USR2, requeues itself
DB=$TMP/requeue.db
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --print-sbatch --workers 2 --threads 1 \
    --checkpoint-every 1h --time 10 --chdir "$TMP"
cp "$TMP/out" "$TMP/job.sbatch"
for line in '--signal=B:USR2@90' '--requeue' "--chdir=$TMP" '--time=10' '--cpus-per-task=1'; do
    grep -q -- "^#SBATCH $line\$" "$TMP/job.sbatch" || { cat "$TMP/job.sbatch"; fail "script lacks #SBATCH $line"; }
done
job=$(sbatch --parsable "$TMP/job.sbatch") || fail "sbatch"
wait_for_steps || { cat "$TMP"/bigbatch-*.out; fail "no run step of the batch job"; }
sleep 1.5
scancel --batch -s USR2 "$job"
for i in $(seq 1200); do
    state=$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT" 2>/dev/null)
    [ "$state" = 2 ] && ! squeue -h -j "$job" 2>/dev/null | grep -q . && break
    # slurmctld holds a requeued job back for a while before it is eligible again (minutes on
    # some nights here): once it is pending, let it start now; the requeue itself is the sweep's
    squeue -h -j "$job" -o %t 2>/dev/null | grep -q '^PD$' && scontrol update JobId="$job" StartTime=now >/dev/null 2>&1
    sleep 0.25
done
out=$(ls "$TMP"/bigbatch-slurm-preempt-*.out | head -1)
grep -q "requeued SLURM job $job" "$out" || { cat "$out"; fail "the job did not requeue itself"; }
grep -q "resumed from its checkpoint after step [1-9]" "$out" || { cat "$out"; fail "the requeued job did not resume"; }
expect_done 2 0 0 0 "$out"
[ "$(sqlite3 "$DB" "select count(*) from attempts where outcome in ('failed','killed')")" = 0 ] || fail "attempts counted"
exit 0
