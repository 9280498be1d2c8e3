/* Learning-rate schedules, evaluated per iteration (never per epoch).
 *
 * Every schedule is a warm-up followed by a policy:
 *
 * Warm-up. W = round(warmup_epochs * iters_per_epoch) iterations (0: none). For iter < W
 *     lr = warmup_start_lr + (base_lr - warmup_start_lr) * a,
 *     a = iter / W        (WARMUP_LINEAR: NVCaffe Aug 2017, MLPerf / tensorflow-tpu lars_util)
 *     a = (iter / W)^2    (WARMUP_QUADRATIC: NVCaffe "rampup" from commit 414234be, Nov 2017).
 *   The warm-up target is always base_lr, as in NVCaffe's rampup and MLPerf. At iter >= W the
 *   policy below takes over; whether that is continuous depends on the policy (see poly).
 *
 * Policies, for iter >= W (epoch = iter / iters_per_epoch as a real number, global iteration):
 *   LR_FIXED      base_lr.
 *   LR_STEP       base_lr * gamma^floor(epoch / step_epochs).
 *   LR_MULTISTEP  base_lr * gamma^k, k = number of milestones (epochs) m with epoch >= m.
 *   LR_POLY       (base_lr - end_lr) * (1 - t/T)^power + end_lr
 *   LR_COSINE     end_lr + (base_lr - end_lr) * (1 + cos(pi * t/T)) / 2
 *     with, for both poly and cosine,
 *     POLY_HORIZON_TOTAL  (NVCaffe): t = iter, T = total_iters. Warm-up iterations count inside
 *       the horizon, so at iter = W the LR drops from base_lr to the decayed value at W
 *       (papers.md 2b). NVCaffe's rate floor at min_lr is end_lr here.
 *     POLY_AFTER_WARMUP (MLPerf): t = iter - W, T = total_iters - W, so the decay starts at
 *       base_lr at iteration W and is continuous with the warm-up. (MLPerf's lars_util uses
 *       decay_steps = train_steps - warmup_steps + 1; we use T = total - W so that the last
 *       iteration past training, total_iters, is exactly end_lr.)
 *     t is clamped to [0, T]: beyond total_iters the LR stays at end_lr. If T <= 0 the LR is
 *     end_lr (schedule_validate_run rejects such a run).
 *   Step and multistep epoch comparisons allow a slack of 1e-9 epochs so that
 *   iterations landing on a boundary (e.g. epoch 0.3 with step_epochs 0.1) are not lost to
 *   rounding; they do not depend on the horizon.
 *
 * Flag names used in messages (the CLI's spelling): --lr, --lr-policy, --lr-gamma,
 * --lr-step-epochs, --milestones, --poly-power, --end-lr, --poly-horizon, --warmup-epochs,
 * --warmup-start-lr, --warmup-shape, --lr-scaling. */
#ifndef BB_SCHEDULE_H
#define BB_SCHEDULE_H
#include "../base/util.h"

typedef enum { LR_FIXED, LR_STEP, LR_MULTISTEP, LR_POLY, LR_COSINE } LrPolicy;
typedef enum { WARMUP_LINEAR, WARMUP_QUADRATIC } WarmupShape;
typedef enum {
    POLY_HORIZON_TOTAL, /* NVCaffe: warm-up iterations count inside the poly horizon */
    POLY_AFTER_WARMUP   /* MLPerf: poly starts after warm-up */
} PolyHorizon;
typedef enum { LR_SCALING_NONE, LR_SCALING_LINEAR, LR_SCALING_SQRT } LrScaling;

#define SCHEDULE_MAX_MILESTONES 16

typedef struct {
    LrPolicy policy;
    double base_lr; /* after scaling */
    double gamma;
    double step_epochs; /* step: lr * gamma^floor(epoch/step_epochs) */
    double milestones[SCHEDULE_MAX_MILESTONES];
    int n_milestones; /* multistep: epochs, strictly increasing */
    double power, end_lr;
    PolyHorizon poly_horizon; /* poly and cosine: (base-end)*(1-t/T)^power + end */
    double warmup_epochs, warmup_start_lr;
    WarmupShape warmup_shape;
} ScheduleConfig;

/* LR_FIXED, base_lr 0.1, gamma 0.1, step_epochs 30, no milestones, power 2, end_lr 0,
 * POLY_HORIZON_TOTAL, no warm-up (0 epochs, start 0, linear). */
void schedule_defaults(ScheduleConfig *c);

/* NONE: lr; LINEAR: lr * batch / base_batch; SQRT: lr * sqrt(batch / base_batch).
 * batch and base_batch must be positive. */
double lr_scale_rule(double lr, LrScaling rule, int batch, int base_batch);

/* The LR of 0-based global iteration iter; iters_per_epoch (> 0) and total_iters define epochs,
 * the warm-up length and the decay horizon. */
double schedule_lr(const ScheduleConfig *c, long iter, long iters_per_epoch, long total_iters);

/* Warm-up length in iterations: round(warmup_epochs * iters_per_epoch), 0 when none. */
long schedule_warmup_iters(const ScheduleConfig *c, long iters_per_epoch);

/* Names: "fixed" "step" "multistep" "poly" "cosine"; "linear" "quadratic";
 * "total" "after-warmup"; "none" "linear" "sqrt". Parsers return 0, or -1 on unknown names
 * (and leave *out untouched). Name functions return "?" for out-of-range values. */
int schedule_parse_policy(const char *s, LrPolicy *out);
int schedule_parse_warmup_shape(const char *s, WarmupShape *out);
int schedule_parse_poly_horizon(const char *s, PolyHorizon *out);
int schedule_parse_scaling(const char *s, LrScaling *out);
const char *schedule_policy_name(LrPolicy p);
const char *schedule_warmup_shape_name(WarmupShape s);
const char *schedule_poly_horizon_name(PolyHorizon h);
const char *schedule_scaling_name(LrScaling s);

/* Checks the configuration alone: finite values, base_lr > 0, 0 <= end_lr <= base_lr for
 * poly/cosine, power > 0, gamma > 0 and step_epochs > 0 for step, 1..16 strictly increasing
 * positive milestones for multistep, warmup_epochs >= 0, 0 <= warmup_start_lr <= base_lr. Returns 0, or -1
 * with a message naming the flag. */
int schedule_validate(const ScheduleConfig *c, Error *err);

/* schedule_validate plus the run length: iters_per_epoch > 0, total_iters > 0, the warm-up no
 * longer than training (and strictly shorter for POLY_AFTER_WARMUP poly/cosine, which need a
 * decay after it), and multistep milestones inside training. */
int schedule_validate_run(const ScheduleConfig *c, long iters_per_epoch, long total_iters, Error *err);

#endif
