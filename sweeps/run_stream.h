/* The records a run started by a sweep sends to it instead of writing the database itself:
 * the sweep is the only writer of its database (docs/formats.md, "Run records").
 *
 * A record is one line of the run's standard output, `@bigbatch ` and a JSON object whose
 * "record" names its kind: start, step, epoch, eval, diverged, layer_stats, end. Numbers are
 * JSON numbers, except the non-finite ones, which are the strings "nan", "inf" and "-inf" (a
 * diverged run's loss is a result). Any other line is the run's ordinary output, for its log.
 * The stream passes unchanged through mpirun and srun, which carry rank 0's output back. */
#ifndef BB_RUN_STREAM_H
#define BB_RUN_STREAM_H
#include <stdio.h>

#include "run_rows.h"

#define RUN_STREAM_PREFIX "@bigbatch "
/* A longer line is not a record the sweep reads (a layer_stats record of ResNet-50 is ~25 KB). */
#define RUN_STREAM_MAX_LINE (16u << 20)

/* The run's side: each writes one record and flushes it. */
void run_stream_start(FILE *f, const char *device);
void run_stream_step(FILE *f, const StepRow *r);
void run_stream_epoch(FILE *f, const EpochMetrics *m);
void run_stream_eval(FILE *f, const EvalRow *e);
void run_stream_diverged(FILE *f, long step, double loss);
void run_stream_layer_stats(FILE *f, long step, const LayerStatRow *rows, int n);
void run_stream_end(FILE *f, const FinalRow *r);
/* The run's checkpoint at path (train --save-handoff) holds the position after `step`
 * iterations, `epoch` epochs done; every record before this one came before it. */
void run_stream_checkpoint(FILE *f, const char *path, long step, int epoch);

/* The sweep's side: whether a line (without its newline) is a record. */
int run_stream_is_record(const char *line);
/* What a record asks of the sweep beyond its rows. */
typedef struct {
    int ended;            /* it was the run's end record */
    long checkpoint_step; /* >= 0: a checkpoint record, of the position after this many steps */
    char checkpoint[1200]; /* its path, as the run wrote it */
} RecordEffect;

/* Writes the rows of one record line for run_id, in the caller's transaction, and says in fx
 * what else it asks. 0; 1 with err when the line is not a record this version writes (err says
 * what is wrong with it); -1 with err when the store fails. */
int run_stream_apply(Store *s, const char *run_id, const char *line, RecordEffect *fx, Error *err);

#endif
