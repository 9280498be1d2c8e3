/* Fault injection for tests, in the SQLite style: BIGBATCH_FAULT makes one chosen write, fsync
 * or allocation of the store and checkpoint paths fail, or each of them at random with a seed,
 * so a test can walk N over every such call and check what a failure leaves behind
 * (tests/cli/faults.sh). Without the variable nothing fails and the checks cost one branch.
 *
 *   write:N         the Nth write (a store statement that writes, a checkpoint write or rename)
 *   fsync:N         the Nth sync (a store COMMIT, a checkpoint fsync)
 *   alloc:N         the Nth allocation SQLite makes (it then reports SQLITE_NOMEM)
 *   dbwrite:N       the Nth write or truncate SQLite itself makes to a database, WAL or journal
 *                   file (SQLITE_IOERR_WRITE / _TRUNCATE, through sweeps/store_fault_vfs.c)
 *   dbsync:N        the Nth sync SQLite itself makes of those files (SQLITE_IOERR_FSYNC)
 *   random:SEED:P   each of the above fails with probability P, from a generator seeded by SEED
 *
 * dbwrite and dbsync count apart from write and fsync: a sweep makes a few dozen of the latter
 * and hundreds of the former, so one N-loop over both would walk mostly SQLite's pages.
 *
 * A process in which a fault fired says so on stderr at exit ("BIGBATCH_FAULT: 1 injected
 * fault(s) fired"): SQLite absorbs some failures (a checkpoint at close), so a test walking N
 * learns from this line, not from errors, that the Nth call was reached.
 *
 * Each process counts its own calls: a sweep's runs inherit the variable and fail their own
 * Nth checkpoint write. The state is the one file-static struct in fault.c: the test hook,
 * set once at start by fault_init and read nowhere else. */
#ifndef BB_FAULT_H
#define BB_FAULT_H
#include <stdbool.h>

#include "util.h"

typedef enum { FAULT_WRITE, FAULT_FSYNC, FAULT_ALLOC, FAULT_DBWRITE, FAULT_DBSYNC, FAULT_N_POINTS } FaultPoint;

/* Parses spec (BIGBATCH_FAULT's value; NULL or "" for none); -1 with err naming the variable. */
int fault_init(const char *spec, Error *err);
/* Counts a call at point p; true when this call must fail (errno is then EIO, or ENOMEM). */
bool fault_should_fail(FaultPoint p);
/* Whether any fault is set (alloc faults need SQLite's allocator wrapped before it starts). */
bool fault_active(void);
/* How many faults fired so far in this process (for the message of the error they cause). */
long fault_fired(void);

#endif
