/* What a sweep under --launcher slurm asks SLURM about its own job: whether the allocation is
 * gone (cancelled, expired, preempted, its node lost), so that a step failing for that reason
 * is not counted as the run's failure; whether a SIGTERM came from scancel or its time limit; and its requeue.
 * Each runs scontrol as an argument vector (no shell) with the job id from SLURM_JOB_ID,
 * digits only. */
#ifndef BB_SLURM_STATE_H
#define BB_SLURM_STATE_H
#include <stdbool.h>
#include <stddef.h>

/* True when the attempt's log (its srun's own messages: "job N has expired", "Job/step already
 * completing or completed", "revoked") or `scontrol show job` (a state other than RUNNING, or a
 * job SLURM no longer knows) says the allocation is gone; why says which. False when it cannot
 * tell (no scontrol): the attempt then ends as any other. */
bool slurm_allocation_gone(const char *log_path, char *why, size_t why_len);
/* True when `scontrol show job` says the job was cancelled (scancel: CANCELLED, or COMPLETING
 * with Reason=None), not ended by its time limit (Reason=TimeLimit) or preempted: its SIGTERM
 * then asks the sweep to stop, not to requeue. False when it cannot tell. */
bool slurm_cancelled(char *why, size_t why_len);
/* True when `scontrol show job` says the job reached its time limit (TIMEOUT, or COMPLETING
 * with Reason=TimeLimit). */
bool slurm_timed_out(void);
/* `scontrol requeue $SLURM_JOB_ID`: 0, or -1 with why. */
int slurm_requeue(char *why, size_t why_len);

#endif
