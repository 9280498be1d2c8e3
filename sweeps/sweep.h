/* `bigbatch sweep`: runs an experiment's grid, each run a `bigbatch train` child process
 * (under mpirun when ranks > 1), claimed in the results store so that the sweep resumes
 * after a crash and several sweep processes can share one database. */
#ifndef BB_SWEEP_H
#define BB_SWEEP_H
#include <stdbool.h>

#include "../engine/base/util.h"
#include "prune.h"

typedef struct {
    const char *file;       /* the experiment file */
    const char *scale;      /* smoke | proxy | full */
    const char *db;         /* NULL: results/<experiment>.db */
    int workers;            /* runs at once in this process */
    int ranks;              /* MPI ranks per run */
    int threads;            /* per run; 0: cores / (workers x ranks) */
    const char *device;     /* every run's --device ("cpu", "cuda", "cuda:N") */
    bool retry_failed;
    bool dry_run;
    double stale_after;     /* seconds without a heartbeat before a running run is stale */
    const char *mpirun;     /* launcher for ranks > 1 (local) */
    bool slurm;             /* --launcher slurm: each run a job step of the allocation (srun) */
    bool print_sbatch;      /* write an sbatch script for the whole sweep to stdout, run nothing */
    bool workers_given;     /* --workers on the command line (else, under SLURM, the allocation's) */
    bool mpirun_given;      /* --mpirun on the command line */
    int max_attempts;       /* a killed or failing run is tried again up to this many attempts */
    double progress_every;  /* seconds between the lines on runs in flight; 0: none; < 0: the
                             * default, sweep_progress_every */
    bool quiet;
    int repeats;            /* > 0: seeds per cell instead of the file's repeats */
    const char *const *only_labels; /* n_only_labels > 0: run only the cells with these labels */
    int n_only_labels;
    /* --print-sbatch's resources and placement (NULL/0: not asked for), and its own lines */
    int gpus_per_run;          /* --device cuda: GPUs of each run (0: one per rank) */
    const char *mem, *partition, *account, *time_limit, *chdir;
    const char *const *sbatch_lines;
    int n_sbatch_lines;
    bool requeue;              /* on SIGUSR1/2 or SIGTERM in a SLURM job: checkpoint, then requeue it */
    double checkpoint_seconds; /* --checkpoint-every: each run saves this often (seconds) */
    int checkpoint_epochs;     /* or every this many epochs; both 0: no checkpoints */
    bool array;                /* --print-sbatch --array: a job array, one task per array_runs_per_task runs */
    int array_runs_per_task;   /* runs of the grid per array task [1] */
    int array_task;            /* >= 0: be that task of the array (array.h); -1: the whole sweep */
    PruneOptions prune;        /* --prune asha: stop the cells that fall behind in their group */
} SweepOptions;

void sweep_options_defaults(SweepOptions *o);
/* Seconds between the lines on runs in flight: as given, else 30 on a terminal and 600 when
 * the output goes to a file (a log need not repeat itself). */
double sweep_progress_every(const SweepOptions *o);
/* sweep_run's failures: a usage error (a bad experiment file, which leaves no trace; --launcher
 * slurm outside an allocation) exits 2, a run-time or data error (the store, the disk) 1. */
enum { SWEEP_ERROR = -1, SWEEP_USAGE = -2 };
/* The exit status when the SLURM allocation went away under the sweep (EX_TEMPFAIL): its runs
 * are left queued, none counted as failed. */
enum { SWEEP_EXIT_ALLOCATION_GONE = 75 };
/* The exit status: 0 every run ended complete, collapsed, diverged or pruned, 1 some failed, 130 interrupted, 75
 * the allocation is gone;
 * SWEEP_USAGE or SWEEP_ERROR with err. */
int sweep_run(const SweepOptions *o, Error *err);
/* results/<name>.db, or o->db. */
void sweep_db_path(const char *db, const char *experiment_name, char *out, size_t len);

#endif
