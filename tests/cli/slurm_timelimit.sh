#!/bin/sh
# A real time limit on the one-node test cluster (slurm.inc): two --print-sbatch jobs of
# --time 1 at once, no signal sent by hand. slurmctld checks limits every 30 s, so:
# 1. the script as written (--signal=B:USR2@90): slurmctld sends USR2 itself at its first
#    check (about 30 s in: under 90 s are left); the sweep checkpoints its runs, requeues the
#    job, and the requeued job (warned again each minute) resumes and finishes them;
# 2. the script without its --signal line: the limit ends the job (at the check after the
#    minute: SIGTERM to the batch step and every run step, SIGKILL after KillWait); the sweep
#    requeues it within KillWait (scontrol requeue works on a job ending at its limit) and the
#    requeued job resumes its run from its last periodic checkpoint.
#    Then scancel ends that job for good: its SIGTERM does not requeue it.
. tests/cli/lib.inc
. tests/cli/slurm.inc
t0=$(date +%s)
scontrol setdebug debug # slurmctld logs the warnings it sends at this level
ini() { # NAME EPOCHS [LINES]: the experiment file $TMP/NAME/exp.ini
    mkdir -p "$TMP/$1"
    printf '[experiment]\nname = %s\n[train]\nmodel = lenet\ntrain-subset = 4096\ntest-subset = 200\nepochs = %s\nbatch = 64\nlr = 0.05\n%b' \
        "$1" "$2" "$3" > "$TMP/$1/exp.ini"
}
script() { # NAME WORKERS: the --print-sbatch script of $TMP/NAME, checkpoints every 2 s
    expect_exit 0 "$BB" sweep "$TMP/$1/exp.ini" --db "$TMP/$1/db" --launcher slurm --print-sbatch --workers "$2" \
        --threads 1 --checkpoint-every 2s --time 1 --chdir "$TMP/$1"
    cp "$TMP/out" "$TMP/$1/job.sbatch"
}
# the warned job's runs outlast its first warning; the other's run outlasts the limit. No
# divergence check: a resumed run's reference is its attempt's first step (docs/cli.md); near zero
# loss a later step's noise is over ten times it
ini warned 80 '[grid]\nmomentum = 0, 0.9\n'
ini limit 100000
script warned 2
script limit 1
for line in '--signal=B:USR2@90' '--requeue' '--time=1'; do
    grep -q -- "^#SBATCH $line\$" "$TMP/warned/job.sbatch" || { cat "$TMP/warned/job.sbatch"; fail "no #SBATCH $line"; }
done
sed -i '/^#SBATCH --signal=/d' "$TMP/limit/job.sbatch"
wjob=$(sbatch --parsable "$TMP/warned/job.sbatch") || fail "sbatch (warned)"
ljob=$(sbatch --parsable "$TMP/limit/job.sbatch") || fail "sbatch (limit)"
out() { cat "$TMP/$1"/bigbatch-*.out 2>/dev/null; }
explain() { # the jobs' output, SLURM's view of them and its log; then fail
    for j in warned limit; do echo "== job $j"; out $j; done
    squeue; for j in "$wjob" "$ljob"; do scontrol show job "$j" | grep 'JobId\|JobState\|Restarts'; done
    tail -20 "$C/log/slurmctld.log"
    fail "$*"
}
# slurmctld holds a requeued job back before it is eligible again (the requeue itself is the
# sweep's): once per requeue, let it start 2 s after it is pending. Not at once: slurmd refuses
# a job whose credential is from the second it revoked the last one in ("Job credential revoked").
kick() {
    for id in "$wjob" "$ljob"; do
        line=$(scontrol show job -o "$id" 2>/dev/null)
        case $line in *JobState=PENDING*) ;; *) continue ;; esac
        n=$(echo "$line" | grep -o 'Restarts=[0-9]*' | tr -cd 0-9)
        eval "seen=\${seen_$id:-} at=\${at_$id:-0} kicked=\${kicked_$id:-}"
        [ "$seen" = "$n" ] || { eval "seen_$id=$n at_$id=$(date +%s)"; continue; }
        [ "$kicked" != "$n" ] && [ $(($(date +%s) - at)) -ge 2 ] || continue
        scontrol update JobId="$id" StartTime=now >/dev/null 2>&1 && eval "kicked_$id=$n"
    done
}
warned_done=0 resumed=0
while [ $warned_done = 0 ] || [ $resumed = 0 ]; do
    [ $(($(date +%s) - t0)) -lt 200 ] || explain "not done in 200 s (warned job done: $warned_done, limit job resumed: $resumed)"
    kick
    if [ $warned_done = 0 ] && ! squeue -h -j "$wjob" 2>/dev/null | grep -q . &&
        [ "$(sqlite3 "$TMP/warned/db" "select count(*) from runs where status in $RESULT" 2>/dev/null)" = 2 ]; then
        warned_done=1 && echo "warned job done after $(($(date +%s) - t0)) s"
    fi
    if [ $resumed = 0 ] && out limit | grep -q "resumed from its checkpoint after step [1-9]"; then
        resumed=1 && echo "limit job resumed after $(($(date +%s) - t0)) s"
    fi
    sleep 0.5
done
# 1. SLURM's warning, then the requeue, the resume and every run finished
log=$C/log/slurmctld.log
grep -q "warning signal 12 to JobId=$wjob\$" "$log" || explain "slurmctld sent no USR2 to job $wjob"
grep -q "interrupted (signal 12)" "$TMP"/warned/bigbatch-*.out || explain "the warned sweep did not stop on USR2"
grep -q "requeued SLURM job $wjob" "$TMP"/warned/bigbatch-*.out || explain "the warned job did not requeue itself"
out warned | grep -q "resumed from its checkpoint after step [1-9]" || explain "the warned job's runs did not resume"
expect_done 2 0 0 0 "$(ls "$TMP"/warned/bigbatch-*.out)"
rows() { # DB: runs whose step rows are lost or doubled (each step of a span once)
    sqlite3 "$1" "select run_id from steps group by run_id
        having count(distinct step) != count(*) or max(step) - min(step) + 1 != count(*)"
}
[ -z "$(rows "$TMP/warned/db")" ] || explain "rows lost or doubled: $(rows "$TMP/warned/db")"
[ "$(sqlite3 "$TMP/warned/db" "select count(*) from steps")" = $((2 * 80 * 64)) ] || explain "not every step recorded"
# 2. the limit: TERM, the sweep's requeue within KillWait, the resume
grep -q "Time limit exhausted for JobId=$ljob" "$log" || explain "job $ljob did not reach its time limit"
grep -q "DUE TO TIME LIMIT" "$TMP"/limit/bigbatch-*.out || explain "the limit job was not ended by its limit"
# the sweep stops on its SIGTERM, or first on a run step ended by the limit
grep -q "interrupted (signal 15)\|allocation is gone (.*DUE TO TIME LIMIT" "$TMP"/limit/bigbatch-*.out ||
    explain "the limit job's sweep did not stop at the limit"
grep -q "requeued SLURM job $ljob" "$TMP"/limit/bigbatch-*.out || explain "the limit job did not requeue itself"
# then scancel: the job ends and stays ended
scancel "$ljob"
for i in $(seq 100); do
    grep -q "not requeued: job $ljob is" "$TMP"/limit/bigbatch-*.out && break
    sleep 0.2
done
grep -q "not requeued: job $ljob is" "$TMP"/limit/bigbatch-*.out || explain "scancel: the sweep did not say it stays cancelled"
for i in $(seq 40); do squeue -h -j "$ljob" 2>/dev/null | grep -q . || break; sleep 0.25; done
! squeue -h -j "$ljob" 2>/dev/null | grep -q . || explain "job $ljob came back after scancel"
for db in warned limit; do
    bad=$(sqlite3 "$TMP/$db/db" "select run_id, attempt, outcome from attempts where outcome in ('failed','killed')")
    [ -z "$bad" ] || explain "attempts counted against runs ($db): $bad"
done
[ -z "$(rows "$TMP/limit/db")" ] || explain "rows lost or doubled: $(rows "$TMP/limit/db")"
echo "$(grep -c 'requeued SLURM job' "$TMP"/warned/bigbatch-*.out) requeue(s) on the warning, $(grep -c 'requeued SLURM job' "$TMP"/limit/bigbatch-*.out) at the limit; $(($(date +%s) - t0)) s"
exit 0
