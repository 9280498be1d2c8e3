#!/bin/sh
# --launcher slurm on a real one-node SLURM cluster, started here from Debian's packages
# (slurmctld, slurmd, munge; proctrack/linuxproc, no cgroups) under a scratch folder: inside
# `salloc -n 4`, a sweep runs each run as a job step of 2 ranks (srun --mpi=pmix), two at
# once; every run completes exactly once, except one whose step is cancelled with scancel,
# which is tried again. The script `--print-sbatch` writes is then submitted with sbatch.
# The daemons are stopped at the end. Skipped, saying why, where they cannot start.
. tests/cli/lib.inc
for cmd in slurmctld slurmd munged srun salloc sbatch scancel squeue sinfo; do
    command -v "$cmd" >/dev/null 2>&1 || { echo "skipped: no $cmd (make deps installs slurmctld, slurmd, slurm-client, munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "skipped: starting slurmd and munged needs root"; exit 77; }
BBA=$(cd "$(dirname "$BB")" && pwd)/$(basename "$BB")
C=$TMP/cluster
mkdir -p "$C/state" "$C/spool" "$C/log"
node=$(hostname -s)
port=$(( 20000 + $$ % 5000 * 2 ))
cat > "$C/slurm.conf" <<CONF
ClusterName=bbtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/log/slurmctld.log
SlurmdLogFile=$C/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$C/slurm.conf"
started_munge=0
stop_cluster() {
    for d in slurmd slurmctld; do [ -f "$C/$d.pid" ] && kill "$(cat "$C/$d.pid")" 2>/dev/null; done
    [ $started_munge = 1 ] && [ -f /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null
    sleep 0.5
    rm -rf "$TMP"
}
trap stop_cluster EXIT
if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    su -s /bin/sh munge -c /usr/sbin/munged || { echo "skipped: munged does not start"; exit 77; }
    started_munge=1
fi
slurmctld -f "$C/slurm.conf" || { echo "skipped: slurmctld does not start: $(tail -3 "$C/log/slurmctld.log")"; exit 77; }
slurmd -f "$C/slurm.conf" || { echo "skipped: slurmd does not start: $(tail -3 "$C/log/slurmd.log")"; exit 77; }
up=0
for i in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -q '^idle' && { up=1; break; }
    sleep 0.2
done
[ $up = 1 ] || { echo "skipped: the node did not come up: $(sinfo 2>&1 | tail -2)"; exit 77; }

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

# The sbatch script of the same sweep: submitted, it finds every run done and ends.
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --launcher slurm --print-sbatch --workers 2 --ranks 2 --threads 1
cp "$TMP/out" "$TMP/sweep.sbatch"
grep -q '^#SBATCH --ntasks=4$' "$TMP/sweep.sbatch" || fail "script lacks --ntasks=4"
grep -q '^#SBATCH --time=' "$TMP/sweep.sbatch" || fail "script lacks a time limit from the measured runs"
(cd "$TMP" && timeout 120 sbatch --wait "$TMP/sweep.sbatch" > "$TMP/sbatch.log" 2>&1) || { cat "$TMP/sbatch.log" "$TMP"/bigbatch-slurm-test-*.out; fail "the sbatch script failed"; }
expect_done 4 0 0 0 "$(ls "$TMP"/bigbatch-slurm-test-*.out | head -n 1)"
exit 0
