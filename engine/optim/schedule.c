/* Learning-rate schedules evaluated per iteration; the semantics are documented in schedule.h. */
#include "schedule.h"

#include <math.h>
#include <string.h>

#define EPOCH_SLACK 1e-9

void schedule_defaults(ScheduleConfig *c)
{
    memset(c, 0, sizeof *c);
    c->policy = LR_FIXED;
    c->base_lr = 0.1;
    c->gamma = 0.1;
    c->step_epochs = 30;
    c->n_milestones = 0;
    c->power = 2;
    c->end_lr = 0;
    c->poly_horizon = POLY_HORIZON_TOTAL;
    c->warmup_epochs = 0;
    c->warmup_start_lr = 0;
    c->warmup_shape = WARMUP_LINEAR;
}

double lr_scale_rule(double lr, LrScaling rule, int batch, int base_batch)
{
    double ratio = (double)batch / (double)base_batch;
    switch (rule) {
    case LR_SCALING_LINEAR: return lr * ratio;
    case LR_SCALING_SQRT: return lr * sqrt(ratio);
    case LR_SCALING_NONE:
    default: return lr;
    }
}

long schedule_warmup_iters(const ScheduleConfig *c, long iters_per_epoch)
{
    if (!(c->warmup_epochs > 0) || iters_per_epoch <= 0) return 0;
    return lround(c->warmup_epochs * (double)iters_per_epoch);
}

/* Poly and cosine: t and T of the horizon, t clamped to [0, T]; T <= 0 means the horizon is
 * over. Returns T; the fractions are formed from these integers so that 1 - t/T is exact
 * near the end of training (no cancellation). */
static long horizon(const ScheduleConfig *c, long iter, long warmup, long total_iters, long *t_out)
{
    long t = iter, T = total_iters;
    if (c->poly_horizon == POLY_AFTER_WARMUP) {
        t = iter - warmup;
        T = total_iters - warmup;
    }
    if (t < 0) t = 0;
    if (t > T) t = T;
    *t_out = t;
    return T;
}

/* The policy's value at iter, ignoring the warm-up (except for the horizon's start). */
static double policy_lr(const ScheduleConfig *c, long iter, long iters_per_epoch, long warmup,
                        long total_iters)
{
    double epoch = (double)iter / (double)iters_per_epoch;
    switch (c->policy) {
    case LR_STEP: {
        double k = floor(epoch / c->step_epochs + EPOCH_SLACK);
        return c->base_lr * pow(c->gamma, k);
    }
    case LR_MULTISTEP: {
        int k = 0;
        for (int i = 0; i < c->n_milestones; i++)
            if (epoch + EPOCH_SLACK >= c->milestones[i]) k++;
        return c->base_lr * pow(c->gamma, k);
    }
    case LR_POLY: {
        long t, T = horizon(c, iter, warmup, total_iters, &t);
        if (T <= 0) return c->end_lr;
        return (c->base_lr - c->end_lr) * pow((double)(T - t) / (double)T, c->power) + c->end_lr;
    }
    case LR_COSINE: {
        long t, T = horizon(c, iter, warmup, total_iters, &t);
        if (T <= 0) return c->end_lr;
        /* (1 + cos(pi t/T)) / 2 = sin^2(pi (T - t) / (2T)): no cancellation near the end */
        double s = sin(M_PI * (double)(T - t) / (2.0 * (double)T));
        return c->end_lr + (c->base_lr - c->end_lr) * s * s;
    }
    case LR_FIXED:
    default: return c->base_lr;
    }
}

double schedule_lr(const ScheduleConfig *c, long iter, long iters_per_epoch, long total_iters)
{
    if (iters_per_epoch <= 0) iters_per_epoch = 1;
    if (iter < 0) iter = 0;
    long warmup = schedule_warmup_iters(c, iters_per_epoch);
    if (iter < warmup) {
        double a = (double)iter / (double)warmup;
        if (c->warmup_shape == WARMUP_QUADRATIC) a *= a;
        return c->warmup_start_lr + (c->base_lr - c->warmup_start_lr) * a;
    }
    return policy_lr(c, iter, iters_per_epoch, warmup, total_iters);
}

/* ---- names ---- */

static const char *const policy_names[] = {"fixed", "step", "multistep", "poly", "cosine"};
static const char *const shape_names[] = {"linear", "quadratic"};
static const char *const horizon_names[] = {"total", "after-warmup"};
static const char *const scaling_names[] = {"none", "linear", "sqrt"};

static int lookup(const char *s, const char *const *names, int n)
{
    if (!s) return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

int schedule_parse_policy(const char *s, LrPolicy *out)
{
    int i = lookup(s, policy_names, COUNT(policy_names));
    if (i < 0) return -1;
    *out = (LrPolicy)i;
    return 0;
}

int schedule_parse_warmup_shape(const char *s, WarmupShape *out)
{
    int i = lookup(s, shape_names, COUNT(shape_names));
    if (i < 0) return -1;
    *out = (WarmupShape)i;
    return 0;
}

int schedule_parse_poly_horizon(const char *s, PolyHorizon *out)
{
    int i = lookup(s, horizon_names, COUNT(horizon_names));
    if (i < 0) return -1;
    *out = (PolyHorizon)i;
    return 0;
}

int schedule_parse_scaling(const char *s, LrScaling *out)
{
    int i = lookup(s, scaling_names, COUNT(scaling_names));
    if (i < 0) return -1;
    *out = (LrScaling)i;
    return 0;
}

const char *schedule_policy_name(LrPolicy p)
{
    return (int)p >= 0 && (int)p < COUNT(policy_names) ? policy_names[p] : "?";
}

const char *schedule_warmup_shape_name(WarmupShape s)
{
    return (int)s >= 0 && (int)s < COUNT(shape_names) ? shape_names[s] : "?";
}

const char *schedule_poly_horizon_name(PolyHorizon h)
{
    return (int)h >= 0 && (int)h < COUNT(horizon_names) ? horizon_names[h] : "?";
}

const char *schedule_scaling_name(LrScaling s)
{
    return (int)s >= 0 && (int)s < COUNT(scaling_names) ? scaling_names[s] : "?";
}

/* ---- validation ---- */

int schedule_validate(const ScheduleConfig *c, Error *err)
{
    if ((int)c->policy < 0 || (int)c->policy >= COUNT(policy_names)) {
        error_set(err, "--lr-policy: unknown policy %d", (int)c->policy);
        return -1;
    }
    if (!isfinite(c->base_lr) || !(c->base_lr > 0)) {
        error_set(err, "--lr must be a positive number, got %g", c->base_lr);
        return -1;
    }
    if (!isfinite(c->warmup_epochs) || c->warmup_epochs < 0) {
        error_set(err, "--warmup-epochs must be >= 0, got %g", c->warmup_epochs);
        return -1;
    }
    if ((int)c->warmup_shape < 0 || (int)c->warmup_shape >= COUNT(shape_names)) {
        error_set(err, "--warmup-shape: unknown shape %d (linear or quadratic)", (int)c->warmup_shape);
        return -1;
    }
    if (c->warmup_epochs > 0 &&
        (!isfinite(c->warmup_start_lr) || c->warmup_start_lr < 0 || c->warmup_start_lr > c->base_lr)) {
        error_set(err, "--warmup-start-lr must be between 0 and --lr (%g), got %g", c->base_lr,
                  c->warmup_start_lr);
        return -1;
    }
    switch (c->policy) {
    case LR_STEP:
        if (!isfinite(c->gamma) || !(c->gamma > 0)) {
            error_set(err, "--lr-gamma must be positive, got %g", c->gamma);
            return -1;
        }
        if (!isfinite(c->step_epochs) || !(c->step_epochs > 0)) {
            error_set(err, "--lr-step-epochs must be positive, got %g", c->step_epochs);
            return -1;
        }
        break;
    case LR_MULTISTEP:
        if (!isfinite(c->gamma) || !(c->gamma > 0)) {
            error_set(err, "--lr-gamma must be positive, got %g", c->gamma);
            return -1;
        }
        if (c->n_milestones < 1 || c->n_milestones > SCHEDULE_MAX_MILESTONES) {
            error_set(err, "--milestones: the multistep policy needs 1 to %d milestones, got %d",
                      SCHEDULE_MAX_MILESTONES, c->n_milestones);
            return -1;
        }
        for (int i = 0; i < c->n_milestones; i++) {
            double m = c->milestones[i];
            if (!isfinite(m) || !(m > 0)) {
                error_set(err, "--milestones: milestone %d must be a positive epoch, got %g", i + 1, m);
                return -1;
            }
            if (i > 0 && !(m > c->milestones[i - 1])) {
                error_set(err, "--milestones must be strictly increasing: %g follows %g", m,
                          c->milestones[i - 1]);
                return -1;
            }
        }
        break;
    case LR_POLY:
    case LR_COSINE:
        if (c->policy == LR_POLY && (!isfinite(c->power) || !(c->power > 0))) {
            error_set(err, "--poly-power must be positive, got %g", c->power);
            return -1;
        }
        if (!isfinite(c->end_lr) || c->end_lr < 0 || c->end_lr > c->base_lr) {
            error_set(err, "--end-lr must be between 0 and --lr (%g), got %g", c->base_lr, c->end_lr);
            return -1;
        }
        if ((int)c->poly_horizon < 0 || (int)c->poly_horizon >= COUNT(horizon_names)) {
            error_set(err, "--poly-horizon: unknown horizon %d (total or after-warmup)",
                      (int)c->poly_horizon);
            return -1;
        }
        break;
    case LR_FIXED:
    default: break;
    }
    return 0;
}

int schedule_validate_run(const ScheduleConfig *c, long iters_per_epoch, long total_iters, Error *err)
{
    if (schedule_validate(c, err)) return -1;
    if (iters_per_epoch <= 0) {
        error_set(err, "--batch: an epoch must have at least one iteration (got %ld)", iters_per_epoch);
        return -1;
    }
    if (total_iters <= 0) {
        error_set(err, "--epochs: training must have at least one iteration (got %ld)", total_iters);
        return -1;
    }
    long warmup = schedule_warmup_iters(c, iters_per_epoch);
    double total_epochs = (double)total_iters / (double)iters_per_epoch;
    if (warmup > total_iters) {
        error_set(err, "--warmup-epochs %g (%ld iterations) is longer than training (%g epochs, %ld iterations)",
                  c->warmup_epochs, warmup, total_epochs, total_iters);
        return -1;
    }
    if ((c->policy == LR_POLY || c->policy == LR_COSINE) && c->poly_horizon == POLY_AFTER_WARMUP &&
        warmup >= total_iters) {
        error_set(err,
                  "--warmup-epochs %g (%ld iterations) leaves no iterations for the %s decay after it "
                  "(--poly-horizon after-warmup, %ld iterations in training)",
                  c->warmup_epochs, warmup, schedule_policy_name(c->policy), total_iters);
        return -1;
    }
    if (c->policy == LR_MULTISTEP) {
        for (int i = 0; i < c->n_milestones; i++)
            if (c->milestones[i] * (double)iters_per_epoch >= (double)total_iters) {
                error_set(err, "--milestones: milestone %g is not inside training (%g epochs)", c->milestones[i],
                          total_epochs);
                return -1;
            }
    }
    return 0;
}
