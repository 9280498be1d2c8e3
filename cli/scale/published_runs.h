/* The published large-batch runs `bigbatch scale --papers` checks the scaling model against,
 * read from a data file (results/published-runs.ini: one [section] per run, every number
 * with its source; the file's comments document the keys). */
#ifndef BB_PUBLISHED_RUNS_H
#define BB_PUBLISHED_RUNS_H
#include "scale.h"
#include "../../engine/base/util.h"

typedef struct {
    ScalePaperRun *runs;
    int count;
} PublishedRuns;

/* 0, or -1 with err naming the file, line and key (an unknown or repeated key, a missing one,
 * a number out of range). Text keys continue on indented lines, joined with a space. */
int published_runs_load(const char *path, PublishedRuns *out, Error *err);
void published_runs_free(PublishedRuns *p);

#endif
