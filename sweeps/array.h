/* SLURM job arrays of a sweep (--print-sbatch --array): task K runs runs K*N .. K*N+N-1 of the
 * grid (N: --array-runs-per-task) with a database of its own, <db without .db>.array/K.db, so
 * that the sweep's database keeps one writer; its logs and checkpoints go where the sweep's go.
 * The task databases are folded into the sweep's by `bigbatch merge --array DB` (the job the
 * script says to submit after the array) or by the next sweep on DB. */
#ifndef BB_ARRAY_H
#define BB_ARRAY_H
#include <stdbool.h>
#include <stdio.h>

#include "experiment.h"
#include "../engine/base/util.h"

/* <db without .db>.array, and the database of task `task` in it. */
void array_dir(const char *db, char *out, size_t len);
void array_task_db(const char *db, int task, char *out, size_t len);
/* Keeps task's runs of the grid (in place, the rest cleared) less those already ended in db
 * (finished, or failed unless retry_failed) when db exists; *n_runs becomes their number. */
int array_keep_task(const char *db, int task, int per_task, bool retry_failed, RunSpec *runs, int *n_runs,
                    Error *err);
/* Merges the task databases under db's .array folder into db and removes them. all: every one
 * (no task is running); else only those whose runs have all ended, the others left and counted
 * in *left. A line per database to log. *merged: how many were folded in. */
int array_fold(const char *db, bool all, FILE *log, int *merged, int *left, Error *err);

#endif
