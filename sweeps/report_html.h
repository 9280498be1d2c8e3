/* `bigbatch report FILE --html DIR`: one self-contained static page per experiment. The
 * paper-style tables (report.h, ours beside the paper's), the figures as inline SVG
 * (plot.h), and the grid of runs with each run's state and final metrics, each linked to its
 * loss curve (an inline SVG drawn here) and its layer ratios at the first step. Every table
 * sorts by a click on a column's header, without a server; `#sort=T,C,asc|desc` in the
 * address sorts table T (0-based) by column C when the page opens. */
#ifndef BB_REPORT_HTML_H
#define BB_REPORT_HTML_H
#include "../engine/base/util.h"

typedef struct {
    const char *file;      /* the experiment file */
    const char *scale;     /* smoke | proxy | full */
    const char *db;        /* NULL: results/<experiment>.db */
    const char *db_label;  /* how the page names its data; NULL: the database's path */
    const char *plots_dir; /* gnuplot scripts; NULL: as `bigbatch plot` finds them */
    const char *dir;       /* the page is dir/<experiment>.html (dir is created) */
    const char *svg_dir;   /* the figures already drawn there as SVG: inlined, not drawn again;
                              NULL: drawn for the page */
    double seed_spread;    /* as ReportRequest's */
    const char *reference_fingerprint;
} HtmlReportRequest;

/* Writes the page beside its name and renames it into place; *page (when not NULL) receives
 * its path, to be freed. 0, or -1 with err: a failure leaves the previous page, if any. */
int report_html_write(const HtmlReportRequest *r, char **page, Error *err);

#endif
