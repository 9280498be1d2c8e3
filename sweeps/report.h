/* `bigbatch report`: the paper-style table of an experiment from its results database. */
#ifndef BB_REPORT_H
#define BB_REPORT_H
#include <stdio.h>

#include "util.h"

typedef enum { REPORT_MD, REPORT_CSV } ReportFormat;

/* One row per grid cell (mean and spread over repeats, diverged cells marked) and, when the
 * file names tuned axes, the best cell per combination of the other axes, each with the
 * paper's number beside it. 0, or -1 with err. */
int report_write(FILE *out, const char *file, const char *scale, const char *db, ReportFormat format, Error *err);

#endif
