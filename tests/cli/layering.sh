# The one-way layout: includes run cli/ -> sweeps/ -> engine/ and never back, and the files
# of engine/data/ depend on each other without a cycle. Every `#include "..."` of every .c/.h
# in engine/, sweeps/ and cli/ is resolved as the compiler does (the including file's
# directory first, then -Iengine); generated headers (commit.h) resolve to nothing and are
# skipped. In engine/data/, x.c and x.h are one module; a cycle is one in their includes, or
# in their calls (data.h declares what several .c files define, so two of them can call each
# other through it: dataset.c <-> imagefolder.c did). Then the checker is run on copies with
# a violation planted, each of which it must catch. Then the CPU convolutions' calls, read from
# the built objects (conv_calls below), with their own planted violations.
. tests/cli/lib.inc

# layering ROOT: prints one line per violation under ROOT; exit 1 if there is any.
layering() {
    (cd "$1" || exit 1
        find engine sweeps cli -name '*.[ch]' | sort >"$TMP/files"
        xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' <"$TMP/files" >"$TMP/includes"
        rc=0
        awk -v files="$TMP/files" '
        function norm(p,   n, i, k, part, out) {
            n = split(p, part, "/"); k = 0
            for (i = 1; i <= n; i++) {
                if (part[i] == "." || part[i] == "") continue
                if (part[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
                out[++k] = part[i]
            }
            p = ""
            for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
            return p
        }
        function top(p) { sub(/\/.*/, "", p); return p }
        # engine/data/imagefolder.c and .h are one module, "imagefolder"
        function module(p) { sub(/^engine\/data\//, "", p); sub(/\.[ch]$/, "", p); return p }
        BEGIN {
            while ((getline f < files) > 0) exists[f] = 1
            rank["engine"] = 0; rank["sweeps"] = 1; rank["cli"] = 2
        }
        {
            file = $0; sub(/:.*/, "", file)
            inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
            dir = file; sub(/\/[^\/]*$/, "", dir)
            target = norm(dir "/" inc)
            if (!(target in exists)) target = norm("engine/" inc)
            if (!(target in exists)) next
            if (rank[top(target)] > rank[top(file)]) {
                printf "%s includes %s: %s/ may not include from %s/ (cli -> sweeps -> engine)\n", \
                    file, target, top(file), top(target)
                bad = 1
            }
            if (file ~ /^engine\/data\// && target ~ /^engine\/data\//) {
                a = module(file); b = module(target)
                if (a != b) { reach[a, b] = 1; mods[a] = 1; mods[b] = 1 }
            }
        }
        END {
            # transitive closure (a handful of modules): a cycle is a module that reaches another
            # that reaches it back
            for (k in mods) for (i in mods) if ((i, k) in reach) for (j in mods) if ((k, j) in reach) reach[i, j] = 1
            for (i in mods) for (j in mods)
                if (i < j && (i, j) in reach && (j, i) in reach) {
                    printf "engine/data: include cycle between %s and %s (each reaches the other)\n", i, j
                    bad = 1
                }
            exit bad
        }' "$TMP/includes" || rc=1
        data_calls || rc=1
        rooms "$TMP/includes" || rc=1
        one_table || rc=1
        exit $rc)
}

# one_table: a list lives in one table. Only sweeps/flags/flag_table.c parses flags with
# getopt (every command's flags are a table on it), and the LARS/LARC switches' value names
# are written in engine/optim/opt_switches.c alone: no other file spells a distinctive one
# (a hyphen, or 7 letters or more) as a string, nor two of one switch's names on one line
# (a list typed again). Run inside the tree.
SWITCHES=engine/optim/opt_switches.c
one_table() {
    bad=0
    find engine sweeps cli -name '*.[ch]' ! -path sweeps/flags/flag_table.c |
        xargs grep -nE '#[[:space:]]*include[[:space:]]*<getopt\.h>|getopt(_long)?\(' |
        sed 's/$/: only sweeps\/flags\/flag_table.c parses with getopt (give the command a flag table)/' |
        grep . && bad=1
    # "LIST name" for every value of every switch's list
    awk '/^static const OptSwitchValue [A-Z_]+\[\]/ { list = $4; sub(/\[.*/, "", list) }
         list && /= \{"/ { v = $0; sub(/^[^"]*"/, "", v); sub(/".*/, "", v); print list, v }
         /^};/ { list = "" }' "$SWITCHES" >"$TMP/switch_names"
    [ -s "$TMP/switch_names" ] || { echo "$SWITCHES: no switch names found"; return 1; }
    find engine sweeps cli -name '*.[ch]' ! -path "$SWITCHES" | sort | xargs awk -v names="$TMP/switch_names" '
        BEGIN { while ((getline line < names) > 0) { split(line, w, " "); list[w[2]] = w[1] } }
        {
            delete seen
            for (n in list) {
                if (index($0, "\"" n "\"") == 0) continue
                if (n ~ /-/ || length(n) >= 7) {
                    printf "%s:%d: \"%s\": a LARS switch name, written once in '"$SWITCHES"'\n", FILENAME, FNR, n
                    bad = 1
                }
                if (seen[list[n]]++) {
                    printf "%s:%d: %s again: the LARS switch names are written once in '"$SWITCHES"'\n", FILENAME, FNR, list[n]
                    bad = 1
                }
            }
        }
        END { exit bad }' || bad=1
    return $bad
}

# rooms INCLUDES: engine/ is in rooms (net/, optim/, data/, dist/, train/, base/, layers/, cpu/,
# cuda/); its top level keeps only the device boundary (with graph_check, its dispatch's checks of
# a graph capture), and base/, which every room uses,
# includes no room (only itself and that boundary). Run inside the tree, after layering's grep.
ENGINE_TOP="backend.c backend.h backend_impl.h backend_ops.h blas_core.h graph_check.c graph_check.h host_device.h real.h tensor.c tensor.h"
rooms() {
    bad=0
    for f in engine/*.c engine/*.h; do
        [ -e "$f" ] || continue
        case " $ENGINE_TOP " in *" ${f#engine/} "*) ;; *)
            echo "$f: engine/'s top level holds only the device boundary; put it in a room"; bad=1 ;;
        esac
    done
    grep '^engine/base/' "$1" | grep -E '"(\.\./)+(net|optim|data|dist|train|layers|cpu|cuda)/' |
        sed 's/:.*#[[:space:]]*include[[:space:]]*/ includes /; s/$/: engine\/base\/ includes no room/' |
        grep . && bad=1
    return $bad
}

# data_calls: in engine/data/, the .c files that call each other's functions, by name (the
# functions each defines without `static`, at the start of a line, found called elsewhere).
data_calls() {
    awk '/^[A-Za-z_]/ && !/^static/ && !/;[ \t]*$/ && match($0, /[a-z_][a-z0-9_]*\(/) {
        print substr($0, RSTART, RLENGTH - 1), FILENAME
    }' engine/data/*.c >"$TMP/defs"
    awk -v defs="$TMP/defs" '
        function module(p) { sub(/^engine\/data\//, "", p); sub(/\.c$/, "", p); return p }
        BEGIN { while ((getline line < defs) > 0) { split(line, d, " "); owner[d[1]] = module(d[2]) } }
        { sub(/\/\*.*\*\//, ""); sub(/\/\*.*/, ""); if ($0 ~ /^[ \t]*\*/) next }
        {
            me = module(FILENAME)
            for (f in owner)
                if (owner[f] != me && $0 ~ ("(^|[^A-Za-z0-9_])" f "[ \t]*\\(")) {
                    calls[me, owner[f]] = 1; mods[me] = 1; mods[owner[f]] = 1
                    if (!((me, owner[f]) in why)) why[me, owner[f]] = f
                }
        }
        END {
            for (k in mods) for (i in mods) if ((i, k) in calls) for (j in mods) if ((k, j) in calls) calls[i, j] = 1
            for (i in mods) for (j in mods)
                if (i < j && (i, j) in calls && (j, i) in calls) {
                    printf "engine/data: call cycle between %s.c and %s.c", i, j
                    if ((i, j) in why && (j, i) in why) printf " (%s, %s)", why[i, j], why[j, i]
                    printf "\n"
                    bad = 1
                }
            exit bad
        }' engine/data/*.c
}

layering . >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "a dependency goes the wrong way (cli -> sweeps -> engine, no cycle in engine/data)"; }
[ -s "$TMP/out" ] && { cat "$TMP/out"; fail "the checker printed something on a clean tree"; }

# The checker must catch each kind of violation, in a scratch copy of the sources.
plant() { # plant WHAT FILE LINE MESSAGE: LINE added to FILE in a copy must fail with MESSAGE
    rm -rf "$TMP/copy" && mkdir "$TMP/copy" && cp -r engine sweeps cli "$TMP/copy/" &&
        echo "$3" >>"$TMP/copy/$2" || fail "cannot copy the tree"
    if layering "$TMP/copy" >"$TMP/out" 2>&1; then cat "$TMP/out"; fail "missed $1"; fi
    expect_output "$4"
}
plant "engine -> sweeps" engine/train/train.c '#include "../sweeps/store.h"' 'engine/train/train.c includes sweeps/store.h'
plant "engine/data -> sweeps" engine/data/batch.c '#include "../../sweeps/sweep.h"' 'engine/data/batch.c includes sweeps/sweep.h'
plant "engine -> cli" engine/base/util.h '#include "../cli/cli.h"' 'engine/base/util.h includes cli/cli.h'
plant "sweeps -> cli" sweeps/report.c '#include "../cli/cli.h"' 'sweeps/report.c includes cli/cli.h'
plant "a two-file cycle in engine/data" engine/data/imagefolder.c '#include "data.h"' 'cycle between data and imagefolder'
plant "a call cycle in engine/data" engine/data/imagefolder.c 'static void f(void) { dataset_free(0); }' \
    'call cycle between dataset.c and imagefolder.c'
stray=engine/stray  # a file on engine/'s floor, planted ($stray.c)
plant "a file on engine/'s floor" "$stray.c" 'int stray;' "$stray.c: engine/'s top level holds only"
plant "engine/base -> a room" engine/base/util.h '#include "../net/net.h"' 'engine/base/util.h includes "../net/net.h": engine/base/ includes no room'
plant "a command parsing with getopt" cli/cli_merge.c '#include <getopt.h>' 'cli/cli_merge.c:.*only sweeps/flags/flag_table.c parses with getopt'
plant "a getopt_long call" sweeps/verify.c 'static int f(int c, char **v) { return getopt_long(c, v, "", 0, 0); }' \
    'sweeps/verify.c:.*only sweeps/flags/flag_table.c parses with getopt'
plant "a LARS switch name spelled again" sweeps/flags/train_flags.c 'static const char *D = "g-wd";' \
    '"g-wd": a LARS switch name, written once'
plant "a switch's list typed again" engine/optim/optimizer.c 'static const char *const P[] = {"scale", "clip", 0};' \
    'POLICIES again: the LARS switch names are written once'
rm -rf "$TMP/copy"

# conv_calls DIR: the calls among the objects DIR/*.o of engine/cpu/, from `nm` (the symbols each
# defines, the ones it leaves undefined), so that a call through a header or a function pointer
# counts too. Fails on any cycle of calls among them (dispatchers call their paths, the paths
# call leaves, nothing calls back: conv.c, optim.c, backend_cpu.c), on a convolution path file
# calling the dispatcher (a symbol conv.o defines), and on the reference path (conv_im2col.o)
# calling another convolution file: conv.c -> paths -> leaves, never back.
conv_calls() {
    for o in "$1"/*.o; do nm -A "$o" 2>/dev/null; done | awk '
        function conv(m) { return m ~ /^(conv|winograd)/ }
        {
            m = $1; sub(/\.o:.*/, "", m); sub(/.*\//, "", m); mods[m] = 1
            if ($(NF - 1) == "U") used[m] = used[m] " " $NF
            else if ($(NF - 1) ~ /^[TDBR]$/) owner[$NF] = m
        }
        END {
            for (m in used) {
                n = split(used[m], sym, " ")
                for (i = 1; i <= n; i++) {
                    o = owner[sym[i]]
                    if (o == "" || o == m) continue
                    calls[m, o] = 1
                    if (!((m, o) in why)) why[m, o] = sym[i]
                    if (conv(m) && m != "conv" && o == "conv") {
                        printf "engine/cpu/%s.c calls the dispatcher (conv.c: %s)\n", m, sym[i]; bad = 1
                    }
                    if (m == "conv_im2col" && conv(o)) {
                        printf "engine/cpu/conv_im2col.c, the reference leaf, calls %s.c (%s)\n", o, sym[i]; bad = 1
                    }
                }
            }
            for (k in mods) for (i in mods) if ((i, k) in calls) for (j in mods) if ((k, j) in calls) calls[i, j] = 1
            for (i in mods) for (j in mods)
                if (i < j && (i, j) in calls && (j, i) in calls) {
                    printf "engine/cpu: call cycle between %s.c and %s.c", i, j
                    if ((i, j) in why && (j, i) in why) printf " (%s, %s)", why[i, j], why[j, i]
                    printf "\n"; bad = 1
                }
            exit bad
        }'
}

# The objects of the binary under test: bin/bigbatch is linked from the build named in
# bin/.variant, any other binary from the objects beside it.
case $BB in
bin/bigbatch) OBJ=$(cat bin/.variant 2>/dev/null)/engine/cpu ;;
*) OBJ=$(dirname "$BB")/engine/cpu ;;
esac
ls "$OBJ"/conv.o "$OBJ"/conv_im2col.o >/dev/null 2>&1 || fail "no objects of engine/cpu/ in $OBJ (build first)"
conv_calls "$OBJ" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "files of engine/cpu/ call each other in a loop, or a convolution path calls its dispatcher"; }
[ -s "$TMP/out" ] && { cat "$TMP/out"; fail "the call checker printed something on clean objects"; }

# Each kind caught, in a copy of the objects with one compiled in (or replacing one).
plant_object() { # plant_object WHAT NAME.o SOURCE MESSAGE
    rm -rf "$TMP/objs" && mkdir "$TMP/objs" && cp "$OBJ"/*.o "$TMP/objs/" &&
        printf '%s\n' "$3" >"$TMP/planted.c" && ${CC:-cc} -w -c -o "$TMP/objs/$2" "$TMP/planted.c" ||
        fail "cannot plant $2"
    if conv_calls "$TMP/objs" >"$TMP/out" 2>&1; then cat "$TMP/out"; fail "missed $1"; fi
    expect_output "$4"
}
plant_object "a path calling the dispatcher" conv_planted.o \
    'void conv_forward_fp32(); void planted(void) { conv_forward_fp32(); }' \
    'cpu/conv_planted.c calls the dispatcher (conv.c: conv_forward_fp32)'
plant_object "the reference leaf calling a path" conv_im2col.o \
    'int winograd_applies(); void conv_im2col_forward(void) { winograd_applies(); }' \
    'conv_im2col.c, the reference leaf, calls conv_winograd.c (winograd_applies)'
plant_object "a cycle between two paths" conv_winograd.o \
    'void phased_forward(); void winograd_conv_forward(void) { phased_forward(); }' \
    'call cycle between conv_phased.c and conv_winograd.c (winograd_conv_forward, phased_forward)'
plant_object "a rule calling back into the optimizer dispatcher" optim_stats.o \
    'void cpu_optimizer_update(); void cpu_stats_before(void) { cpu_optimizer_update(); }' \
    'engine/cpu: call cycle between optim.c and optim_'
rm -rf "$TMP/objs"
