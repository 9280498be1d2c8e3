/* ASHA pruning replayed over the curves of a finished sweep (prune_replay.h). */
#include "prune_replay.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "cells.h"
#include "../engine/train/train.h"

/* A run as the replay sees it: the epochs it trained in the full grid, its accuracy at the
 * rungs (has: it has that epoch's row). */
typedef struct {
    int epochs;       /* --epochs */
    int trained;      /* its epoch rows, and the epoch it diverged or failed in */
    bool has[PRUNE_MAX_RUNGS];
    double acc[PRUNE_MAX_RUNGS];
} ReplayRun;

static int config_epochs(const char *config)
{
    TrainConfig d;
    train_config_defaults(&d);
    cJSON *o = cJSON_Parse(config);
    const cJSON *e = o ? cJSON_GetObjectItemCaseSensitive(o, "epochs") : NULL;
    int epochs = cJSON_IsString(e) ? atoi(e->valuestring) : cJSON_IsNumber(e) ? e->valueint : d.epochs;
    cJSON_Delete(o);
    return epochs;
}

static int read_run(CellsData *d, const CellRun *run, ReplayRun *x, Error *err)
{
    if (strcmp(run->status, "complete") && strcmp(run->status, "collapsed") && strcmp(run->status, "diverged") &&
        strcmp(run->status, "failed")) {
        error_set(err, "%s: run %s is %s: the replay needs a finished sweep without pruning, every run's whole "
                       "curve", d->path, run->id, run->status);
        return -1;
    }
    sqlite3_stmt *st;
    if (store_prepare(&d->store, &st, "SELECT config, (SELECT count(*) FROM epochs WHERE run_id=?1) FROM runs WHERE id=?1",
                      err))
        return -1;
    sqlite3_bind_text(st, 1, run->id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        x->epochs = config_epochs((const char *)sqlite3_column_text(st, 0));
        x->trained = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    /* a run that broke off trained part of the epoch it broke in: counted whole */
    if (x->trained < x->epochs && (!strcmp(run->status, "diverged") || !strcmp(run->status, "failed"))) x->trained++;
    return 0;
}

static int read_rungs(CellsData *d, const char *run_id, const PruneRungs *r, ReplayRun *x, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(&d->store, &st, "SELECT test_acc FROM epochs WHERE run_id=?1 AND epoch=?2", err)) return -1;
    for (int k = 0; k < r->n; k++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, r->epoch[k]);
        x->has[k] = sqlite3_step(st) == SQLITE_ROW;
        x->acc[k] = x->has[k] && sqlite3_column_type(st, 0) != SQLITE_NULL ? sqlite3_column_double(st, 0) : NAN;
    }
    sqlite3_finalize(st);
    return 0;
}

/* "batch=40 opt=lars": the cell's values of the group axes (tuned: of the tuned ones). */
static void axes_label(const CellSet *set, const Cell *c, bool tuned, char *out, size_t len)
{
    out[0] = 0;
    for (const cJSON *it = c->cell->child; it; it = it->next) {
        bool want = tuned ? cells_is_tuned(set->exp, it->string) : cells_is_group_axis(set->exp, it->string);
        if (!want || !cJSON_IsString(it)) continue;
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s=%s", used ? " " : "", it->string, it->valuestring);
    }
}

static void best_text(const CellSet *set, const Cell *c, char *out, size_t len)
{
    char axes[256];
    if (!c) {
        snprintf(out, len, "none");
        return;
    }
    axes_label(set, c, true, axes, sizeof axes);
    snprintf(out, len, "%s (%.4f)", axes, c->mean);
}

typedef struct {
    int groups, same;
    long pruned, full;
} ReplayTotals;

/* One group: the cells of set that share cell g's group axes. */
static int replay_group(FILE *out, CellsData *d, int g, const PruneOptions *o, ReplayTotals *t, Error *err)
{
    const CellSet *set = &d->set;
    int n = 0, *idx = xcalloc((size_t)set->n_cells, sizeof *idx, "replay");
    for (int i = g; i < set->n_cells; i++)
        if (cells_same_group(set, &set->cells[g], &set->cells[i])) idx[n++] = i;
    PruneCell *pc = xcalloc((size_t)n, sizeof *pc, "replay");
    ReplayRun **runs = xcalloc((size_t)n, sizeof *runs, "replay");
    int *stop = xcalloc((size_t)n, sizeof *stop, "replay"), open, rc = 0;
    PruneRungs r = {0};
    for (int i = 0; i < n && rc == 0; i++) {
        const Cell *c = &set->cells[idx[i]];
        runs[i] = xcalloc((size_t)c->runs, sizeof *runs[i], "replay");
        for (int j = 0; j < c->runs && rc == 0; j++) rc = read_run(d, &c->run_list[j], &runs[i][j], err);
        if (rc == 0 && i == 0) prune_rungs_of(o, runs[0][0].epochs, &r);
        for (int j = 0; j < c->runs && rc == 0; j++) rc = read_rungs(d, c->run_list[j].id, &r, &runs[i][j], err);
        for (int k = 0; k < r.n && rc == 0; k++) {
            int at = 0, finite = 0;
            double sum = 0;
            for (int j = 0; j < c->runs; j++)
                if (runs[i][j].has[k]) at++, finite += !isnan(runs[i][j].acc[k]), sum += isnan(runs[i][j].acc[k]) ? 0 : runs[i][j].acc[k];
            pc[i].state[k] = at ? PRUNE_AT : PRUNE_ENDED;
            pc[i].metric[k] = finite ? sum / finite : NAN;
        }
    }
    if (rc == 0) {
        prune_group(&r, o->eta, pc, n, stop, &open);
        long full = 0, pruned = 0;
        const Cell *best_full = NULL, *best_pruned = NULL;
        for (int i = 0; i < n; i++) {
            const Cell *c = &set->cells[idx[i]];
            for (int j = 0; j < c->runs; j++) {
                int e = runs[i][j].trained;
                full += e;
                pruned += stop[i] >= 0 && r.epoch[stop[i]] < e ? r.epoch[stop[i]] : e;
            }
            if (c->best) best_full = c;
            bool counts = c->complete > 0 && c->diverged == 0 && stop[i] < 0;
            if (counts && (!best_pruned || cells_better(set, c->mean, best_pruned->mean))) best_pruned = c;
        }
        char group[256], a[300], b[300], rungs[128];
        axes_label(set, &set->cells[g], false, group, sizeof group);
        best_text(set, best_full, a, sizeof a);
        best_text(set, best_pruned, b, sizeof b);
        prune_rungs_text(&r, rungs, sizeof rungs);
        bool same = best_full == best_pruned;
        fprintf(out, "| %s | %d | %s | %s | %s | %s | %ld / %ld |\n", group[0] ? group : "(all)", n, rungs, a, b,
                same ? "yes" : "**no**", pruned, full);
        t->groups++;
        t->same += same;
        t->pruned += pruned;
        t->full += full;
    }
    for (int i = 0; i < n; i++) free(runs[i]);
    free(runs);
    free(pc);
    free(stop);
    free(idx);
    return rc;
}

static int replay_db(FILE *out, const char *file, const char *scale, const char *db, const PruneOptions *o, Error *err)
{
    CellsData d;
    if (cells_open(&d, file, scale, db, err) != 0) return -1;
    if (d.exp.n_tuned == 0) {
        error_set(err, "--replay-prune: %s tunes no axis (`tuned =`): no group to prune within", file);
        cells_close(&d);
        return -1;
    }
    fprintf(out, "ASHA pruning replayed on %s (%s scale), eta %d: per group the full grid's best cell and the pruned "
                 "sweep's, by %s\n\n", d.exp.name, d.exp.scale, o->eta, d.exp.metric);
    fprintf(out, "| group | cells | rungs (epochs) | full grid's best | pruned sweep's best | same | epochs (pruned / "
                 "full) |\n|---|---|---|---|---|---|---|\n");
    ReplayTotals t = {0};
    int rc = 0;
    for (int g = 0; g < d.set.n_cells && rc == 0; g++) {
        bool first = true; /* the group's first cell stands for it */
        for (int j = 0; j < g && first; j++) first = !cells_same_group(&d.set, &d.set.cells[j], &d.set.cells[g]);
        if (first) rc = replay_group(out, &d, g, o, &t, err);
    }
    if (rc == 0)
        fprintf(out, "\n%d of %d groups find the same best cell; the pruned sweep trains %ld of the full grid's %ld "
                     "epochs (%.1f%%)\n", t.same, t.groups, t.pruned, t.full, t.full ? 100.0 * t.pruned / t.full : 0.0);
    cells_close(&d);
    return rc;
}

static bool is_archive(const char *path)
{
    size_t n = strlen(path);
    return n > 7 && !strcmp(path + n - 7, ".sql.gz");
}

/* An archive (results/archive/X.sql.gz) is read through a temporary database, so that the docs
 * can print the replay of archived data with nothing loaded first. */
int prune_replay(FILE *out, const char *file, const char *scale, const char *db, const PruneOptions *o, Error *err)
{
    if (!db || !is_archive(db)) return replay_db(out, file, scale, db, o, err);
    char dir[] = "/tmp/bigbatch-replay.XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        error_set(err, "a temporary folder for %s: %s", db, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/replay.db", dir);
    int rc = archive_restore(db, path, err);
    if (rc == 0) rc = replay_db(out, file, scale, path, o, err);
    unlink(path);
    rmdir(dir);
    return rc;
}
