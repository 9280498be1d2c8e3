/* `bigbatch verify`: re-runs chosen cells of an archived experiment with today's engine and
 * says, per cell, whether each new run lands within the archived seeds' spread. */
#ifndef BB_VERIFY_H
#define BB_VERIFY_H
#include <stdio.h>

#include "../engine/base/util.h"

/* A new run of value y lands within the archive when some archived seed ended as it did
 * (complete, collapsed or diverged) and, for a complete run, y lies in [min - w, max + w] over
 * the archived complete seeds, w the larger of their standard deviation and the request's
 * floor (VERIFY_FLOOR unless --spread says more: a cell of one archived seed has no spread of
 * its own, and runs that differ in arithmetic, a GPU's against a CPU archive, differ as seeds
 * do). */
#define VERIFY_FLOOR 0.005

typedef struct {
    const char *file, *scale, *db;   /* the archived experiment (db NULL: results/<name>.db) */
    const char *const *labels;       /* the cells to re-run, by label; n_labels 0: every cell */
    int n_labels;
    int repeats;                     /* seeds per cell today: 1..N, the archive's first N */
    int workers, threads;            /* as sweep's; threads 0: the sweep's default */
    const char *device;              /* the runs' --device (NULL: cpu) */
    double floor;                    /* the least half-width w around the archived seeds */
    const char *scratch;             /* the database today's runs go to */
} VerifyRequest;

/* Runs the cells (a sweep into r->scratch), prints a table to out; *outside receives how many
 * new runs fell outside. 0, or -1 with err. */
int verify_run(const VerifyRequest *r, FILE *out, int *outside, Error *err);

#endif
