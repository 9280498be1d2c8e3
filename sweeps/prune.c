/* ASHA's rungs and decisions (prune.h). */
#include "prune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void prune_options_defaults(PruneOptions *o)
{
    memset(o, 0, sizeof *o);
    o->eta = PRUNE_DEFAULT_ETA;
}

int prune_parse_rungs(const char *text, PruneOptions *o, Error *err)
{
    const char *p = text;
    o->n_rungs = 0;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1000000 || (*end && *end != ',')) {
            error_set(err, "--prune-rungs: '%s' is not a list of epochs such as 2,6", text);
            return -1;
        }
        if (o->n_rungs == PRUNE_MAX_RUNGS) {
            error_set(err, "--prune-rungs: more than %d rungs in '%s'", PRUNE_MAX_RUNGS, text);
            return -1;
        }
        if (o->n_rungs > 0 && v <= o->rungs[o->n_rungs - 1]) {
            error_set(err, "--prune-rungs: '%s' is not ascending", text);
            return -1;
        }
        o->rungs[o->n_rungs++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (o->n_rungs == 0) {
        error_set(err, "--prune-rungs: the list is empty");
        return -1;
    }
    return 0;
}

void prune_rungs_of(const PruneOptions *o, int epochs, PruneRungs *r)
{
    r->n = 0;
    if (o->n_rungs > 0) {
        for (int i = 0; i < o->n_rungs; i++)
            if (o->rungs[i] < epochs) r->epoch[r->n++] = o->rungs[i];
        return;
    }
    /* the default first rung leaves about two rungs below the end: epochs / eta^2, rounded up */
    long first = o->min_epochs > 0 ? o->min_epochs : (epochs + (long)o->eta * o->eta - 1) / ((long)o->eta * o->eta);
    for (long e = first > 0 ? first : 1; e < epochs && r->n < PRUNE_MAX_RUNGS; e *= o->eta) r->epoch[r->n++] = (int)e;
}

void prune_rungs_text(const PruneRungs *r, char *out, size_t len)
{
    out[0] = 0;
    for (int i = 0; i < r->n; i++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%d", i ? ", " : "", r->epoch[i]);
    }
    if (r->n == 0) snprintf(out, len, "none");
}

/* a before b: the higher metric, NaN last, then the lower index */
static bool ahead(const double *m, int a, int b)
{
    if (isnan(m[a]) != isnan(m[b])) return !isnan(m[a]);
    if (!isnan(m[a]) && m[a] != m[b]) return m[a] > m[b];
    return a < b;
}

void prune_keep(const double *metric, int n, int eta, bool *keep)
{
    int k = n / eta > 0 ? n / eta : 1;
    for (int i = 0; i < n; i++) {
        int before = 0; /* cells ranked ahead of i */
        for (int j = 0; j < n; j++)
            if (j != i && ahead(metric, j, i)) before++;
        keep[i] = before < k;
    }
}

void prune_group(const PruneRungs *r, int eta, const PruneCell *cells, int n, int *stop, int *open)
{
    int *in = xmalloc(sizeof *in * (size_t)(n > 0 ? n : 1), "pruning");
    double *m = xmalloc(sizeof *m * (size_t)(n > 0 ? n : 1), "pruning");
    bool *keep = xmalloc(sizeof *keep * (size_t)(n > 0 ? n : 1), "pruning");
    int n_in = n;
    for (int i = 0; i < n; i++) {
        stop[i] = -1;
        in[i] = i;
    }
    *open = r->n;
    for (int k = 0; k < r->n; k++) {
        bool ready = true;
        for (int j = 0; j < n_in && ready; j++) {
            const PruneCell *c = &cells[in[j]];
            ready = c->state[k] != PRUNE_NOT_YET;
            m[j] = c->state[k] == PRUNE_AT ? c->metric[k] : NAN;
        }
        if (!ready) {
            *open = k;
            break;
        }
        prune_keep(m, n_in, eta, keep);
        int kept = 0;
        for (int j = 0; j < n_in; j++) {
            if (keep[j]) in[kept++] = in[j];
            else stop[in[j]] = k;
        }
        n_in = kept;
    }
    free(in);
    free(m);
    free(keep);
}
