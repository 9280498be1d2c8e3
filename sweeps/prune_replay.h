/* `bigbatch report FILE --replay-prune`: ASHA pruning (prune.h) played over a finished sweep's
 * per-epoch curves, to show before a pruned sweep is run what it would have found: per group
 * the full grid's best cell beside the pruned sweep's, and the epochs each trains. */
#ifndef BB_PRUNE_REPLAY_H
#define BB_PRUNE_REPLAY_H
#include <stdio.h>

#include "prune.h"

/* db NULL: results/<experiment>.db; a path ending .sql.gz: an archive (sweeps/archive.sh), read
 * through a temporary database. A database with runs not ended, or already pruned, is
 * an error (the replay needs every run's whole curve). 0, or -1 with err. */
int prune_replay(FILE *out, const char *file, const char *scale, const char *db, const PruneOptions *o, Error *err);

#endif
