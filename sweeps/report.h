/* `bigbatch report`: the paper-style table of an experiment from its results database. */
#ifndef BB_REPORT_H
#define BB_REPORT_H
#include <stdbool.h>
#include <stdio.h>

#include "../engine/base/util.h"

/* REPORT_HTML: the Markdown report's content as an HTML fragment (report_html.h makes the page). */
typedef enum { REPORT_MD, REPORT_CSV, REPORT_HTML } ReportFormat;

typedef struct {
    const char *file;     /* the experiment file */
    const char *scale;    /* smoke | proxy | full */
    const char *db;       /* NULL: results/<experiment>.db */
    ReportFormat format;
    const char *db_label; /* how the text names the data (an archive); NULL: the database's path */
    int heading;          /* level of the title: 1 for "# " (<h1>), 2 for "## " (<h2>) inside a page */
    double seed_spread;   /* > 0: the demo's measured seed spread (fragile.h), for single-seed tables */
    const char *reference_fingerprint; /* the demo archive's numerics fingerprint, or NULL */
    bool headline_only;   /* only the headline table: the best per group, or every cell (dashboards) */
} ReportRequest;

/* One row per grid cell (mean and spread over repeats, diverged cells marked) and, when the
 * file names tuned axes, the best cell per combination of the other axes, each with the
 * paper's number beside it. 0, or -1 with err. */
int report_write(FILE *out, const ReportRequest *r, Error *err);

/* A cell's result as the tables show it: "0.8712 ± 0.0041 (3 seeds)", "0.1000 (collapsed)", ... */
struct Cell;
void report_cell_result(const struct Cell *c, char *out, size_t len);

#endif
