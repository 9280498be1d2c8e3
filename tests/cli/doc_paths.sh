# Docs and code comments name only files that exist. Every path under one of the
# repository's folders (engine/x.c, docs/y.md, bench/results/z.txt) in the docs (README.md,
# docs/*.md, experiments/*.md, plots/README.md, results/SCHEMA.md) and in the tracked code,
# scripts and experiment files must exist; so must the file of a bare name (lars.c) in a C
# comment, somewhere in the tree. Placeholders in capitals (experiments/FILE.ini) and the files
# the build or `report --all` writes (GENERATED) are let through. Then no file but the test
# suite's fixture setting (tests/cli/lib.inc) names ../shared, a folder a clone lacks (the
# facts it held are docs/papers.md). Each check is run on a copy with a violation planted.
. tests/cli/lib.inc
GENERATED="commit.h docs/headline.md"
DIRS="engine|sweeps|cli|tests|docs|bench|experiments|plots|results|fuzz"
EXT="c|h|cu|cuh|md|sh|inc|py|ini|in|txt|csv|png|svg|json|html"

# missing ROOT: prints "FILE:LINE: PATH" for each path named under ROOT that does not exist
missing() {
    (cd "$1" || exit 1
        git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.sh' '*.inc' '*.py' '*.ini' '*.in' Makefile >"$TMP/code" 2>/dev/null ||
            find . -name '*.[ch]' -o -name '*.sh' | sed 's|^\./||' >"$TMP/code"
        sed -i '/^tests\/cli\/doc_paths\.sh$/d' "$TMP/code" # its examples and planted names
        ls README.md docs/*.md experiments/*.md plots/README.md results/SCHEMA.md 2>/dev/null >"$TMP/docs"
        # paths with a folder: a doc or any tracked code file
        cat "$TMP/docs" "$TMP/code" | xargs awk -v re="($DIRS)/[A-Za-z0-9_./-]*[A-Za-z0-9_-][.]($EXT)" '{
            s = $0
            while (match(s, re)) {
                p = substr(s, RSTART, RLENGTH); b = RSTART > 1 ? substr(s, RSTART - 1, 1) : ""
                a = substr(s, RSTART + RLENGTH, 1)
                if (b !~ /[A-Za-z0-9_.\/-]/ && a !~ /[A-Za-z0-9_*]/) print FILENAME ":" FNR ": " p
                s = substr(s, RSTART + RLENGTH)
            }
        }' >"$TMP/named"
        # bare names in C comments: "(see lars.c)"
        git ls-files | sed 's|.*/||' | sort -u >"$TMP/basenames"
        grep '\.\(c\|h\|cu\)$' "$TMP/code" | xargs grep -nE '^[[:space:]]*(/\*|\*|//)' | awk '{
            split($0, f, ":"); s = substr($0, length(f[1]) + length(f[2]) + 3)
            while (match(s, /[ (`][A-Za-z_][A-Za-z0-9_][A-Za-z0-9_][A-Za-z0-9_]+[.](c|h|cu)([ ,;:)`'"'"']|$)/)) {
                t = substr(s, RSTART + 1, RLENGTH - 1); sub(/[^A-Za-z0-9_]$/, "", t)
                print f[1] ":" f[2] ": " t " (bare)"
                s = substr(s, RSTART + RLENGTH)
            }
        }' >>"$TMP/named"
        while read -r where path bare; do
            case " $GENERATED " in *" $path "*) continue ;; esac
            stem=${path##*/}; stem=${stem%.*}
            case $stem in *[!A-Z]*) ;; *) continue ;; esac
            if [ -n "$bare" ]; then grep -qxF "$path" "$TMP/basenames" || echo "$where $path"
            else [ -e "$path" ] || echo "$where $path"; fi
        done <"$TMP/named"
    )
}

# shared ROOT: prints each line under ROOT naming ../shared outside tests/cli/lib.inc's one
shared() {
    (cd "$1" && git ls-files 2>/dev/null | grep -v -e '^bench/results/' -e '^tests/cli/doc_paths.sh$' | xargs grep -n '\.\./shared' 2>/dev/null |
        grep -v '^tests/cli/lib.inc:[0-9]*:    TAR=\${BIGBATCH_CIFAR10_TAR:-\.\./shared/data/cifar10-jpeg\.tar\.gz}$')
    [ "$(grep -c '\.\./shared' "$1/tests/cli/lib.inc")" -eq 1 ] || echo "tests/cli/lib.inc: names ../shared more than once"
}

out=$(missing .)
[ -z "$out" ] || fail "files named that do not exist:
$out"
out=$(shared .)
[ -z "$out" ] || fail "../shared named outside tests/cli/lib.inc's fixture setting (cite docs/papers.md):
$out"

# the checks catch what they are for, on copies
mkdir "$TMP/copy" && git ls-files -z | xargs -0 cp --parents -t "$TMP/copy" || fail "cannot copy the tree"
(cd "$TMP/copy" && git init -q && git add -A) || fail "cannot make a copy"
plant() { # FILE TEXT: appends TEXT to FILE in the copy, tracked
    printf '%s\n' "$2" >>"$TMP/copy/$1" && (cd "$TMP/copy" && git add "$1")
}
plant docs/engine.md 'The switches live in engine/lars.c.'
missing "$TMP/copy" | grep -q 'docs/engine.md:[0-9]*: engine/lars.c' || fail "a doc naming engine/lars.c was not caught"
plant engine/optim/opt_config.h '/* see lars.c */'
missing "$TMP/copy" | grep -q 'engine/optim/opt_config.h:[0-9]*: lars.c' || fail "a comment naming lars.c was not caught"
plant experiments/loss-gap.ini '; see ../shared/papers.md 7.1.2'
shared "$TMP/copy" | grep -q 'experiments/loss-gap.ini' || fail "a second ../shared was not caught"
plant tests/cli/lib.inc '# ../shared/data'
shared "$TMP/copy" | grep -q 'more than once' || fail "a second ../shared in lib.inc was not caught"
exit 0
