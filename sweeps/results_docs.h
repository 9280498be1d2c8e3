/* `bigbatch report --all`: docs/results.md and docs/figures/ generated from the archived
 * results alone. Every experiment file with an archive gets its paper-style table (report.h),
 * the prose of its file (`description`, `findings`, the paper's notes) and its figures
 * (plot.h), so a number in the docs is always the archived data's. The dated outputs of
 * `make bench` kept in bench/results/ become out/benchmarks.md, verbatim, newest first, and
 * out/performance.md is its template with tables and lines of those files filled in (bench_page.h). */
#ifndef BB_RESULTS_DOCS_H
#define BB_RESULTS_DOCS_H
#include <stdio.h>

#include "../engine/base/util.h"

typedef struct {
    const char *experiments; /* folder of experiment files (*.ini) */
    const char *archive;     /* folder of <name>.sql.gz (sweeps/archive.sh save) */
    const char *out;         /* writes out/results.md and out/figures/<name>-<figure>.{png,svg} */
    const char *plots_dir;   /* gnuplot scripts; NULL: as `bigbatch plot` finds them */
    const char *html_dir;    /* also html_dir/<name>.html per experiment and html_dir/index.html; NULL: not */
    const char *bench;       /* folder of dated `make bench` outputs (*.txt): out/benchmarks.md; NULL: none */
    const char *performance; /* with bench: the template of out/performance.md (bench_page.h); NULL: none */
    const char *readme;      /* the demo's archive also makes out/headline.md, spliced into this file's
                                headline block (headline.h); NULL: not */
    const char *results_dir; /* read DIR/<name>.db (your own sweeps) instead of the archives; NULL */
} ResultsDocsOptions;

/* 0, or -1 with err. Progress lines (one per experiment) go to `progress`. The pages and the
 * figures are written beside their final names and renamed into place at the end, so a
 * failure leaves the previous ones. */
int results_docs_write(const ResultsDocsOptions *o, FILE *progress, Error *err);

#endif
