# `bigbatch scale`: the published runs with their reported times, a node table, and
# bad flags that exit 2 naming the flag.
. tests/cli/lib.inc
expect_exit 0 $BB scale --papers
expect_output 'You et al. 2017 (1709.05011): AlexNet-BN, 100 epochs, batch 32768'
expect_output 'reported 11 min'
expect_output 'You et al. 2017 (1709.05011): ResNet-50, 90 epochs, batch 32768'
expect_output 'reported 20 min'
expect_output 'Goyal et al. 2017 (1706.02677): ResNet-50, 90 epochs, batch 8192'
expect_output 'reported 1 hour'
expect_output 'predicted/reported [0-9.]*'
expect_output '^Goyal ResNet-50, 256 P100 .* 60.0 min '
expect_exit 0 $BB scale --papers --overlap 1

expect_exit 0 $BB scale --model resnet50 --throughput 100 --nodes 1,2,4
expect_output '25,557,032 parameters'
rows=$(grep -cE '^ +[0-9]+ +[0-9.]+\*? +[0-9.]+ +[0-9.]+ +[0-9.]+ ' "$TMP/out")
[ "$rows" -eq 3 ] || { cat "$TMP/out"; fail "expected 3 rows, got $rows"; }
# one node: no communication, 8192 images at 100 images/s
expect_output '^ *1  *8192  *81920.00  *0.00  *81920.00 '
expect_exit 0 $BB scale --grad-mb 50 --throughput 200 --batch 1000 --nodes 3
expect_output 'does not divide evenly'

expect_exit 2 $BB scale --throughput abc
expect_output "\-\-throughput: 'abc' is not a number"
expect_exit 2 $BB scale --throughput 100 --nodes 1,0
expect_output "\-\-nodes: '1,0'"
expect_exit 2 $BB scale --throughput 100 --overlap 2
expect_output "\-\-overlap: '2' is not in \[0, 1\]"
expect_exit 2 $BB scale --throughput 100 --bandwidth-gbps -1
expect_output "\-\-bandwidth-gbps"
expect_exit 2 $BB scale --model nonet --throughput 100
expect_output "\-\-model: unknown model 'nonet'"
expect_exit 2 $BB scale --throughput 100 --batch 0
expect_output "\-\-batch: '0' is not an integer >= 1"
expect_exit 2 $BB scale --model resnet50
expect_output "\-\-throughput IMG_S or \-\-measure is required"
expect_exit 2 $BB scale --papers --batch 64
expect_output "\-\-batch: \-\-papers uses each run's own setup"
expect_exit 2 $BB scale --no-such-flag
expect_output "unknown option '--no-such-flag'"
expect_exit 0 $BB scale --help
expect_output "\-\-bandwidth-gbps"
