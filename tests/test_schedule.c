/* Learning-rate schedules (engine/optim/schedule.c): every policy at its corner iterations against
 * closed forms written out here independently, both warm-up shapes, both poly/cosine horizons,
 * the batch-size scaling rules, name parsing and validation messages. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../engine/optim/schedule.h"

#define REL_TOL 1e-12

static void check_lr(double got, double want, const char *what)
{
    double scale = fabs(want) > 1e-300 ? fabs(want) : 1.0;
    cr_assert(fabs(got - want) <= REL_TOL * scale, "%s: got %.17g, want %.17g (rel err %.3g)", what, got, want,
              fabs(got - want) / scale);
}

/* lr at iter, compared with the closed form. */
#define CHECK(c, iter, ipe, total, want) \
    check_lr(schedule_lr(&(c), (iter), (ipe), (total)), (want), #iter " -> " #want)

/* ---------------------------------------------------------------- defaults, fixed */

Test(schedule, defaults)
{
    ScheduleConfig c;
    memset(&c, 0xff, sizeof c);
    schedule_defaults(&c);
    cr_assert_eq(c.policy, LR_FIXED);
    cr_assert_eq(c.power, 2.0);
    cr_assert_eq(c.gamma, 0.1);
    cr_assert_eq(c.end_lr, 0.0);
    cr_assert_eq(c.warmup_epochs, 0.0);
    cr_assert_eq(c.warmup_start_lr, 0.0);
    cr_assert_eq(c.warmup_shape, WARMUP_LINEAR);
    cr_assert_eq(c.poly_horizon, POLY_HORIZON_TOTAL);
    cr_assert_eq(c.n_milestones, 0);
    cr_assert_gt(c.base_lr, 0.0);
    cr_assert_gt(c.step_epochs, 0.0);
    Error err = {{0}};
    cr_assert_eq(schedule_validate(&c, &err), 0, "%s", err.msg);
    cr_assert_eq(schedule_validate_run(&c, 100, 1000, &err), 0, "%s", err.msg);
    cr_assert_eq(schedule_warmup_iters(&c, 100), 0);
}

Test(schedule, fixed_is_constant)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.base_lr = 0.37;
    CHECK(c, 0, 100, 1000, 0.37);
    CHECK(c, 500, 100, 1000, 0.37);
    CHECK(c, 999, 100, 1000, 0.37);
    CHECK(c, 5000, 100, 1000, 0.37);
}

/* ---------------------------------------------------------------- warm-up */

/* W = 2.5 epochs * 100 = 250 iterations, from 0.5 to 2. */
static ScheduleConfig warm_fixed(WarmupShape shape)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.base_lr = 2.0;
    c.warmup_epochs = 2.5;
    c.warmup_start_lr = 0.5;
    c.warmup_shape = shape;
    return c;
}

Test(schedule, warmup_linear)
{
    ScheduleConfig c = warm_fixed(WARMUP_LINEAR);
    cr_assert_eq(schedule_warmup_iters(&c, 100), 250);
    CHECK(c, 0, 100, 1000, 0.5);
    CHECK(c, 1, 100, 1000, 0.5 + 1.5 * (1.0 / 250.0));
    CHECK(c, 100, 100, 1000, 0.5 + 1.5 * 0.4);
    CHECK(c, 125, 100, 1000, 1.25);
    CHECK(c, 249, 100, 1000, 0.5 + 1.5 * (249.0 / 250.0));
    CHECK(c, 250, 100, 1000, 2.0);
    CHECK(c, 999, 100, 1000, 2.0);
}

Test(schedule, warmup_quadratic)
{
    ScheduleConfig c = warm_fixed(WARMUP_QUADRATIC);
    CHECK(c, 0, 100, 1000, 0.5);
    CHECK(c, 1, 100, 1000, 0.5 + 1.5 * (1.0 / 62500.0));
    CHECK(c, 100, 100, 1000, 0.5 + 1.5 * 0.16);
    CHECK(c, 125, 100, 1000, 0.875);
    CHECK(c, 249, 100, 1000, 0.5 + 1.5 * (249.0 * 249.0 / 62500.0));
    CHECK(c, 250, 100, 1000, 2.0);
    CHECK(c, 999, 100, 1000, 2.0);
    /* the two shapes agree only at the ends */
    ScheduleConfig l = warm_fixed(WARMUP_LINEAR);
    cr_assert_gt(schedule_lr(&l, 125, 100, 1000) - schedule_lr(&c, 125, 100, 1000), 0.3);
}

Test(schedule, warmup_rounds_to_iterations)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.warmup_epochs = 2.5;
    cr_assert_eq(schedule_warmup_iters(&c, 3), 8); /* 7.5 -> 8 */
    c.warmup_epochs = 0.333;
    cr_assert_eq(schedule_warmup_iters(&c, 3), 1); /* 0.999 -> 1 */
    c.warmup_epochs = 0.1;
    cr_assert_eq(schedule_warmup_iters(&c, 4), 0); /* 0.4 -> 0: no warm-up */
    c.warmup_start_lr = 0.0;
    CHECK(c, 0, 4, 40, c.base_lr);
    /* NVCaffe solver_8K: 600 rampup iterations at 156 iterations per epoch */
    c.warmup_epochs = 600.0 / 156.0;
    cr_assert_eq(schedule_warmup_iters(&c, 156), 600);
}

/* ---------------------------------------------------------------- step, multistep */

Test(schedule, step)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_STEP;
    c.base_lr = 1.0;
    c.gamma = 0.1;
    c.step_epochs = 3;
    CHECK(c, 0, 100, 1000, 1.0);
    CHECK(c, 150, 100, 1000, 1.0);
    CHECK(c, 299, 100, 1000, 1.0);
    CHECK(c, 300, 100, 1000, 0.1);
    CHECK(c, 599, 100, 1000, 0.1);
    CHECK(c, 600, 100, 1000, 0.1 * 0.1);
    CHECK(c, 899, 100, 1000, 0.1 * 0.1);
    CHECK(c, 900, 100, 1000, 0.1 * 0.1 * 0.1);
    CHECK(c, 999, 100, 1000, 0.1 * 0.1 * 0.1);
}

Test(schedule, step_fractional_epochs_lands_on_boundary)
{
    /* epoch 0.3 / 0.1 is 2.9999999999999996 in doubles; iteration 3 still starts step 3 */
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_STEP;
    c.base_lr = 1.0;
    c.gamma = 0.5;
    c.step_epochs = 0.1;
    CHECK(c, 2, 10, 100, 0.25);
    CHECK(c, 3, 10, 100, 0.125);
    CHECK(c, 7, 10, 100, 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5 * 0.5);
}

Test(schedule, step_with_warmup)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_STEP;
    c.base_lr = 1.0;
    c.gamma = 0.1;
    c.step_epochs = 3;
    c.warmup_epochs = 1;
    c.warmup_start_lr = 0.2;
    CHECK(c, 0, 100, 1000, 0.2);
    CHECK(c, 50, 100, 1000, 0.6);
    CHECK(c, 99, 100, 1000, 0.2 + 0.8 * 0.99);
    CHECK(c, 100, 100, 1000, 1.0);
    CHECK(c, 300, 100, 1000, 0.1);
}

Test(schedule, multistep)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_MULTISTEP;
    c.base_lr = 0.8;
    c.gamma = 0.2;
    c.milestones[0] = 3;
    c.milestones[1] = 6.5;
    c.milestones[2] = 8;
    c.n_milestones = 3;
    CHECK(c, 0, 100, 1000, 0.8);
    CHECK(c, 299, 100, 1000, 0.8);
    CHECK(c, 300, 100, 1000, 0.8 * 0.2);
    CHECK(c, 649, 100, 1000, 0.8 * 0.2);
    CHECK(c, 650, 100, 1000, 0.8 * 0.2 * 0.2);
    CHECK(c, 799, 100, 1000, 0.8 * 0.2 * 0.2);
    CHECK(c, 800, 100, 1000, 0.8 * 0.2 * 0.2 * 0.2);
    CHECK(c, 999, 100, 1000, 0.8 * 0.2 * 0.2 * 0.2);
}

/* ---------------------------------------------------------------- poly */

/* base 10 -> end 0.01, power 2, 1 epoch warm-up from 1, 100 it/epoch, 1000 iterations. */
static ScheduleConfig poly_cfg(PolyHorizon h, WarmupShape shape)
{
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_POLY;
    c.base_lr = 10.0;
    c.end_lr = 0.01;
    c.power = 2;
    c.poly_horizon = h;
    c.warmup_epochs = 1;
    c.warmup_start_lr = 1.0;
    c.warmup_shape = shape;
    return c;
}

Test(schedule, poly_horizon_total_nvcaffe)
{
    ScheduleConfig c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_QUADRATIC);
    CHECK(c, 0, 100, 1000, 1.0);
    CHECK(c, 50, 100, 1000, 1.0 + 9.0 * 0.25);
    CHECK(c, 99, 100, 1000, 1.0 + 9.0 * 0.99 * 0.99);
    /* end of warm-up: the poly of the global iteration, (1 - 100/1000)^2 */
    CHECK(c, 100, 100, 1000, 9.99 * 0.9 * 0.9 + 0.01);
    CHECK(c, 101, 100, 1000, 9.99 * 0.899 * 0.899 + 0.01);
    CHECK(c, 550, 100, 1000, 9.99 * 0.45 * 0.45 + 0.01);
    CHECK(c, 999, 100, 1000, 9.99 * 0.001 * 0.001 + 0.01);
    CHECK(c, 1000, 100, 1000, 0.01);
    CHECK(c, 5000, 100, 1000, 0.01);
}

Test(schedule, poly_after_warmup_mlperf)
{
    ScheduleConfig c = poly_cfg(POLY_AFTER_WARMUP, WARMUP_LINEAR);
    CHECK(c, 0, 100, 1000, 1.0);
    CHECK(c, 50, 100, 1000, 5.5);
    CHECK(c, 99, 100, 1000, 1.0 + 9.0 * 0.99);
    CHECK(c, 100, 100, 1000, 10.0); /* t = 0: continuous with the warm-up */
    CHECK(c, 101, 100, 1000, 9.99 * (899.0 / 900.0) * (899.0 / 900.0) + 0.01);
    CHECK(c, 550, 100, 1000, 9.99 * 0.25 + 0.01);
    CHECK(c, 999, 100, 1000, 9.99 / (900.0 * 900.0) + 0.01);
    CHECK(c, 1000, 100, 1000, 0.01);
    CHECK(c, 5000, 100, 1000, 0.01);
}

Test(schedule, poly_horizons_differ_right_after_warmup)
{
    ScheduleConfig tot = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    ScheduleConfig aft = poly_cfg(POLY_AFTER_WARMUP, WARMUP_LINEAR);
    /* identical during the warm-up */
    for (long i = 0; i < 100; i++)
        cr_assert_eq(schedule_lr(&tot, i, 100, 1000), schedule_lr(&aft, i, 100, 1000));
    double t = schedule_lr(&tot, 100, 100, 1000), a = schedule_lr(&aft, 100, 100, 1000);
    check_lr(a - t, 10.0 - (9.99 * 0.81 + 0.01), "gap at the end of warm-up");
    cr_assert_gt(a - t, 1.8);
    /* NVCaffe drops at the end of warm-up, MLPerf does not */
    cr_assert_lt(t, schedule_lr(&tot, 99, 100, 1000) - 0.8);
    cr_assert_geq(a, schedule_lr(&aft, 99, 100, 1000));
    /* ... and both meet at the end */
    cr_assert_eq(schedule_lr(&tot, 1000, 100, 1000), schedule_lr(&aft, 1000, 100, 1000));
}

Test(schedule, poly_horizons_agree_without_warmup)
{
    ScheduleConfig tot = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    ScheduleConfig aft = poly_cfg(POLY_AFTER_WARMUP, WARMUP_LINEAR);
    tot.warmup_epochs = aft.warmup_epochs = 0;
    for (long i = 0; i <= 1000; i += 37)
        cr_assert_eq(schedule_lr(&tot, i, 100, 1000), schedule_lr(&aft, i, 100, 1000));
    CHECK(tot, 0, 100, 1000, 10.0);
    CHECK(tot, 250, 100, 1000, 9.99 * 0.75 * 0.75 + 0.01);
}

Test(schedule, poly_other_powers)
{
    ScheduleConfig c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.warmup_epochs = 0;
    c.end_lr = 0;
    c.power = 1;
    CHECK(c, 250, 100, 1000, 7.5);
    c.power = 0.5;
    CHECK(c, 750, 100, 1000, 5.0);
    c.power = 3;
    CHECK(c, 500, 100, 1000, 1.25);
}

Test(schedule, poly_changes_every_iteration)
{
    ScheduleConfig c = poly_cfg(POLY_AFTER_WARMUP, WARMUP_LINEAR);
    double prev = schedule_lr(&c, 100, 100, 1000);
    for (long i = 101; i <= 1000; i++) {
        double lr = schedule_lr(&c, i, 100, 1000);
        cr_assert_lt(lr, prev, "iteration %ld: %.17g not below %.17g", i, lr, prev);
        prev = lr;
    }
}

/* ---------------------------------------------------------------- cosine */

Test(schedule, cosine_horizon_total)
{
    ScheduleConfig c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.policy = LR_COSINE;
    c.end_lr = 0.5;
    CHECK(c, 0, 100, 1000, 1.0);
    CHECK(c, 99, 100, 1000, 1.0 + 9.0 * 0.99);
    CHECK(c, 100, 100, 1000, 0.5 + 9.5 * (1.0 + cos(M_PI * 0.1)) / 2.0);
    CHECK(c, 500, 100, 1000, 5.25); /* half-way: (base + end) / 2 */
    CHECK(c, 750, 100, 1000, 0.5 + 9.5 * (1.0 - sqrt(0.5)) / 2.0);
    CHECK(c, 999, 100, 1000, 0.5 + 9.5 * (1.0 + cos(M_PI * 0.999)) / 2.0);
    CHECK(c, 1000, 100, 1000, 0.5);
    CHECK(c, 1200, 100, 1000, 0.5);
    /* end_lr 0: the last iteration's tiny LR to full relative precision. 1 + cos(pi 0.999)
     * cancels in doubles, so the closed form is written as 2 sin^2(pi 0.001 / 2) / 2. */
    c.end_lr = 0;
    double h = sin(M_PI * 0.0005);
    CHECK(c, 999, 100, 1000, 10.0 * h * h);
    CHECK(c, 1, 100, 1000, 1.0 + 9.0 * 0.01);
}

Test(schedule, cosine_after_warmup)
{
    ScheduleConfig c = poly_cfg(POLY_AFTER_WARMUP, WARMUP_QUADRATIC);
    c.policy = LR_COSINE;
    c.end_lr = 0.5;
    CHECK(c, 0, 100, 1000, 1.0);
    CHECK(c, 99, 100, 1000, 1.0 + 9.0 * 0.99 * 0.99);
    CHECK(c, 100, 100, 1000, 10.0);
    CHECK(c, 325, 100, 1000, 0.5 + 9.5 * (1.0 + sqrt(0.5)) / 2.0);
    CHECK(c, 550, 100, 1000, 5.25);
    CHECK(c, 999, 100, 1000, 0.5 + 9.5 * (1.0 + cos(M_PI * 899.0 / 900.0)) / 2.0);
    CHECK(c, 1000, 100, 1000, 0.5);
}

/* ---------------------------------------------------------------- the papers' recipes */

Test(schedule, nvcaffe_alexnet_bn_8k)
{
    /* solver_8K: base 10, rampup 1 -> 10 over 600 it (quadratic), poly 2 to max_iter 15600 */
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_POLY;
    c.base_lr = 10;
    c.power = 2;
    c.end_lr = 0;
    c.warmup_epochs = 600.0 / 156.0;
    c.warmup_start_lr = 1;
    c.warmup_shape = WARMUP_QUADRATIC;
    c.poly_horizon = POLY_HORIZON_TOTAL;
    CHECK(c, 0, 156, 15600, 1.0);
    CHECK(c, 300, 156, 15600, 3.25);
    CHECK(c, 599, 156, 15600, 1.0 + 9.0 * (599.0 / 600.0) * (599.0 / 600.0));
    CHECK(c, 600, 156, 15600, 10.0 * (15000.0 / 15600.0) * (15000.0 / 15600.0));
    CHECK(c, 15599, 156, 15600, 10.0 / (15600.0 * 15600.0));
}

Test(schedule, mlperf_resnet50_4k)
{
    /* B=4096: base 10, 5 warm-up epochs from 0, 42 epochs, poly 2 to 1e-4 after warm-up */
    long ipe = 1281167 / 4096, total = 42 * ipe, w = 5 * ipe;
    cr_assert_eq(ipe, 312);
    ScheduleConfig c;
    schedule_defaults(&c);
    c.policy = LR_POLY;
    c.base_lr = 10;
    c.end_lr = 1e-4;
    c.power = 2;
    c.poly_horizon = POLY_AFTER_WARMUP;
    c.warmup_epochs = 5;
    c.warmup_start_lr = 0;
    Error err = {{0}};
    cr_assert_eq(schedule_validate_run(&c, ipe, total, &err), 0, "%s", err.msg);
    CHECK(c, 0, ipe, total, 0.0);
    CHECK(c, 780, ipe, total, 10.0 * 780.0 / 1560.0);
    CHECK(c, w - 1, ipe, total, 10.0 * (double)(w - 1) / (double)w);
    CHECK(c, w, ipe, total, 10.0);
    double T = (double)(total - w), f = 1.0 - (double)(total - 1 - w) / T;
    CHECK(c, total - 1, ipe, total, (10.0 - 1e-4) * f * f + 1e-4);
}

/* ---------------------------------------------------------------- scaling */

Test(schedule, scaling_rules)
{
    check_lr(lr_scale_rule(0.1, LR_SCALING_LINEAR, 8192, 256), 3.2, "linear 8192/256");
    check_lr(lr_scale_rule(0.1, LR_SCALING_LINEAR, 8192, 256) / 0.1, 32.0, "linear factor");
    check_lr(lr_scale_rule(0.1, LR_SCALING_SQRT, 8192, 256), 0.1 * 5.656854249492380195, "sqrt 8192/256");
    check_lr(lr_scale_rule(0.1, LR_SCALING_SQRT, 8192, 256) / 0.1, sqrt(32.0), "sqrt factor");
    check_lr(lr_scale_rule(0.1, LR_SCALING_NONE, 8192, 256), 0.1, "none");
    check_lr(lr_scale_rule(0.2, LR_SCALING_LINEAR, 128, 256), 0.1, "linear down");
    check_lr(lr_scale_rule(0.2, LR_SCALING_SQRT, 1024, 256), 0.4, "sqrt 4x");
    check_lr(lr_scale_rule(0.2, LR_SCALING_LINEAR, 256, 256), 0.2, "same batch");
    check_lr(lr_scale_rule(0.2, LR_SCALING_SQRT, 256, 256), 0.2, "same batch sqrt");
}

/* ---------------------------------------------------------------- names */

Test(schedule, names_round_trip)
{
    for (int p = LR_FIXED; p <= LR_COSINE; p++) {
        LrPolicy out = LR_FIXED;
        cr_assert_eq(schedule_parse_policy(schedule_policy_name((LrPolicy)p), &out), 0);
        cr_assert_eq((int)out, p);
    }
    for (int s = WARMUP_LINEAR; s <= WARMUP_QUADRATIC; s++) {
        WarmupShape out = WARMUP_LINEAR;
        cr_assert_eq(schedule_parse_warmup_shape(schedule_warmup_shape_name((WarmupShape)s), &out), 0);
        cr_assert_eq((int)out, s);
    }
    for (int h = POLY_HORIZON_TOTAL; h <= POLY_AFTER_WARMUP; h++) {
        PolyHorizon out = POLY_HORIZON_TOTAL;
        cr_assert_eq(schedule_parse_poly_horizon(schedule_poly_horizon_name((PolyHorizon)h), &out), 0);
        cr_assert_eq((int)out, h);
    }
    for (int s = LR_SCALING_NONE; s <= LR_SCALING_SQRT; s++) {
        LrScaling out = LR_SCALING_NONE;
        cr_assert_eq(schedule_parse_scaling(schedule_scaling_name((LrScaling)s), &out), 0);
        cr_assert_eq((int)out, s);
    }
    cr_assert_str_eq(schedule_policy_name(LR_POLY), "poly");
    cr_assert_str_eq(schedule_policy_name(LR_MULTISTEP), "multistep");
    cr_assert_str_eq(schedule_warmup_shape_name(WARMUP_QUADRATIC), "quadratic");
    cr_assert_str_eq(schedule_poly_horizon_name(POLY_AFTER_WARMUP), "after-warmup");
    cr_assert_str_eq(schedule_scaling_name(LR_SCALING_SQRT), "sqrt");
    cr_assert_str_eq(schedule_policy_name((LrPolicy)42), "?");
}

Test(schedule, unknown_names)
{
    LrPolicy p = LR_COSINE;
    cr_assert_eq(schedule_parse_policy("Poly", &p), -1);
    cr_assert_eq(schedule_parse_policy("", &p), -1);
    cr_assert_eq(schedule_parse_policy(NULL, &p), -1);
    cr_assert_eq(p, LR_COSINE);
    WarmupShape s = WARMUP_QUADRATIC;
    cr_assert_eq(schedule_parse_warmup_shape("cubic", &s), -1);
    cr_assert_eq(s, WARMUP_QUADRATIC);
    PolyHorizon h = POLY_AFTER_WARMUP;
    cr_assert_eq(schedule_parse_poly_horizon("after", &h), -1);
    cr_assert_eq(h, POLY_AFTER_WARMUP);
    LrScaling r = LR_SCALING_SQRT;
    cr_assert_eq(schedule_parse_scaling("log", &r), -1);
    cr_assert_eq(r, LR_SCALING_SQRT);
}

/* ---------------------------------------------------------------- validation */

static void expect_invalid(const ScheduleConfig *c, const char *flag)
{
    Error err = {{0}};
    cr_assert_eq(schedule_validate(c, &err), -1, "expected an error naming %s", flag);
    cr_assert_not_null(strstr(err.msg, flag), "message \"%s\" does not name %s", err.msg, flag);
    Error err2 = {{0}};
    cr_assert_eq(schedule_validate_run(c, 100, 1000, &err2), -1);
    cr_assert_str_eq(err2.msg, err.msg);
}

static void expect_invalid_run(const ScheduleConfig *c, long ipe, long total, const char *flag)
{
    Error err = {{0}};
    cr_assert_eq(schedule_validate(c, &err), 0, "%s", err.msg);
    cr_assert_eq(schedule_validate_run(c, ipe, total, &err), -1, "expected an error naming %s", flag);
    cr_assert_not_null(strstr(err.msg, flag), "message \"%s\" does not name %s", err.msg, flag);
}

Test(schedule, validate_accepts_recipes)
{
    Error err = {{0}};
    ScheduleConfig c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_QUADRATIC);
    cr_assert_eq(schedule_validate_run(&c, 100, 1000, &err), 0, "%s", err.msg);
    c = poly_cfg(POLY_AFTER_WARMUP, WARMUP_LINEAR);
    cr_assert_eq(schedule_validate_run(&c, 100, 1000, &err), 0, "%s", err.msg);
    c.policy = LR_COSINE;
    cr_assert_eq(schedule_validate_run(&c, 100, 1000, &err), 0, "%s", err.msg);
    /* warm-up as long as training is allowed when nothing decays after it */
    c.policy = LR_FIXED;
    c.warmup_epochs = 10;
    cr_assert_eq(schedule_validate_run(&c, 100, 1000, &err), 0, "%s", err.msg);
    schedule_defaults(&c);
    c.policy = LR_MULTISTEP;
    c.milestones[0] = 30, c.milestones[1] = 60, c.milestones[2] = 80;
    c.n_milestones = 3;
    cr_assert_eq(schedule_validate_run(&c, 10, 900, &err), 0, "%s", err.msg);
}

Test(schedule, validate_errors_name_the_flag)
{
    ScheduleConfig c;

    c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.power = 0;
    expect_invalid(&c, "--poly-power");
    c.power = -1;
    expect_invalid(&c, "--poly-power");
    c.power = NAN;
    expect_invalid(&c, "--poly-power");

    c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.end_lr = 11;
    expect_invalid(&c, "--end-lr");
    c.end_lr = -0.1;
    expect_invalid(&c, "--end-lr");

    c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.base_lr = 0;
    expect_invalid(&c, "--lr");
    c.base_lr = INFINITY;
    expect_invalid(&c, "--lr");

    c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.warmup_epochs = -1;
    expect_invalid(&c, "--warmup-epochs");
    c.warmup_epochs = 1;
    c.warmup_start_lr = 20;
    expect_invalid(&c, "--warmup-start-lr");
    c.warmup_start_lr = -1;
    expect_invalid(&c, "--warmup-start-lr");

    schedule_defaults(&c);
    c.policy = LR_STEP;
    c.gamma = 0;
    expect_invalid(&c, "--lr-gamma");
    c.gamma = 0.1;
    c.step_epochs = 0;
    expect_invalid(&c, "--lr-step-epochs");

    schedule_defaults(&c);
    c.policy = LR_MULTISTEP;
    c.n_milestones = 0;
    expect_invalid(&c, "--milestones");
    c.n_milestones = 17;
    expect_invalid(&c, "--milestones");
    c.n_milestones = 3;
    c.milestones[0] = 3, c.milestones[1] = 6, c.milestones[2] = 6;
    expect_invalid(&c, "--milestones");
    c.milestones[2] = 5;
    expect_invalid(&c, "--milestones");
    c.milestones[0] = -1, c.milestones[1] = 6, c.milestones[2] = 8;
    expect_invalid(&c, "--milestones");

    c.policy = (LrPolicy)9;
    expect_invalid(&c, "--lr-policy");
}

Test(schedule, validate_run_errors)
{
    Error err = {{0}};
    ScheduleConfig c = poly_cfg(POLY_HORIZON_TOTAL, WARMUP_LINEAR);
    c.warmup_epochs = 10.5; /* 1050 iterations of a 1000-iteration run */
    expect_invalid_run(&c, 100, 1000, "--warmup-epochs");
    cr_assert_not_null(strstr((schedule_validate_run(&c, 100, 1000, &err), err.msg), "longer than training"),
                       "%s", err.msg);

    c = poly_cfg(POLY_AFTER_WARMUP, WARMUP_LINEAR);
    c.warmup_epochs = 10; /* nothing left to decay over */
    expect_invalid_run(&c, 100, 1000, "--warmup-epochs");
    c.poly_horizon = POLY_HORIZON_TOTAL; /* NVCaffe's horizon is fine with it */
    cr_assert_eq(schedule_validate_run(&c, 100, 1000, &err), 0, "%s", err.msg);

    schedule_defaults(&c);
    c.policy = LR_MULTISTEP;
    c.milestones[0] = 3, c.milestones[1] = 12;
    c.n_milestones = 2;
    expect_invalid_run(&c, 100, 1000, "--milestones");

    schedule_defaults(&c);
    expect_invalid_run(&c, 100, 0, "--epochs");
    expect_invalid_run(&c, 0, 1000, "--batch");
}
