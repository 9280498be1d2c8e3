# `bigbatch scale`: the published runs, the model's predicted time for each against the time
# the paper reported, a node table, and bad flags that exit 2 naming the flag.
. tests/cli/lib.inc
expect_exit 0 $BB scale --papers
expect_output 'You et al. 2017 (1709.05011): AlexNet-BN, 100 epochs, batch 32768'
expect_output 'You et al. 2017 (1709.05011): ResNet-50, 90 epochs, batch 32768'
expect_output 'Goyal et al. 2017 (1706.02677): ResNet-50, 90 epochs, batch 8192'
expect_output 'Akiba et al. 2017 (1711.04325): ResNet-50, 90 epochs, batch 32768'
expect_output 'Jia et al. 2018 (Tencent, 1807.11205): ResNet-50, 90 epochs, batch 65536'
# The summary table, one row per run: label, devices, batch, predicted and reported time
# (value and unit), ratio, comm/iter. The published times are written here, not read from
# the output, so the check also fails if the program's reported column drifts from them.
# Tolerance, in docs/cli.md's words: "The GPU runs come out within 7% of the reported time
# and the two CPU runs within a factor of 1.6". A ratio is computed from the printed
# predicted time, which is rounded to 0.1 of its unit: the printed ratio column (two decimals)
# must agree with it to within that rounding, 0.005 + 0.05 min / published.
cat >"$TMP/published" <<'PUB'
You AlexNet-BN,|11|cpu
You ResNet-50,|20|cpu
Goyal ResNet-50,|60|gpu
Akiba ResNet-50,|15|gpu
Jia ResNet-50,|6.6|gpu
PUB
awk -F'|' '
function minutes(v, u) {
    if (u == "s") return v / 60; if (u == "min") return v; if (u == "h") return v * 60
    if (u == "d") return v * 1440; return -1
}
function abs(x) { return x < 0 ? -x : x }
NR == FNR { key[++n] = $1; pub[n] = $2; kind[n] = $3; next }
/^run +devices +batch +predicted +reported +ratio/ { table = 1; next }
table && NF {
    m = 0
    for (i = 1; i <= n; i++) if (index($0, key[i]) == 1) m = i
    if (!m) { print "unexpected row: " $0; bad = 1; next }
    seen[m]++
    k = split($0, f, / +/)
    pred = minutes(f[k - 5], f[k - 4]); rep = minutes(f[k - 3], f[k - 2]); shown = f[k - 1]
    r = pred / pub[m]; slack = 0.005 + minutes(0.05, f[k - 4]) / pub[m]
    printf "%-28s predicted %7.2f min, published %5.1f min, ratio %.3f (%s)\n", key[m], pred, pub[m], r, kind[m]
    if (abs(rep - pub[m]) > 1e-6) { print "  reported column " rep " min, published " pub[m] " min"; bad = 1 }
    if (abs(shown - r) > slack + 1e-9) { print "  printed ratio " shown " is not predicted/published"; bad = 1 }
    if (kind[m] == "gpu" && abs(r - 1) > 0.07) { print "  outside 7% of the reported time"; bad = 1 }
    if (kind[m] == "cpu" && (r > 1.6 || r < 1 / 1.6)) { print "  outside a factor of 1.6"; bad = 1 }
}
END {
    for (i = 1; i <= n; i++) if (seen[i] != 1) { print key[i] " rows: " seen[i] + 0; bad = 1 }
    exit bad
}' "$TMP/published" "$TMP/out" >"$TMP/ratios" || { cat "$TMP/out" "$TMP/ratios"; fail "scale --papers: predicted time outside the tolerance of a published run"; }
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
expect_output "\-\-batch: 0 is out of range (an integer from 1 to 1073741824)"
expect_exit 2 $BB scale --model resnet50
expect_output "\-\-throughput IMG_S or \-\-measure is required"
expect_exit 2 $BB scale --papers --batch 64
expect_output "\-\-batch: \-\-papers uses each run's own setup"
expect_exit 2 $BB scale --no-such-flag
expect_output "unknown option '--no-such-flag'"
expect_exit 0 $BB scale --help
expect_output "\-\-bandwidth-gbps"
# docs/cli.md shows the summary as the command prints it.
expect_exit 0 $BB scale --papers
sed -n '/^run  *devices/,$p' "$TMP/out" > "$TMP/summary"
sed -n '/^run  *devices/,/^```/p' docs/cli.md | sed '$d' > "$TMP/documented"
[ -s "$TMP/summary" ] || fail "no summary table in scale --papers"
cmp -s "$TMP/summary" "$TMP/documented" || { diff "$TMP/documented" "$TMP/summary"; fail "docs/cli.md's scale --papers block differs from the command's output"; }
# The published runs are data: another file, and a bad one named with its line and key.
sed 's/^reported_min = 60$/reported_min = 30/' results/published-runs.ini > "$TMP/runs.ini"
expect_exit 0 $BB scale --papers --published "$TMP/runs.ini"
expect_output 'Goyal ResNet-50, 256 P100 .* 30.0 min   1.87'
printf '[x]\nlabel = y\nbogus = 1\n' > "$TMP/bad.ini"
expect_exit 1 $BB scale --papers --published "$TMP/bad.ini"
expect_output "$TMP/bad.ini:3: key 'bogus'"
expect_exit 1 $BB scale --papers --published "$TMP/none.ini"
expect_output "$TMP/none.ini: cannot open"
