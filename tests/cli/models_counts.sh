# `bigbatch models` lists the published sizes of the papers' networks.
. tests/cli/lib.inc
expect_exit 0 $BB models
expect_output 'resnet50 .* 25,557,032 *4.0892'
expect_output 'alexnet  .* 60,965,224'
expect_output 'alexnet-bn '
expect_output 'multiply-add as 2 FLOPs'
for m in lenet simple-cnn alexnet-cifar alexnet-bn-cifar resnet20 resnet8; do expect_output "^$m "; done
