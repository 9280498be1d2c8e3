/* A sweep's SLURM job array: its task databases and their folding in (array.h). */
#include "array.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "merge.h"
#include "store.h"

void array_dir(const char *db, char *out, size_t len)
{
    size_t n = strlen(db);
    int keep = (int)(n > 3 && !strcmp(db + n - 3, ".db") ? n - 3 : n);
    snprintf(out, len, "%.*s.array", keep, db);
}

void array_task_db(const char *db, int task, char *out, size_t len)
{
    char dir[1100];
    array_dir(db, dir, sizeof dir);
    snprintf(out, len, "%s/%d.db", dir, task);
}

/* The status of run id in s ("" when s lacks it). */
static int run_status(Store *s, const char *id, char *out, size_t len, Error *err)
{
    sqlite3_stmt *st;
    out[0] = '\0';
    if (store_prepare(s, &st, "SELECT status FROM runs WHERE id=?1", err)) return -1;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) snprintf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return 0;
    error_set(err, "%s: %s", s->path, sqlite3_errmsg(s->db));
    return -1;
}

/* Whether run i ended in the sweep's database already (then the task leaves it). */
static bool ended(const char *status, bool retry_failed)
{
    return !strcmp(status, "complete") || !strcmp(status, "diverged") || !strcmp(status, "collapsed") ||
           !strcmp(status, "pruned") || (!strcmp(status, "failed") && !retry_failed);
}

int array_keep_task(const char *db, int task, int per_task, bool retry_failed, RunSpec *runs, int *n_runs,
                    Error *err)
{
    Store s = {0};
    struct stat sb;
    bool have_db = stat(db, &sb) == 0 && sb.st_size > 0;
    if (have_db && store_open(&s, db, true, err)) return -1;
    long first = (long)task * per_task;
    int kept = 0, rc = 0;
    for (int i = 0; i < *n_runs; i++) {
        char status[32] = "";
        bool mine = i >= first && i < first + per_task;
        if (mine && have_db && rc == 0) rc = run_status(&s, runs[i].id, status, sizeof status, err);
        if (rc == 0 && mine && !ended(status, retry_failed)) {
            RunSpec t = runs[kept];
            runs[kept++] = runs[i];
            runs[i] = t;
        }
    }
    for (int i = kept; i < *n_runs; i++) runspec_clear(&runs[i]);
    *n_runs = kept;
    if (have_db) store_close(&s);
    return rc;
}

/* Whether every run in the task database at path has ended (no task is still at work on it). */
static int all_ended(const char *path, bool *yes, Error *err)
{
    Store s;
    if (store_open(&s, path, true, err)) return -1;
    sqlite3_stmt *st;
    int rc = store_prepare(&s, &st, "SELECT count(*) FROM runs WHERE status IN ('pending','running','stale')", err);
    if (rc == 0) {
        *yes = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0;
        sqlite3_finalize(st);
    }
    store_close(&s);
    return rc;
}

/* Unlinks a merged task database with its WAL and shared-memory files. */
static int remove_db(const char *path, Error *err)
{
    static const char *const SUFFIXES[] = {"-wal", "-shm", ""};
    for (int k = 0; k < 3; k++) {
        char p[1500];
        snprintf(p, sizeof p, "%s%s", path, SUFFIXES[k]);
        if (unlink(p) != 0 && errno != ENOENT) {
            error_set(err, "%s: cannot remove it after merging: %s", p, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* Folds one task database into db; a conflict leaves it in place to be looked at. */
static int fold_one(const char *db, char *path, bool all, FILE *log, int *merged, int *left, Error *err)
{
    bool done = true;
    if (!all && all_ended(path, &done, err)) return -1;
    if (!done) {
        fprintf(log, "%s: a task is still at work on it: left for later\n", path);
        (*left)++;
        return 0;
    }
    MergeCounts c;
    if (merge_databases(db, &path, 1, log, &c, err)) return -1;
    fprintf(log, "%s: merged into %s (%d runs added, %d replaced, %d the same, %d conflicts)\n", path, db,
            c.added, c.replaced, c.same, c.conflicts);
    if (c.conflicts) {
        fprintf(log, "%s: kept, for its conflicting results\n", path);
        (*left)++;
        return 0;
    }
    (*merged)++;
    return remove_db(path, err);
}

/* A task database's name: digits, then .db. */
static bool task_db_name(const char *name)
{
    size_t digits = strspn(name, "0123456789");
    return digits > 0 && !strcmp(name + digits, ".db");
}

int array_fold(const char *db, bool all, FILE *log, int *merged, int *left, Error *err)
{
    char dir[1100];
    array_dir(db, dir, sizeof dir);
    *merged = *left = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR) return 0; /* no task databases (or no folder for any) */
        error_set(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (!task_db_name(e->d_name)) continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = fold_one(db, path, all, log, merged, left, err);
    }
    closedir(d);
    if (rc == 0 && *left == 0) rmdir(dir); /* best effort: a file of the user's keeps it */
    return rc;
}
