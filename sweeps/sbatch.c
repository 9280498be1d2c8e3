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

int sbatch_write(FILE *out, const SweepOptions *o, const char *bin, const char *db, const char *name,
                 const char *scale, int n_runs, Error *err)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) {
        error_set(err, "the current folder's path is too long for the script");
        return -1;
    }
    const int threads = o->threads > 0 ? o->threads : 1;
    double mean_s;
    int finished;
    if (measured(db, name, scale, &mean_s, &finished, err) != 0) return -1;
    int left = n_runs - finished > 0 ? n_runs - finished : 0;
    fprintf(out, "#!/bin/sh\n# bigbatch sweep %s (%s scale): %d runs, %d left; %d at once, each %d rank%s x %d "
                 "thread%s.\n# Submit with: sbatch <this file>. Written by bigbatch sweep --print-sbatch.\n",
            name, scale, n_runs, left, o->workers, o->ranks, o->ranks == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
    fprintf(out, "#SBATCH --job-name=bigbatch-%s\n#SBATCH --ntasks=%d\n#SBATCH --cpus-per-task=%d\n", name,
            o->workers * o->ranks, threads);
    if (finished > 0 && mean_s > 0) {
        double waves = ceil((double)left / o->workers);
        long limit = (long)ceil(waves * mean_s * 1.25 / 60) + 10; /* minutes */
        fprintf(out, "# time: %d run%s left x %.0f s measured on average, %d at once, + 25%% + 10 min\n", left,
                left == 1 ? "" : "s", mean_s, o->workers);
        fprintf(out, "#SBATCH --time=%ld-%02ld:%02ld:00\n", limit / 1440, limit / 60 % 24, limit % 60);
    } else {
        fprintf(out, "# time: no run of this experiment is measured in %s yet: add #SBATCH --time=D-HH:MM:SS\n", db);
    }
    fprintf(out, "#SBATCH --output=bigbatch-%s-%%j.out\n", name);
    fprintf(out, "cd ");
    sh_quote(out, cwd);
    fprintf(out, " || exit 1\nexec ");
    const char *args[] = {bin, "sweep", o->file, "--scale", o->scale, "--launcher", "slurm", "--db", db,
                          "--device", o->device};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        sh_quote(out, args[i]);
        fputc(' ', out);
    }
    fprintf(out, "--workers %d --ranks %d --threads %d --max-attempts %d --stale-after %g\n", o->workers, o->ranks,
            threads, o->max_attempts, o->stale_after);
    return ferror(out) ? (error_set(err, "writing the script: write error"), -1) : 0;
}
