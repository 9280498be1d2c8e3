# Shared by the CLI tests: the binary, a scratch directory and assertions.
BB=${BB:-bin/bigbatch}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# expect_exit CODE CMD...: runs CMD, checks its exit status, keeps output in $TMP/out
expect_exit() {
    want=$1; shift
    "$@" >"$TMP/out" 2>&1
    got=$?
    [ "$got" -eq "$want" ] || { cat "$TMP/out"; fail "exit $got, expected $want: $*"; }
}
expect_output() { grep -q -- "$1" "$TMP/out" || { cat "$TMP/out"; fail "output lacks '$1'"; }; }
