/* The sbatch script of a sweep (sbatch.h). */
#include "sbatch.h"

#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

/* `s` in single quotes for sh: a ' inside becomes '\''. */
static void sh_quote(FILE *out, const char *s)
{
    fputc('\'', out);
    for (const char *p = s; *p; p++) {
        if (*p == '\'') fputs("'\\''", out);
        else fputc(*p, out);
    }
    fputc('\'', out);
}

/* The mean seconds of the experiment's finished runs in db, and how many; 0 runs when none or
 * no database (or an empty file); -1 when the file there is not one the sweep could use. */
static int measured(const char *db, const char *name, const char *scale, double *mean_s, int *finished,
                    Error *err)
{
    *mean_s = 0;
    *finished = 0;
    struct stat st_db;
    if (stat(db, &st_db) != 0 || st_db.st_size == 0) return 0;
    Store s;
    if (store_open(&s, db, true, err) != 0) return -1;
    sqlite3_stmt *st;
    if (store_prepare(&s, &st,
                      "SELECT avg(r.finished - r.started), count(*) FROM runs r JOIN experiment_runs x ON x.run_id = r.id"
                      " JOIN experiments e ON e.id = x.experiment_id WHERE e.name=?1 AND e.scale=?2"
                      " AND r.status IN ('complete','diverged','collapsed') AND r.finished > r.started",
                      err) == 0) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, scale, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            *mean_s = sqlite3_column_double(st, 0);
            *finished = sqlite3_column_int(st, 1);
        }
        sqlite3_finalize(st);
    }
    store_close(&s);
    return 0;
}

/* The script's placement and resources: --chdir (absolute; --output is relative to it),
 * partition, account, memory, GPUs, signal and requeue, then the user's own lines. */
static void resource_lines(FILE *out, const SweepOptions *o, const char *chdir, const char *name)
{
    fprintf(out, "#SBATCH --chdir=%s\n#SBATCH --output=bigbatch-%s-%s.out\n#SBATCH --open-mode=append\n", chdir,
            name, o->array ? "%A_%a" : "%j");
    if (o->partition) fprintf(out, "#SBATCH --partition=%s\n", o->partition);
    if (o->account) fprintf(out, "#SBATCH --account=%s\n", o->account);
    if (o->mem) fprintf(out, "#SBATCH --mem=%s\n", o->mem);
    if (!strncmp(o->device, "cuda", 4))
        fprintf(out, "#SBATCH --gpus=%d\n", o->workers * (o->gpus_per_run > 0 ? o->gpus_per_run : o->ranks));
    /* 90 s before the time limit (or on preemption) the sweep checkpoints its runs and
     * requeues the job, which resumes them */
    fprintf(out, "#SBATCH --signal=B:USR2@90\n#SBATCH --requeue\n");
    for (int i = 0; i < o->n_sbatch_lines; i++) fprintf(out, "#SBATCH %s\n", o->sbatch_lines[i]);
}

/* The time limit: --time as given, else from the runs measured so far. */
static void time_line(FILE *out, const SweepOptions *o, const char *db, int left, int workers, int finished,
                      double mean_s)
{
    if (o->time_limit) {
        fprintf(out, "#SBATCH --time=%s\n", o->time_limit);
    } else if (finished > 0 && mean_s > 0) {
        double waves = ceil((double)left / workers);
        long limit = (long)ceil(waves * mean_s * 1.25 / 60) + 10; /* minutes */
        fprintf(out, "# time: %d run%s left x %.0f s measured on average, %d at once, + 25%% + 10 min\n", left,
                left == 1 ? "" : "s", mean_s, workers);
        fprintf(out, "#SBATCH --time=%ld-%02ld:%02ld:00\n", limit / 1440, limit / 60 % 24, limit % 60);
    } else {
        fprintf(out, "# time: no run of this experiment is measured in %s yet: give --time or add #SBATCH --time\n", db);
    }
}

/* The sweep's command line, every value quoted for sh. */
static void command_line(FILE *out, const SweepOptions *o, const char *bin, const char *db, int workers, int threads)
{
    const char *args[] = {bin, "sweep", o->file, "--scale", o->scale, "--launcher", "slurm", "--db", db,
                          "--device", o->device};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        sh_quote(out, args[i]);
        fputc(' ', out);
    }
    fprintf(out, "--workers %d --ranks %d --threads %d --max-attempts %d --stale-after %g --requeue", workers,
            o->ranks, threads, o->max_attempts, o->stale_after);
    if (o->array)
        fprintf(out, " --array-runs-per-task %d --array-task \"$SLURM_ARRAY_TASK_ID\"", o->array_runs_per_task);
    if (o->gpus_per_run > 0) fprintf(out, " --gpus-per-run %d", o->gpus_per_run);
    if (o->checkpoint_epochs > 0) fprintf(out, " --checkpoint-every %de", o->checkpoint_epochs);
    else if (o->checkpoint_seconds > 0) fprintf(out, " --checkpoint-every %.17gs", o->checkpoint_seconds);
    fputc('\n', out);
}

/* --array: one task per array_runs_per_task runs of the grid, and how the tasks' databases
 * come back into the sweep's: a job after the array, or the next sweep on it. */
static void array_lines(FILE *out, const SweepOptions *o, const char *bin, const char *db, int n_runs)
{
    int tasks = (n_runs + o->array_runs_per_task - 1) / o->array_runs_per_task;
    fprintf(out, "# A job array: task K runs runs K*%d..K*%d+%d of the grid, into a database of its own\n"
                 "# (<db>.array/K.db). After it, merge them into the sweep's database with the job\n"
                 "#   sbatch --dependency=afterany:JOBID --wrap \"",
            o->array_runs_per_task, o->array_runs_per_task, o->array_runs_per_task - 1);
    sh_quote(out, bin);
    fputs(" merge --array ", out);
    sh_quote(out, db);
    fprintf(out, "\"\n# (JOBID: what sbatch said; or sbatch --parsable), or the next sweep on it does.\n"
                 "#SBATCH --array=0-%d\n", tasks > 0 ? tasks - 1 : 0);
}

int sbatch_write(FILE *out, const SweepOptions *o, const char *bin, const char *db, const char *name,
                 const char *scale, int n_runs, Error *err)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        error_set(err, "the current folder's path is too long for the script");
        return -1;
    }
    const char *chdir = o->chdir ? o->chdir : cwd;
    /* the sweep's own default: this machine's cores over the runs' ranks */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = o->threads > 0 ? o->threads : (int)(cpus / (o->workers * o->ranks));
    if (threads < 1) threads = 1;
    double mean_s;
    int finished;
    if (measured(db, name, scale, &mean_s, &finished, err) != 0) return -1;
    int left = n_runs - finished > 0 ? n_runs - finished : 0;
    fprintf(out, "#!/bin/sh\n# bigbatch sweep %s (%s scale): %d runs, %d left; %d at once, each %d rank%s x %d "
                 "thread%s.\n# Submit with: sbatch <this file>. Written by bigbatch sweep --print-sbatch.\n",
            name, scale, n_runs, left, o->workers, o->ranks, o->ranks == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
    if (o->threads <= 0)
        fprintf(out, "# threads: this machine's %ld cores over %d run%s x %d rank%s; give --threads for the nodes'\n",
                cpus, o->workers, o->workers == 1 ? "" : "s", o->ranks, o->ranks == 1 ? "" : "s");
    /* an array task: its runs, as many at once as --workers allows */
    int workers = o->array && o->workers > o->array_runs_per_task ? o->array_runs_per_task : o->workers;
    fprintf(out, "#SBATCH --job-name=bigbatch-%s\n#SBATCH --ntasks=%d\n#SBATCH --cpus-per-task=%d\n", name,
            workers * o->ranks, threads);
    if (o->array) array_lines(out, o, bin, db, n_runs);
    time_line(out, o, db, o->array ? o->array_runs_per_task : left, workers, finished, mean_s);
    resource_lines(out, o, chdir, name);
    fprintf(out, "cd ");
    sh_quote(out, chdir);
    fprintf(out, " || exit 1\nexec ");
    command_line(out, o, bin, db, workers, threads);
    return ferror(out) ? (error_set(err, "writing the script: write error"), -1) : 0;
}
