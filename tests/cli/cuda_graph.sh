# --cuda-graph on the GPU (make test-gpu GPU=1): CUDA graphs replay each micro-batch's pass from
# the second step on (engine/train/step.h). Two epochs of lenet and resnet8 at batch 64 in
# micro-batches of 16, evaluated at 64 images after each epoch: the evaluation outgrows the
# scratch buffers the graph was captured with (the softmax's reduction scratch at least), which
# the graph must keep using (engine/cuda/graph.cu). The run's reductions are fixed-order and
# cuDNN's deterministic algorithms are preferred, so the checkpoint must be byte for byte the
# eager run's, as tests/cli/graph.sh checks on the CPU.
# Skipped (exit 77, saying why) where the build has no CUDA or the machine no GPU.
. tests/cli/lib.inc
. tests/cli/cuda.inc
. tests/cli/graph.inc
need_cuda
for model in lenet resnet8; do
    same_with_graph "$model on the GPU" --device cuda --model $model --data synthetic --epochs 2 --batch 64 \
        --micro-batch 16 --eval-batch 64 --lr 0.05 --momentum 0.9 --quiet
done
