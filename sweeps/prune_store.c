/* The sweep's pruning, read from and written to the database (prune_store.h). */
#include "prune_store.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cells.h"
#include "claims.h"
#include "../engine/train/train.h"

/* What the database says of one run: its status and its test accuracy at each rung epoch. */
typedef struct {
    cJSON *cell;
    int cell_of;      /* the index of the first run of its cell (repeats share a cell) */
    int group_of;     /* the index of the first run of its group */
    int epochs;       /* the run's --epochs */
    bool ended;       /* complete, diverged, collapsed, failed or pruned */
    PruneRungs rungs; /* its group's */
    bool has[PRUNE_MAX_RUNGS];
    double acc[PRUNE_MAX_RUNGS];
} RunRows;

static int run_epochs(const RunSpec *r)
{
    for (int i = 0; i < r->n_flags; i++)
        if (!strcmp(r->flag_names[i], "epochs")) return atoi(r->flag_values[i]);
    TrainConfig d;
    train_config_defaults(&d);
    return d.epochs;
}

static bool same_group(const Experiment *exp, const cJSON *a, const cJSON *b)
{
    for (const cJSON *it = a->child; it; it = it->next) {
        if (!cells_is_group_axis(exp, it->string)) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(b, it->string);
        if (!cJSON_IsString(o) || !cJSON_IsString(it) || strcmp(o->valuestring, it->valuestring)) return false;
    }
    return true;
}

static bool is_ended(const char *status)
{
    return strcmp(status, "pending") && strcmp(status, "running") && strcmp(status, "stale");
}

/* The run's status and its rows at its group's rungs. */
static int read_run(Store *s, sqlite3_stmt *st_status, sqlite3_stmt *st_epoch, const RunSpec *r, RunRows *x,
                    RunVerdict *v, Error *err)
{
    sqlite3_reset(st_status);
    sqlite3_bind_text(st_status, 1, r->id, -1, SQLITE_STATIC);
    if (sqlite3_step(st_status) != SQLITE_ROW) {
        error_set(err, "%s: run %s of the sweep is not in its database", s->path, r->id);
        return -1;
    }
    snprintf(v->status, sizeof v->status, "%s", (const char *)sqlite3_column_text(st_status, 0));
    x->ended = is_ended(v->status);
    for (int k = 0; k < x->rungs.n; k++) {
        sqlite3_reset(st_epoch);
        sqlite3_bind_text(st_epoch, 1, r->id, -1, SQLITE_STATIC);
        sqlite3_bind_int(st_epoch, 2, x->rungs.epoch[k]);
        x->has[k] = sqlite3_step(st_epoch) == SQLITE_ROW;
        /* a non-finite accuracy (stored NULL) ranks last */
        x->acc[k] = x->has[k] && sqlite3_column_type(st_epoch, 0) != SQLITE_NULL ? sqlite3_column_double(st_epoch, 0) : NAN;
    }
    return 0;
}

/* Cell i's standing at rung k over its runs (repeats): the mean accuracy of those there. */
static void cell_at(const RunRows *x, int n_runs, int first, int k, PruneState *state, double *metric)
{
    int at = 0, finite = 0;
    double sum = 0;
    for (int j = first; j < n_runs; j++) {
        if (x[j].cell_of != first) continue;
        if (x[j].has[k]) {
            at++;
            if (!isnan(x[j].acc[k])) sum += x[j].acc[k], finite++;
        } else if (!x[j].ended) {
            *state = PRUNE_NOT_YET;
            return;
        }
    }
    *state = at ? PRUNE_AT : PRUNE_ENDED;
    *metric = finite ? sum / finite : NAN;
}

/* The decisions of the group whose first run is g, into the verdicts of its runs. */
static void judge_group(const RunRows *x, int n_runs, int g, int eta, RunVerdict *out)
{
    int *cells = xcalloc((size_t)n_runs, sizeof *cells, "pruning"), n = 0;
    for (int j = g; j < n_runs; j++)
        if (x[j].group_of == g && x[j].cell_of == j) cells[n++] = j;
    PruneCell *pc = xcalloc((size_t)n, sizeof *pc, "pruning");
    int *stop = xcalloc((size_t)n, sizeof *stop, "pruning"), open;
    const PruneRungs *r = &x[g].rungs;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < r->n; k++) cell_at(x, n_runs, cells[i], k, &pc[i].state[k], &pc[i].metric[k]);
    prune_group(r, eta, pc, n, stop, &open);
    for (int i = 0; i < n; i++)
        for (int j = cells[i]; j < n_runs; j++) {
            if (x[j].cell_of != cells[i]) continue;
            RunVerdict *v = &out[j];
            v->verdict = PRUNE_GO;
            if (stop[i] >= 0) {
                v->verdict = PRUNE_STOP;
                v->epoch = r->epoch[stop[i]];
                v->reached = x[j].has[stop[i]];
            } else if (open < r->n && x[j].has[open]) {
                v->verdict = PRUNE_HOLD;
                v->epoch = r->epoch[open];
            }
        }
    free(pc);
    free(stop);
    free(cells);
}

/* Which cell and group each run belongs to, and its group's rungs. */
static int place_runs(const Experiment *exp, const RunSpec *runs, int n_runs, const PruneOptions *o, RunRows *x,
                      Error *err)
{
    for (int i = 0; i < n_runs; i++) {
        x[i].cell = cJSON_Parse(runs[i].cell_json);
        if (!x[i].cell) {
            error_set(err, "run %s: its cell is not JSON", runs[i].id);
            return -1;
        }
        x[i].cell_of = x[i].group_of = i;
        for (int j = 0; j < i; j++) {
            if (x[i].cell_of == i && !strcmp(runs[j].cell_json, runs[i].cell_json)) x[i].cell_of = x[j].cell_of;
            if (x[i].group_of == i && same_group(exp, x[j].cell, x[i].cell)) x[i].group_of = x[j].group_of;
        }
        x[i].epochs = run_epochs(&runs[i]);
        prune_rungs_of(o, x[x[i].group_of].epochs, &x[i].rungs);
    }
    return 0;
}

int prune_scan(Store *s, const Experiment *exp, const RunSpec *runs, int n_runs, const PruneOptions *o,
               RunVerdict *out, Error *err)
{
    RunRows *x = xcalloc((size_t)(n_runs > 0 ? n_runs : 1), sizeof *x, "pruning");
    sqlite3_stmt *st_status = NULL, *st_epoch = NULL;
    int rc = place_runs(exp, runs, n_runs, o, x, err);
    if (rc == 0) rc = store_prepare(s, &st_status, "SELECT status FROM runs WHERE id=?1", err);
    if (rc == 0) rc = store_prepare(s, &st_epoch, "SELECT test_acc FROM epochs WHERE run_id=?1 AND epoch=?2", err);
    for (int i = 0; i < n_runs && rc == 0; i++) {
        memset(&out[i], 0, sizeof out[i]);
        rc = read_run(s, st_status, st_epoch, &runs[i], &x[i], &out[i], err);
    }
    for (int g = 0; g < n_runs && rc == 0; g++)
        if (x[g].group_of == g) judge_group(x, n_runs, g, o->eta, out);
    sqlite3_finalize(st_status);
    sqlite3_finalize(st_epoch);
    for (int i = 0; i < n_runs; i++) cJSON_Delete(x[i].cell);
    free(x);
    return rc;
}

static int run_sql(Store *s, const char *sql, const char *run_id, long step, int epoch, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, sql, err)) return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, step);
    sqlite3_bind_int(st, 3, epoch);
    int rc = store_step_done(s, st, "marking a run pruned", err);
    sqlite3_finalize(st);
    return rc;
}

/* The rows after the rung's evaluation go (steps are 0-based: the epoch's `step` is the count
 * done), and the run ends there with that evaluation as its result. */
static int mark_at(Store *s, const char *run_id, long step, int epoch, Error *err)
{
    static const char *const SQL[] = {
        "DELETE FROM epochs WHERE run_id=?1 AND epoch > ?3",
        "DELETE FROM steps WHERE run_id=?1 AND step >= ?2",
        "DELETE FROM layer_stats WHERE run_id=?1 AND step >= ?2",
        "DELETE FROM evals WHERE run_id=?1 AND step > ?2",
        "UPDATE runs SET status='pruned', finished=" STORE_NOW_SQL ", steps=?2, error=NULL, diverged_step=NULL,"
        " diverged_loss=NULL, (test_acc, test_loss, train_loss, nonfinite) ="
        " (SELECT test_acc, test_loss, train_loss, nonfinite FROM epochs WHERE run_id=?1 AND epoch=?3)"
        " WHERE id=?1",
        "INSERT OR IGNORE INTO attempts(run_id, attempt, finished, host, outcome, reason, retried)"
        " SELECT id, attempt, finished, host, 'pruned', 'stopped at the rung of epoch ' || ?3, 0 FROM runs"
        " WHERE id=?1 AND attempt > 0",
    };
    for (size_t i = 0; i < sizeof SQL / sizeof SQL[0]; i++)
        if (run_sql(s, SQL[i], run_id, step, epoch, err)) return -1;
    return 0;
}

int prune_mark(Store *s, const char *run_id, int epoch, bool *marked, Error *err)
{
    *marked = false;
    if (store_begin(s, err)) return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "SELECT e.step FROM epochs e JOIN runs r ON r.id = e.run_id WHERE e.run_id=?1 AND e.epoch=?2"
                      " AND r.status != 'pruned'",
                      err)) {
        store_rollback(s);
        return -1;
    }
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, epoch);
    bool found = sqlite3_step(st) == SQLITE_ROW;
    long step = found ? (long)sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if ((found && mark_at(s, run_id, step, epoch, err)) || store_commit(s, err)) {
        store_rollback(s);
        return -1;
    }
    *marked = found;
    return 0;
}
