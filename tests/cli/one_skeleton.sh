#!/bin/sh
# The figures share one skeleton: sweeps/plot_figure.c (figure_draw) opens a figure's files,
# writes the header and frame every script reads, and runs gnuplot; each kind's file
# (sweeps/plot_<kind>.c) holds only its FigureParts, listed in the one table (figures.c). So
# no other sweeps/plot_*.c opens, replaces or removes a file, starts a process (plot_common.c
# holds the runner), calls the skeleton's steps or writes the frame or header; nothing in sweeps/ or cli/ but the
# skeleton and check_gnuplot calls the runner; and a kind's file defines no function of its
# own outside its parts (a fig_<kind> drawing by itself again). Then the checker is run on
# copies with each violation planted, which it must catch.
. tests/cli/lib.inc

# skeleton ROOT: prints one line per violation under ROOT; exit 1 if there is any.
skeleton() {
    (cd "$1" || exit 1
        find sweeps cli -name '*.c' | sort >"$TMP/files" || exit 1
        xargs awk '
        function report(what) { printf "%s:%d: %s outside the skeleton (sweeps/plot_figure.c)\n", FILENAME, FNR, what; bad = 1 }
        function called(re,   s) {
            if (!match(line, "(^|[^A-Za-z0-9_])(" re ")[ \t]*\\(")) return ""
            s = substr(line, RSTART, RLENGTH); sub(/^[^A-Za-z0-9_]/, "", s); sub(/[ \t]*\($/, "", s)
            return s
        }
        FNR == 1 {
            skel = FILENAME == "sweeps/plot_figure.c"; common = FILENAME == "sweeps/plot_common.c"
            plot = FILENAME ~ /^sweeps\/plot_[^\/]*\.c$/ && !skel; kind = plot && !common
        }
        {
            line = $0; sub(/\/\*.*\*\//, "", line); sub(/\/\*.*/, "", line); sub(/\/\/.*/, "", line)
            if (line ~ /^[ \t]*\*/) next
        }
        plot && (f = called("fopen|fdopen|freopen|popen|tmpfile|mkstemps?|open|creat|rename|unlink|remove")) != "" {
            report("a figure file opened or replaced (" f ")")
        }
        plot && (f = called("open_out|close_out|data_header|write_common_vars|write_frame|plot_finish|plot_render|render")) != "" {
            report("a step of the skeleton called (" f ")")
        }
        kind && (f = called("fork|vfork|exec[lv]p?e?|posix_spawnp?|system")) != "" { report("a process started (" f ")") }
        plot && line ~ /"(figtitle|subtitle)"|# bigbatch plot / { report("the frame or the data header written") }
        !skel && !common && (f = called("plot_run_capture")) != "" { report("gnuplot run (" f ")") }
        kind && /^[A-Za-z_]/ && !/^(static|typedef)/ && /\(/ && !/;[ \t]*$/ {
            report("a function exported by a figure kind (it exports only its FigureParts)")
        }
        END { exit bad }' <"$TMP/files")
}

skeleton . >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "a figure grew its own copy of the skeleton"; }
[ -s "$TMP/out" ] && { cat "$TMP/out"; fail "the checker printed something on a clean tree"; }
ls sweeps/plot_accuracy.c sweeps/plot_heatmap.c sweeps/plot_figure.c >/dev/null || fail "the files checked are gone"

# Each kind caught, in a scratch copy of sweeps/ and cli/.
plant() { # plant WHAT FILE LINE MESSAGE: LINE added to FILE in a copy must fail with MESSAGE
    rm -rf "$TMP/copy" && mkdir "$TMP/copy" && cp -r sweeps cli "$TMP/copy/" &&
        printf '%s\n' "$3" >>"$TMP/copy/$2" || fail "cannot copy the tree"
    if skeleton "$TMP/copy" >"$TMP/out" 2>&1; then cat "$TMP/out"; fail "missed $1"; fi
    expect_output "$4"
}
plant "a figure opening its own data file" sweeps/plot_heatmap.c \
    'static FILE *own(void) { return fopen("heatmap.dat", "w"); }' 'sweeps/plot_heatmap.c:.*opened or replaced (fopen)'
NEW=plot_extra # a new kind's file (named in parts, so that no doc check reads it as a path)
plant "a new figure file with a gnuplot pipe" "sweeps/$NEW.c" \
    'static FILE *own(void) { return popen("gnuplot", "w"); }' "sweeps/$NEW.c:1: a figure file opened or replaced (popen)"
plant "a figure running gnuplot" sweeps/plot_accuracy.c \
    'static int own(char **argv) { char m[8]; return plot_run_capture(argv, m, 8, 0); }' \
    'sweeps/plot_accuracy.c:.*gnuplot run (plot_run_capture)'
plant "a figure starting a process" sweeps/plot_layer_ratios.c 'static void own(void) { fork(); }' \
    'sweeps/plot_layer_ratios.c:.*a process started (fork)'
plant "a figure writing the frame" sweeps/plot_loss_curves.c \
    'static void own(FILE *v) { gp_var(v, "figtitle", ""); }' 'sweeps/plot_loss_curves.c:.*the frame or the data header'
plant "a figure drawing by itself" sweeps/plot_steps_to_target.c 'int fig_steps(Plot *p, Error *err)' \
    'sweeps/plot_steps_to_target.c:.*a function exported by a figure kind'
plant "the runner called elsewhere" sweeps/report_html.c \
    'static int own(char **argv) { char m[8]; return plot_run_capture(argv, m, 8, 0); }' \
    'sweeps/report_html.c:.*gnuplot run (plot_run_capture)'
rm -rf "$TMP/copy"
exit 0
