/* Steps to the experiment's target per series and batch size, the fewest over the tuned axes
 * (Shallue et al.'s measurement): what the steps-to-target figure draws and the report's
 * critical-batch table fits. */
#ifndef BB_STEPS_TARGET_H
#define BB_STEPS_TARGET_H
#include "cells.h"
#include "../engine/base/util.h"

typedef struct {
    double batch;
    long steps;          /* of the first evaluation that reached the target */
    int epoch;
    const Cell *cell;    /* the cell with the fewest steps at this batch */
    const char *run_id;  /* its run that was counted */
} StepsPoint;

typedef struct {
    char name[256];      /* the group axes but batch: "opt=sgd" ("" when none) */
    StepsPoint *pts;     /* ascending batch; batches where no cell reached the target left out */
    int n;
} StepsSeries;

/* The step count of a run's first evaluation whose metric reaches exp->target (at an epoch's
 * end, or within an epoch with --eval-every): 0 and *step set, 1 when never, -1 with err. */
int steps_target_run(const CellsData *d, const char *run_id, long *step, int *epoch, Error *err);

/* Every series of the experiment's cells; 0, or -1 with err. Free with steps_target_free. */
int steps_target_collect(const CellsData *d, StepsSeries **out, int *n, Error *err);
void steps_target_free(StepsSeries *s, int n);

/* The last epoch's gradient noise scale (B_simple) of a run in *out, NAN when not measured;
 * 0, or -1 with err. */
int steps_target_noise_scale(const CellsData *d, const char *run_id, double *out, Error *err);

#endif
