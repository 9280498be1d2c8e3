#!/bin/sh
# Two sweeps on one database whose experiment file changed in between (a grid widened while
# the first still runs): the first keeps to its own grid. It used to take a run only the new
# grid has, stop with "claimed run ... is not in the expanded grid" and leave its running run
# stale (seen on optimizer-reality-check, 2026-12-07). Each sweep runs its own runs, each run
# once, and the first ends when its runs have, not when the second's have.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = sweep-grid-changed
[train]
model = lenet
train-subset = 4096
test-subset = 200
epochs = 3
batch = 64
[grid]
lr = 0.01
INI
DB="$TMP/g.db"
# two workers for one run: a free worker looks for work while the second sweep registers
"$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 2 --threads 1 > "$TMP/a.log" 2>&1 &
a=$!
i=0
until [ -n "$(run_pids "$DB")" ]; do
    i=$((i + 1)); [ $i -lt 600 ] || { kill $a; cat "$TMP/a.log"; fail "the first sweep's run never started"; }
    sleep 0.1
done
sed -i 's/^lr = 0.01$/lr = 0.01, 0.02, 0.05/' "$TMP/exp.ini"
"$BB" sweep "$TMP/exp.ini" --db "$DB" --workers 1 --threads 1 > "$TMP/b.log" 2>&1 &
b=$!
wait $a || { cat "$TMP/a.log"; fail "the first sweep failed once the grid changed"; }
# the second still has a run to go when the first is done (it waited for none of them)
kill -0 $b 2>/dev/null || { cat "$TMP/a.log" "$TMP/b.log"; fail "the first sweep waited for the second's runs"; }
wait $b || { cat "$TMP/b.log"; fail "the second sweep failed"; }
[ "$(grep -c ' start ' "$TMP/a.log")" = 1 ] || { cat "$TMP/a.log"; fail "the first sweep started other runs than its one"; }
[ "$(grep -c ' start ' "$TMP/b.log")" = 2 ] || { cat "$TMP/b.log"; fail "the second sweep did not start its two new runs"; }
expect_done 1 0 0 0 "$TMP/a.log"
expect_done 3 0 0 0 "$TMP/b.log"
[ "$(sqlite3 "$DB" "select count(*) from runs where status in $RESULT and attempt=1")" = 3 ] \
    || fail "runs: $(sqlite3 "$DB" 'select id, status, attempt from runs')"
exit 0
