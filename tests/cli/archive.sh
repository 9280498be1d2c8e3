#!/bin/sh
# sweeps/archive.sh: a database saved as SQL text and loaded back gives the same report and
# the same rows; saving stamps the numerics fingerprint where every run is this engine's, and
# only there; load keeps an existing database; a corrupt archive is refused, naming the file,
# and leaves no database behind.
. tests/cli/lib.inc
cat > "$TMP/exp.ini" <<'INI'
[experiment]
name = archive-test
title = Archive test
[train]
model = lenet
data = fashion-mnist
train-subset = 256
test-subset = 100
epochs = 1
layer-stats = true
[grid]
batch = 128
lr = 0.05, 80
INI
expect_exit 0 "$BB" sweep "$TMP/exp.ini" --db "$TMP/a/archive-test.db" --workers 1
expect_exit 0 sweeps/archive.sh save --results "$TMP/a" --archive "$TMP/arch"
expect_output "saved $TMP/a/archive-test.db -> $TMP/arch/archive-test.sql.gz"
# every run is this engine's: the archive records its numerics fingerprint
expect_output "stamped $TMP/a/archive-test.db with .*'s numerics fingerprint"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/a/archive-test.db"
grep -v '^Experiment' "$TMP/out" > "$TMP/report-a"
grep -q "numerics fingerprint [0-9a-f]\{16\} (" "$TMP/report-a" || fail "the report does not show the fingerprint"
expect_exit 0 sweeps/archive.sh load --results "$TMP/b" --archive "$TMP/arch"
expect_output "loaded"
expect_exit 0 "$BB" report "$TMP/exp.ini" --db "$TMP/b/archive-test.db"
grep -v '^Experiment' "$TMP/out" > "$TMP/report-b"
grep -q '| 80 |' "$TMP/report-b" || fail "report lacks the LR 80 row"
cmp -s "$TMP/report-b" "$TMP/report-a" || { diff "$TMP/report-a" "$TMP/report-b"; fail "report differs after save+load"; }
for t in runs epochs steps experiment_runs layer_stats; do
    sqlite3 "$TMP/a/archive-test.db" "select * from $t" | sort > "$TMP/$t-a" || fail "read $t"
    sqlite3 "$TMP/b/archive-test.db" "select * from $t" | sort > "$TMP/$t-b" || fail "read $t after load"
    [ -s "$TMP/$t-a" ] || fail "table $t is empty"
    cmp -s "$TMP/$t-a" "$TMP/$t-b" || fail "table $t differs after save+load"
done
[ "$(sqlite3 "$TMP/b/archive-test.db" "select count(*) from runs where status='diverged'")" = 1 ] || fail "diverged run lost"
# a database holding another engine's runs is saved without a fingerprint
mkdir -p "$TMP/other" && cp "$TMP/a/archive-test.db" "$TMP/other/archive-test.db"
sqlite3 "$TMP/other/archive-test.db" "update runs set engine_version='0.1.0+0123456789ab' where rowid=1; delete from meta where key like '%fingerprint%'"
expect_exit 0 sweeps/archive.sh save --results "$TMP/other" --archive "$TMP/arch-other"
grep -q "stamped" "$TMP/out" && fail "another engine's runs were stamped with today's fingerprint"
# An existing database is kept unless --force.
expect_exit 0 sweeps/archive.sh load --results "$TMP/b" --archive "$TMP/arch" archive-test
expect_output "kept $TMP/b/archive-test.db"
# A corrupt archive: non-zero exit naming it, no database left, the old one untouched.
printf 'not gzip' > "$TMP/arch/broken.sql.gz"
expect_exit 1 sweeps/archive.sh load --results "$TMP/c" --archive "$TMP/arch" broken
expect_output "$TMP/arch/broken.sql.gz: cannot be loaded"
ls "$TMP/c" 2>/dev/null | grep -q . && fail "a corrupt archive left files: $(ls "$TMP/c")"
# ... also when it fails halfway (valid gzip, a bad statement after a good one) and a later
# name loads: the failed one's temporary database is gone, the good one loaded
printf 'CREATE TABLE t(x);\nINSERT INTO missing VALUES(1);\n' | gzip > "$TMP/arch/half.sql.gz"
expect_exit 1 sweeps/archive.sh load --results "$TMP/c" --archive "$TMP/arch" half archive-test
expect_output "$TMP/arch/half.sql.gz: cannot be loaded"
expect_output "loaded $TMP/arch/archive-test.sql.gz"
[ "$(ls "$TMP/c")" = archive-test.db ] || fail "files after a mixed load: $(ls "$TMP/c")"
expect_exit 1 sweeps/archive.sh save --results "$TMP/a" --archive "$TMP/arch" missing
expect_output "$TMP/a/missing.db: no such database"
expect_exit 2 sweeps/archive.sh list
exit 0
