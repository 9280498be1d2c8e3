#!/bin/sh
# The report of single-seed cells: the caption says each cell is one seed, and a cell whose
# neighbour along the tuned axis ended otherwise (here made diverged and collapsed by hand) is
# marked fragile (~), while a cell whose neighbours ended as it did is not. With two seeds a
# cell, the caption gives the spread and each cell its seeds and outcomes; the provenance line
# counts the runs per engine, device and precision, and a table mixing devices marks GPU cells.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = seeds-test
title = Seeds test
tuned = lr
[train]
model = lenet
data = synthetic
train-subset = 256
test-subset = 64
batch = 64
epochs = 1
[grid]
lr = 0.01, 0.02, 0.04, 0.08, 0.16
INI
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/s.db" --workers 2 --threads 1
set_status() { sqlite3 "$TMP/s.db" "update runs set status='$2' where json_extract(config, '$.lr') = '$1'"; }
set_status 0.16 diverged
set_status 0.01 collapsed
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/s.db"
expect_output "Every cell, each a single seed"
expect_output "| 0.01 | 1 | 0\.[0-9]* (collapsed) ~ |"
expect_output "| 0.02 | 1 | 0\.[0-9]*[ *]* ~ |"
grep "| 0.04 | 1 |" "$TMP/out" | grep -q "~" && { cat "$TMP/out"; fail "lr 0.04 marked fragile: its neighbours ended as it did"; }
expect_output "| 0.08 | 1 | 0\.[0-9]*[ *]* ~ |"
expect_output "| 0.16 | 1 | diverged ~ |"
expect_output "Provenance:\*\* runs by engine 0\.1\.0"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/s.db" --workers 2 --threads 1 --repeats 2
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/s.db"
expect_output "mean ± sample standard deviation over its seeds"
expect_output "| 0.16 | 2 | 0\.[0-9]* (2 seeds, 1 of 2 diverged) |"
expect_output "| 0.04 | 2 | 0\.[0-9]* ± 0\.[0-9]* (2 seeds)"
expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/s.db" --repeats 0
# runs from before devices were recorded ran on CPUs: beside CPU runs they mix nothing
sqlite3 "$TMP/s.db" "update runs set device=NULL where json_extract(config, '$.lr') = '0.02'"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/s.db"
expect_output "on cpu (8 runs), unrecorded (2 runs); in fp32"
# a table whose runs ran on two devices says so, and marks the cells that ran on a GPU
sqlite3 "$TMP/s.db" "update runs set device='cuda:0 NVIDIA H200' where json_extract(config, '$.lr') = '0.02'"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/s.db"
expect_output "on cpu (8 runs), cuda:0 NVIDIA H200 (2 runs) (the tables mix devices"
expect_output "in fp32 (10 runs)"
expect_output "| 0.02 | 2 | 0\.[0-9]* ± 0\.[0-9]* (2 seeds)[ *]* \[gpu\] |"
grep "| 0.04 | 2 |" "$TMP/out" | grep -q "gpu" && fail "a CPU cell marked as run on a GPU"
exit 0
