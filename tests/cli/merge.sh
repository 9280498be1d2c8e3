#!/bin/sh
# bigbatch merge: two sweeps' databases (a grid split between two files, sharing one run) into
# one that reports the whole grid; the inputs untouched; a run finished in an input replaces an
# unfinished one; merging again changes nothing; two different results of one run are reported
# as a conflict (exit 1) and OUT's kept; a bad input is named and leaves OUT as it was.
. tests/cli/lib.inc
grid() { # grid FILE NAME LRS
    cat > "$1" <<INI
[experiment]
name = $2
[train]
model = lenet
train-subset = 512
test-subset = 200
epochs = 1
batch = 64
[grid]
lr = $3
INI
}
grid "$TMP/a.ini" merge-test "0.01, 0.02"
grid "$TMP/b.ini" merge-test "0.02, 0.05"
grid "$TMP/all.ini" merge-test "0.01, 0.02, 0.05"
expect_exit 0 "$BB" sweep "$TMP/a.ini" --db "$TMP/a.db" --threads 1
expect_exit 0 "$BB" sweep "$TMP/b.ini" --db "$TMP/b.db" --threads 1
sum_a=$(sqlite3 "$TMP/a.db" .dump | md5sum)
expect_exit 0 "$BB" merge "$TMP/out.db" "$TMP/a.db" "$TMP/b.db"
expect_output "$TMP/a.db: 2 runs added, 0 replaced, 0 the same"
expect_output "$TMP/b.db: 1 runs added, 0 replaced, 1 the same"
[ "$(sqlite3 "$TMP/a.db" .dump | md5sum)" = "$sum_a" ] || fail "merge changed an input"
ls "$TMP" | grep -q 'merge-' && fail "scratch files left: $(ls "$TMP")"
[ "$(sqlite3 "$TMP/out.db" "select count(*) from runs where status in $RESULT")" = 3 ] || fail "not 3 complete runs"
for t in epochs layer_stats attempts; do
    want=$(sqlite3 "$TMP/a.db" "select count(*) from $t")
    got=$(sqlite3 "$TMP/out.db" "attach '$TMP/a.db' as a; select count(*) from $t where run_id in (select id from a.runs)")
    [ "$got" = "$want" ] || fail "$t: $got rows for a.db's runs, a.db has $want"
done
# the whole grid reports from the merged file, every cell measured
expect_exit 0 "$BB" report "$TMP/all.ini" --db "$TMP/out.db" --format csv
[ "$(grep -c '^0\.0[125],1,1,[01],0,0,' "$TMP/out")" = 3 ] || { cat "$TMP/out"; fail "the merged report lacks a cell"; }
# again: nothing changes
expect_exit 0 "$BB" merge "$TMP/out.db" "$TMP/b.db"
expect_output "0 runs added, 0 replaced, 2 the same"
# an unfinished run in OUT is replaced by the input's finished one, rows and all
id=$(sqlite3 "$TMP/out.db" "attach '$TMP/a.db' as a; select id from runs where id not in (select id from a.runs)")
sqlite3 "$TMP/out.db" "update runs set status='stale', test_acc=null where id='$id'; delete from epochs where run_id='$id'"
expect_exit 0 "$BB" merge "$TMP/out.db" "$TMP/b.db"
expect_output "1 replaced"
[ "$(sqlite3 "$TMP/out.db" "select status from runs where id='$id'")" = "$(sqlite3 "$TMP/b.db" "select status from runs where id='$id'")" ] || fail "not replaced"
[ "$(sqlite3 "$TMP/out.db" "select count(*) from epochs where run_id='$id'")" = 1 ] || fail "its epochs not copied"
# two different finished results of one run: reported, OUT's kept, exit 1
cp "$TMP/b.db" "$TMP/c.db"
sqlite3 "$TMP/c.db" "update runs set test_acc=0.123 where id='$id'"
before=$(sqlite3 "$TMP/out.db" "select test_acc from runs where id='$id'")
expect_exit 1 "$BB" merge "$TMP/out.db" "$TMP/c.db"
expect_output "conflict: run $id differs between $TMP/out.db and $TMP/c.db"
expect_output "test_acc .* | 0.123  (difference "
expect_output "1 conflicts"
# values that differ in the 11th digit print differently, each column with its difference;
# the columns that agree are not listed
cp "$TMP/b.db" "$TMP/d.db"
sqlite3 "$TMP/d.db" "update runs set test_acc=test_acc+1e-11, steps=steps+5 where id='$id'"
expect_exit 1 "$BB" merge "$TMP/out.db" "$TMP/d.db"
line=$(grep "^    test_acc " "$TMP/out") || { cat "$TMP/out"; fail "no test_acc line"; }
case "$line" in *"(difference +1e-11)"*) ;; *) fail "no difference of 1e-11: $line" ;; esac
[ "$(echo "$line" | awk '{print ($2 != $4)}')" = 1 ] || fail "the two values print the same: $line"
expect_output "^    steps .*(difference +5)"
grep -q "^    test_loss\|^    status" "$TMP/out" && { cat "$TMP/out"; fail "a column that agrees is listed"; }
[ "$(sqlite3 "$TMP/out.db" "select test_acc from runs where id='$id'")" = "$before" ] || fail "a conflict replaced OUT's run"
# a bad input: named, exit 1, OUT unchanged
sum=$(sqlite3 "$TMP/out.db" .dump | md5sum)
printf 'not a database at all, just text that is long enough to have a header of sorts...' > "$TMP/bad.db"
expect_exit 1 "$BB" merge "$TMP/out.db" "$TMP/bad.db"
expect_output "$TMP/bad.db"
expect_exit 1 "$BB" merge "$TMP/out.db" "$TMP/none.db"
expect_output "$TMP/none.db: No such file"
[ "$(sqlite3 "$TMP/out.db" .dump | md5sum)" = "$sum" ] || fail "a failed merge changed OUT"
expect_exit 2 "$BB" merge "$TMP/out.db"
expect_exit 2 "$BB" merge "$TMP/out.db" --bogus
exit 0
