/* Re-running archived cells and judging them against the archive (verify.h). */
#include "verify.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cells.h"
#include "sweep.h"

static const Cell *cell_labelled(const CellSet *set, const char *label)
{
    for (int i = 0; i < set->n_cells; i++)
        if (!strcmp(set->cells[i].label, label)) return &set->cells[i];
    return NULL;
}

/* The archived cell's complete seeds: their range and spread. */
typedef struct {
    int complete, collapsed, diverged;
    double lo, hi, std;
} Archived;

static Archived summarize(const Cell *c)
{
    Archived a = {.lo = INFINITY, .hi = -INFINITY};
    double sum = 0, sum_sq = 0;
    for (int i = 0; i < c->runs; i++) {
        const CellRun *r = &c->run_list[i];
        if (!strcmp(r->status, "collapsed")) a.collapsed++;
        if (!strcmp(r->status, "diverged")) a.diverged++;
        if (strcmp(r->status, "complete") || !isfinite(r->value)) continue;
        a.complete++;
        a.lo = fmin(a.lo, r->value);
        a.hi = fmax(a.hi, r->value);
        sum += r->value;
        sum_sq += r->value * r->value;
    }
    double var = a.complete > 1 ? (sum_sq - sum * sum / a.complete) / (a.complete - 1) : 0;
    a.std = sqrt(var > 0 ? var : 0);
    return a;
}

/* Whether a new run lands within the archive (verify.h's rule); why not, in why. */
static bool within(const Archived *a, double floor, const CellRun *r, char *why, size_t len)
{
    why[0] = 0;
    if (!strcmp(r->status, "complete") && isfinite(r->value)) {
        double w = fmax(a->std, floor);
        if (a->complete == 0) snprintf(why, len, "complete where no archived seed was");
        else if (r->value < a->lo - w || r->value > a->hi + w)
            snprintf(why, len, "%.4f outside [%.4f, %.4f]", r->value, a->lo - w, a->hi + w);
        return !why[0];
    }
    int seen = !strcmp(r->status, "collapsed") ? a->collapsed : !strcmp(r->status, "diverged") ? a->diverged : 0;
    if (!seen) snprintf(why, len, "%s where no archived seed was", r->status);
    return seen > 0;
}

static void describe_archived(const Cell *c, char *out, size_t len)
{
    size_t used = 0;
    for (int i = 0; i < c->runs && used < len; i++) {
        const CellRun *r = &c->run_list[i];
        const char *sep = i ? ", " : "";
        if (!strcmp(r->status, "complete") && isfinite(r->value))
            used += (size_t)snprintf(out + used, len - used, "%s%.4f", sep, r->value);
        else if (isfinite(r->value))
            used += (size_t)snprintf(out + used, len - used, "%s%.4f %s", sep, r->value, r->status);
        else
            used += (size_t)snprintf(out + used, len - used, "%s%s", sep, r->status);
    }
}

static int run_today(const VerifyRequest *r, const char *const *labels, int n, Error *err)
{
    SweepOptions o;
    sweep_options_defaults(&o);
    o.file = r->file;
    o.scale = r->scale;
    o.db = r->scratch;
    o.repeats = r->repeats;
    o.workers = r->workers;
    o.workers_given = true;
    o.threads = r->threads;
    if (r->device) o.device = r->device;
    o.only_labels = labels;
    o.n_only_labels = n;
    int rc = sweep_run(&o, err);
    if (rc > 0) error_set(err, "the sweep of today's runs ended with status %d", rc);
    return rc == 0 ? 0 : -1;
}

static void print_judgement(FILE *out, const CellsData *arch, const CellsData *today, const char *const *labels,
                            int n, double floor, int *outside)
{
    fprintf(out, "\n| cell | archived seeds | today | verdict |\n|---|---|---|---|\n");
    for (int k = 0; k < n; k++) {
        const Cell *a = cell_labelled(&arch->set, labels[k]), *t = cell_labelled(&today->set, labels[k]);
        char seeds[256] = "", now[256] = "", verdict[256] = "within";
        describe_archived(a, seeds, sizeof seeds);
        if (t) describe_archived(t, now, sizeof now);
        Archived sum = summarize(a);
        for (int i = 0; t && i < t->runs; i++) {
            char why[160];
            if (within(&sum, floor, &t->run_list[i], why, sizeof why)) continue;
            snprintf(verdict, sizeof verdict, "OUTSIDE: %s", why);
            (*outside)++;
        }
        if (!t) {
            snprintf(verdict, sizeof verdict, "OUTSIDE: no run today");
            (*outside)++;
        }
        fprintf(out, "| %s | %s | %s | %s |\n", labels[k], seeds, now, verdict);
    }
}

int verify_run(const VerifyRequest *r, FILE *out, int *outside, Error *err)
{
    *outside = 0;
    CellsData arch, today;
    if (cells_open(&arch, r->file, r->scale, r->db, err) != 0) return -1;
    int n = r->n_labels ? r->n_labels : arch.set.n_cells;
    const char **labels = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *labels, "verify");
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        labels[k] = r->n_labels ? r->labels[k] : arch.set.cells[k].label;
        if (!cell_labelled(&arch.set, labels[k])) {
            error_set(err, "%s has no cell '%s' (bigbatch report %s lists them)", arch.path, labels[k], r->file);
            rc = -1;
        }
    }
    if (rc == 0) rc = run_today(r, labels, n, err);
    if (rc == 0 && (rc = cells_open(&today, r->file, r->scale, r->scratch, err)) == 0) {
        fprintf(out, "\n%s (%s scale): %d cell%s of %s re-run with today's engine, %d seed%s each; a run is within when "
                     "an archived seed ended as it did and, if complete, it lies within the archived seeds' range "
                     "widened by their standard deviation (at least %.3f)\n",
                arch.exp.name, arch.exp.scale, n, n == 1 ? "" : "s", arch.path, r->repeats, r->repeats == 1 ? "" : "s",
                r->floor);
        print_judgement(out, &arch, &today, labels, n, r->floor, outside);
        fprintf(out, "\n%s: %d run%s outside the archive's spread\n", *outside ? "DIFFERS" : "REPRODUCED", *outside,
                *outside == 1 ? "" : "s");
        cells_close(&today);
    }
    free(labels);
    cells_close(&arch);
    return rc;
}
