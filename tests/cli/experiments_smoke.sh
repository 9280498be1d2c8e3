#!/bin/sh
# Every experiment file (experiments/*.ini) loads at the smoke, proxy and full scales (--dry-run),
# its smoke scale runs to the end (diverged and collapsed runs are results, failed ones are not), its report
# prints the table under the experiment's title, and every figure it names is drawn. The smoke
# scales use Fashion-MNIST or synthetic data only, so this needs no CIFAR-10 and no ImageNet (the
# full scales' data-root is only named).
# One training process at a time (the sweep default: one worker with every core).
. tests/cli/lib.inc
n=0
for f in experiments/*.ini; do
    name=$(basename "$f" .ini)
    title=$(sed -n 's/^title *[=:] *//p' "$f" | head -n 1)
    [ -n "$title" ] || fail "$f has no title"
    for scale in smoke proxy full; do
        expect_exit 0 "$BB" sweep "$f" --scale "$scale" --dry-run --db "$TMP/$name-$scale.db"
        expect_output "($scale scale): [0-9]* runs"
        [ ! -e "$TMP/$name-$scale.db" ] || fail "$f: a dry run at the $scale scale created a database"
    done
    db="$TMP/$name.db"
    expect_exit 0 "$BB" sweep "$f" --scale smoke --db "$db" --quiet
    [ "$(sqlite3 "$db" "select count(*) from runs where status not in ('complete', 'diverged', 'collapsed')")" = 0 ] \
        || fail "$f: smoke runs not complete: $(sqlite3 "$db" "select id, status, error from runs")"
    [ "$(sqlite3 "$db" "select count(*) from runs where status in ('complete', 'collapsed')")" -gt 0 ] \
        || fail "$f: every smoke run diverged"
    expect_exit 0 "$BB" report "$f" --scale smoke --db "$db"
    grep -qxF "# $title" "$TMP/out" || { cat "$TMP/out"; fail "$f: the report lacks the title '# $title'"; }
    expect_output "^| .* | runs | "
    # Every figure the file names (if any) draws from its smoke sweep (gnuplot refuses a bad
    # script); only steps-to-target may be skipped, when no smoke cell reached the target.
    figures=$(sed -n 's/^figures *[=:] *//p' "$f" | head -n 1 | tr ',' ' ')
    if [ -n "$figures" ]; then
        "$BB" plot "$f" --scale smoke --db "$db" --out "$TMP/$name-fig" --format svg >"$TMP/out" 2>&1
        rc=$?
        for k in $figures; do
            [ -s "$TMP/$name-fig/$k.svg" ] && continue
            [ "$k" = steps-to-target ] && grep -q "steps-to-target skipped: no cell" "$TMP/out" && continue
            cat "$TMP/out"; fail "$f: no figure $k.svg"
        done
        [ "$rc" -eq 0 ] || grep -q "no figure drawn (nothing to show yet)" "$TMP/out" \
            || { cat "$TMP/out"; fail "$f: plot exited $rc"; }
    fi
    n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n experiment files"
exit 0
