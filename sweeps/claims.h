/* The sweep's side of the runs table: registering an experiment's runs, claiming them one
 * at a time so that no run executes twice (even with several sweep processes on one
 * database), re-queueing runs whose owner died, and closing runs whose process failed.
 *
 * A run's life: pending -> running (claimed: attempt+1, the owner's random token and a lease)
 * -> complete | diverged | failed (written by the run itself, or failed by its owner when the
 * process died without saying). The owning sweep renews the lease with its heartbeat. A
 * running run becomes stale, and is claimed again like a pending one, when its lease has
 * expired by the database's clock, or at once when its owner is a dead process of this host
 * and pid namespace (a process id means nothing in another namespace: two sweeps in separate
 * containers on one database see each other only through their leases). */
#ifndef BB_CLAIMS_H
#define BB_CLAIMS_H
#include "experiment.h"
#include "store.h"

/* Who holds claims: a random token (what a claim is recognised by), the lease it renews, and,
 * to tell a dead owner at once, its host, pid namespace and pid. */
typedef struct {
    char token[33];
    char host[256];
    char pid_ns[64];  /* /proc/self/ns/pid, e.g. "pid:[4026531836]"; "" when unknown */
    int pid;
    double lease_s;   /* a claim not renewed for this long may be taken over */
} ClaimOwner;

/* This process as an owner: a fresh token from getrandom. 0, or -1 with err. */
int claims_owner_init(ClaimOwner *o, double lease_s, Error *err);

enum { RUN_PENDING, RUN_RUNNING, RUN_COMPLETE, RUN_DIVERGED, RUN_FAILED, RUN_STALE, RUN_COLLAPSED, RUN_PRUNED,
       RUN_N_STATUS };
extern const char *const RUN_STATUS_NAMES[RUN_N_STATUS];

/* The experiment row (name, scale) and its runs, in one transaction; runs already present
 * keep their status and rows. The experiment's run list becomes exactly `runs`, and `runs`
 * become this connection's own: the ones claims_take and claims_count look at, whatever grid
 * another sweep registers for the experiment later. */
int claims_register(Store *s, const Experiment *exp, const RunSpec *runs, int n_runs, long long *exp_id,
                    Error *err);
/* failed -> pending for the experiment's runs; *n = how many. */
int claims_retry_failed(Store *s, long long exp_id, int *n, Error *err);
/* running -> stale where the lease has expired (database clock), or the owner is a dead
 * process in `me`'s host and pid namespace; runs claimed before leases (lease NULL) go stale
 * after stale_after seconds without a heartbeat. */
/* *n: how many; `first` (len bytes) receives "<run>: <why>" of the first ("" when none). */
int claims_mark_stale(Store *s, long long exp_id, const ClaimOwner *me, double stale_after, int *n, char *first,
                      size_t len, Error *err);
/* Claims the first pending or stale run of this sweep's grid (as claims_register listed it,
 * in its order) for `me`: 1 with run_id and attempt, 0 when none is left, -1 on error. `log`
 * is recorded as the run's log file. */
int claims_take(Store *s, const ClaimOwner *me, const char *log_dir, char run_id[65], int *attempt, Error *err);
/* *held: whether `me` still holds the run's attempt (running, with its token), so that what
 * the run sends may be written. */
int claims_held(Store *s, const ClaimOwner *me, const char *run_id, int attempt, bool *held, Error *err);
/* Renews the lease of a run `me` holds (and its heartbeat). */
int claims_heartbeat(Store *s, const ClaimOwner *me, const char *run_id, int attempt, Error *err);
/* The run's process ended: unless the run recorded its own end, it becomes `status`
 * (failed, or stale when the sweep was interrupted) with `why`. */
int claims_close(Store *s, const char *run_id, int attempt, int status, int exit_code, const char *why,
                 Error *err);
/* How one attempt ended, as the sweep saw it when its process exited. */
typedef struct {
    const char *run_id;
    int attempt;
    int exit_code;
    const char *outcome; /* complete, diverged, failed, killed, interrupted */
    const char *reason;  /* NULL for complete and diverged */
    int next;            /* where a run that did not record its end goes: RUN_FAILED, back to the
                            queue (RUN_PENDING), or RUN_STALE for the next sweep when interrupted */
} AttemptEnd;

/* The run's status and error as its attempt left them (the run writes its own end); *status
 * is -1 when the run has moved on to a later attempt (another sweep took it over). */
int claims_attempt_state(Store *s, const char *run_id, int attempt, int *status, char *error, size_t len,
                         Error *err);
/* The reason the attempt before this one failed or was killed; "" when there is none. */
int claims_previous_reason(Store *s, const char *run_id, int attempt, char *reason, size_t len, Error *err);
/* The end the run recorded for its attempt (complete, diverged, failed) into `attempts`, unless a
 * row is there, inside the caller's transaction: should the sweep die before it reaps the
 * process (claims_end_attempt replaces the row then), the attempt's end is not lost. */
int claims_note_recorded_end(Store *s, const char *run_id, int attempt, Error *err);
/* Records the attempt in the attempts table (retried: a reason and e->next not RUN_FAILED) and, unless
 * the run recorded a complete or diverged end, sets the run to e->next with the reason: one
 * transaction. */
int claims_end_attempt(Store *s, const AttemptEnd *e, Error *err);
/* Number of this sweep's runs (claims_register's grid) in each status. */
int claims_count(Store *s, int counts[RUN_N_STATUS], Error *err);

#endif
