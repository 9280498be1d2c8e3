#!/bin/sh
# `bigbatch report FILE --html DIR` in a real browser: Debian's chromium, headless, opens the
# page of two archived experiments and must find the tables, the figures as inline SVG, a
# loss curve per run, the layer ratios, no console message, and a sort by a column applied by
# the page's own script (#sort=T,C,dir). It saves a screenshot. `report --all --html` writes
# an index linking every page. Skipped, saying why, where chromium is not installed.
. tests/cli/lib.inc
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null 2>&1 || { echo "skipped: no $CHROMIUM (make deps installs Debian's chromium)"; exit 77; }
first_row() { # the first table's first row, as text
    tr -d '\n' < "$TMP/dom" | sed 's/<\/tr>/&\n/g' | grep -m1 '<td>' | sed 's/<[^>]*>/ /g'
}
browse() { # browse URL OUT: the DOM after the scripts ran, console messages into OUT.log
    timeout 120 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --enable-logging=stderr --v=0 \
        --user-data-dir="$TMP/profile" --window-size=1280,2400 "$@" >"$TMP/dom" 2>"$TMP/browser.log"
}
mkdir -p "$TMP/r"
expect_exit 0 sweeps/archive.sh load --results "$TMP/r" --archive results/archive lars-vs-linear-scaling layer-ratios
expect_exit 0 "$BB" report experiments/lars-vs-linear-scaling.ini --db "$TMP/r/lars-vs-linear-scaling.db" --html "$TMP/html"
expect_output "$TMP/html/lars-vs-linear-scaling.html"
page="$TMP/html/lars-vs-linear-scaling.html"
[ -f "$page" ] || fail "no page written"
ls "$TMP/html" | grep -q 'part\|fig-' && fail "scratch files left in $TMP/html: $(ls "$TMP/html")"

# Sorted by test_acc (column 4 of the first table), highest first: LARS at 128 would be second.
browse --dump-dom "file://$page#sort=0,4,desc" || fail "chromium failed: $(tail -3 "$TMP/browser.log")"
grep -q 'CONSOLE' "$TMP/browser.log" && { grep CONSOLE "$TMP/browser.log"; fail "the page wrote to the console"; }
grep -q 'data-sortable-tables="' "$TMP/dom" || fail "the page's script did not run"
tables=$(grep -o '<table' "$TMP/dom" | wc -l)
[ "$tables" -eq 3 ] || fail "$tables tables, expected 3 (cells, the paper's, runs)"
svgs=$(grep -o '<svg' "$TMP/dom" | wc -l)
[ "$svgs" -eq 25 ] || fail "$svgs inline SVGs, expected 25 (2 figures + 23 loss curves: one run diverged before its first epoch ended)"
runs=$(grep -o '<section class="run"' "$TMP/dom" | wc -l)
[ "$runs" -eq 24 ] || fail "$runs run sections, expected 24 (8 cells, 3 seeds)"
first=$(first_row)
echo "$first" | grep -q '0\.9128' || fail "first row after sorting by test_acc is not the best (0.9128): $first"
browse --dump-dom "file://$page#sort=0,4,asc"
first=$(first_row)
echo "$first" | grep -q '0\.7620' || fail "first row sorting ascending is not the lowest number (0.7620): $first"
grep -q 'class="asc"' "$TMP/dom" || fail "the sorted column is not marked"
browse --screenshot="$TMP/report.png" "file://$page"
[ "$(head -c 8 "$TMP/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG screenshot"
[ "$(wc -c < "$TMP/report.png")" -gt 50000 ] || fail "the screenshot is nearly empty"

# Layer ratios: one table per run after the first step, a row per parameter.
expect_exit 0 "$BB" report experiments/layer-ratios.ini --db "$TMP/r/layer-ratios.db" --html "$TMP/html"
browse --dump-dom "file://$TMP/html/layer-ratios.html"
grep -q 'CONSOLE' "$TMP/browser.log" && fail "the layer-ratios page wrote to the console"
grep -q 'Layer statistics after the first step' "$TMP/dom" || fail "no layer ratio table"
grep -q '<td>conv1.weight</td>' "$TMP/dom" || fail "the ratio table lacks conv1.weight"

# The index of report --all --html, and a bad --html folder.
expect_exit 0 "$BB" report --all --out "$TMP/docs" --html "$TMP/all"
[ "$(grep -c '<section><h2><a href=' "$TMP/all/index.html")" -eq "$(ls results/archive/*.sql.gz | wc -l)" ] ||
    fail "index.html does not link every archived experiment"
# a dashboard: each experiment's data source, its runs' states, its headline table and a thumbnail
[ "$(grep -c 'class="thumb"' "$TMP/all/index.html")" -ge 10 ] || fail "index.html lacks the figures' thumbnails"
grep -q '<b>Runs:</b> [0-9]* complete, [0-9]* collapsed, [0-9]* diverged, 0 failed' "$TMP/all/index.html" ||
    fail "index.html lacks the demo's run states"
grep -q 'from <code>results/archive/lars-vs-linear-scaling.sql.gz</code>' "$TMP/all/index.html" || fail "index.html does not name its data"
for link in $(grep -o 'href="[^"]*"' "$TMP/all/index.html" | sed 's/href="//; s/"//'); do
    [ -f "$TMP/all/$link" ] || fail "index.html links $link, which is not there"
done
touch "$TMP/file"
expect_exit 1 "$BB" report experiments/layer-ratios.ini --db "$TMP/r/layer-ratios.db" --html "$TMP/file/sub"
expect_output "$TMP/file"
exit 0
