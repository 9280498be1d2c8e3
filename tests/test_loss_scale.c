/* Loss scaling (engine/optim/loss_scale.h): the dynamic scaler's rule against PyTorch's GradScaler
 * (halve and skip on inf/NaN, double after 2000 good steps in a row), and the invariance that
 * makes LARS right in mixed precision: scaling the loss by a power of two, then unscaling the
 * gradients before the optimizer, leaves every norm, trust ratio and update bit for bit as at
 * scale 1, for every LARS/LARC preset (mlperf's excluded bias and BN parameters included), in
 * fp32 and in emulated bf16. fp16's own rounding is not scale invariant (its subnormals and
 * overflow are why it scales at all), so it is left out of that test. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/optim/loss_scale.h"
#include "../engine/net/models.h"
#include "../engine/optim/optimizer.h"
#include "tensor_access.h"

Test(loss_scale, starts_at_2_to_the_16_halves_and_skips_on_inf)
{
    LossScaler ls;
    loss_scaler_init(&ls, true, 0);
    cr_assert_eq(ls.scale, 65536.0);
    cr_assert(loss_scaler_update(&ls, true));
    cr_assert_not(loss_scaler_update(&ls, false), "an inf/NaN step is applied");
    cr_assert_eq(ls.scale, 32768.0);
    cr_assert_eq(ls.skipped, 1);
    cr_assert_eq(ls.good_steps, 0, "a skipped step leaves the growth tracker at %d", ls.good_steps);
    cr_assert_not(loss_scaler_update(&ls, false));
    cr_assert_eq(ls.scale, 16384.0);
    cr_assert_eq(ls.skipped, 2);
}

Test(loss_scale, doubles_after_2000_good_steps_in_a_row)
{
    LossScaler ls;
    loss_scaler_init(&ls, true, 0);
    for (int i = 0; i < 1999; i++) cr_assert(loss_scaler_update(&ls, true));
    cr_assert_eq(ls.scale, 65536.0, "doubled before 2000 good steps");
    cr_assert(loss_scaler_update(&ls, true));
    cr_assert_eq(ls.scale, 131072.0, "not doubled after 2000 good steps");
    /* a skip in between starts the count again */
    for (int i = 0; i < 1000; i++) loss_scaler_update(&ls, true);
    loss_scaler_update(&ls, false);
    cr_assert_eq(ls.scale, 65536.0);
    for (int i = 0; i < 1999; i++) loss_scaler_update(&ls, true);
    cr_assert_eq(ls.scale, 65536.0, "the steps before the skip counted");
    loss_scaler_update(&ls, true);
    cr_assert_eq(ls.scale, 131072.0);
    cr_assert_eq(ls.skipped, 1);
}

Test(loss_scale, fixed_scale_never_changes)
{
    LossScaler ls;
    loss_scaler_init(&ls, false, 0);
    cr_assert_eq(ls.scale, 1.0);
    loss_scaler_init(&ls, false, 1024);
    for (int i = 0; i < 2000; i++) cr_assert(loss_scaler_update(&ls, true));
    cr_assert_eq(ls.scale, 1024.0);
}

static Net *small_net(Backend *bk, int batch)
{
    Error err;
    Net *net = model_build("resnet8", bk, 0, 5, &err);
    cr_assert_not_null(net, "%s", err.msg);
    net_plan(net, batch);
    return net;
}

/* The check unscaling leaves on the device: the scaled gradients' sum of squares, inf or NaN
 * when one of them is; unscaling itself no longer waits for it. A fixed scale has no check. */
Test(loss_scale, unscale_leaves_a_check_that_finds_an_inf_gradient)
{
    Backend *bk = backend_create(1);
    Net *net = small_net(bk, 2);
    BkBuffer *buf = bk_buffer_alloc(bk, sizeof(double));
    double *check = bk_buffer_address(buf), sum;
    LossScaler ls;
    loss_scaler_init(&ls, true, 0);
    net_zero_grad(net);
    tensor_set(&net->grad_block, 7, 3);
    cr_assert_eq(loss_scaler_unscale(&ls, net, check), check);
    bk_download(bk, &sum, check, sizeof sum);
    cr_assert_eq(sum, 9);
    cr_assert_eq(tensor_get(&net->grad_block, 7), (real)(3 / 65536.0));
    tensor_set(&net->grad_block, net->n_weights - 1, INFINITY);
    loss_scaler_unscale(&ls, net, check);
    bk_download(bk, &sum, check, sizeof sum);
    cr_assert(isinf(sum));
    tensor_set(&net->grad_block, net->n_weights - 1, NAN);
    loss_scaler_unscale(&ls, net, check);
    bk_download(bk, &sum, check, sizeof sum);
    cr_assert(isnan(sum));
    loss_scaler_init(&ls, false, 0);
    cr_assert_null(loss_scaler_unscale(&ls, net, check));
    bk_buffer_free(buf);
    net_destroy(net);
    backend_destroy(bk);
}

enum { BATCH = 8, STEPS = 2 };

typedef struct {
    real *w;          /* every parameter after the steps */
    OptStats *stats;  /* every step's, n_params each */
    int n_params;
    size_t n_weights;
} Trajectory;

/* STEPS updates of resnet8 by a preset (momentum and weight decay on) with the loss scaled by
 * `scale` and unscaled before the optimizer, as train.c does. */
static Trajectory run_scaled(const char *precision, const char *preset, double scale)
{
    Error err;
    Backend *bk = backend_create(2);
    cr_assert_eq(backend_set_precision(bk, precision, &err), 0, "%s", err.msg);
    Net *net = small_net(bk, BATCH);
    OptConfig cfg;
    opt_config_defaults(&cfg);
    cr_assert_eq(optimizer_apply_preset(&cfg, preset, NULL, 0, &err), 0, "%s", err.msg);
    cfg.momentum = 0.9;
    cfg.weight_decay = 5e-4;
    Optimizer *opt = optimizer_create(&cfg, net, &err);
    cr_assert_not_null(opt, "%s", err.msg);
    opt->collect_stats = true;
    LossScaler ls;
    loss_scaler_init(&ls, false, scale);
    Trajectory t = {malloc(net->n_weights * sizeof(real)), calloc((size_t)net->n_params * STEPS, sizeof(OptStats)),
                    net->n_params, net->n_weights};
    for (int s = 0; s < STEPS; s++) {
        net_upload_random_batch(net, BATCH, 21, (uint64_t)s);
        net_zero_grad(net);
        net->loss_scale = loss_scaler_net_scale(&ls, BATCH);
        net_forward(net, BATCH, true);
        net_backward(net, BATCH);
        cr_assert_null(loss_scaler_unscale(&ls, net, NULL)); /* a fixed scale: nothing to check */
        optimizer_step(opt, net, 0.5, NULL);
        memcpy(t.stats + (size_t)s * net->n_params, opt->stats, (size_t)net->n_params * sizeof(OptStats));
    }
    tensor_download(&net->param_block, t.w);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
    return t;
}

static void trajectory_free(Trajectory *t)
{
    free(t->w);
    free(t->stats);
}

/* Every LARS/LARC preset, scales from 2^-6 to 2^24, fp32 and bf16: the same bits as at scale 1. */
Test(loss_scale, power_of_two_scales_leave_every_trust_ratio_and_update_unchanged, .timeout = 300)
{
    static const char *const precisions[] = {"fp32", "bf16"};
#ifdef BB_GUARDED
    /* the guarded build tests the device boundary, not the numbers (the plain build runs every
     * scale): the extremes keep it to a minute */
    static const double scales[] = {0x1p-6, 0x1p24};
#else
    static const double scales[] = {0x1p-6, 2, 0x1p10, 0x1p16, 0x1p24};
#endif
    for (int p = 0; p < 2; p++) {
        for (int i = 0; optimizer_preset_at(i); i++) {
            const char *preset = optimizer_preset_at(i);
            Trajectory ref = run_scaled(precisions[p], preset, 1);
            for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
                Trajectory t = run_scaled(precisions[p], preset, scales[k]);
                for (int s = 0; s < STEPS * ref.n_params; s++) {
                    const OptStats *a = &ref.stats[s], *b = &t.stats[s];
                    cr_assert(!memcmp(a, b, sizeof *a),
                              "%s %s scale %g: step %d param %d: |g| %.9g vs %.9g, rate %.9g vs %.9g, "
                              "update %.9g vs %.9g",
                              precisions[p], preset, scales[k], s / ref.n_params, s % ref.n_params, a->g_norm,
                              b->g_norm, a->local_rate, b->local_rate, a->update_ratio, b->update_ratio);
                }
                for (size_t j = 0; j < ref.n_weights; j++)
                    cr_assert(!memcmp(&ref.w[j], &t.w[j], sizeof(real)), "%s %s scale %g: weight %zu %.9g vs %.9g",
                              precisions[p], preset, scales[k], j, (double)ref.w[j], (double)t.w[j]);
                trajectory_free(&t);
            }
            trajectory_free(&ref);
        }
    }
}

/* Everything an update may change: the weights, every optimizer slot and the statistics on the
 * device, and the host's count of updates. */
typedef struct {
    real *w, *slots;
    OptStats *stats;
    long updates;
} UpdateState;

static UpdateState update_state(Net *net, Optimizer *opt)
{
    size_t slot_values = 0;
    for (int i = 0; i < opt->n_params * opt->n_slots; i++) slot_values += tensor_count(&opt->slots[i]);
    UpdateState u = {malloc(net->n_weights * sizeof(real)), malloc((slot_values + 1) * sizeof(real)),
                     malloc((size_t)opt->n_params * sizeof(OptStats)), opt->updates};
    tensor_download(&net->param_block, u.w);
    real *at = u.slots;
    for (int i = 0; i < opt->n_params * opt->n_slots; i++) {
        tensor_download(&opt->slots[i], at);
        at += tensor_count(&opt->slots[i]);
    }
    bk_download(net->bk, u.stats, bk_buffer_address(opt->stats_dev), (size_t)opt->n_params * sizeof(OptStats));
    return u;
}

static void update_state_free(UpdateState *u)
{
    free(u->w);
    free(u->slots);
    free(u->stats);
}

/* The optimizers to skip a step of: SGD with momentum, Nesterov, AdamW, LAMB and every LARS/LARC
 * preset; i past the last: false. */
static bool optimizer_at(int i, OptConfig *cfg, char *label, size_t len)
{
    static const char *const plain[] = {"sgd", "nesterov", "adamw", "lamb"};
    const int n_plain = (int)(sizeof plain / sizeof plain[0]);
    opt_config_defaults(cfg);
    cfg->momentum = 0.9;
    cfg->weight_decay = 5e-4;
    if (i < n_plain) {
        snprintf(cfg->name, sizeof cfg->name, "%s", i == 1 ? "sgd" : plain[i]);
        cfg->nesterov = i == 1;
        snprintf(label, len, "%s", plain[i]);
        return true;
    }
    const char *preset = optimizer_preset_at(i - n_plain);
    if (!preset) return false;
    Error err;
    cr_assert_eq(optimizer_apply_preset(cfg, preset, NULL, 0, &err), 0, "%s", err.msg);
    snprintf(label, len, "%s %s", cfg->name, preset);
    return true;
}

/* A step whose gradients hold an inf, handed to the optimizer with the check unscaling left on
 * the device, changes nothing: not the weights, the optimizer's state or its statistics (after
 * one applied step, so the state is not zero); the host then learns of it and counts only the
 * applied update. Every optimizer, on the CPU backend (and the guarded one, where the check is
 * read inside the backend). */
Test(loss_scale, an_inf_gradient_changes_nothing_through_the_device_check, .timeout = 300)
{
    char label[64];
    OptConfig cfg;
    for (int i = 0; optimizer_at(i, &cfg, label, sizeof label); i++) {
        Error err;
        Backend *bk = backend_create(2);
        Net *net = small_net(bk, BATCH);
        Optimizer *opt = optimizer_create(&cfg, net, &err);
        cr_assert_not_null(opt, "%s: %s", label, err.msg);
        opt->collect_stats = true;
        BkBuffer *buf = bk_buffer_alloc(bk, sizeof(double));
        LossScaler ls;
        loss_scaler_init(&ls, true, 0);
        for (int s = 0; s < 2; s++) {
            net_upload_random_batch(net, BATCH, 21, (uint64_t)s);
            net_zero_grad(net);
            net->loss_scale = loss_scaler_net_scale(&ls, BATCH);
            net_forward(net, BATCH, true);
            net_backward(net, BATCH);
            if (s == 1) tensor_set(&net->grad_block, net->n_weights / 2, INFINITY);
            UpdateState before = update_state(net, opt);
            const double *check = loss_scaler_unscale(&ls, net, bk_buffer_address(buf));
            optimizer_step(opt, net, 0.5, check);
            double sum;
            bk_download(bk, &sum, check, sizeof sum);
            if (!loss_scaler_update(&ls, isfinite(sum))) optimizer_step_skipped(opt);
            UpdateState after = update_state(net, opt);
            const bool same = !memcmp(before.w, after.w, net->n_weights * sizeof(real)) &&
                              !memcmp(before.stats, after.stats, (size_t)opt->n_params * sizeof(OptStats));
            cr_assert(s == 0 ? !same : same, "%s: step %d %s", label, s, s ? "changed the weights or stats" : "did nothing");
            size_t slot_values = 0;
            for (int k = 0; k < opt->n_params * opt->n_slots; k++) slot_values += tensor_count(&opt->slots[k]);
            if (s == 1)
                cr_assert(!memcmp(before.slots, after.slots, slot_values * sizeof(real)), "%s: the state changed", label);
            cr_assert_eq(after.updates, 1, "%s: %ld updates counted", label, after.updates);
            update_state_free(&before);
            update_state_free(&after);
        }
        cr_assert_eq(ls.skipped, 1, "%s", label);
        bk_buffer_free(buf);
        optimizer_destroy(opt);
        net_destroy(net);
        backend_destroy(bk);
    }
}
