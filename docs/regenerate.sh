#!/bin/sh
# Regenerates the tables of docs/*.md that the program prints (`make docs`): each block
# between a line "<!-- generated: bigbatch ARGS -->" and the next "<!-- end generated -->"
# is replaced by the output of `$BB ARGS`. With --check nothing is written; the exit status
# is 1 when a block differs from what the binary prints now (tests/cli/docs_cli.sh).
BB=${BB:-bin/bigbatch}
check=0
[ "$1" = --check ] && { check=1; shift; }
[ $# -gt 0 ] || set -- $(grep -l '^<!-- generated: bigbatch ' docs/*.md)

# splice FILE: FILE with every generated block as the binary prints it now, on stdout
splice() {
    open=
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in
        "<!-- generated: bigbatch "*" -->")
            [ -z "$open" ] || { echo "$1: '$line' inside the block of '$open'" >&2; return 1; }
            printf '%s\n' "$line"
            open=$line
            args=${line#"<!-- generated: bigbatch "}
            # ARGS are words the binary reads, split at blanks (no shell sees them)
            $BB ${args%" -->"} || { echo "$1: '$BB ${args%" -->"}' failed" >&2; return 1; }
            ;;
        "<!-- end generated -->")
            [ -n "$open" ] || { echo "$1: an end marker without a start" >&2; return 1; }
            open=
            printf '%s\n' "$line"
            ;;
        *) [ -n "$open" ] || printf '%s\n' "$line" ;;
        esac
    done <"$1"
    [ -z "$open" ] || { echo "$1: '$open' is never ended" >&2; return 1; }
}

status=0
for doc; do
    new=$(mktemp) || exit 1
    if ! splice "$doc" >"$new"; then
        status=1
    elif cmp -s "$new" "$doc"; then
        :
    elif [ $check = 1 ]; then
        diff "$doc" "$new" | head -20
        echo "$doc: a generated block differs from what $BB prints (regenerate: make docs)" >&2
        status=1
    else
        cat "$new" >"$doc" && echo "$doc: regenerated"
    fi
    rm -f "$new"
done
exit $status
