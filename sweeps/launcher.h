/* How a sweep starts a run of several ranks: the launcher's words (--mpirun, "mpirun
 * --oversubscribe" by default), -np K, then the run's own argument vector. Executed with
 * execvp, never through a shell: a path with spaces, quotes, $() or backticks arrives as
 * it was written, and nothing in it is run. */
#ifndef BB_LAUNCHER_H
#define BB_LAUNCHER_H
#include "../engine/base/util.h"

/* {words of launcher split at blanks..., "-np", "K", run_argv..., NULL} in one allocation
 * (free() it); the launcher's words are split at spaces and tabs only, quotes being ordinary
 * characters. NULL with err when the launcher has no word or memory runs out. */
char **launcher_argv(const char *launcher, int ranks, char *const *run_argv, Error *err);

/* A run as a job step of the SLURM allocation this process is in: {"srun", "--ntasks=K",
 * "--cpus-per-task=T", "--exclusive" (CPUs of its own among the steps running at once),
 * "--kill-on-bad-exit=1", "--mpi=pmix" (K > 1: Open MPI wires up through PMIx; "none" for
 * one rank), "--job-name=bigbatch-<run>", "--gpus=G" (G > 0), run_argv..., NULL}, one allocation (free() it). */
char **slurm_step_argv(int ranks, int threads, int gpus, const char *run_id, char *const *run_argv, Error *err);

#endif
