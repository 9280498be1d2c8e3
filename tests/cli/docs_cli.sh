#!/bin/sh
# docs/cli.md's command list and every command's flag tables, and docs/engine.md's LARS/LARC preset
# table, are what the binary prints from its own tables (`bigbatch help --markdown TOPIC`,
# spliced by docs/regenerate.sh): a block that differs fails, and so does a page that lost one.
. tests/cli/lib.inc
BB="$BB" sh docs/regenerate.sh --check docs/cli.md docs/engine.md >"$TMP/out" 2>&1 ||
    { cat "$TMP/out"; fail "a generated table of the docs is stale (regenerate: make docs)"; }
TABLES="train sweep plot bench bench-allreduce scale compare runs report report-all merge verify fingerprint data"
for block in "commands docs/cli.md" "presets docs/engine.md"; do
    set -- $block
    grep -qx "<!-- generated: bigbatch help --markdown $1 -->" "$2" || fail "$2 lacks the generated $1 table"
done
for t in $TABLES; do
    grep -qx "<!-- generated: bigbatch help --markdown $t -->" docs/cli.md || fail "docs/cli.md lacks the generated $t table"
done
# every command of the usage and every flag of train --help is in the page
"$BB" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' >"$TMP/commands"
[ "$(wc -l <"$TMP/commands")" -ge 14 ] || fail "bigbatch --help lists fewer than 14 commands"
while read -r c; do grep -q "^| \`$c\` | " docs/cli.md || fail "docs/cli.md lacks the command $c"; done <"$TMP/commands"
"$BB" train --help | sed -n 's/^  \(--[a-z0-9-]*\).*/\1/p' >"$TMP/flags"
[ "$(wc -l <"$TMP/flags")" -ge 67 ] || fail "train --help lists fewer than 67 flags"
while read -r f; do grep -q "^| \`$f[ \`]" docs/cli.md || fail "docs/cli.md lacks the flag $f"; done <"$TMP/flags"
# and every flag of the other commands' --help, each in its command's block
for t in $TABLES; do
    blocks=$t
    case $t in
    bench-allreduce) set -- bench --allreduce 1 ;;
    report) set -- report; blocks="report report-all" ;; # report --help prints both tables
    report-all) continue ;;
    *) set -- "$t" ;;
    esac
    "$BB" "$@" --help | sed -n 's/^  \(--[a-z0-9-]*\).*/\1/p' >"$TMP/flags"
    [ -s "$TMP/flags" ] || fail "$* --help lists no flags"
    for b in $blocks; do
        sed -n "/^<!-- generated: bigbatch help --markdown $b -->/,/^<!-- end generated -->/p" docs/cli.md
    done >"$TMP/block"
    while read -r f; do grep -q "^| \`$f[ \`]" "$TMP/block" || fail "docs/cli.md's $t table lacks the flag $f"; done <"$TMP/flags"
done

# A planted difference inside a block fails and names the page; regenerating restores it;
# text outside the blocks is the page's own.
cp docs/engine.md "$TMP/engine.md"
sed 's/^| apex | larc |\(.*\)| 0.02 |/| apex | larc |\1| 0.03 |/' docs/engine.md >"$TMP/engine.md"
! cmp -s docs/engine.md "$TMP/engine.md" || fail "the planted change did not take"
expect_exit 1 env BB="$BB" sh docs/regenerate.sh --check "$TMP/engine.md"
expect_output "$TMP/engine.md: a generated block differs"
expect_exit 0 env BB="$BB" sh docs/regenerate.sh "$TMP/engine.md"
cmp -s docs/engine.md "$TMP/engine.md" || fail "regenerating did not restore the page"
printf 'a line of its own\n' >>"$TMP/engine.md"
# so does a stale row of any command's table (here sweep's --workers default)
sed 's/^| `--workers N` | runs at once in this process (1 to 65536) | 1 |$/| `--workers N` | runs at once in this process (1 to 65536) | 2 |/' docs/cli.md >"$TMP/cli.md"
! cmp -s docs/cli.md "$TMP/cli.md" || fail "the planted change to sweep's table did not take"
expect_exit 1 env BB="$BB" sh docs/regenerate.sh --check "$TMP/cli.md"
expect_output "$TMP/cli.md: a generated block differs"
expect_exit 0 env BB="$BB" sh docs/regenerate.sh --check "$TMP/engine.md"
# a block never ended, or a topic the binary does not know, fails
printf '<!-- generated: bigbatch help --markdown presets -->\n' >"$TMP/open.md"
expect_exit 1 env BB="$BB" sh docs/regenerate.sh --check "$TMP/open.md"
expect_output "is never ended"
printf '<!-- generated: bigbatch help --markdown nothing -->\n<!-- end generated -->\n' >"$TMP/bad.md"
expect_exit 1 env BB="$BB" sh docs/regenerate.sh --check "$TMP/bad.md"
expect_output "'nothing' is not one of"
exit 0
