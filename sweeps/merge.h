/* `bigbatch merge OUT.db IN.db...`: results written by separate sweeps (on other clusters, or
 * sweeps of different experiment files) combined into one database. Runs are matched by their
 * stable ids (the hash of their settings). A run OUT lacks is copied with all its rows; a run
 * finished in an input and unfinished in OUT replaces OUT's; the same result twice is kept once;
 * two different finished results of one run are a conflict: reported, OUT's kept. Experiments
 * are matched by name and scale and their run lists united. */
#ifndef BB_MERGE_H
#define BB_MERGE_H
#include <stdio.h>

#include "../engine/base/util.h"

typedef struct {
    int added, replaced, same, kept, conflicts; /* runs, over all inputs */
    int experiments_added;
} MergeCounts;

/* Merges each input into `out` (created when absent), one transaction per input: an input that
 * fails leaves OUT as the inputs before it made it. Inputs are read, never written (each is
 * copied to a scratch file beside OUT, brought to the current schema there, and removed).
 * Conflicts and a line per input go to `log`. 0, or -1 with err naming the file. */
int merge_databases(const char *out, char *const *inputs, int n_inputs, FILE *log, MergeCounts *counts,
                    Error *err);

#endif
