/* Merging results databases (merge.h) with SQLite: each input is copied (sqlite3_backup) to a
 * scratch file, opened to write there so the store brings it to the current schema, attached
 * to OUT, and its rows copied by column name. */
#include "merge.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "store_fault_vfs.h"

/* The tables of a run's rows besides `runs` itself, all keyed by run_id. */
static const char *const RUN_TABLES[] = {"epochs", "steps", "evals", "layer_stats", "attempts"};
enum { N_RUN_TABLES = (int)(sizeof RUN_TABLES / sizeof RUN_TABLES[0]) };

/* "a, b, c": the columns of main.<table> (OUT's schema, which the scratch copy now has too),
 * but `except` (NULL: none). */
static char *column_list(Store *s, const char *table, const char *except, Error *err)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s', 'main')", table);
    sqlite3_stmt *st;
    if (store_prepare(s, &st, sql, err)) return NULL;
    char *cols = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&cols, &len);
    if (!f) {
        sqlite3_finalize(st);
        error_set(err, "out of memory");
        return NULL;
    }
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!except || strcmp(name, except)) fprintf(f, "%s\"%s\"", n++ ? ", " : "", name);
    }
    sqlite3_finalize(st);
    fclose(f);
    if (!n) {
        error_set(err, "%s: no table %s", s->path, table);
        free(cols);
        return NULL;
    }
    return cols;
}

/* Runs `fmt` (one %s: the column list of `table`, used twice) with ?1 bound to run_id. */
static int copy_rows(Store *s, const char *table, const char *fmt, const char *run_id, Error *err)
{
    char *cols = column_list(s, table, NULL, err);
    if (!cols) return -1;
    char *sql = NULL;
    int rc = asprintf(&sql, fmt, table, cols, cols, table) < 0 ? -1 : 0;
    free(cols);
    sqlite3_stmt *st = NULL;
    if (rc == 0) rc = store_prepare(s, &st, sql, err);
    free(sql);
    if (rc != 0) return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    rc = store_step_done(s, st, "copying a run", err);
    sqlite3_finalize(st);
    return rc;
}

/* OUT's run and all its rows become the input's. */
static int take_run(Store *s, const char *run_id, Error *err)
{
    char sql[128];
    for (int t = 0; t < N_RUN_TABLES; t++) {
        snprintf(sql, sizeof sql, "DELETE FROM main.%s WHERE run_id=?1", RUN_TABLES[t]);
        sqlite3_stmt *st;
        if (store_prepare(s, &st, sql, err)) return -1;
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        int rc = store_step_done(s, st, "replacing a run", err);
        sqlite3_finalize(st);
        if (rc) return -1;
    }
    /* REPLACE keeps experiment_runs' references: the row is back before the statement ends */
    if (copy_rows(s, "runs", "INSERT OR REPLACE INTO main.%s(%s) SELECT %s FROM src.%s WHERE id=?1", run_id, err))
        return -1;
    for (int t = 0; t < N_RUN_TABLES; t++)
        if (copy_rows(s, RUN_TABLES[t], "INSERT INTO main.%s(%s) SELECT %s FROM src.%s WHERE run_id=?1", run_id, err))
            return -1;
    return 0;
}

typedef struct {
    char status[16];
    double acc, loss, train_loss;
    long long steps;
} RunEnd;

static bool finished(const RunEnd *r)
{
    return !strcmp(r->status, "complete") || !strcmp(r->status, "diverged") || !strcmp(r->status, "collapsed") ||
           !strcmp(r->status, "pruned");
}

static bool same_real(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static bool same_end(const RunEnd *a, const RunEnd *b)
{
    return !strcmp(a->status, b->status) && a->steps == b->steps && same_real(a->acc, b->acc) &&
           same_real(a->loss, b->loss) && same_real(a->train_loss, b->train_loss);
}

static double real_col(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static RunEnd run_end(sqlite3_stmt *st, int first)
{
    RunEnd r;
    snprintf(r.status, sizeof r.status, "%s", (const char *)sqlite3_column_text(st, first));
    r.acc = real_col(st, first + 1);
    r.loss = real_col(st, first + 2);
    r.train_loss = real_col(st, first + 3);
    r.steps = sqlite3_column_int64(st, first + 4);
    return r;
}

/* x in the fewest digits (at most 17) that read back as x: two values that differ never print
 * the same. */
static void exact_text(char *buf, size_t len, double x)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, x);
        if (strtod(buf, NULL) == x) return;
    }
}

/* One line of a conflict for a real column that differs: OUT's | the input's (difference). */
static void real_diff(FILE *log, const char *name, double mine, double theirs)
{
    if (same_real(mine, theirs)) return;
    char a[40], b[40];
    exact_text(a, sizeof a, mine);
    exact_text(b, sizeof b, theirs);
    fprintf(log, "    %-10s  %s | %s", name, a, b);
    if (isfinite(mine) && isfinite(theirs)) fprintf(log, "  (difference %+.3g)", theirs - mine);
    fputc('\n', log);
}

/* The columns in which the two results of one run differ, and by how much. */
static void print_conflict(FILE *log, const char *id, const char *out, const char *input, const RunEnd *mine,
                           const RunEnd *theirs)
{
    fprintf(log, "conflict: run %s differs between %s and %s (%s's kept), column by column, %s | %s:\n", id, out,
            input, out, out, input);
    if (strcmp(mine->status, theirs->status)) fprintf(log, "    %-10s  %s | %s\n", "status", mine->status, theirs->status);
    if (mine->steps != theirs->steps)
        fprintf(log, "    %-10s  %lld | %lld  (difference %+lld)\n", "steps", mine->steps, theirs->steps,
                theirs->steps - mine->steps);
    real_diff(log, "test_acc", mine->acc, theirs->acc);
    real_diff(log, "test_loss", mine->loss, theirs->loss);
    real_diff(log, "train_loss", mine->train_loss, theirs->train_loss);
}

typedef enum { TAKE_ADD, TAKE_REPLACE, TAKE_SAME, TAKE_KEEP, TAKE_CONFLICT } Choice;

static Choice choose(bool in_out, const RunEnd *mine, const RunEnd *theirs)
{
    if (!in_out) return TAKE_ADD;
    if (same_end(mine, theirs)) return TAKE_SAME;
    if (finished(theirs) && !finished(mine)) return TAKE_REPLACE;
    if (finished(theirs) && finished(mine)) return TAKE_CONFLICT;
    return TAKE_KEEP; /* the input's is unfinished: OUT's is as good or better */
}

static int merge_runs(Store *s, const char *input, FILE *log, MergeCounts *c, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "SELECT i.id, i.status, i.test_acc, i.test_loss, i.train_loss, i.steps, o.id IS NOT NULL,"
                      " o.status, o.test_acc, o.test_loss, o.train_loss, o.steps"
                      " FROM src.runs i LEFT JOIN main.runs o ON o.id = i.id ORDER BY i.rowid",
                      err))
        return -1;
    /* Decide first, copy after: the SELECT must end before this connection writes. */
    typedef struct {
        char id[65];
        Choice choice;
    } Decision;
    Decision *d = NULL;
    int n = 0, rc = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        d = xrealloc(d, sizeof *d * (size_t)(n + 1), "merge decisions");
        snprintf(d[n].id, sizeof d[n].id, "%s", (const char *)sqlite3_column_text(st, 0));
        RunEnd theirs = run_end(st, 1), mine = {"", NAN, NAN, NAN, 0};
        bool in_out = sqlite3_column_int(st, 6);
        if (in_out) mine = run_end(st, 7);
        d[n].choice = choose(in_out, &mine, &theirs);
        if (d[n].choice == TAKE_CONFLICT) print_conflict(log, d[n].id, s->path, input, &mine, &theirs);
        n++;
    }
    if (step != SQLITE_DONE) {
        error_set(err, "%s: reading runs: %s", input, sqlite3_errmsg(s->db));
        rc = -1;
    }
    sqlite3_finalize(st);
    int *counters[] = {&c->added, &c->replaced, &c->same, &c->kept, &c->conflicts};
    for (int i = 0; i < n && rc == 0; i++) {
        (*counters[d[i].choice])++;
        if (d[i].choice == TAKE_ADD || d[i].choice == TAKE_REPLACE) rc = take_run(s, d[i].id, err);
    }
    free(d);
    return rc;
}

/* Experiments by (name, scale): an input's that OUT lacks is added under a new id; then the
 * input's run lists are added to OUT's (a run listed twice is listed once). */
static int merge_experiments(Store *s, MergeCounts *c, Error *err)
{
    char *no_id = column_list(s, "experiments", "id", err); /* OUT assigns the id */
    if (!no_id) return -1;
    char *add = NULL, *link = NULL;
    int rc = 0;
    if ((asprintf(&add, "INSERT INTO main.experiments(%s) SELECT %s FROM src.experiments i WHERE NOT EXISTS"
                                   " (SELECT 1 FROM main.experiments o WHERE o.name = i.name AND o.scale = i.scale)",
                             no_id, no_id) < 0 ||
                    asprintf(&link, "%s", "INSERT OR IGNORE INTO main.experiment_runs(experiment_id, run_id, seq, cell, label,"
                                          " repeat) SELECT o.id, x.run_id, x.seq, x.cell, x.label, x.repeat"
                                          " FROM src.experiment_runs x JOIN src.experiments i ON i.id = x.experiment_id"
                                          " JOIN main.experiments o ON o.name = i.name AND o.scale = i.scale") < 0)) {
        error_set(err, "out of memory");
        rc = -1;
    }
    free(no_id);
    int before = rc == 0 ? sqlite3_total_changes(s->db) : 0;
    if (rc == 0) rc = store_exec(s, add, err);
    if (rc == 0) c->experiments_added += sqlite3_total_changes(s->db) - before;
    if (rc == 0) rc = store_exec(s, link, err);
    free(add);
    free(link);
    return rc;
}

/* A copy of `input` at `scratch`, in the current schema; the input is only read. */
static int scratch_copy(const char *input, const char *scratch, Error *err)
{
    if (access(input, R_OK) != 0) {
        error_set(err, "%s: %s", input, strerror(errno));
        return -1;
    }
    Store in;
    if (store_open(&in, input, true, err) != 0) return -1;
    sqlite3 *to = NULL;
    int rc = sqlite3_open_v2(scratch, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, store_fault_vfs_name());
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(to, "main", in.db, "main") : NULL;
    if (b) {
        rc = sqlite3_backup_step(b, -1);
        sqlite3_backup_finish(b);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    } else if (rc == SQLITE_OK) {
        rc = sqlite3_errcode(to);
    }
    if (rc != SQLITE_OK) error_set(err, "%s: cannot copy to %s: %s", input, scratch, sqlite3_errstr(rc));
    sqlite3_close(to);
    store_close(&in);
    if (rc != SQLITE_OK) return -1;
    Store up; /* opening to write brings it to the current schema */
    if (store_open(&up, scratch, false, err) != 0) return -1;
    store_close(&up);
    return 0;
}

static int merge_one(Store *s, const char *input, const char *scratch, FILE *log, MergeCounts *c, Error *err)
{
    if (scratch_copy(input, scratch, err) != 0) return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "ATTACH ?1 AS src", err)) return -1;
    sqlite3_bind_text(st, 1, scratch, -1, SQLITE_STATIC);
    int rc = store_step_done(s, st, "attaching an input", err);
    sqlite3_finalize(st);
    if (rc) return -1;
    MergeCounts before = *c;
    rc = store_begin(s, err);
    if (rc == 0) rc = merge_runs(s, input, log, c, err);
    if (rc == 0) rc = merge_experiments(s, c, err);
    if (rc == 0) rc = store_commit(s, err);
    if (rc != 0) {
        store_rollback(s);
        *c = before;
    } else {
        fprintf(log, "%s: %d runs added, %d replaced, %d the same, %d kept, %d conflicts\n",
                input, c->added - before.added, c->replaced - before.replaced, c->same - before.same,
                c->kept - before.kept, c->conflicts - before.conflicts);
    }
    Error ignored;
    store_exec(s, "DETACH src", &ignored);
    return rc;
}

int merge_databases(const char *out, char *const *inputs, int n_inputs, FILE *log, MergeCounts *counts,
                    Error *err)
{
    memset(counts, 0, sizeof *counts);
    Store s;
    if (store_open(&s, out, false, err) != 0) return -1;
    size_t len = strlen(out) + 32;
    char *scratch = xmalloc(len, "scratch path");
    int rc = 0;
    for (int i = 0; i < n_inputs && rc == 0; i++) {
        snprintf(scratch, len, "%s.merge-%d", out, (int)getpid());
        rc = merge_one(&s, inputs[i], scratch, log, counts, err);
        static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
        for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
            char *p = NULL;
            if (asprintf(&p, "%s%s", scratch, suffixes[k]) >= 0) unlink(p);
            free(p);
        }
    }
    free(scratch);
    store_close(&s);
    return rc;
}
