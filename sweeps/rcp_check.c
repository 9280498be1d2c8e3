/* MLPerf's convergence rule (the rule itself is described in rcp.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcp.h"
#include "student_t.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The mean and population stdev of sorted v without its first and last value. */
static void olympic(const double *sorted, int n, double *mean, double *stdev)
{
    int k = n - 2;
    double s = 0, ss = 0;
    for (int i = 1; i < n - 1; i++) s += sorted[i];
    *mean = s / k;
    for (int i = 1; i < n - 1; i++) ss += (sorted[i] - *mean) * (sorted[i] - *mean);
    *stdev = sqrt(ss / k);
}

/* The smallest mean that the one-sided t-test against (mean, stdev) does not call faster. */
static double min_acceptable(const RcpSet *s, double mean, double stdev, int n_ref)
{
    if (stdev == 0) return mean;
    int n_subm = s->runs - 2;
    double lo = 0, hi = mean, mid = (lo + hi) / 2;
    while (hi - lo > 1e-4) {
        double t = (mid - mean) / (stdev * sqrt(1.0 / n_ref + 1.0 / n_subm));
        double p = student_t_cdf(t, n_ref + n_subm - 2); /* one-sided: submission faster */
        if (p > s->alpha) hi = mid;
        else lo = mid;
        mid = (lo + hi) / 2;
    }
    return mid;
}

/* A reference point at batch b interpolated between lo and hi, as the checker builds one. */
static Rcp interpolate(const RcpSet *s, double b, const Rcp *lo, const Rcp *hi)
{
    Rcp r = {.batch = b};
    double w = (b - lo->batch) / (hi->batch - lo->batch);
    r.mean = lo->mean + w * (hi->mean - lo->mean);
    r.stdev = lo->stdev + w * (hi->stdev - lo->stdev);
    r.min_epochs = min_acceptable(s, r.mean, r.stdev, 2 * s->runs);
    return r;
}

static void prune(RcpSet *s)
{
    int fastest = 0;
    for (int i = 0; i < s->n; i++) {
        s->points[i].kept = true;
        if (s->points[i].min_epochs < s->points[fastest].min_epochs) fastest = i;
    }
    for (int i = 0; i < fastest; i++) s->points[i].kept = false;
    int *idx = xcalloc((size_t)s->n, sizeof *idx, "rcp pruning"), n = 0;
    for (int i = fastest; i < s->n; i++) idx[n++] = i;
    for (int i = 1; i < n - 1; i++) {
        Rcp *p = &s->points[idx[i]];
        Rcp r = interpolate(s, p->batch, &s->points[idx[i - 1]], &s->points[idx[i + 1]]);
        if (p->min_epochs > r.min_epochs) {
            p->kept = false;
            memmove(&idx[i], &idx[i + 1], (size_t)(n - i - 1) * sizeof *idx);
            n--;
            i--;
        }
    }
    free(idx);
}

void rcp_prepare(RcpSet *s)
{
    for (int i = 0; i < s->n; i++) {
        Rcp *p = &s->points[i];
        qsort(p->epochs, (size_t)p->n_epochs, sizeof *p->epochs, cmp_double);
        olympic(p->epochs, p->n_epochs, &p->mean, &p->stdev);
        p->min_epochs = min_acceptable(s, p->mean, p->stdev, p->n_epochs - 2);
    }
    prune(s);
}

/* The kept point at batch b, or the nearest kept below (dir -1) or above (dir +1). */
static const Rcp *kept_near(const RcpSet *s, double b, int dir)
{
    const Rcp *best = NULL;
    for (int i = 0; i < s->n; i++) {
        const Rcp *p = &s->points[i];
        if (!p->kept) continue;
        if (dir == 0 && p->batch == b) return p;
        if (dir < 0 && p->batch < b && (!best || p->batch > best->batch)) best = p;
        if (dir > 0 && p->batch > b && (!best || p->batch < best->batch)) best = p;
    }
    return best;
}

RcpVerdict rcp_check(const RcpSet *s, double batch, const double *epochs, int n)
{
    RcpVerdict v = {false, NAN, NAN, NAN, ""};
    int never = 0;
    for (int i = 0; i < n; i++) never += !isfinite(epochs[i]);
    if (n < s->runs) {
        snprintf(v.how, sizeof v.how, "%d of the %d seeds a submission needs", n, s->runs);
        return v;
    }
    if (never > 1) {
        snprintf(v.how, sizeof v.how, "%d of %d runs never reached the target", never, n);
        return v;
    }
    double *sorted = xcalloc((size_t)n, sizeof *sorted, "rcp check");
    memcpy(sorted, epochs, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    double sd;
    olympic(sorted, n, &v.mean, &sd);
    free(sorted);
    const Rcp *at = kept_near(s, batch, 0), *lo = kept_near(s, batch, -1), *hi = kept_near(s, batch, +1);
    Rcp r;
    if (at) {
        r = *at;
        snprintf(v.how, sizeof v.how, "reference point %s", at->name);
    } else if (lo && hi) {
        r = interpolate(s, batch, lo, hi);
        snprintf(v.how, sizeof v.how, "interpolated between batches %.10g and %.10g", lo->batch, hi->batch);
    } else if (hi) {
        r = *hi;
        snprintf(v.how, sizeof v.how, "below the smallest kept batch, %.10g: held to it", hi->batch);
    } else {
        snprintf(v.how, sizeof v.how, "above the largest kept batch: no reference (MLPerf: missing RCP)");
        return v;
    }
    v.ref_mean = r.mean;
    v.min_epochs = r.min_epochs;
    v.pass = v.mean >= r.min_epochs;
    return v;
}
