#!/bin/sh
# sweep exits 2 for usage errors (flags, the experiment file) and 1 for run-time and data
# errors, as runs, report and train --db do: a malformed database, a database it cannot
# create, a full disk.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = exit-status
[train]
model = lenet
train-subset = 256
test-subset = 100
steps = 1
INI
# a malformed database: garbage where the file should be
head -c 4096 /dev/urandom > "$TMP/bad.db"
expect_exit 1 "$BB" sweep "$TMP/exp.ini" --db "$TMP/bad.db" --threads 1
expect_output "bad.db"
expect_exit 1 "$BB" runs --db "$TMP/bad.db"
# a database below a regular file: cannot be created
: > "$TMP/file"
expect_exit 1 "$BB" sweep "$TMP/exp.ini" --db "$TMP/file/x.db" --threads 1
expect_output "file/x.db"
# a full disk, where /dev/full is there to stand for one (every write fails with ENOSPC)
if [ -w /dev/full ]; then
    ln -s /dev/full "$TMP/full.db"
    expect_exit 1 "$BB" sweep "$TMP/exp.ini" --db "$TMP/full.db" --threads 1
fi
# usage errors keep 2
expect_exit 2 "$BB" sweep "$TMP/exp.ini" --db "$TMP/u.db" --workers 0
expect_exit 2 "$BB" sweep "$TMP/nope.ini" --db "$TMP/u.db"
exit 0
