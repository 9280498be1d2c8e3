/* Optimizers against reference trajectories. tests/make_optimizer_reference.py
 * steps the six parameters of a tiny net (conv+bias, BN affine, linear+bias: every
 * ParamKind) for 10 updates with fixed gradients and a warm-up-then-decay LR, using
 * torch.optim (SGD, Nesterov SGD, AdamW) or the update rules of
 * docs/papers.md written out in numpy (LARS/LARC presets, LAMB), including
 * the zero-norm guards and excluded parameters. Here the engine's optimizer is
 * configured from the case's metadata (name, preset, momentum, weight decay, ...)
 * and must reproduce the parameters after every update:
 *     max |ours - want| / max |want| <= 1e-5 per tensor and step.
 * Run from the repository root (or set BB_OPTIMIZER_DIR to the fixture folder). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/net/models.h"
#include "../engine/net/net.h"
#include "../engine/optim/optimizer.h"
#include "reference_fixture.c"
#include "tensor_access.h"

#define TOL 1e-5
#define STEPS 10

static const char *fixture_dir(void)
{
    const char *d = getenv("BB_OPTIMIZER_DIR");
    return d && *d ? d : "tests/fixtures/optimizers";
}

/* conv 2->3 k3 pad 1 with bias on 2x4x4, BN(3) affine, linear 48->5 with bias. */
static Net *build_tiny(Backend *bk)
{
    const Init z = {INIT_ZERO, 0};
    Net *net = net_create("opt-test", bk, 2, 4, 4);
    int x = nb_conv(net, "conv", NET_INPUT, 3, 3, 1, 1, 1, true, z, z);
    x = nb_batchnorm(net, "bn", x, true, 1e-5, 0.1);
    x = nb_linear(net, "fc", x, 5, true, z, z);
    net_finalize(net);
    return net;
}

static const FxTensor *get(const Fixture *fx, const char *name, size_t count)
{
    const FxTensor *t = fixture_get(fx, name);
    cr_assert_not_null(t, "fixture has no tensor '%s'", name);
    cr_assert_eq(t->dtype, FX_F32, "'%s' is not F32", name);
    cr_assert_eq(t->count, count, "'%s' has %zu values, expected %zu", name, t->count, count);
    return t;
}

static double meta_num(const Fixture *fx, const char *key)
{
    const char *v = fixture_meta(fx, key);
    cr_assert_not_null(v, "fixture metadata has no '%s'", key);
    char *end;
    double d = strtod(v, &end);
    cr_assert(end != v && *end == 0, "metadata %s = '%s' is not a number", key, v);
    return d;
}

/* OptConfig from the case's metadata, as the CLI would build it. */
static void config_from_meta(const Fixture *fx, OptConfig *cfg)
{
    opt_config_defaults(cfg);
    const char *opt = fixture_meta(fx, "opt"), *variant = fixture_meta(fx, "variant");
    cr_assert(opt && variant, "metadata lacks opt/variant");
    if (*variant) {
        Error err = {0};
        char what[512];
        cr_assert_eq(optimizer_apply_preset(cfg, variant, what, sizeof what, &err), 0, "%s", err.msg);
        cr_assert_str_eq(cfg->name, opt, "preset %s sets --opt %s, the fixture says %s", variant, cfg->name,
                         opt);
    } else {
        snprintf(cfg->name, sizeof cfg->name, "%s", opt);
    }
    cfg->momentum = meta_num(fx, "momentum");
    cfg->weight_decay = meta_num(fx, "weight_decay");
    cfg->nesterov = meta_num(fx, "nesterov") != 0;
    cfg->beta1 = meta_num(fx, "beta1");
    cfg->beta2 = meta_num(fx, "beta2");
    cfg->adam_eps = meta_num(fx, "adam_eps");
    const char *ex = fixture_meta(fx, "exclude");
    if (ex && strstr(ex, "bias")) cfg->lars_exclude |= OPT_EXCLUDE_BIAS;
    if (ex && strstr(ex, "bn")) cfg->lars_exclude |= OPT_EXCLUDE_BN;
}

static void run_case(const char *case_name)
{
    char path[512], err_text[512];
    snprintf(path, sizeof path, "%s/%s.safetensors", fixture_dir(), case_name);
    Fixture fx;
    cr_assert_eq(fixture_load(&fx, path, err_text, sizeof err_text), 0, "%s", err_text);
    Backend *bk = backend_create(1);
    Net *net = build_tiny(bk);
    cr_assert_eq(net->n_params, 6);
    OptConfig cfg;
    config_from_meta(&fx, &cfg);
    Error err = {0};
    Optimizer *opt = optimizer_create(&cfg, net, &err);
    cr_assert_not_null(opt, "%s: %s", case_name, err.msg);
    opt->collect_stats = true;
    const FxTensor *lrs = get(&fx, "lr", STEPS);
    char name[160];
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        size_t count = tensor_count(&pr->value);
        snprintf(name, sizeof name, "init.%s", pr->name);
        const FxTensor *t = get(&fx, name, count);
        upload_f32(&pr->value, t->f32);
    }
    double worst = 0;
    for (int s = 0; s < STEPS; s++) {
        for (int p = 0; p < net->n_params; p++) {
            Param *pr = &net->params[p];
            size_t count = tensor_count(&pr->value);
            snprintf(name, sizeof name, "grad.%d.%s", s, pr->name);
            const FxTensor *t = get(&fx, name, count);
            upload_f32(&pr->grad, t->f32);
        }
        optimizer_step(opt, net, lrs->f32[s], NULL);
        for (int p = 0; p < net->n_params; p++) {
            Param *pr = &net->params[p];
            size_t count = tensor_count(&pr->value);
            snprintf(name, sizeof name, "want.%d.%s", s, pr->name);
            const FxTensor *t = get(&fx, name, count);
            double max_want = 0, max_diff = 0;
            real *got = tensor_to_host(&pr->value);
            for (size_t i = 0; i < count; i++) {
                double d = fabs((double)got[i] - (double)t->f32[i]);
                if (!(d <= max_diff)) max_diff = d; /* NaN propagates */
                if (fabs((double)t->f32[i]) > max_want) max_want = fabs((double)t->f32[i]);
            }
            free(got);
            double rel = max_want > 0 ? max_diff / max_want : max_diff;
            if (!(rel <= worst)) worst = rel;
            cr_expect(rel <= TOL, "%s step %d %s: max rel diff %.3g > %g", case_name, s, pr->name, rel, TOL);
            /* Statistics of this update. */
            const OptStats *st = &opt->stats[p];
            cr_expect(isfinite(st->w_norm) && isfinite(st->g_norm) && isfinite(st->update_ratio),
                      "%s step %d %s: non-finite statistics", case_name, s, pr->name);
            cr_expect(fabs(st->eff_rate - lrs->f32[s] * st->local_rate) <= 1e-9 * fabs(st->eff_rate) + 1e-15,
                      "%s step %d %s: eff_rate %g != lr %g x local %g", case_name, s, pr->name, st->eff_rate,
                      (double)lrs->f32[s], st->local_rate);
        }
    }
    cr_log_info("%-22s worst rel diff %.3g", case_name, worst);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
    fixture_free(&fx);
}

#define CASE(id, file) \
    Test(optimizer_reference, id) { run_case(file); }

CASE(sgd, "sgd")
CASE(sgd_nesterov, "sgd-nesterov")
CASE(adamw, "adamw")
CASE(lamb, "lamb")
CASE(lars_paper, "lars-paper")
CASE(lars_paper_guard, "lars-paper-guard")
CASE(lars_paper_exclude, "lars-paper-exclude")
CASE(larc_nvcaffe_clip, "larc-nvcaffe-clip")
CASE(larc_nvcaffe_clip_guard, "larc-nvcaffe-clip-guard")
CASE(larc_nvcaffe_scale, "larc-nvcaffe-scale")
CASE(larc_apex, "larc-apex")
CASE(larc_apex_guard, "larc-apex-guard")
CASE(lars_tf, "lars-tf")
CASE(lars_timm, "lars-timm")
CASE(lars_timm_nowd, "lars-timm-nowd")
CASE(lars_mlperf, "lars-mlperf")
CASE(lars_tf_garden, "lars-tf-garden")
CASE(lars_tf_garden_nc, "lars-tf-garden-nc")

Test(optimizer_config, defaults_are_plain_sgd)
{
    OptConfig c;
    opt_config_defaults(&c);
    cr_assert_str_eq(c.name, "sgd");
    cr_assert(c.momentum == 0 && c.weight_decay == 0 && !c.nesterov && !c.decoupled_wd && c.lars_exclude == 0);
}

Test(optimizer_config, presets_describe_and_reject_unknown)
{
    static const char *variants[] = {"paper", "nvcaffe", "nvcaffe-clip", "nvcaffe-scale", "apex",
                                     "tf", "timm", "mlperf", "tf-garden", "tf-garden-nc"};
    Backend *bk = backend_create(1);
    Net *net = build_tiny(bk);
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        OptConfig c;
        opt_config_defaults(&c);
        c.momentum = 0.9;
        Error err = {0};
        char what[512] = "";
        cr_assert_eq(optimizer_apply_preset(&c, variants[i], what, sizeof what, &err), 0, "%s", err.msg);
        cr_expect(strstr(what, variants[i]) == what, "description '%s' does not name %s", what, variants[i]);
        cr_expect_str_eq(c.lars_variant, variants[i]);
        Optimizer *o = optimizer_create(&c, net, &err);
        cr_expect_not_null(o, "%s: %s", variants[i], err.msg);
        optimizer_destroy(o);
    }
    OptConfig c;
    opt_config_defaults(&c);
    Error err = {0};
    char what[64];
    cr_expect_eq(optimizer_apply_preset(&c, "nope", what, sizeof what, &err), -1);
    cr_expect(strstr(err.msg, "mlperf") != NULL, "error lists the presets: %s", err.msg);
    cr_expect_str_eq(optimizer_default_preset("lars"), "paper");
    cr_expect_str_eq(optimizer_default_preset("larc"), "nvcaffe");
    snprintf(c.name, sizeof c.name, "adam");
    cr_expect_null(optimizer_create(&c, net, &err));
    net_destroy(net);
    backend_destroy(bk);
}

Test(optimizer_config, adam_slots_have_torch_names)
{
    Backend *bk = backend_create(1);
    Net *net = build_tiny(bk);
    OptConfig c;
    opt_config_defaults(&c);
    snprintf(c.name, sizeof c.name, "adamw");
    Error err = {0};
    Optimizer *o = optimizer_create(&c, net, &err);
    cr_assert_not_null(o, "%s", err.msg);
    cr_expect_eq(o->n_slots, 2);
    cr_expect_str_eq(o->slot_names[0], "exp_avg");
    cr_expect_str_eq(o->slot_names[1], "exp_avg_sq");
    optimizer_destroy(o);
    net_destroy(net);
    backend_destroy(bk);
}

/* Decoupled weight decay for SGD with momentum, several steps: w *= 1 - lr*wd beside
 * v = m*v + g, w -= lr*v. The first step without momentum history agrees with the coupled
 * form (g += wd*w), so only later steps tell the two apart; both are followed here in double
 * and the test checks that they have parted before it trusts the comparison. */
Test(optimizer_config, sgd_decoupled_weight_decay)
{
    enum { WD_STEPS = 4 };
    const double lr = 0.5, wd = 0.1, m = 0.9, g = 1;
    Backend *bk = backend_create(1);
    Net *net = build_tiny(bk);
    OptConfig c;
    opt_config_defaults(&c);
    c.weight_decay = wd;
    c.momentum = m;
    c.decoupled_wd = true;
    Error err = {0};
    Optimizer *o = optimizer_create(&c, net, &err);
    cr_assert_not_null(o, "%s", err.msg);
    Param *pr = &net->params[0];
    tensor_set(&pr->value, 0, 2);
    double w = 2, v = 0, cw = 2, cv = 0; /* decoupled and coupled, as the formulas say */
    for (int k = 0; k < WD_STEPS; k++) {
        tensor_set(&pr->grad, 0, (real)g);
        optimizer_step(o, net, lr, NULL);
        v = k ? m * v + g : g;
        w = w * (1 - lr * wd) - lr * v;
        const double cg = g + wd * cw;
        cv = k ? m * cv + cg : cg;
        cw -= lr * cv;
        cr_expect_float_eq(tensor_get(&pr->value, 0), w, 1e-5, "step %d: %g, decoupled gives %g (coupled %g)", k + 1,
                           (double)tensor_get(&pr->value, 0), w, cw);
    }
    cr_assert_gt(fabs(w - cw), 0.05, "the two forms should have parted after %d steps (%g, %g)", WD_STEPS, w, cw);
    optimizer_destroy(o);
    net_destroy(net);
    backend_destroy(bk);
}

/* Every parameter and gradient zero except conv.bias: w = (3, 4, 0), g = (0, 0.5, 0). */
static Param *hand_made_bias(Net *net)
{
    tensor_zero(&net->param_block);
    tensor_zero(&net->grad_block);
    Param *pr = &net->params[1]; /* conv.bias, 3 values */
    tensor_set(&pr->value, 0, 3);
    tensor_set(&pr->value, 1, 4);
    tensor_set(&pr->grad, 1, 0.5);
    return pr;
}

/* Per-layer statistics of one paper-LARS update on hand-made values:
 * w = (3, 4), g = (0, 0.5), wd 0.1, eta 0.01, lr 2, no momentum:
 * r = 0.01*5 / (0.5 + 0.1*5) = 0.05, eff = 0.1, update = 0.1*(g + 0.1 w) = 0.1*(0.3, 0.9). */
Test(optimizer_stats, lars_paper_one_update)
{
    Backend *bk = backend_create(1);
    Net *net = build_tiny(bk);
    OptConfig c;
    opt_config_defaults(&c);
    Error err = {0};
    cr_assert_eq(optimizer_apply_preset(&c, "paper", NULL, 0, &err), 0, "%s", err.msg);
    c.weight_decay = 0.1;
    c.eta = 0.01;
    Optimizer *o = optimizer_create(&c, net, &err);
    cr_assert_not_null(o, "%s", err.msg);
    o->collect_stats = true;
    Param *pr = hand_made_bias(net);
    optimizer_step(o, net, 2.0, NULL);
    const OptStats *s = &o->stats[1];
    cr_expect_float_eq(s->w_norm, 5.0, 1e-9);
    cr_expect_float_eq(s->g_norm, 0.5, 1e-9);
    cr_expect_float_eq(s->local_rate, 0.05, 1e-9);
    cr_expect_float_eq(s->eff_rate, 0.1, 1e-9);
    cr_expect_float_eq(s->update_ratio, 0.1 * sqrt(0.09 + 0.81) / 5, 1e-6);
    cr_expect_float_eq(tensor_get(&pr->value, 0), 3 - 0.03, 1e-6);
    cr_expect_float_eq(tensor_get(&pr->value, 1), 4 - 0.09, 1e-6);
    /* An all-zero parameter hits the guard: r = 1, nothing moves. */
    cr_expect_float_eq(o->stats[0].local_rate, 1.0, 1e-12);
    cr_expect_float_eq(o->stats[0].update_ratio, 0.0, 1e-12);
    optimizer_destroy(o);
    net_destroy(net);
    backend_destroy(bk);
}

/* One NVCaffe LARC update of conv.bias w = (3, 4), g = (0, 0.5), eta 0.01, no wd, no
 * momentum: r = 0.01*5/0.5 = 0.1. Returns the effective rate. */
static double larc_effective_rate(const char *variant, double lr, double *w0, double *w1)
{
    Backend *bk = backend_create(1);
    Net *net = build_tiny(bk);
    OptConfig c;
    opt_config_defaults(&c);
    Error err = {0};
    cr_assert_eq(optimizer_apply_preset(&c, variant, NULL, 0, &err), 0, "%s", err.msg);
    c.eta = 0.01;
    Optimizer *o = optimizer_create(&c, net, &err);
    cr_assert_not_null(o, "%s", err.msg);
    o->collect_stats = true;
    Param *pr = hand_made_bias(net);
    optimizer_step(o, net, lr, NULL);
    double eff = o->stats[1].eff_rate;
    *w0 = tensor_get(&pr->value, 0);
    *w1 = tensor_get(&pr->value, 1);
    optimizer_destroy(o);
    net_destroy(net);
    backend_destroy(bk);
    return eff;
}

/* Clip (min(lr, r)) and scale (lr * r) differ for lr = 0.5 (0.1 against 0.05) and
 * coincide for lr = 1 (min(1, r) = r = 1 * r). */
Test(optimizer_larc, clip_versus_scale)
{
    double a0, a1, b0, b1;
    double clip = larc_effective_rate("nvcaffe-clip", 0.5, &a0, &a1);
    double scale = larc_effective_rate("nvcaffe-scale", 0.5, &b0, &b1);
    cr_expect_float_eq(clip, 0.1, 1e-9, "clip: %g", clip);
    cr_expect_float_eq(scale, 0.05, 1e-9, "scale: %g", scale);
    cr_expect_float_eq(a1, 4 - 0.1 * 0.5, 1e-6);
    cr_expect_float_eq(b1, 4 - 0.05 * 0.5, 1e-6);
    clip = larc_effective_rate("nvcaffe-clip", 1.0, &a0, &a1);
    scale = larc_effective_rate("nvcaffe-scale", 1.0, &b0, &b1);
    cr_expect_float_eq(clip, 0.1, 1e-9);
    cr_expect_float_eq(scale, 0.1, 1e-9);
    cr_expect_float_eq(a1, b1, 1e-9);
    cr_expect_float_eq(a0, b0, 1e-9);
}

/* ---- the update split across threads ---- */

/* LeNet's parameters, then its momentum (when the update keeps one), after `steps` SGD updates
 * on a backend of `threads` threads, each update from its own pseudo-random gradient. */
static real *lenet_after_updates(const OptConfig *cfg, int threads, int steps, size_t *count)
{
    Backend *bk = backend_create(threads);
    Error err = {0};
    Net *net = model_build("lenet", bk, 10, 7, &err);
    cr_assert(net, "%s", err.msg);
    Optimizer *opt = optimizer_create(cfg, net, &err);
    cr_assert(opt, "%s", err.msg);
    const size_t n = net->n_weights;
    real *g = malloc(n * sizeof *g), *out = malloc(2 * n * sizeof *out);
    cr_assert(g && out);
    uint64_t state = 12345;
    for (int s = 0; s < steps; s++) {
        for (size_t i = 0; i < n; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            g[i] = (real)((double)(state >> 40) / (double)(1ULL << 24) - 0.5);
        }
        tensor_upload(&net->grad_block, g);
        optimizer_step(opt, net, 0.1, NULL);
    }
    tensor_download(&net->param_block, out);
    size_t at = n; /* then each tensor's momentum, in the parameters' order */
    for (int p = 0; p < net->n_params && opt->n_slots > 0; p++) {
        Tensor *v = optimizer_slot(opt, p, 0);
        tensor_download(v, out + at);
        at += tensor_count(v);
    }
    *count = at;
    free(g);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
    return out;
}

/* optim_sgd.c splits the update of all tensors laid end to end, the threads' boundaries falling
 * inside tensors (LeNet's 61,706 parameters are over the size that splits): on two threads it
 * must be the one-thread update to the bit, with momentum, Nesterov, decoupled decay or none. */
Test(optimizer_threads, sgd_split_is_the_one_thread_update)
{
    OptConfig cfgs[4];
    for (int k = 0; k < 4; k++) {
        opt_config_defaults(&cfgs[k]);
        cfgs[k].momentum = k == 3 ? 0 : 0.9;
        cfgs[k].weight_decay = 5e-4;
    }
    cfgs[1].nesterov = true;
    cfgs[2].decoupled_wd = true;
    for (int k = 0; k < 4; k++) {
        size_t n1, n2;
        real *one = lenet_after_updates(&cfgs[k], 1, 3, &n1), *two = lenet_after_updates(&cfgs[k], 2, 3, &n2);
        cr_assert_eq(n1, n2);
        cr_assert(n1 > 60000, "lenet has %zu values to compare", n1);
        cr_expect(memcmp(one, two, n1 * sizeof *one) == 0, "config %d: two threads' update differs from one's", k);
        free(one);
        free(two);
    }
}
