#!/bin/sh
# A SQLite file that is not a bigbatch database (tables, but no bigbatch meta) is refused by
# every command that opens a store, naming the file, and left byte for byte as it was: no
# tables added, no switch to WAL.
. tests/cli/lib.inc
command -v sqlite3 > /dev/null || { echo "skipped: no sqlite3"; exit 77; }
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = foreign
[train]
model = lenet
train-subset = 256
test-subset = 100
steps = 1
INI
F="$TMP/theirs.db"
sqlite3 "$F" "create table notes(id integer primary key, text); insert into notes(text) values ('mine')" ||
    fail "sqlite3"
sum=$(md5sum < "$F")
unchanged() {
    [ "$(md5sum < "$F")" = "$sum" ] || fail "$1 changed the file: $(sqlite3 "$F" .schema; sqlite3 "$F" 'pragma journal_mode')"
    [ ! -e "$F-wal" ] || fail "$1 left a WAL beside it"
}
refused() { # exit status, what, command...
    want=$1 what=$2; shift 2
    expect_exit "$want" "$@"
    expect_output "theirs.db: not a bigbatch results database"
    unchanged "$what"
}
refused 1 sweep "$BB" sweep "$TMP/exp.ini" --db "$F" --threads 1
refused 1 "sweep --dry-run" "$BB" sweep "$TMP/exp.ini" --db "$F" --dry-run
refused 1 "sweep --print-sbatch" "$BB" sweep "$TMP/exp.ini" --db "$F" --launcher slurm --print-sbatch
refused 1 runs "$BB" runs --db "$F"
refused 1 report "$BB" report "$TMP/exp.ini" --db "$F"
refused 1 "train --db" "$BB" train --model lenet --train-subset 256 --test-subset 100 --steps 1 --threads 1 --db "$F"
refused 1 "merge (output)" "$BB" merge "$F" "$TMP/none.db"
# as merge's input, against a real database
expect_exit 0 "$BB" train --model lenet --train-subset 256 --test-subset 100 --steps 1 --threads 1 --db "$TMP/ours.db"
refused 1 "merge (input)" "$BB" merge "$TMP/ours.db" "$F"
# an empty file is a new database, as a missing one is
: > "$TMP/empty.db"
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/empty.db" --dry-run
expect_output "not created yet"
expect_exit 0 "$BB" train --model lenet --train-subset 256 --test-subset 100 --steps 1 --threads 1 --db "$TMP/empty.db"
exit 0
