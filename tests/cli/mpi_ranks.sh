#!/bin/sh
# Data parallelism under mpirun: K ranks train the same weights as one process at the same
# global batch (no BN; with dropout, the same masks), and as one process with K emulated workers (BN: per-worker
# statistics), or with --sync-bn as one process with the whole batch; a killed rank ends the job promptly with a non-zero status; a sweep with
# --ranks runs its cells under mpirun and records a killed rank's run as failed.
. tests/cli/lib.inc
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
MPIRUN="mpirun --oversubscribe"
# Under `make test SAN=1`: Open MPI's plugins leave allocations that LeakSanitizer reports from
# unloaded modules; leaks of our own code are checked by every single-process test.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if "$BB" version | grep -q "without MPI"; then
    # make MPI=0: under mpirun the binary says it cannot do data parallelism, and stops
    expect_exit 2 $MPIRUN -np 2 "$BB" train --model lenet --steps 1 --quiet
    expect_output "built without MPI"
    exit 0
fi
lenet="--model lenet --train-subset 2048 --test-subset 500 --epochs 2 --batch 128 --lr 0.05 --momentum 0.9 --threads 1 --quiet"
expect_exit 0 "$BB" train $lenet --save "$TMP/one.st"
acc1=$(sed -n 's/^final test_acc=\([0-9.]*\).*/\1/p' "$TMP/out")
for k in 2 4; do
    expect_exit 0 $MPIRUN -np $k "$BB" train $lenet --save "$TMP/k$k.st"
    expect_output "x $k ranks of $((128 / k)) images"
    [ "$(grep -c '^final' "$TMP/out")" = 1 ] || fail "more than rank 0 printed"
    acc=$(sed -n 's/^final test_acc=\([0-9.]*\).*/\1/p' "$TMP/out")
    [ "$acc" = "$acc1" ] || fail "$k ranks: test_acc $acc, one process $acc1"
    # 32 steps of momentum SGD: only the order of float sums differs
    expect_exit 0 "$BB" compare "$TMP/one.st" "$TMP/k$k.st" --model lenet --tol 1e-3
done
# buckets small enough that several are summed by the allreduce thread while backward goes
# on (engine/dist/reduce_thread.c): the same model
expect_exit 0 $MPIRUN -np 2 "$BB" train $lenet --bucket-mb 0.02 --save "$TMP/b2.st"
expect_output "^allreduce: each step waited [0-9.e+-]* ms for the gradients' sum, in flight for [0-9.e+-]* ms, [0-9]*% of that hidden behind backward"
[ "$(sed -n 's/^final test_acc=\([0-9.]*\).*/\1/p' "$TMP/out")" = "$acc1" ] || fail "small buckets: another test_acc"
expect_exit 0 "$BB" compare "$TMP/one.st" "$TMP/b2.st" --model lenet --tol 1e-3
# --noise-scale reads each micro-batch's own gradient after backward: summed only after it, the
# estimate of 2 ranks is one process's (summed while backward ran, it was 3221 instead of 165)
ns="--model lenet --train-subset 2048 --test-subset 200 --epochs 1 --batch 256 --micro-batch 64 --noise-scale --lr 0.05 --threads 1 --quiet --bucket-mb 0.02"
expect_exit 0 "$BB" train $ns
b1=$(awk '$1 == 1 && NF == 11 {print $11}' "$TMP/out")
expect_exit 0 $MPIRUN -np 2 "$BB" train $ns
b2=$(awk '$1 == 1 && NF == 11 {print $11}' "$TMP/out")
[ -n "$b1" ] && [ "$b1" = "$b2" ] || fail "noise scale: one process '$b1', 2 ranks '$b2'"
# without micro-batches each rank's share is the small batch (McCandlish et al.'s estimator
# across data-parallel workers): 2 ranks of 128 each = one process in micro-batches of 128
ns0="--model lenet --train-subset 2048 --test-subset 200 --epochs 1 --batch 256 --noise-scale --lr 0.05 --threads 1 --quiet --bucket-mb 0.02"
expect_exit 0 "$BB" train $ns0 --micro-batch 128
b3=$(awk '$1 == 1 && NF == 11 {print $11}' "$TMP/out")
expect_exit 0 $MPIRUN -np 2 "$BB" train $ns0
b4=$(awk '$1 == 1 && NF == 11 {print $11}' "$TMP/out")
[ -n "$b3" ] && [ "$b3" != nan ] && [ "$b3" = "$b4" ] || fail "noise scale: micro-batches of 128 '$b3', 2 ranks without '$b4'"
[ "$b3" != "$b1" ] || fail "noise scale: the small batch (128 vs 64) did not change the estimate"
# with dropout too: each mask element is a Philox draw of its place in the global batch, so
# 2 ranks draw the masks of one process (with per-rank streams they differed by 1.2 relative)
ax="--model alexnet-cifar --data synthetic --steps 4 --batch 32 --lr 0.05 --momentum 0.9 --threads 1 --quiet"
expect_exit 0 "$BB" train $ax --save "$TMP/ax1.st"
expect_exit 0 $MPIRUN -np 2 "$BB" train $ax --save "$TMP/ax2.st"
expect_exit 0 "$BB" compare "$TMP/ax1.st" "$TMP/ax2.st" --model alexnet-cifar --tol 1e-4
# the comparison can fail: another seed is another model
expect_exit 0 "$BB" train $lenet --seed 2 --save "$TMP/seed2.st"
expect_exit 1 "$BB" compare "$TMP/one.st" "$TMP/seed2.st" --model lenet --tol 1e-3

# BN: 2 ranks = 2 emulated workers (ghost BN over 16 images), not the 32-image BN of one worker
rn="--model resnet8 --data synthetic --steps 4 --batch 32 --lr 0.05 --momentum 0.9 --threads 1 --quiet"
expect_exit 0 "$BB" train $rn --workers-emulated 2 --save "$TMP/emu2.st"
expect_exit 0 "$BB" train $rn --save "$TMP/full.st"
expect_exit 0 $MPIRUN -np 2 "$BB" train $rn --save "$TMP/bn2.st"
expect_exit 0 "$BB" compare "$TMP/emu2.st" "$TMP/bn2.st" --model resnet8 --tol 1e-2
expect_exit 1 "$BB" compare "$TMP/full.st" "$TMP/bn2.st" --model resnet8 --tol 1e-1
# --sync-bn: statistics over all ranks' images, so K ranks = one process with the whole batch
for k in 2 4; do
    expect_exit 0 $MPIRUN -np $k "$BB" train $rn --sync-bn --save "$TMP/sync$k.st"
    expect_exit 0 "$BB" compare "$TMP/full.st" "$TMP/sync$k.st" --model resnet8 --tol 1e-4
done
# BN statistics summed by the main thread while the allreduce thread sums buckets
expect_exit 0 $MPIRUN -np 2 "$BB" train $rn --sync-bn --bucket-mb 0.01 --save "$TMP/syncb.st"
expect_exit 0 "$BB" compare "$TMP/full.st" "$TMP/syncb.st" --model resnet8 --tol 1e-4

# a batch that does not split over the ranks is an error, and every rank exits
expect_exit 2 $MPIRUN -np 3 "$BB" train $lenet
expect_output "not divisible by the 3 ranks"

# a rank killed mid-run: the job ends promptly, non-zero
long="--model lenet --epochs 50 --batch 128 --threads 1 --quiet"
$MPIRUN -np 2 "$BB" train $long > "$TMP/long.out" 2>&1 &
job=$!
n=0
until [ "$(pgrep -f "bigbatch train $long" | wc -l)" -ge 2 ]; do
    n=$((n + 1)); [ $n -lt 100 ] || fail "ranks did not start"; sleep 0.1
done
sleep 1
kill -9 "$(pgrep -f "bigbatch train $long" | tail -n 1)"
start=$(date +%s)
wait $job; rc=$?
took=$(( $(date +%s) - start ))
[ $rc -ne 0 ] || fail "job exited 0 after a rank was killed"
[ $took -le 15 ] || fail "job took $took s to end after a rank died"
pgrep -f "bigbatch train $long" && fail "ranks left running"

# sweep --ranks 2: cells run under mpirun; a killed rank makes its run failed (no attempts left)
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = mpi-sweep
[train]
model = lenet
train-subset = 1024
test-subset = 200
epochs = 1
[grid]
batch = 64, 128
INI
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/m.db" --ranks 2 --threads 1
expect_done 2 0 0 0
grep -q "x 2 ranks" "$TMP"/m.logs/*.log || fail "runs were not under mpirun"
# their rows came back through mpirun as records (one writer: the sweep)
[ "$(sqlite3 "$TMP/m.db" "select count(*) from runs r where exists (select 1 from epochs e where e.run_id = r.id)")" = 2 ] ||
    fail "epochs of the 2-rank runs not recorded"
cat > "$TMP/killed.ini" <<'INI'
[experiment]
name = mpi-killed
[train]
model = lenet
epochs = 50
INI
"$BB" sweep "$TMP/killed.ini" --db "$TMP/k.db" --ranks 2 --threads 1 --max-attempts 1 > "$TMP/sweep.out" 2>&1 &
sweep=$!
n=0
until [ "$(run_pids "$TMP/k.db" | wc -l)" -ge 2 ]; do
    n=$((n + 1)); [ $n -lt 150 ] || fail "sweep ranks did not start"; sleep 0.1
done
sleep 1
kill -9 "$(run_pids "$TMP/k.db" | tail -n 1)"
wait $sweep; rc=$?
[ $rc -eq 1 ] || { cat "$TMP/sweep.out"; fail "sweep exit $rc, expected 1"; }
[ "$(sqlite3 "$TMP/k.db" "select status from runs")" = failed ] || fail "run not failed"
exit 0
