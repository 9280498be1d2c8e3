/* One run's rows in the results store: what `bigbatch train --db` writes.
 *
 * A run launched by a sweep already has its row, claimed (status running, attempt N);
 * a run started by hand gets one keyed by the hash of its configuration. Either way the
 * run first deletes the rows of earlier attempts, then writes epochs, step losses and
 * layer statistics in short transactions, each of which checks that the claim is still
 * its own; the last write sets the final status. */
#ifndef BB_RUN_RECORD_H
#define BB_RUN_RECORD_H
#include <stdbool.h>

#include "store.h"
#include "train.h"

typedef struct {
    long step;
    int epoch;
    double loss, lr;
} StepRow;

typedef struct {
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
/* Observer callbacks; each may set obs->stop when the store fails or the claim is lost. */
void run_record_on_start(RunRecord *rr, Observer *obs, const char *device);
void run_record_on_step(RunRecord *rr, Observer *obs, int epoch, long step, double loss, double lr);
void run_record_on_epoch(RunRecord *rr, Observer *obs, const EpochMetrics *m);
void run_record_on_eval(RunRecord *rr, Observer *obs, int epoch, long step, double test_loss, double test_acc);
void run_record_on_diverged(RunRecord *rr, Observer *obs, long step, double loss);
void run_record_on_layer_stats(RunRecord *rr, Observer *obs, long step, const Net *net, const OptStats *stats);
/* Final status: complete or diverged from res; failed with `why` when res is NULL. */
int run_record_finish(RunRecord *rr, const TrainResult *res, const char *why, Error *err);
void run_record_close(RunRecord *rr);

#endif
