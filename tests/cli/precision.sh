#!/bin/sh
# --precision bf16 and fp16 on the CPU: a bf16 run's step losses stay near the fp32 run's; a
# power-of-two loss scale leaves a LARS run's checkpoint byte for byte the same (the mlperf
# preset: bias and BN excluded); fp16's skipped steps reach the database by hand (train --db)
# and through a sweep, and the final line counts them; the precision is part of the run's id.
. tests/cli/lib.inc
common="--model resnet8 --data synthetic --batch 32 --threads 2 --quiet --opt lars --lars-variant mlperf
    --momentum 0.9 --weight-decay 5e-4 --lr 0.5"
DB=$TMP/p.db
expect_exit 0 $BB train $common --steps 12 --db "$DB"
expect_exit 0 $BB train $common --steps 12 --precision bf16 --db "$DB"
[ "$(sqlite3 "$DB" "select count(distinct id) from runs")" = 2 ] || fail "bf16 and fp32 share a run id"
q() { sqlite3 "$DB" "select step, loss from steps where run_id = (select id from runs where
    json_extract(config, '$.precision') $1) order by step"; }
q "is null" > "$TMP/fp32"
q "= 'bf16'" > "$TMP/bf16"
# every step within 1% of fp32's loss, and not all the same bits
awk -F'|' 'NR == FNR { ref[$1] = $2; next }
    { d = $2 - ref[$1]; if (d < 0) d = -d; if (d > 0.01 * ref[$1]) bad = bad " " $1; if (d > 0) differ = 1 }
    END { if (bad != "" || !differ) { print "bf16 steps off:" bad " differ=" differ; exit 1 } }' \
    "$TMP/fp32" "$TMP/bf16" || fail "bf16 losses: $(paste -d' ' "$TMP/fp32" "$TMP/bf16" | tr '\n' ';')"

# loss scaling undone before LARS's norms: the same checkpoint at scale 1 and 2^20
expect_exit 0 $BB train $common --steps 4 --precision bf16 --save "$TMP/s1.safetensors"
expect_exit 0 $BB train $common --steps 4 --precision bf16 --loss-scale 1048576 --save "$TMP/s20.safetensors"
cmp -s "$TMP/s1.safetensors" "$TMP/s20.safetensors" || fail "a loss scale of 2^20 changed the bf16 checkpoint"

# fp16: a start scale that overflows every gradient skips every step, halving it each time
expect_exit 0 $BB train $common --steps 3 --precision fp16 --loss-scale 1e12 --db "$DB"
expect_output "steps=3 skipped=3 loss_scale=1.25e+11"
r="json_extract(config, '$.precision') = 'fp16'"
[ "$(sqlite3 "$DB" "select skipped_steps from runs where $r")" = 3 ] || fail "runs.skipped_steps"
[ "$(sqlite3 "$DB" "select count(*) from steps where skipped = 1 and run_id = (select id from runs where $r)")" = 3 ] ||
    fail "steps.skipped: $(sqlite3 "$DB" "select * from steps")"
# at 2^16 resnet8 skips nothing
expect_exit 0 $BB train $common --steps 3 --precision fp16
expect_output "steps=3 skipped=0 loss_scale=65536"

# a sweep records what its runs skipped
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = fp16-skips
title = fp16 skipped steps
[train]
model = lenet
data = synthetic
batch = 32
steps = 2
precision = fp16
[grid]
loss-scale = 1e12, 65536
INI
SDB=$TMP/sweep.db
expect_exit 0 $BB sweep "$TMP/exp.ini" --db "$SDB" --workers 1 --threads 2
[ "$(sqlite3 "$SDB" "select group_concat(skipped_steps) from (select skipped_steps from runs order by skipped_steps)")" = "0,2" ] ||
    fail "sweep's skipped_steps: $(sqlite3 "$SDB" "select id, skipped_steps, status from runs")"
[ "$(sqlite3 "$SDB" "select count(*) from steps where skipped = 1")" = 2 ] || fail "sweep's steps.skipped"
exit 0
