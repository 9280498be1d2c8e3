/* The rows of one run in the results store, one function per kind of row. Two writers use
 * them: a run started by hand with `train --db` (run_record.c), and the sweep, which writes
 * what the runs it started send it as a stream (run_stream.c). The caller holds the
 * transaction and has checked that the run is still its claim. */
#ifndef BB_RUN_ROWS_H
#define BB_RUN_ROWS_H
#include <stdbool.h>

#include "../engine/net/param_kind.h"
#include "store.h"
#include "../engine/train/train.h"

typedef struct {
    long step;
    int epoch;
    double loss, lr;
    bool skipped; /* no update: fp16's gradients were inf/NaN (loss scaling) */
} StepRow;

typedef struct {
    int epoch;
    long step;
    double test_loss, test_acc;
} EvalRow;

typedef struct {
    const char *name, *kind; /* the parameter and its kind, as param_kind_name spells it */
    OptStats s;
} LayerStatRow;

/* How the run ended: complete or diverged with its result, or failed with `error`. */
typedef struct {
    const char *status;
    bool has_result;
    long steps;
    long skipped_steps; /* updates skipped by fp16's loss scaling */
    double test_acc, test_loss, train_loss;
    const char *error;
} FinalRow;

/* Removes the rows of earlier attempts and the run's earlier results; records engine_version. */
int run_rows_clear(Store *s, const char *run_id, const char *engine_version, Error *err);
/* A run resumed from a checkpoint after `step` iterations with `epoch` epochs done: keeps the
 * rows that came before it (steps and layer statistics before `step`, evaluations up to it,
 * epochs up to `epoch`), removes the later ones and the run's earlier results. */
int run_rows_clear_after(Store *s, const char *run_id, long step, int epoch, const char *engine_version,
                         Error *err);
int run_rows_steps(Store *s, const char *run_id, const StepRow *rows, int n, Error *err);
int run_rows_epoch(Store *s, const char *run_id, const EpochMetrics *m, Error *err);
int run_rows_eval(Store *s, const char *run_id, const EvalRow *e, Error *err);
int run_rows_diverged(Store *s, const char *run_id, long step, double loss, Error *err);
int run_rows_device(Store *s, const char *run_id, const char *device, Error *err);
int run_rows_layer_stats(Store *s, const char *run_id, long step, const LayerStatRow *rows, int n, Error *err);
int run_rows_final(Store *s, const char *run_id, const FinalRow *f, Error *err);
/* The final row of a TrainResult (res NULL: failed with why). */
FinalRow run_rows_final_of(const TrainResult *res, const char *why);

#endif
