# --cuda-graph on: after the first step each micro-batch's forward and backward is replayed from
# a graph captured once (engine/train/step.h). The CPU has no graphs: its launch issues the pass
# again and checks that the captured operations and arguments come out, so a checkpoint trained
# with it must be byte for byte the one without (resnet8 and lenet, micro-batches, fp32 and fp16),
# and what a graph cannot replay is refused.
. tests/cli/lib.inc
. tests/cli/graph.inc
for model in resnet8 lenet; do
    for precision in fp32 fp16; do
        same_with_graph "$model $precision" --model $model --data synthetic --steps 5 --batch 16 --micro-batch 8 \
            --lr 0.05 --momentum 0.9 --threads 1 --precision $precision --quiet
    done
done
# fp16 from a scale that overflows: 8 of 14 steps skipped on the device, the scale halved each
# time, and the pass captured again at each new scale; the same checkpoint and skipped count
t="--model resnet8 --data synthetic --steps 14 --batch 16 --micro-batch 8 --threads 1 --precision fp16 --loss-scale 1e8"
expect_exit 0 $BB train $t --save "$TMP/off.st"
expect_output "skipped=8 "
expect_exit 0 $BB train $t --cuda-graph on --save "$TMP/on.st"
expect_output "skipped=8 "
cmp "$TMP/off.st" "$TMP/on.st" || fail "fp16 with skipped steps: --cuda-graph on changed the checkpoint"
# bench runs its steps through the same step
expect_exit 0 $BB bench --model lenet --batch 8 --steps 3 --warmup 2 --profile-steps 1 --threads 1 --cuda-graph on
expect_output "model=lenet"
expect_exit 1 $BB train --model alexnet-cifar --data synthetic --steps 2 --batch 8 --cuda-graph on --quiet
expect_output "\-\-cuda-graph on: model alexnet-cifar has dropout"
expect_exit 2 $BB train --model lenet --data synthetic --batch 16 --micro-batch 8 --noise-scale --cuda-graph on
expect_output "\-\-cuda-graph on needs one process without --noise-scale"
expect_exit 2 $BB train --model lenet --cuda-graph maybe
expect_output "cuda-graph"
# an execution detail, as --threads: an experiment file that sets it keeps its runs' ids
printf '[experiment]\nname = cg\n[train]\nmodel = lenet\nepochs = 1\n[grid]\nlr = 0.01\n' >"$TMP/cg.ini"
expect_exit 0 $BB sweep "$TMP/cg.ini" --db "$TMP/cg1.db" --dry-run
off_id=$(grep -o ' [0-9a-f]\{16\} ' "$TMP/out")
sed -i 's/^epochs = 1$/epochs = 1\ncuda-graph = on/' "$TMP/cg.ini"
expect_exit 0 $BB sweep "$TMP/cg.ini" --db "$TMP/cg2.db" --dry-run
[ -n "$off_id" ] && [ "$(grep -o ' [0-9a-f]\{16\} ' "$TMP/out")" = "$off_id" ] || fail "cuda-graph = on changed the run id"
