#include "steps_target.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_parts.h"

int steps_target_run(const CellsData *d, const char *run_id, long *step, int *epoch, Error *err)
{
    const char *col = metric_epoch_column(d->exp.metric);
    char from[256], sql[512];
    /* evals hold test metrics only; a train metric is known at epoch ends alone */
    if (!strcmp(col, "test_acc") || !strcmp(col, "test_loss"))
        snprintf(from, sizeof from,
                 "SELECT step, epoch, %s AS v FROM epochs WHERE run_id = ?1"
                 " UNION ALL SELECT step, epoch, %s FROM evals WHERE run_id = ?1",
                 col, col);
    else
        snprintf(from, sizeof from, "SELECT step, epoch, %s AS v FROM epochs WHERE run_id = ?1", col);
    snprintf(sql, sizeof sql, "SELECT step, epoch FROM (%s) WHERE v %s ?2 ORDER BY step LIMIT 1", from,
             d->set.higher_is_better ? ">=" : "<=");
    sqlite3_stmt *st;
    if (store_prepare((Store *)&d->store, &st, sql, err)) return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, d->exp.target);
    int rc = sqlite3_step(st), found = 1;
    if (rc == SQLITE_ROW) {
        *step = sqlite3_column_int64(st, 0);
        *epoch = sqlite3_column_int(st, 1);
        found = 0;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        error_set(err, "%s: reading epochs: %s", d->path, sqlite3_errstr(rc));
        return -1;
    }
    return found;
}

static StepsSeries *series_of(StepsSeries **all, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*all)[i].name, name)) return &(*all)[i];
    *all = xrealloc(*all, (size_t)(*n + 1) * sizeof **all, "steps series");
    StepsSeries *s = &(*all)[(*n)++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

/* Keeps the fewest steps per batch of a series. */
static void add_point(StepsSeries *s, const StepsPoint *p)
{
    for (int i = 0; i < s->n; i++) {
        if (s->pts[i].batch != p->batch) continue;
        if (p->steps < s->pts[i].steps) s->pts[i] = *p;
        return;
    }
    s->pts = xrealloc(s->pts, (size_t)(s->n + 1) * sizeof *s->pts, "steps points");
    s->pts[s->n++] = *p;
}

static int by_batch(const void *a, const void *b)
{
    double x = ((const StepsPoint *)a)->batch, y = ((const StepsPoint *)b)->batch;
    return (x > y) - (x < y);
}

int steps_target_collect(const CellsData *d, StepsSeries **out, int *n, Error *err)
{
    *out = NULL;
    *n = 0;
    for (int i = 0; i < d->set.n_cells; i++) {
        const Cell *c = &d->set.cells[i];
        const char *bv = cells_value_in(&d->exp, c->cell, "batch"), *id = first_complete(c);
        char *end;
        double b = bv ? strtod(bv, &end) : 0;
        if (!bv || *end || !(b > 0) || !id) continue;
        StepsPoint p = {.batch = b, .cell = c, .run_id = id};
        int found = steps_target_run(d, id, &p.steps, &p.epoch, err);
        if (found < 0) {
            steps_target_free(*out, *n);
            return -1;
        }
        if (found) continue;
        char key[256];
        cell_keys(&d->exp, c->cell, true, false, "batch", key, sizeof key);
        add_point(series_of(out, n, key), &p);
    }
    for (int s = 0; s < *n; s++) qsort((*out)[s].pts, (size_t)(*out)[s].n, sizeof *(*out)[s].pts, by_batch);
    return 0;
}

void steps_target_free(StepsSeries *s, int n)
{
    for (int i = 0; i < n; i++) free(s[i].pts);
    free(s);
}

int steps_target_noise_scale(const CellsData *d, const char *run_id, double *out, Error *err)
{
    sqlite3_stmt *st;
    *out = NAN;
    if (store_prepare((Store *)&d->store, &st,
                      "SELECT noise_scale FROM epochs WHERE run_id = ?1 AND noise_scale IS NOT NULL"
                      " ORDER BY epoch DESC LIMIT 1",
                      err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        error_set(err, "%s: reading the noise scale: %s", d->path, sqlite3_errstr(rc));
        return -1;
    }
    return 0;
}
