#!/bin/sh
# The numerics fingerprint: the same on every call, and today's engine's equals the one the demo
# archive recorded. When it does not, the engine's arithmetic changed (a kernel sums in another
# order, a path rounds differently): re-run and re-archive the demo in the same change
# (`make demo-archive`), so that the archive, docs/results.md and the README's numbers are what
# today's engine makes. Skipped on a platform other than the one the archive was made on.
. tests/cli/lib.inc
expect_exit 0 "$BB" fingerprint
now=$(cat "$TMP/out")
expect_exit 0 "$BB" fingerprint
[ "$(cat "$TMP/out")" = "$now" ] || fail "two fingerprints differ: $now / $(cat "$TMP/out")"
zcat results/archive/lars-vs-linear-scaling.sql.gz | sqlite3 "$TMP/demo.db" || fail "cannot restore the demo archive"
meta() { sqlite3 "$TMP/demo.db" "select value from meta where key='$1'"; }
recorded=$(meta numerics_fingerprint)
platform=$(meta fingerprint_platform)
[ -n "$recorded" ] || fail "the demo archive records no numerics fingerprint (make demo-archive stamps it)"
set -- $now
if [ "$2" != "$platform" ]; then
    echo "skipped: the demo archive was made on $platform, this machine is $2"
    exit 77
fi
[ "$1" = "$recorded" ] || fail "today's engine's numerics fingerprint $1 differs from the demo archive's $recorded \
(made by $(meta engine_version)): re-run and re-archive the demo with make demo-archive"
# stamping a database records it there
expect_exit 0 "$BB" fingerprint --db "$TMP/new.db"
[ "$(sqlite3 "$TMP/new.db" "select value from meta where key='numerics_fingerprint'")" = "$1" ] || fail "not stamped"
exit 0
