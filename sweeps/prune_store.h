/* Pruning as the sweep runs it (sweep --prune asha, prune.h): where each run of the grid stands,
 * read from the database alone (so a restarted sweep reaches the same decisions), and a run
 * marked pruned with its rows up to the rung where it stopped. */
#ifndef BB_PRUNE_STORE_H
#define BB_PRUNE_STORE_H
#include "experiment.h"
#include "prune.h"
#include "store.h"

typedef enum {
    PRUNE_GO,   /* the run goes on (or starts) */
    PRUNE_HOLD, /* it reached a rung whose decision waits for other cells of its group */
    PRUNE_STOP, /* its cell was stopped at a rung: the run is to be pruned there */
} PruneVerdict;

typedef struct {
    PruneVerdict verdict;
    int epoch;      /* HOLD, STOP: the rung's epoch */
    bool reached;   /* STOP: the run has its row of that epoch (else it ended before it) */
    char status[12];
} RunVerdict;

/* One verdict per run of runs[0..n_runs), in the experiment's grid and tuned axes. */
int prune_scan(Store *s, const Experiment *exp, const RunSpec *runs, int n_runs, const PruneOptions *o,
               RunVerdict *out, Error *err);
/* The run becomes pruned at `epoch`: its rows after that epoch go, its result is that epoch's
 * evaluation. Running, waiting or stale, or ended already: a run that got past its rung before
 * the sweep looked (a short one can end between two looks) is cut back to it, so that what the
 * database holds never depends on timing or on the number of workers. *marked: whether it was
 * (not when it has no row of that epoch, or is pruned already). One transaction. */
int prune_mark(Store *s, const char *run_id, int epoch, bool *marked, Error *err);

#endif
