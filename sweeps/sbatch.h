/* `bigbatch sweep FILE --launcher slurm --print-sbatch`: a complete sbatch script for the
 * whole sweep. Its tasks hold --workers runs of --ranks ranks at once, each task
 * --threads CPUs; its time limit is the runs left times their mean measured time in the
 * database, over the workers, plus a quarter and 10 minutes (no limit line, and a comment
 * saying so, when no run of the experiment has been measured). Every value is quoted for sh. */
#ifndef BB_SBATCH_H
#define BB_SBATCH_H
#include <stdio.h>

#include "sweep.h"
#include "../engine/base/util.h"

/* bin: this program's path; db: the database the sweep uses; name/scale: the experiment's. */
int sbatch_write(FILE *out, const SweepOptions *o, const char *bin, const char *db, const char *name,
                 const char *scale, int n_runs, Error *err);

#endif
