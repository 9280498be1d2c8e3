/* The cells of an experiment from its results database (see cells.h). */
#include "cells.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"

const ExpKey *cells_find_key(const Experiment *exp, const char *name)
{
    for (int i = 0; i < exp->n_keys; i++)
        if (!strcmp(exp->keys[i].name, name)) return &exp->keys[i];
    return NULL;
}

bool cells_is_tuned(const Experiment *exp, const char *name)
{
    for (int i = 0; i < exp->n_tuned; i++)
        if (!strcmp(exp->tuned[i], name)) return true;
    return false;
}

/* Derived values follow from the group axes. */
bool cells_is_group_axis(const Experiment *exp, const char *name)
{
    const ExpKey *k = cells_find_key(exp, name);
    if (!k || cells_is_tuned(exp, name)) return false;
    if (k->role == KEY_GRID) return true;
    return k->role == KEY_ZIP && !cells_is_tuned(exp, k->zip_with);
}

bool cells_same_value(const char *a, const char *b)
{
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (ea != a && !*ea && eb != b && !*eb) return x == y;
    return !strcmp(a, b);
}

const char *cells_value_in(const Experiment *exp, const cJSON *cell, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cell, name);
    if (cJSON_IsString(v)) return v->valuestring;
    const ExpKey *k = cells_find_key(exp, name);
    return k && k->role == KEY_FIXED ? k->values[0] : NULL;
}

const char *cells_paper_value(const Experiment *exp, const cJSON *cell, bool group_only)
{
    if (!experiment_paper_applies(exp)) return NULL; /* [paper] scales: not comparable here */
    for (int r = 0; r < exp->n_paper_rows; r++) {
        bool match = true;
        for (int c = 0; c + 1 < exp->n_paper_cols && match; c++) {
            const char *col = exp->paper_cols[c];
            if (group_only && cells_find_key(exp, col) && cells_find_key(exp, col)->role != KEY_FIXED &&
                !cells_is_group_axis(exp, col))
                continue; /* a tuned axis: the paper's best is compared with ours */
            const char *v = cells_value_in(exp, cell, col);
            match = v && cells_same_value(v, exp->paper_rows[r][c]);
        }
        if (match) return exp->paper_rows[r][exp->n_paper_cols - 1];
    }
    return NULL;
}

const char *cells_metric_sql(const char *metric)
{
    if (!strcmp(metric, "test_loss")) return "r.test_loss";
    if (!strcmp(metric, "train_loss")) return "r.train_loss";
    if (!strcmp(metric, "loss_gap")) return "(SELECT loss_gap FROM epochs WHERE run_id = r.id ORDER BY epoch DESC LIMIT 1)";
    if (!strcmp(metric, "best_test_acc")) return "(SELECT max(test_acc) FROM epochs WHERE run_id = r.id)";
    return "r.test_acc";
}

static int load_cells(CellSet *set, Store *s, long long exp_id, Error *err)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT e.cell, e.label, r.status, %s, r.id, coalesce(r.device, ''),"
             " (SELECT max(epoch) FROM epochs WHERE run_id = r.id) FROM experiment_runs e"
             " JOIN runs r ON r.id = e.run_id"
             " WHERE e.experiment_id = ?1 ORDER BY e.seq",
             cells_metric_sql(set->exp->metric));
    sqlite3_stmt *st;
    if (store_prepare(s, &st, sql, err)) return -1;
    sqlite3_bind_int64(st, 1, exp_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *cell_text = (const char *)sqlite3_column_text(st, 0);
        const char *status = (const char *)sqlite3_column_text(st, 2);
        const char *run_id = (const char *)sqlite3_column_text(st, 4);
        if (!cell_text || !status || !run_id) {
            error_set(err, "%s: a run of the experiment has no cell, status or id", s->path);
            rc = SQLITE_ERROR;
            break;
        }
        Cell *c = NULL;
        for (int i = 0; i < set->n_cells && !c; i++) {
            char *t = cJSON_PrintUnformatted(set->cells[i].cell);
            if (t && !strcmp(t, cell_text)) c = &set->cells[i];
            free(t);
        }
        if (!c) {
            set->cells = xrealloc(set->cells, sizeof *set->cells * (size_t)(set->n_cells + 1), "report cells");
            c = &set->cells[set->n_cells++];
            memset(c, 0, sizeof *c);
            c->cell = cJSON_Parse(cell_text);
            const char *label = (const char *)sqlite3_column_text(st, 1);
            c->label = xstrdup(label ? label : "");
            if (!c->cell) {
                error_set(err, "%s: a run's cell is not JSON: %.60s", s->path, cell_text);
                rc = SQLITE_ERROR;
                break;
            }
        }
        c->run_list = xrealloc(c->run_list, sizeof *c->run_list * (size_t)(c->runs + 1), "cell runs");
        CellRun *run = &c->run_list[c->runs];
        memset(run, 0, sizeof *run);
        snprintf(run->id, sizeof run->id, "%s", run_id);
        snprintf(run->status, sizeof run->status, "%s", status);
        snprintf(run->device, sizeof run->device, "%s", (const char *)sqlite3_column_text(st, 5));
        run->value = sqlite3_column_type(st, 3) != SQLITE_NULL ? sqlite3_column_double(st, 3) : NAN;
        c->runs++;
        bool collapsed = !strcmp(status, "collapsed");
        if ((collapsed || !strcmp(status, "complete")) && sqlite3_column_type(st, 3) != SQLITE_NULL) {
            double x = sqlite3_column_double(st, 3);
            run->complete = true;
            c->complete++;
            c->collapsed += collapsed;
            c->sum += x;
            c->sum_sq += x * x;
        } else if (!strcmp(status, "diverged")) {
            c->diverged++;
        } else if (!strcmp(status, "pruned")) { /* a result of the pruning, not of training to the end */
            c->pruned++;
            if (sqlite3_column_int(st, 6) > c->pruned_epoch) c->pruned_epoch = sqlite3_column_int(st, 6);
            if (sqlite3_column_type(st, 3) != SQLITE_NULL) c->pruned_sum += sqlite3_column_double(st, 3);
        } else if (!strcmp(status, "failed") || !strcmp(status, "complete") || collapsed) {
            c->failed++;
        } else {
            c->waiting++;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        if (rc != SQLITE_ERROR || !err->msg[0]) error_set(err, "%s: reading runs: %s", s->path, sqlite3_errstr(rc));
        return -1;
    }
    for (int i = 0; i < set->n_cells; i++) {
        Cell *c = &set->cells[i];
        c->mean = c->complete ? c->sum / c->complete : NAN;
        double var = c->complete > 1 ? (c->sum_sq - c->sum * c->sum / c->complete) / (c->complete - 1) : 0;
        c->std = c->complete > 1 ? sqrt(var > 0 ? var : 0) : NAN;
    }
    return 0;
}

/* Two cells are in one group when every group axis has the same value. */
bool cells_same_group(const CellSet *set, const Cell *a, const Cell *b)
{
    for (const cJSON *it = a->cell->child; it; it = it->next) {
        if (!cells_is_group_axis(set->exp, it->string)) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(b->cell, it->string);
        if (!cJSON_IsString(o) || strcmp(o->valuestring, it->valuestring)) return false;
    }
    return true;
}

bool cells_better(const CellSet *set, double a, double b)
{
    return set->higher_is_better ? a > b : a < b;
}

/* A cell counts for "best" when it trained: some repeat complete and none diverged. */
static void mark_best(CellSet *set)
{
    if (set->exp->n_tuned == 0) return; /* nothing was tuned: no cell is "the best" of a group */
    for (int i = 0; i < set->n_cells; i++) {
        Cell *c = &set->cells[i];
        if (c->complete == 0 || c->diverged > 0) continue;
        bool best = true;
        for (int j = 0; j < set->n_cells && best; j++) {
            const Cell *o = &set->cells[j];
            if (j == i || o->complete == 0 || o->diverged > 0 || !cells_same_group(set, c, o)) continue;
            if (cells_better(set, o->mean, c->mean) || (o->mean == c->mean && j < i)) best = false;
        }
        c->best = best;
    }
}

static long long find_experiment(Store *s, const Experiment *exp, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "SELECT id FROM experiments WHERE name = ?1 AND scale = ?2", err)) return -1;
    sqlite3_bind_text(st, 1, exp->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, exp->scale, -1, SQLITE_STATIC);
    long long id = -1;
    if (sqlite3_step(st) == SQLITE_ROW) id = sqlite3_column_int64(st, 0);
    else
        error_set(err, "%s has no sweep of %s at the %s scale (bigbatch sweep %s --scale %s)", s->path, exp->name,
                  exp->scale, exp->path, exp->scale);
    sqlite3_finalize(st);
    return id;
}

static void free_cells(CellSet *set)
{
    for (int i = 0; i < set->n_cells; i++) {
        cJSON_Delete(set->cells[i].cell);
        free(set->cells[i].label);
        free(set->cells[i].run_list);
    }
    free(set->cells);
    set->cells = NULL;
    set->n_cells = 0;
}

int cells_open(CellsData *d, const char *file, const char *scale, const char *db, Error *err)
{
    memset(d, 0, sizeof *d);
    if (experiment_load(file, scale, &d->exp, err) != 0) return -1;
    sweep_db_path(db, d->exp.name, d->path, sizeof d->path);
    if (access(d->path, F_OK) != 0) {
        error_set(err, "%s: no such database yet: `bigbatch sweep %s` runs the experiment into it, and "
                       "`make results-load` rebuilds the archived results (results/archive/%s.sql.gz)",
                  d->path, file, d->exp.name);
        experiment_free(&d->exp);
        return -1;
    }
    if (store_open(&d->store, d->path, true, err) != 0) {
        experiment_free(&d->exp);
        return -1;
    }
    d->set = (CellSet){&d->exp, NULL, 0, strstr(d->exp.metric, "acc") != NULL};
    d->exp_id = find_experiment(&d->store, &d->exp, err);
    if (d->exp_id < 0 || load_cells(&d->set, &d->store, d->exp_id, err) != 0) goto fail;
    if (d->set.n_cells == 0) {
        error_set(err, "%s: experiment %s has no runs", d->path, d->exp.name);
        goto fail;
    }
    mark_best(&d->set);
    return 0;
fail:
    cells_close(d);
    return -1;
}

void cells_close(CellsData *d)
{
    free_cells(&d->set);
    store_close(&d->store);
    experiment_free(&d->exp);
}
