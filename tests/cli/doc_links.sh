#!/bin/sh
# README.md stays a front door (at most 300 lines), and every relative link in it, in docs/
# and in experiments/ and plots/ Markdown names a file that exists (anchors are not checked).
. tests/cli/lib.inc
lines=$(wc -l < README.md)
[ "$lines" -le 300 ] || fail "README.md has $lines lines (at most 300: move reference text to docs/)"
for md in README.md docs/*.md experiments/*.md plots/README.md results/SCHEMA.md; do
    dir=$(dirname "$md")
    # ](target) with a relative target: not http(s), not a bare #anchor
    grep -o '](\([^)#][^)]*\))' "$md" | sed 's/^](//; s/)$//; s/#.*//' | grep -v '^https\?:' |
    while read -r target; do
        [ -e "$dir/$target" ] || { echo "$md: link to $target: no such file"; echo x >> "$TMP/broken"; }
    done
done
[ ! -s "$TMP/broken" ] || fail "$(wc -l < "$TMP/broken") broken link(s) above"
exit 0
