/* `bigbatch report`: the paper-style table of an experiment from its results database. */
#ifndef BB_REPORT_H
#define BB_REPORT_H
#include <stdio.h>

#include "util.h"

typedef enum { REPORT_MD, REPORT_CSV } ReportFormat;

typedef struct {
    const char *file;     /* the experiment file */
    const char *scale;    /* smoke | proxy | full */
    const char *db;       /* NULL: results/<experiment>.db */
    ReportFormat format;
    const char *db_label; /* how the text names the data (an archive); NULL: the database's path */
    int heading;          /* Markdown level of the title: 1 for "# ", 2 for "## " inside a page */
} ReportRequest;

/* One row per grid cell (mean and spread over repeats, diverged cells marked) and, when the
 * file names tuned axes, the best cell per combination of the other axes, each with the
 * paper's number beside it. 0, or -1 with err. */
int report_write(FILE *out, const ReportRequest *r, Error *err);

#endif
