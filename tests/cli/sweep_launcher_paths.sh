#!/bin/sh
# sweep --ranks 2 starts mpirun with an argument vector, never a shell: a data root and a
# database path holding spaces, quotes, $() and backticks arrive intact (the runs read the
# data and the sweep writes the database there) and nothing in them is executed.
. tests/cli/lib.inc
FASHION=/usr/share/datasets/fashion-mnist
[ -d "$FASHION" ] || { echo "skipped: $FASHION missing (make deps)"; exit 77; }
weird="$TMP/it's a \"dir\" \$(touch $TMP/dollar) \`touch $TMP/backtick\`;touch $TMP/semi"
mkdir -p "$weird/data" || fail "mkdir"
for f in "$FASHION"/*; do ln -s "$f" "$weird/data/" || fail "ln"; done
cat > "$TMP/exp.ini" <<INI
[experiment]
name = launcher-paths
[train]
model = lenet
data-root = $weird/data
train-subset = 256
test-subset = 100
epochs = 1
batch = 64
INI
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$weird/m.db" --ranks 2 --threads 1
expect_done 1 0 0 0
[ -f "$weird/m.db" ] || fail "the database is not at the path given"
grep -q "x 2 ranks" "$weird"/m.logs/*.log || fail "the run was not under mpirun"
for marker in dollar backtick semi; do
    [ ! -e "$TMP/$marker" ] || fail "a path's $marker part was executed"
done
# an empty launcher is refused before anything runs
expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/e.db" --ranks 2 --mpirun "  "
expect_output "mpirun"
[ ! -e "$TMP/e.db" ] || fail "a refused sweep created its database"
exit 0
