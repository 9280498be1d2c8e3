/* The sweep's side of the runs table: registering an experiment's runs, claiming them one
 * at a time so that no run executes twice (even with several sweep processes on one
 * database), re-queueing runs whose owner died, and closing runs whose process failed.
 *
 * A run's life: pending -> running (claimed: attempt+1, owner host and pid) -> complete |
 * diverged | failed (written by the run itself, or failed by its owner when the process
 * died without saying). A running run whose owner is gone (dead pid on this host, or no
 * heartbeat for stale_after seconds) becomes stale, and stale runs are claimed like pending
 * ones. */
#ifndef BB_CLAIMS_H
#define BB_CLAIMS_H
#include "experiment.h"
#include "store.h"

enum { RUN_PENDING, RUN_RUNNING, RUN_COMPLETE, RUN_DIVERGED, RUN_FAILED, RUN_STALE, RUN_N_STATUS };
extern const char *const RUN_STATUS_NAMES[RUN_N_STATUS];

/* The experiment row (name, scale) and its runs, in one transaction; runs already present
 * keep their status and rows. The experiment's run list becomes exactly `runs`. */
int claims_register(Store *s, const Experiment *exp, const RunSpec *runs, int n_runs, long long *exp_id,
                    Error *err);
/* failed -> pending for the experiment's runs; *n = how many. */
int claims_retry_failed(Store *s, long long exp_id, int *n, Error *err);
/* running -> stale where the owner is dead or silent for stale_after seconds. */
int claims_mark_stale(Store *s, long long exp_id, double stale_after, int *n, Error *err);
/* Claims the first pending or stale run (grid order): 1 with run_id and attempt, 0 when
 * none is left, -1 on error. `log` is recorded as the run's log file. */
int claims_take(Store *s, long long exp_id, int pid, const char *log_dir, char run_id[65], int *attempt,
                Error *err);
int claims_heartbeat(Store *s, const char *run_id, int attempt, Error *err);
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
/* Records the attempt in the attempts table (retried: a reason and e->next not RUN_FAILED) and, unless
 * the run recorded a complete or diverged end, sets the run to e->next with the reason: one
 * transaction. */
int claims_end_attempt(Store *s, const AttemptEnd *e, Error *err);
/* Number of the experiment's runs in each status. */
int claims_count(Store *s, long long exp_id, int counts[RUN_N_STATUS], Error *err);

#endif
