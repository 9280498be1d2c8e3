#!/bin/sh
# docs/results.md, docs/benchmarks.md, docs/performance.md and docs/figures/ are what
# `bigbatch report --all` makes from the committed archives, experiment files, bench/results/ and
# bench/performance.md.in: regenerated into a scratch folder, every file must equal the committed
# one and no committed figure may be left over. Also: a corrupt archive fails naming the file and
# leaves the previous pages in place; a bad template line fails naming the template and line and
# writes no performance.md.
. tests/cli/lib.inc
cp README.md "$TMP/README.md"
expect_exit 0 "$BB" report --all --out "$TMP/docs" --readme "$TMP/README.md"
# the README's headline (the demo's table, its engine, fingerprint and time) is the archive's
cmp -s "$TMP/README.md" README.md ||
    { diff README.md "$TMP/README.md" | head -20; fail "README.md's headline is not what report --all makes (regenerate: bigbatch report --all)"; }
grep -q "^| sgd | 2048 | 0.8 | 0\.[0-9]* ± 0\.[0-9]* (3 seeds" README.md || fail "the README's headline lacks the demo's SGD at 2048 over 3 seeds"
expect_output "results.md, $TMP/docs/benchmarks.md, $TMP/docs/performance.md and $TMP/docs/figures/ written"
for page in results.md benchmarks.md performance.md headline.md; do
    cmp -s "$TMP/docs/$page" "docs/$page" ||
        { diff "docs/$page" "$TMP/docs/$page" | head -20; fail "docs/$page is not what report --all makes (regenerate it: bigbatch report --all)"; }
done
# benchmarks.md: an index linking every dated output, none inlined
for f in bench/results/*.txt; do
    grep -q "^- \[${f##*/}\](\.\./$f) ([0-9]* lines): ." "$TMP/docs/benchmarks.md" || fail "benchmarks.md does not link $f"
done
! grep -q '^```' "$TMP/docs/benchmarks.md" || fail "benchmarks.md inlines a bench output (link it)"
# performance.md opens with today's throughput table (the newest run's LeNet row within the first
# screen) and stays short: the dated logs are linked, not inlined
head -n 40 "$TMP/docs/performance.md" | grep -q '^| lenet | 32 | 29011.6 | 5869.3 | 4.94x |' ||
    fail "performance.md does not open with today's throughput table"
[ "$(wc -l <"$TMP/docs/performance.md")" -le 400 ] || fail "performance.md is over 400 lines (link the logs; reasoning goes to docs/cpu-engine.md)"
! grep -q '{{' "$TMP/docs/performance.md" || fail "performance.md kept a directive of its template"
for f in "$TMP"/docs/figures/*; do
    name=$(basename "$f")
    cmp -s "$f" "docs/figures/$name" || fail "docs/figures/$name differs from report --all's or is missing"
done
for f in docs/figures/*; do
    [ -f "$TMP/docs/figures/$(basename "$f")" ] || fail "$f is not made by report --all (remove it)"
done
grep -q '^## AlexNet and AlexNet-BN with LARS' "$TMP/docs/results.md" || fail "results.md lacks the Table 3 section"
grep -q 'figures/alexnet-bn-lars-accuracy-vs-batch.png' "$TMP/docs/results.md" || fail "results.md lacks a figure link"
[ -z "$(ls -A "$TMP/docs" | grep '^\.report')" ] || fail "the scratch folder was left in $TMP/docs"

# A corrupt archive: an error naming it, and the pages of the last good run stay.
mkdir -p "$TMP/arch"
cp results/archive/layer-ratios.sql.gz "$TMP/arch/"
printf 'not gzip at all' > "$TMP/arch/loss-gap.sql.gz"
cp "$TMP/docs/results.md" "$TMP/before.md"
expect_exit 1 "$BB" report --all --archive "$TMP/arch" --out "$TMP/docs"
expect_output "loss-gap.sql.gz"
cmp -s "$TMP/docs/results.md" "$TMP/before.md" || fail "a failed report --all changed results.md"
[ -z "$(ls -A "$TMP/docs" | grep '^\.report')" ] || fail "a failed report --all left its scratch folder"
# A bad line of the performance template (line 3 here): an error naming the template and the
# line, and no performance.md. No experiments, so no figures: each run takes a moment.
mkdir -p "$TMP/noexp"
for bad in '{{tabel 2026-12-03-winograd.txt "OpenBLAS"}}|unknown directive' \
    '{{table no-such-run.txt "OpenBLAS"}}|no-such-run.txt: cannot open' \
    '{{line 2026-12-03-winograd.txt "No such heading"}}|no line starts with' \
    '{{table 2026-12-03-winograd.txt "OpenBLAS sgemm"}}|no table follows' \
    '{{line 2026-12-03-winograd.txt OpenBLAS}}|malformed directive' \
    '{{table ../2026-12-03-winograd.txt "OpenBLAS"}}|not a path' \
    '{{line 2026-12-03-winograd.txt "OpenBLAS"|must end with'; do
    printf '# A page\n\n%s\n' "${bad%%|*}" > "$TMP/bad.md.in"
    expect_exit 1 "$BB" report --all --experiments "$TMP/noexp" --performance "$TMP/bad.md.in" --out "$TMP/bad"
    expect_output "$TMP/bad.md.in:3: .*${bad#*|}"
    [ ! -e "$TMP/bad/performance.md" ] || fail "a bad template line left $TMP/bad/performance.md"
done
printf '# A page\n{{# a comment}}\n{{line 2026-12-03-winograd.txt "OpenBLAS sgemm"}}\n' > "$TMP/good.md.in"
expect_exit 0 "$BB" report --all --experiments "$TMP/noexp" --performance "$TMP/good.md.in" --out "$TMP/bad"
grep -q '^OpenBLAS sgemm (1024x1024x1024, median): ' "$TMP/bad/performance.md" || fail "{{line}} was not filled"
! grep -q 'a comment' "$TMP/bad/performance.md" || fail "a {{# comment}} reached the page"
expect_exit 2 "$BB" report --all --bogus x
expect_output "unknown option"
exit 0
