/* One run's rows in the results store, as `bigbatch train` reports them to its observer.
 *
 * `train --db`: the run writes them itself. A run started by hand gets a row keyed by the
 * hash of its configuration (with --run-id, a row some other program claimed for it). It
 * first deletes the rows of earlier attempts, then writes epochs, step losses and layer
 * statistics in short transactions, each of which checks that the claim is still its own;
 * the last write sets the final status.
 *
 * `train --record-stream` (how a sweep starts its runs): the same rows go to standard output
 * as records (run_stream.h), and the sweep, the only writer of its database, writes them. */
#ifndef BB_RUN_RECORD_H
#define BB_RUN_RECORD_H
#include <stdbool.h>
#include <stdio.h>

#include "run_rows.h"

typedef struct {
    FILE *stream;        /* --record-stream: records go here, and store is not opened */
    Store store;
    char run_id[65];
    int attempt;
    StepRow *steps;      /* step losses not yet written */
    int n_steps, cap_steps;
    double last_flush;
    Error err;           /* the first write error; the run stops on it */
    bool broken;
} RunRecord;

/* run_id NULL: the hash of config_json (run_config.h); the row is created or taken over. */
int run_record_begin(RunRecord *rr, const char *db_path, const char *run_id, const char *config_json,
                     const char *args, Error *err);
/* The run's records go to `stream` (its sweep writes them); run_id only names the run. */
void run_record_begin_stream(RunRecord *rr, FILE *stream, const char *run_id);
/* Observer callbacks; each may set obs->stop when the store fails or the claim is lost. */
void run_record_on_start(RunRecord *rr, Observer *obs, const char *device);
void run_record_on_step(RunRecord *rr, Observer *obs, int epoch, long step, double loss, double lr, bool skipped);
void run_record_on_epoch(RunRecord *rr, Observer *obs, const EpochMetrics *m);
void run_record_on_eval(RunRecord *rr, Observer *obs, int epoch, long step, double test_loss, double test_acc);
void run_record_on_diverged(RunRecord *rr, Observer *obs, long step, double loss);
void run_record_on_layer_stats(RunRecord *rr, Observer *obs, long step, const Net *net, const OptStats *stats);
/* --save-handoff: the checkpoint at path holds the position after `step` iterations. */
void run_record_on_checkpoint(RunRecord *rr, const char *path, long step, int epoch);
/* Final status: complete or diverged from res; failed with `why` when res is NULL. */
int run_record_finish(RunRecord *rr, const TrainResult *res, const char *why, Error *err);
void run_record_close(RunRecord *rr);

#endif
