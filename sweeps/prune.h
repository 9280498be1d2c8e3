/* ASHA pruning of a sweep (`sweep --prune asha`): the rungs and the decision at each rung,
 * kept apart from the database and the processes so that the sweep and the replay
 * (prune_replay.h) decide alike, and so that a unit test can feed it known metrics.
 *
 * A group is the cells that differ only in the file's tuned axes (the LRs of one batch size
 * and optimizer). At each rung (an epoch) a cell goes on only if its test accuracy there is
 * among the best max(1, floor(n / eta)) of the n cells of its group that entered the rung.
 * The decision is synchronous: it is taken once every cell of the group that entered the rung
 * has reached it or ended before it (diverged, collapsed, failed: the worst). So it depends
 * on the rows alone, never on which run got there first: the same for any number of workers,
 * and the same again after a restart. Ties go to the cell first in the grid. */
#ifndef BB_PRUNE_H
#define BB_PRUNE_H
#include <stdbool.h>

#include "../engine/base/util.h"

#define PRUNE_MAX_RUNGS 16
#define PRUNE_DEFAULT_ETA 3

typedef struct {
    bool on;           /* --prune asha */
    bool given;        /* some --prune-* setting was given (they need --prune asha) */
    int eta;           /* --prune-eta: the reduction factor [3] */
    int min_epochs;    /* --prune-min-epochs: the first rung; 0: ceil(epochs / eta^2) */
    int n_rungs;       /* --prune-rungs: rungs given as epochs (then min_epochs is unused) */
    int rungs[PRUNE_MAX_RUNGS];
} PruneOptions;

/* The epochs at which a run of `epochs` epochs is judged, ascending, each below `epochs`. */
typedef struct {
    int n;
    int epoch[PRUNE_MAX_RUNGS];
} PruneRungs;

void prune_options_defaults(PruneOptions *o);
/* --prune-rungs "2,6": ascending positive epochs. 0, or -1 with err naming the flag. */
int prune_parse_rungs(const char *text, PruneOptions *o, Error *err);
void prune_rungs_of(const PruneOptions *o, int epochs, PruneRungs *r);
/* "2, 6" into out. */
void prune_rungs_text(const PruneRungs *r, char *out, size_t len);

/* Where a cell stands at a rung, by its rows. */
typedef enum {
    PRUNE_NOT_YET, /* some run of it has neither reached the rung nor ended */
    PRUNE_AT,      /* it reached the rung: metric is the mean test accuracy of its runs there */
    PRUNE_ENDED,   /* every run of it ended before the rung without a result there: the worst */
} PruneState;

typedef struct {
    PruneState state[PRUNE_MAX_RUNGS];
    double metric[PRUNE_MAX_RUNGS];
} PruneCell;

/* Walks a group's rungs in order. stop[i]: the rung (index) at which cell i was stopped, or -1
 * while it goes on. *open: the first rung not yet decided (r->n when all are). */
void prune_group(const PruneRungs *r, int eta, const PruneCell *cells, int n, int *stop, int *open);
/* The top max(1, floor(n / eta)) of metric[0..n) (NaN: the worst; ties to the lower index). */
void prune_keep(const double *metric, int n, int eta, bool *keep);

#endif
