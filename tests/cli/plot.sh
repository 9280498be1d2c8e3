#!/bin/sh
# `bigbatch plot` draws every figure kind of a small swept experiment as PNG and SVG, with data
# files of the expected size; a missing database, an unswept scale and a missing gnuplot are
# clear errors.
. tests/cli/lib.inc
command -v gnuplot >/dev/null || fail "gnuplot is not installed (make deps installs gnuplot-nox)"
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = plot-test
title = Plot test
tuned = lr
figures = accuracy-vs-batch, heatmap, loss-curves, steps-to-target, layer-ratios
target = 0.2
[train]
model = lenet
data = fashion-mnist
train-subset = 512
test-subset = 200
epochs = 2
momentum = 0.9
layer-stats-every = 2
[grid]
opt = sgd, lars
batch = 64, 128
lr = 0.05, 80
[paper]
columns = opt, batch, test_acc
row = sgd, 64, 0.5
row = lars, 128, diverged
INI
DB="$TMP/r/plot.db"
OUT="$TMP/fig"
# Errors first: no database, no sweep at that scale, no gnuplot.
expect_exit 1 "$BB" plot "$TMP/exp.ini" --db "$TMP/none.db" --out "$OUT"
expect_output "no results database $TMP/none.db"
expect_output "bigbatch sweep"
[ ! -e "$OUT" ] || fail "a failed plot created $OUT"
expect_exit 2 "$BB" plot "$TMP/exp.ini" --format jpg
expect_output "not png, svg or both"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 1 --quiet
expect_exit 1 "$BB" plot "$TMP/exp.ini" --db "$DB" --scale smoke --out "$OUT"
expect_output "no sweep of plot-test at the smoke scale"
expect_exit 1 "$BB" plot "$TMP/exp.ini" --db "$DB" --out "$OUT" --gnuplot "$TMP/no-gnuplot"
expect_output "install gnuplot-nox"

expect_exit 0 "$BB" plot "$TMP/exp.ini" --db "$DB" --out "$OUT"
for k in accuracy-vs-batch heatmap loss-curves steps-to-target layer-ratios; do
    expect_output "$OUT/$k.png"
    png="$OUT/$k.png" svg="$OUT/$k.svg"
    [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
    grep -q "<svg" "$svg" || fail "$svg is not an SVG"
    [ "$(wc -c < "$png")" -gt 2048 ] || fail "$png is under 2 KB"
    [ "$(wc -c < "$svg")" -gt 2048 ] || fail "$svg is under 2 KB"
    [ -s "$OUT/$k.vars.gp" ] || fail "no $k.vars.gp"
done
rows() { grep -cv '^#\|^$' "$1"; }
# 2 optimizers x 2 batch sizes, each the best over lr (or diverged)
[ "$(rows "$OUT/accuracy-vs-batch.dat")" = 4 ] || { cat "$OUT/accuracy-vs-batch.dat"; fail "accuracy-vs-batch rows"; }
[ "$(rows "$OUT/accuracy-vs-batch-paper.dat")" = 2 ] || fail "paper rows"
grep -q "diverged" "$OUT/accuracy-vs-batch-paper.dat" || fail "the paper's diverged row"
# every cell: 2 x 2 x 2; SGD at lr 80 diverges
[ "$(rows "$OUT/heatmap.dat")" = 8 ] || { cat "$OUT/heatmap.dat"; fail "heatmap rows"; }
grep -q '"div" diverged' "$OUT/heatmap.dat" || { cat "$OUT/heatmap.dat"; fail "no diverged cell in the heatmap"; }
grep -q "# panel 2: opt=lars" "$OUT/heatmap.dat" || fail "heatmap panels"
# the best cell of each of the 4 groups, 2 epochs each
[ "$(rows "$OUT/loss-curves.dat")" = 8 ] || { cat "$OUT/loss-curves.dat"; fail "loss-curves rows"; }
# opt x batch: a panel per optimizer, a colour per batch that is the same in both
grep -q '^npanels = 2$' "$OUT/loss-curves.vars.gp" || { cat "$OUT/loss-curves.vars.gp"; fail "loss-curves panels"; }
grep -q "^array ptitle\[2\] = \['opt=sgd', 'opt=lars'\]" "$OUT/loss-curves.vars.gp" || fail "loss-curves panel titles"
grep -q '^array scolor\[4\] = \[1, 2, 1, 2\]' "$OUT/loss-curves.vars.gp" || { cat "$OUT/loss-curves.vars.gp"; fail "loss-curves colours"; }
# LeNet's 10 parameter tensors per line; the optimizer and lr do not change step 0: one line per batch
[ "$(rows "$OUT/layer-ratios.dat")" = 20 ] || { cat "$OUT/layer-ratios.dat"; fail "layer-ratios rows"; }
grep -q '^0 [0-9.e+-]* weight "conv1.weight"' "$OUT/layer-ratios.dat" || fail "layer-ratios columns"
n=$(rows "$OUT/steps-to-target.dat")
[ "$n" -ge 1 ] && [ "$n" -le 4 ] || { cat "$OUT/steps-to-target.dat"; fail "steps-to-target rows"; }
# the steps are epoch ends: multiples of 512/64 = 8 or 512/128 = 4
awk '!/^#/ && NF { if ($2 % 4) exit 1 }' "$OUT/steps-to-target.dat" || fail "steps-to-target steps"

# [paper] scales = full: at this scale the paper's rows are drawn in a panel of their own
grep -q '^beside = 0' "$OUT/accuracy-vs-batch.vars.gp" || fail "the paper's rows that apply are not on our axes"
sed -e 's/^name = plot-test/name = plot-beside/' -e 's/^\[paper\]/[paper]\nscales = full\nwhat = LeNet elsewhere/' \
    "$TMP/exp.ini" > "$TMP/beside.ini"
n_runs=$(sqlite3 "$DB" "select count(*) from runs")
expect_exit 0 "$BB" sweep "$TMP/beside.ini" --db "$DB" --workers 1 --quiet
[ "$(sqlite3 "$DB" "select count(*) from runs")" = "$n_runs" ] || fail "the same cells ran again"
expect_exit 0 "$BB" plot "$TMP/beside.ini" --db "$DB" --out "$TMP/beside"
grep -q '^beside = 1' "$TMP/beside/accuracy-vs-batch.vars.gp" || fail "no panel of the paper's own"
grep -q "^papertitle = 'the paper: LeNet elsewhere'" "$TMP/beside/accuracy-vs-batch.vars.gp" || fail "[paper] what"
[ "$(rows "$TMP/beside/accuracy-vs-batch-paper.dat")" = 2 ] || fail "paper rows beside"
[ "$(wc -c < "$TMP/beside/accuracy-vs-batch.png")" -gt 2048 ] || fail "two-panel PNG"

# --eval-every: steps to the target from evaluations within epochs, at their own step
sed -e 's/^name = plot-test/name = plot-evals/' -e 's/^title = Plot test/title = Plot test with a title as long as those of the papers, which would run off the right edge of the figure/' -e 's/^epochs = 2/epochs = 2\neval-every = 1/' \
    -e 's/^opt = sgd, lars/opt = sgd/' -e 's/^batch = 64, 128/batch = 64/' -e "s/^lr = 0.05, 80/lr = 0.05/" -e "s/^target = 0.2/target = 0.15/" \
    -e '/^\[paper\]/,$d' "$TMP/exp.ini" > "$TMP/evals.ini"
expect_exit 0 "$BB" sweep "$TMP/evals.ini" --db "$TMP/evals.db" --workers 1 --quiet
expect_exit 0 "$BB" plot "$TMP/evals.ini" --db "$TMP/evals.db" --out "$TMP/evfig" --format svg
# (and no [paper] rows: the paper's empty panel still gets a finite x range)
grep -q '^pxmin = 1$' "$TMP/evfig/accuracy-vs-batch.vars.gp" || fail "no paper rows: x range"
# a long title is broken at spaces into lines that fit the figure's 960 pixels
grep -q "^figtitle = 'Plot test with a title as long as .*'\.\"\\\\n\"\.'.*(proxy scale)'$" "$TMP/evfig/steps-to-target.vars.gp" ||
    { grep title "$TMP/evfig/steps-to-target.vars.gp"; fail "long title not wrapped"; }
grep '^figtitle' "$TMP/evfig/steps-to-target.vars.gp" | sed 's/^figtitle = //; s/\."\\n"\./\n/g' |
    awk '{ if (length($0) > 94) exit 1 }' || fail "a title line is longer than the figure"
[ "$(sqlite3 "$TMP/evals.db" "select count(*) from evals")" = 14 ] || fail "not 7 evaluations per epoch of 8 steps"
want=$(sqlite3 "$TMP/evals.db" "select min(step) from (select step, test_acc from epochs union all
    select step, test_acc from evals) where test_acc >= 0.15")
[ -n "$want" ] && [ $((want % 8)) -ne 0 ] || fail "the target ($want) is not reached within an epoch: the check below proves nothing"
got=$(awk '!/^#/ && NF { print $2 }' "$TMP/evfig/steps-to-target.dat")
[ "$got" = "$want" ] || { cat "$TMP/evfig/steps-to-target.dat"; fail "steps to target $got, expected $want"; }

# --format svg: only SVG; the scripts draw again standalone from the files.
expect_exit 0 "$BB" plot "$TMP/exp.ini" --db "$DB" --out "$TMP/svg" --format svg
[ -f "$TMP/svg/heatmap.svg" ] && [ ! -e "$TMP/svg/heatmap.png" ] || fail "--format svg"
gnuplot -e "dir='$TMP/svg'; fmt='png'; out='$TMP/again.png'" plots/heatmap.gp >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "standalone script"; }
[ -s "$TMP/again.png" ] || fail "standalone script wrote nothing"

# an output folder whose name holds a quote reaches gnuplot quoted ('' inside '...')
expect_exit 0 "$BB" plot "$TMP/exp.ini" --db "$DB" --out "$TMP/it's here" --format png
[ -s "$TMP/it's here/heatmap.png" ] || { cat "$TMP/out"; fail "a quote in the output folder"; }
exit 0
