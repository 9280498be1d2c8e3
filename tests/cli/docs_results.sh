#!/bin/sh
# docs/results.md, docs/benchmarks.md and docs/figures/ are what `bigbatch report --all` makes
# from the committed archives, experiment files and bench/results/: regenerated into a scratch
# folder, every file must equal the committed one and no committed figure may be left over. Also: a corrupt archive fails naming
# the file and leaves the previous pages in place.
. tests/cli/lib.inc
expect_exit 0 "$BB" report --all --out "$TMP/docs"
expect_output "results.md, $TMP/docs/benchmarks.md and $TMP/docs/figures/ written"
for page in results.md benchmarks.md; do
    cmp -s "$TMP/docs/$page" "docs/$page" ||
        { diff "docs/$page" "$TMP/docs/$page" | head -20; fail "docs/$page is not what report --all makes (regenerate it: bigbatch report --all)"; }
done
grep -q '^## 2026-12-03-winograd.txt$' "$TMP/docs/benchmarks.md" || fail "benchmarks.md lacks a bench/results file"
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
expect_exit 2 "$BB" report --all --bogus x
expect_output "unknown option"
exit 0
