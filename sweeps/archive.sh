#!/bin/bash
# Keeps results databases in git as SQL text: `save` dumps results/<name>.db to
# results/archive/<name>.sql.gz, `load` rebuilds results/<name>.db from it. The databases
# themselves are git-ignored (binary, rewritten by every run); the dumps let a fresh clone
# regenerate docs/results.md and its figures from the measured data, and let a sweep that outlives one
# machine resume on another (a run left `running` in a dump goes stale and is rerun).
#
#   sweeps/archive.sh save [--results DIR] [--archive DIR] [NAME...]   (default: every DIR/*.db)
#   sweeps/archive.sh load [--results DIR] [--archive DIR] [--force] [NAME...]
#
# load keeps an existing database unless --force. Both write to a temporary file and rename
# it, so an interrupted or failed save or load leaves the old file (or none), never half a file.
set -euo pipefail

usage() {
    echo "usage: $0 save|load [--results DIR] [--archive DIR] [--force] [NAME...]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
action=$1; shift
case "$action" in save|load) ;; *) usage ;; esac
results=results
archive=
force=0
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --results) [ $# -ge 2 ] || usage; results=$2; shift 2 ;;
        --archive) [ $# -ge 2 ] || usage; archive=$2; shift 2 ;;
        --force) force=1; shift ;;
        -*) echo "$0: unknown option $1" >&2; usage ;;
        *) names+=("$1"); shift ;;
    esac
done
archive=${archive:-$results/archive}
command -v sqlite3 >/dev/null || { echo "$0: sqlite3 not found (make deps installs it)" >&2; exit 1; }

# The file being written; removed on failure here and, if the script dies, on exit. A failed
# name must drop its own: the next name reuses the variable.
tmp=
drop_tmp() { [ -z "$tmp" ] || rm -f "$tmp"; tmp=; }
trap drop_tmp EXIT

# stamp DB: when every run of DB was made by this checkout's engine (runs.engine_version is
# `bigbatch version`'s), record its numerics fingerprint in DB's meta (bigbatch fingerprint
# --db), so that the archive says which numerics made it; a database of other engines' runs is
# left as it is (no fingerprint can be had for an engine that is gone).
BB=${BB:-bin/bigbatch}
stamp() {
    [ -x "$BB" ] || return 0
    local ours made
    ours=$("$BB" version | sed -n 's/^bigbatch \([^ ]*\) .*/\1/p')
    made=$(sqlite3 "$1" "select group_concat(v) from (select distinct engine_version v from runs where status not in ('pending','stale','running'))")
    [ -n "$ours" ] && [ "$made" = "$ours" ] || return 0
    "$BB" fingerprint --db "$1" >/dev/null && echo "stamped $1 with $ours's numerics fingerprint"
}

save_one() {
    local db=$results/$1.db out=$archive/$1.sql.gz
    [ -f "$db" ] || { echo "$0: $db: no such database" >&2; return 1; }
    stamp "$db" || { echo "$0: $db: cannot record the numerics fingerprint" >&2; return 1; }
    mkdir -p "$archive"
    tmp=$out.tmp
    # .dump reads in one transaction: a consistent copy even while a sweep writes.
    if ! sqlite3 -bail "$db" .dump | gzip -n -9 > "$tmp"; then
        echo "$0: $db: dump failed; $out left as it was" >&2
        drop_tmp
        return 1
    fi
    mv -f "$tmp" "$out"; tmp=
    echo "saved $db -> $out ($(du -h "$out" | cut -f1))"
}

load_one() {
    local in=$archive/$1.sql.gz db=$results/$1.db
    [ -f "$in" ] || { echo "$0: $in: no such archive" >&2; return 1; }
    if [ -e "$db" ] && [ "$force" -eq 0 ]; then
        echo "kept $db (exists; --force replaces it)"
        return 0
    fi
    mkdir -p "$results"
    tmp=$db.load-tmp
    rm -f "$tmp"
    if ! gunzip -c "$in" | sqlite3 -bail "$tmp"; then
        echo "$0: $in: cannot be loaded (corrupt archive?); $db left as it was" >&2
        drop_tmp
        return 1
    fi
    if [ "$(sqlite3 "$tmp" 'pragma integrity_check')" != ok ]; then
        echo "$0: $in: loaded database fails integrity_check; $db left as it was" >&2
        drop_tmp
        return 1
    fi
    rm -f "$db-wal" "$db-shm"
    mv -f "$tmp" "$db"; tmp=
    echo "loaded $in -> $db"
}

if [ ${#names[@]} -eq 0 ]; then
    if [ "$action" = save ]; then glob=("$results"/*.db); suffix=.db
    else glob=("$archive"/*.sql.gz); suffix=.sql.gz; fi
    for f in "${glob[@]}"; do [ -f "$f" ] && names+=("$(basename "$f" "$suffix")"); done
    [ ${#names[@]} -gt 0 ] || { echo "$action: nothing to do"; exit 0; }
fi
status=0
for n in "${names[@]}"; do
    "${action}_one" "$n" || status=1
done
exit $status
