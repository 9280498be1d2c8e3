/* What a sweep under --launcher slurm asks SLURM about its own job: whether the allocation is
 * gone (cancelled, expired, preempted, its node lost), so that a step failing for that reason
 * is not counted as the run's failure; and its requeue. Both run scontrol as an argument
 * vector (no shell) with the job id from SLURM_JOB_ID, digits only. */
#ifndef BB_SLURM_STATE_H
#define BB_SLURM_STATE_H
#include <stdbool.h>
#include <stddef.h>

/* True when the attempt's log (its srun's own messages: "job N has expired", "Job/step already
 * completing or completed", "revoked") or `scontrol show job` (a state other than RUNNING, or a
 * job SLURM no longer knows) says the allocation is gone; why says which. False when it cannot
 * tell (no scontrol): the attempt then ends as any other. */
bool slurm_allocation_gone(const char *log_path, char *why, size_t why_len);
/* `scontrol requeue $SLURM_JOB_ID`: 0, or -1 with why. */
int slurm_requeue(char *why, size_t why_len);

#endif
