#!/bin/sh
# --launcher slurm on a real one-node SLURM cluster, started here from Debian's packages
# (slurmctld, slurmd, munge; proctrack/linuxproc, no cgroups) under a scratch folder: inside
# `salloc -n 4`, a sweep runs each run as a job step of 2 ranks (srun --mpi=pmix), two at
# once; every run completes exactly once, except one whose step is cancelled with scancel,
# which is tried again. The script `--print-sbatch` writes is then submitted with sbatch.
# The daemons are stopped at the end. Skipped, saying why, where they cannot start.
. tests/cli/lib.inc
. tests/cli/slurm.inc


cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = slurm-test
[train]
model = lenet
train-subset = 4096
test-subset = 500
epochs = 6
batch = 128
[grid]
lr = 0.01, 0.02, 0.05, 0.1
INI
DB=$TMP/slurm.db
timeout 600 salloc -n 4 "$BBA" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --ranks 2 --threads 1 \
    > "$TMP/sweep.log" 2>&1 &
sweep=$!
# cancel the first job step of a run (not the allocation), once it runs
step=
for i in $(seq 300); do
    step=$(squeue -h -s -o '%i %j' 2>/dev/null | awk '$2 ~ /^bigbatch-/ {print $1; exit}')
    [ -n "$step" ] && break
    sleep 0.1
done
[ -n "$step" ] || { cat "$TMP/sweep.log"; fail "no job step of a run appeared"; }
run=$(squeue -h -s -o '%i %j' | awk -v s="$step" '$1 == s {sub(/^bigbatch-/, "", $2); print $2}')
sleep 1
scancel "$step" || fail "scancel $step failed"
wait $sweep || { cat "$TMP/sweep.log"; fail "the sweep under salloc failed"; }
grep -q " start " "$TMP/sweep.log" || fail "no run started"
[ "$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT")" = 4 ] ||
    { cat "$TMP/sweep.log"; sqlite3 "$DB" 'select id, status, attempt, error from runs'; fail "not every run complete"; }
# the rows came back through srun as records: six epochs per run, each loss from rank 0
[ "$(sqlite3 "$DB" "select count(*) from epochs")" = 24 ] || fail "epochs not recorded: $(sqlite3 "$DB" 'select count(*) from epochs')"
[ "$(sqlite3 "$DB" "select attempt from runs where id='$run'")" = 2 ] || { cat "$TMP/sweep.log"; fail "the cancelled run $run was not tried again"; }
[ "$(sqlite3 "$DB" "select outcome from attempts where run_id='$run' and attempt=1")" = killed ] ||
    { sqlite3 "$DB" "select * from attempts"; fail "the cancelled step is not recorded as killed"; }
grep -q "job step was killed by signal" "$TMP/sweep.log" || fail "the sweep did not say the step was killed"
[ "$(sqlite3 "$DB" "select count(*) from runs where id != '$run' and attempt = 1")" = 3 ] || fail "a run ran twice"
# 2 ranks each, wired by PMIx: every run's log says so
for log in "$TMP"/slurm.logs/*.log; do grep -q 'x 2 ranks of 64 images' "$log" || { cat "$log"; fail "$log: not 2 ranks"; }; done

# The sbatch script of the same sweep: submitted from here, it runs in --chdir, writes its
# output there, finds every run done and ends.
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --print-sbatch --workers 2 --ranks 2 --threads 1 --chdir "$TMP"
cp "$TMP/out" "$TMP/sweep.sbatch"
grep -q '^#SBATCH --ntasks=4$' "$TMP/sweep.sbatch" || fail "script lacks --ntasks=4"
grep -q '^#SBATCH --time=' "$TMP/sweep.sbatch" || fail "script lacks a time limit from the measured runs"
timeout 120 sbatch --wait "$TMP/sweep.sbatch" > "$TMP/sbatch.log" 2>&1 || { cat "$TMP/sbatch.log" "$TMP"/bigbatch-slurm-test-*.out; fail "the sbatch script failed"; }
expect_done 4 0 0 0 "$(ls "$TMP"/bigbatch-slurm-test-*.out | head -n 1)"
exit 0
