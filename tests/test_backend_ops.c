/* Every backend operation against the CPU reference, in the manner of ggml's
 * test-backend-ops: each model is built twice from one seed, on the CPU backend and on the
 * backend under test (BB_TEST_DEVICE, default "cuda"), and run layer by layer. Before each
 * layer the device copy receives the CPU's inputs (and, for backward, the CPU's output
 * gradient and the gradients accumulated so far), so every operation is checked alone, at
 * every shape the models use, forward and backward, and errors do not compound. Then every
 * optimizer and LARS/LARC preset takes two steps on both; in bf16 and fp16 the products
 * (convolutions, plain, 1x1, strided and grouped, and fully connected layers) are compared with
 * the CPU's emulation of the same precision, and a small net trains a few steps on each; fp16
 * products that overflow give inf where the CPU's do (the loss scaler's signal); the
 * vector operations,
 * dropout masks and the normalization of a batch's pixels (uploaded from page-locked memory,
 * as the batch loader does) are compared.
 *
 * The difference of a tensor is max |device - cpu| / max |cpu| (0 when both are zero);
 * tolerances are stated below, per operation kind. Every comparison prints one line,
 * "model layer kind pass tensor difference tolerance", so a report shows the margins.
 *
 * Without the device (no GPU, or a build without make GPU=1) the tests are skipped and say
 * why; with BB_TEST_REQUIRE_DEVICE=1 (bench/gpu_check.sh) a missing device is a failure.
 * Every check also runs as backend_ops_harness::*, the CPU at one thread against two, so the
 * harness itself is exercised on every machine (the full-size nets left out there: minutes on
 * a CPU). With BB_TEST_DEVICE=cpu the device tests do the same. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/data/data.h"
#include "../engine/net/models.h"
#include "../engine/net/net.h"
#include "../engine/optim/optimizer.h"
#include "tensor_access.h"

/* Operations whose results depend on the order of a long sum (gemm, convolution, batch
 * statistics, LRN windows, the loss) are compared at 1e-4; elementwise ones at 1e-6. */
#define TOL_SUMS 1e-4
#define TOL_ELEMENTWISE 1e-6
/* Two optimizer steps, and the statistics (norms in double). */
#define TOL_OPTIMIZER 1e-5

static const char *device_under_test(void)
{
    const char *d = getenv("BB_TEST_DEVICE");
    return d && *d ? d : "cuda";
}

/* The backend under test, or the test is skipped with the reason (failed, where the device
 * is required). */
static Backend *open_or_skip(const char *device, int threads)
{
    Error err = {{0}};
    Backend *bk = backend_open(device, threads, &err);
    if (!bk) {
        const char *req = getenv("BB_TEST_REQUIRE_DEVICE");
        if (req && !strcmp(req, "1")) cr_assert_fail("no %s backend here: %s", device, err.msg);
        printf("skipped: no %s backend here: %s\n", device, err.msg);
        cr_skip_test("no %s backend here: %s", device, err.msg);
    }
    return bk;
}

static bool is_cpu(const Backend *bk) { return strncmp(backend_name(bk), "cpu", 3) == 0; }

/* The reference: the CPU at two threads when the CPU is also under test (at one), else at
 * up to eight (a GPU node's cores make the full-size nets' reference quick). */
static Backend *open_reference(const char *device)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return backend_create(strncmp(device, "cpu", 3) == 0 ? 2 : cpus > 8 ? 8 : cpus > 1 ? (int)cpus : 1);
}

static double max_abs(const real *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i]));
    return m;
}

/* max |got - want| / max |want|; NaN anywhere is a difference of infinity. */
static double difference(const real *want, const real *got, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!isfinite((double)got[i]) || !isfinite((double)want[i])) d = INFINITY;
        worst = fmax(worst, d);
    }
    double scale = max_abs(want, n);
    return worst == 0 ? 0 : scale > 0 ? worst / scale : INFINITY;
}

/* The tolerances of a precision beyond fp32's. */
typedef struct {
    double sums_scale; /* the sums' tolerance times this (tf32's rounding) */
    double products;   /* > 0: the products' (conv, linear) tolerance, relative (bf16 and fp16's) */
    double floor;      /* and added to it, this absolute step twice (fp16's subnormal spacing) */
} Tolerances;

static const Tolerances FP32_TOL = {1, 0, 0};

typedef struct {
    const char *model;
    int failures, checks;
    double worst_ratio; /* the largest difference / tolerance seen */
    Tolerances tol;
} Report;

/* One comparison's line and its count: difference d against tolerance tol. */
static void report_line(Report *r, const char *layer, const char *kind, const char *pass, const char *what, double d,
                        double tol)
{
    bool ok = d <= tol;
    r->checks++;
    r->failures += !ok;
    if (tol > 0) r->worst_ratio = fmax(r->worst_ratio, d / tol);
    printf("%-18s %-24s %-12s %-8s %-14s %10.3g %8.0e %s\n", r->model, layer, kind, pass, what, d, tol,
           ok ? "ok" : "FAIL");
}

static void check_values(Report *r, const char *layer, const char *kind, const char *pass, const char *what,
                         const real *want, const real *got, size_t n, double tol)
{
    report_line(r, layer, kind, pass, what, difference(want, got, n), tol);
}

static bool is_product(const char *kind) { return !strcmp(kind, "conv") || !strcmp(kind, "linear"); }

static void check_tensor(Report *r, const char *layer, const char *kind, const char *pass, const char *what,
                         const Tensor *want, const Tensor *got, double tol)
{
    size_t n = tensor_count(want);
    cr_assert_eq(n, tensor_count(got), "%s %s: %zu vs %zu values", layer, what, n, tensor_count(got));
    real *a = tensor_to_host(want), *b = tensor_to_host(got);
    /* a tensor whose largest value is itself in fp16's subnormal range: its ulp is absolute */
    if (r->tol.products > 0 && r->tol.floor > 0 && is_product(kind) && max_abs(a, n) > 0)
        tol += 2 * r->tol.floor / max_abs(a, n);
    check_values(r, layer, kind, pass, what, a, b, n, tol);
    free(a);
    free(b);
}

/* to = from, across backends, through the host. */
static void copy_across(const Tensor *from, Tensor *to)
{
    real *host = tensor_to_host(from);
    tensor_upload(to, host);
    free(host);
}

static double tolerance_of(const Report *r, const char *kind)
{
    static const char *const exact[] = {"relu", "add", "dropout", "maxpool"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp(kind, exact[i])) return TOL_ELEMENTWISE;
    if (r->tol.products > 0 && is_product(kind)) return r->tol.products;
    return TOL_SUMS * r->tol.sums_scale;
}

/* Both nets of one model, planned for n images, with the same parameters, buffers and batch. */
static void twin_nets(const char *model, Backend *ref_bk, Backend *dev_bk, int n, Net **ref, Net **dev)
{
    Error err = {{0}};
    *ref = model_build(model, ref_bk, 0, 7, &err);
    cr_assert_not_null(*ref, "%s", err.msg);
    *dev = model_build(model, dev_bk, 0, 7, &err);
    cr_assert_not_null(*dev, "%s", err.msg);
    net_plan(*ref, n);
    net_plan(*dev, n);
    copy_across(&(*ref)->param_block, &(*dev)->param_block);
    for (int b = 0; b < (*ref)->n_buffers; b++) copy_across(&(*ref)->buffers[b].value, &(*dev)->buffers[b].value);
    net_upload_random_batch(*ref, n, 11, 3);
    net_upload_random_batch(*dev, n, 11, 3);
    (*ref)->step = (*dev)->step = 5; /* dropout masks of step 5 */
}

static void set_batch(Net *net, int n)
{
    tensor_set_batch(&net->input, n);
    for (int i = 0; i < net->n_layers; i++) {
        tensor_set_batch(&net->layers[i].out, n);
        tensor_set_batch(&net->layers[i].dout, n);
    }
}

static void forward_layer(Report *r, Net *ref, Net *dev, int i, int n)
{
    Layer *lr = &ref->layers[i], *ld = &dev->layers[i];
    for (int k = 0; k < lr->n_in; k++) copy_across(net_layer_input(ref, lr, k), net_layer_input(dev, ld, k));
    lr->ops->forward(lr, ref, n, true);
    ld->ops->forward(ld, dev, n, true);
    const char *kind = lr->ops->kind;
    double tol = tolerance_of(r, kind);
    if (i == ref->loss_layer) {
        double want[2], got[2];
        bk_download(ref->bk, want, bk_buffer_address(ref->loss_result), sizeof want);
        bk_download(dev->bk, got, bk_buffer_address(dev->loss_result), sizeof got);
        real w[2] = {(real)want[0], (real)want[1]}, g[2] = {(real)got[0], (real)got[1]};
        check_values(r, lr->name, kind, "forward", "loss,hits", w, g, 2, tol);
    }
    check_tensor(r, lr->name, kind, "forward", "output", &lr->out, &ld->out, tol);
    for (int b = 0; b < lr->n_buffer; b++)
        check_tensor(r, lr->name, kind, "forward", ref->buffers[lr->buffer[b]].name,
                     &ref->buffers[lr->buffer[b]].value, &dev->buffers[lr->buffer[b]].value, tol);
}

static void backward_layer(Report *r, Net *ref, Net *dev, int i, int n)
{
    Layer *lr = &ref->layers[i], *ld = &dev->layers[i];
    /* as net_backward: the gradients this layer writes first zeroed, or marked to be written
     * (so both the adding and the writing forms of an operation run) */
    net_begin_layer_backward(ref, i);
    net_begin_layer_backward(dev, i);
    /* the CPU's state before this layer: its output gradient, and what its inputs' and
     * parameters' gradients hold already (backward adds to them) */
    copy_across(&lr->dout, &ld->dout);
    for (int k = 0; k < lr->n_in; k++) {
        Tensor *gr = net_layer_input_grad(ref, lr, k);
        if (gr) copy_across(gr, net_layer_input_grad(dev, ld, k));
    }
    for (int p = 0; p < lr->n_param; p++) copy_across(&ref->params[lr->param[p]].grad, &dev->params[ld->param[p]].grad);
    lr->ops->backward(lr, ref, n);
    ld->ops->backward(ld, dev, n);
    const char *kind = lr->ops->kind;
    double tol = tolerance_of(r, kind);
    for (int k = 0; k < lr->n_in; k++) {
        Tensor *gr = net_layer_input_grad(ref, lr, k);
        if (gr) check_tensor(r, lr->name, kind, "backward", k ? "input1 grad" : "input grad", gr,
                             net_layer_input_grad(dev, ld, k), tol);
    }
    for (int p = 0; p < lr->n_param; p++) {
        const Param *pr = &ref->params[lr->param[p]];
        check_tensor(r, lr->name, kind, "backward", strrchr(pr->name, '.') ? strrchr(pr->name, '.') + 1 : pr->name,
                     &pr->grad, &dev->params[ld->param[p]].grad, tol);
    }
}

/* Every layer of two twin nets, forward then backward, each fed the CPU's values; the nets
 * are destroyed. */
static void check_layers(Report *r, Net *ref, Net *dev, int n)
{
    set_batch(ref, n);
    set_batch(dev, n);
    for (int i = 0; i < ref->n_layers; i++) forward_layer(r, ref, dev, i, n);
    for (int i = 0; i < ref->n_layers; i++) {
        tensor_zero(&ref->layers[i].dout);
        tensor_zero(&dev->layers[i].dout);
    }
    net_zero_grad(ref);
    net_zero_grad(dev);
    for (int i = ref->n_layers - 1; i >= 0; i--) backward_layer(r, ref, dev, i, n);
    net_destroy(ref);
    net_destroy(dev);
}

/* Every layer of one model, forward then backward, each fed the CPU's values. */
static Report check_model(const ModelInfo *m, Backend *ref_bk, Backend *dev_bk, const Tolerances *tol)
{
    /* two images of the full-size nets, four of the proxies (batch statistics over more) */
    int n = m->in_h > 64 ? 2 : 4;
    Net *ref, *dev;
    twin_nets(m->name, ref_bk, dev_bk, n, &ref, &dev);
    Report r = {m->name, 0, 0, 0, *tol};
    check_layers(&r, ref, dev, n);
    return r;
}

static void print_header(void)
{
    printf("%-18s %-24s %-12s %-8s %-14s %10s %8s\n", "model", "layer", "kind", "pass", "tensor", "difference",
           "tol");
}

/* Every layer of every model (of the proxies only when `proxies_only`: the full-size nets
 * take minutes on a CPU) at `tol`; returns the comparisons over tolerance. */
static int check_models(Backend *ref_bk, Backend *dev_bk, bool proxies_only, const Tolerances *tol)
{
    int count, failures = 0;
    const ModelInfo *models = model_list(&count);
    print_header();
    for (int i = 0; i < count; i++) {
        if (proxies_only && models[i].in_h > 64) {
            printf("%s: left out (full size)\n", models[i].name);
            continue;
        }
        Report r = check_model(&models[i], ref_bk, dev_bk, tol);
        printf("%s on %s: %d checks, %d over tolerance, worst at %.2g of its tolerance\n", r.model,
               backend_device_name(dev_bk), r.checks, r.failures, r.worst_ratio);
        failures += r.failures;
    }
    return failures;
}

static int check_every_model(Backend *ref_bk, Backend *dev_bk)
{
    return check_models(ref_bk, dev_bk, is_cpu(dev_bk), &FP32_TOL);
}

/* --precision tf32: the proxies' layers with tensor-core convolutions and gemms, whose inputs
 * are rounded to 10 bits of mantissa (2^-11 relative), so the sums' tolerance is 50 times
 * fp32's (5e-3); the elementwise operations are unchanged. */
#define TF32_SUMS_SCALE 50
static int check_proxies_in_tf32(Backend *ref_bk, Backend *dev_bk)
{
    Error err = {{0}};
    if (backend_set_precision(dev_bk, "tf32", &err) != 0) {
        if (is_cpu(dev_bk)) return 0; /* the CPU computes in fp32 only */
        printf("FAIL: %s\n", err.msg);
        return 1;
    }
    const Tolerances tf32 = {TF32_SUMS_SCALE, 0, 0};
    int failures = check_models(ref_bk, dev_bk, true, &tf32);
    backend_set_precision(dev_bk, "fp32", &err);
    return failures;
}

/* A check on the device under test against the CPU reference. */
static void on_device(int (*check)(Backend *, Backend *), const char *what)
{
    const char *device = device_under_test();
    Backend *dev_bk = open_or_skip(device, strncmp(device, "cpu", 3) == 0 ? 1 : 2);
    Backend *ref_bk = open_reference(device);
    int failures = check(ref_bk, dev_bk);
    backend_destroy(ref_bk);
    backend_destroy(dev_bk);
    cr_assert_eq(failures, 0, "%d %s comparisons over tolerance (the FAIL lines above)", failures, what);
}

/* The same check of the harness itself, on every machine: the CPU at one thread against two
 * must agree within the tolerances. */
static void on_cpu_threads(int (*check)(Backend *, Backend *), const char *what)
{
    Backend *one = backend_create(1), *two = backend_create(2);
    int failures = check(two, one);
    backend_destroy(one);
    backend_destroy(two);
    cr_assert_eq(failures, 0, "%d %s comparisons over tolerance (the FAIL lines above)", failures, what);
}

Test(backend_ops, every_layer_of_every_model) { on_device(check_every_model, "layer"); }
Test(backend_ops_harness, every_layer_of_the_proxies) { on_cpu_threads(check_every_model, "layer"); }
Test(backend_ops, every_layer_of_the_proxies_in_tf32) { on_device(check_proxies_in_tf32, "tf32 layer"); }

/* ---- optimizers ---- */

/* conv 3->4 k3 with bias, BN affine, linear with bias: every ParamKind. The biases start at
 * zero, so the first step takes the zero-norm guards. */
static Net *tiny_net(Backend *bk)
{
    const Init kaiming = {INIT_HE_GAUSSIAN, 0}, zero = {INIT_ZERO, 0};
    Net *net = net_create("backend-ops", bk, 3, 6, 6);
    int x = nb_conv(net, "conv", NET_INPUT, 4, 3, 1, 1, 1, true, kaiming, zero);
    x = nb_batchnorm(net, "bn", x, true, 1e-5, 0.1);
    x = nb_relu(net, x);
    x = nb_linear(net, "fc", x, 5, true, kaiming, zero);
    nb_softmax_xent(net, x);
    net_finalize(net);
    net_init_params(net, 3);
    net_plan(net, 4);
    return net;
}

/* LARS/LARC preset i over momentum 0.9 and weight decay 5e-4. */
static OptConfig preset_config(int i)
{
    OptConfig c;
    opt_config_defaults(&c);
    c.momentum = 0.9;
    c.weight_decay = 5e-4;
    char said[512];
    Error err = {{0}};
    cr_assert_eq(optimizer_apply_preset(&c, optimizer_preset_at(i), said, sizeof said, &err), 0, "%s", err.msg);
    return c;
}

/* The optimizers to step: every rule and every LARS/LARC preset. */
static int optimizer_configs(OptConfig *out, int cap)
{
    int n = 0;
    OptConfig c;
    opt_config_defaults(&c);
    c.momentum = 0.9;
    c.weight_decay = 5e-4;
    out[n++] = c; /* sgd, momentum, coupled wd */
    c.nesterov = true;
    out[n++] = c;
    c.nesterov = false;
    c.decoupled_wd = true;
    c.dampening = 0.1;
    out[n++] = c;
    for (int i = 0; optimizer_preset_at(i) && n < cap - 2; i++) out[n++] = preset_config(i);
    opt_config_defaults(&c);
    c.weight_decay = 0.01;
    snprintf(c.name, sizeof c.name, "adamw");
    out[n++] = c;
    snprintf(c.name, sizeof c.name, "lamb");
    out[n++] = c;
    return n;
}

/* One update on both from the CPU's gradients of a real forward/backward. */
static void step_both(Net *ref, Net *dev, Optimizer *oref, Optimizer *odev, double lr)
{
    net_zero_grad(ref);
    net_forward(ref, 4, true);
    net_backward(ref, 4);
    copy_across(&ref->grad_block, &dev->grad_block);
    optimizer_step(oref, ref, lr, NULL);
    optimizer_step(odev, dev, lr, NULL);
}

static void check_stats(Report *r, const char *name, const Optimizer *oref, const Optimizer *odev)
{
    for (int p = 0; p < oref->n_params; p++) {
        const OptStats *a = &oref->stats[p], *b = &odev->stats[p];
        real want[5] = {(real)a->w_norm, (real)a->g_norm, (real)a->local_rate, (real)a->eff_rate,
                        (real)a->update_ratio};
        real got[5] = {(real)b->w_norm, (real)b->g_norm, (real)b->local_rate, (real)b->eff_rate, (real)b->update_ratio};
        char what[32];
        snprintf(what, sizeof what, "stats %d", p);
        check_values(r, name, "optimizer", "step 2", what, want, got, 5, TOL_OPTIMIZER);
    }
}

static int check_optimizers(Backend *ref_bk, Backend *dev_bk)
{
    OptConfig cfgs[32];
    int n = optimizer_configs(cfgs, 32), failures = 0;
    for (int k = 0; k < n; k++) {
        char name[64];
        snprintf(name, sizeof name, "%.15s%s%.15s", cfgs[k].name, cfgs[k].lars_variant[0] ? ":" : "",
                 cfgs[k].lars_variant);
        if (!strcmp(cfgs[k].name, "sgd"))
            snprintf(name, sizeof name, "sgd%s%s", cfgs[k].nesterov ? ":nesterov" : "", cfgs[k].decoupled_wd ? ":decoupled" : "");
        Net *ref = tiny_net(ref_bk), *dev = tiny_net(dev_bk);
        net_upload_random_batch(ref, 4, 5, 1);
        copy_across(&ref->param_block, &dev->param_block);
        Error err = {{0}};
        Optimizer *oref = optimizer_create(&cfgs[k], ref, &err), *odev = optimizer_create(&cfgs[k], dev, &err);
        cr_assert(oref && odev, "%s: %s", name, err.msg);
        oref->collect_stats = odev->collect_stats = true;
        Report r = {"tiny", 0, 0, 0, FP32_TOL};
        step_both(ref, dev, oref, odev, 0.1); /* the first update: momentum buffers start */
        step_both(ref, dev, oref, odev, 0.05);
        check_tensor(&r, name, "optimizer", "step 2", "parameters", &ref->param_block, &dev->param_block, TOL_OPTIMIZER);
        for (int p = 0; p < oref->n_params; p++)
            for (int s = 0; s < oref->n_slots; s++)
                check_tensor(&r, name, "optimizer", "step 2", oref->slot_names[s], optimizer_slot(oref, p, s),
                             optimizer_slot(odev, p, s), TOL_OPTIMIZER);
        check_stats(&r, name, oref, odev);
        failures += r.failures;
        optimizer_destroy(oref);
        optimizer_destroy(odev);
        net_destroy(ref);
        net_destroy(dev);
    }
    return failures;
}

Test(backend_ops, every_optimizer_and_preset) { on_device(check_optimizers, "optimizer"); }
Test(backend_ops_harness, every_optimizer_and_preset) { on_cpu_threads(check_optimizers, "optimizer"); }

/* ---- bf16 and fp16 ---- */

/* Both backends in the same precision round at the same points (the input, weights and bias
 * going into a product, its output coming out; the incoming gradient, the input's gradient
 * added to the one there in low precision, the weights' and bias's gradients: engine/cpu/
 * low_precision.c, engine/cuda/lowp.cu), and their products' fp32 sums differ only in order
 * (about 1e-6 relative, far inside an ulp of bf16 or fp16). A rounded output then differs by
 * at most one ulp, where the two sums fall either side of a rounding boundary; an ulp is at
 * most 2u of the tensor's largest magnitude (u = 2^-8 for bf16's 8 significant bits, 2^-11
 * for fp16's 11). The input's gradient, r(dx + r(sum)), can take a second ulp from its second
 * rounding. So the products' tolerance is two ulps, 4u of the tensor's largest magnitude:
 * 1.6e-2 in bf16, 2.0e-3 in fp16. Where a whole tensor lies below fp16's normal range (2^-14:
 * small gradients, unscaled here) an ulp is the subnormal spacing 2^-24, not 2u of the
 * largest value, so two of those are added (check_tensor). The other layers compute in fp32
 * from the CPU's values, at fp32's tolerances. */
#define LOWP_PRODUCT_ULPS 4
/* A few steps of training on each backend alone: the parameters' differences are the
 * gradients' (a few ulps of bf16/fp16) times the learning rate, and each step's forward sees
 * the last step's; 8u of the parameters' largest magnitude bounds that with room. */
#define LOWP_TRAINING_ULPS 8

/* Convolutions of every form the models use, small: 3x3 with bias, 1x1 at stride 1 and 2
 * (cuBLAS on CUDA), strided 3x3, grouped 3x3 with bias, then a fully connected layer. On
 * CUDA both layouts of the bf16/fp16 copies (engine/cuda/conv.cu, layout_of): the strided 3x3
 * (16 -> 16, a 6x6 plane: two tiles of positions) and "grouped" (8 -> 24 per group, 48
 * channels: two tiles of channels) go channels-last; the first (3 input channels) and
 * "narrow" (6 outputs per group) stay NCHW. */
static Net *product_shapes_net(Backend *bk)
{
    const Init kaiming = {INIT_HE_GAUSSIAN, 0}, small = {INIT_GAUSSIAN, 0.1};
    Net *net = net_create("lowp-shapes", bk, 3, 12, 12);
    int x = nb_relu(net, nb_conv(net, "conv3x3", NET_INPUT, 8, 3, 1, 1, 1, true, kaiming, small));
    x = nb_relu(net, nb_conv(net, "conv1x1", x, 16, 1, 1, 0, 1, false, kaiming, small));
    x = nb_conv(net, "conv1x1s2", x, 16, 1, 2, 0, 1, false, kaiming, small); /* 12 -> 6 */
    x = nb_relu(net, nb_conv(net, "conv3x3s2", x, 16, 3, 2, 1, 1, false, kaiming, small)); /* 6 -> 3 */
    x = nb_relu(net, nb_conv(net, "grouped", x, 48, 3, 1, 1, 2, true, kaiming, small));
    x = nb_relu(net, nb_conv(net, "narrow", x, 12, 3, 1, 1, 2, true, kaiming, small));
    x = nb_linear(net, "fc", x, 10, true, kaiming, small);
    nb_softmax_xent(net, x);
    net_finalize(net);
    net_init_params(net, 3);
    return net;
}

static int check_product_shapes(Backend *ref_bk, Backend *dev_bk, const Tolerances *tol)
{
    const int n = 4;
    Net *ref = product_shapes_net(ref_bk), *dev = product_shapes_net(dev_bk);
    net_plan(ref, n);
    net_plan(dev, n);
    copy_across(&ref->param_block, &dev->param_block);
    net_upload_random_batch(ref, n, 11, 3);
    net_upload_random_batch(dev, n, 11, 3);
    Report r = {"lowp-shapes", 0, 0, 0, *tol};
    check_layers(&r, ref, dev, n);
    printf("lowp-shapes on %s: %d checks, %d over tolerance, worst at %.2g of its tolerance\n",
           backend_device_name(dev_bk), r.checks, r.failures, r.worst_ratio);
    return r.failures;
}

/* tiny_net (conv with bias, BN, linear) trains three steps of LARS on each backend alone. */
static int check_training(Backend *ref_bk, Backend *dev_bk, double tol)
{
    Net *ref = tiny_net(ref_bk), *dev = tiny_net(dev_bk);
    net_upload_random_batch(ref, 4, 5, 1);
    net_upload_random_batch(dev, 4, 5, 1);
    copy_across(&ref->param_block, &dev->param_block);
    const OptConfig c = preset_config(0);
    Error err = {{0}};
    Optimizer *oref = optimizer_create(&c, ref, &err), *odev = optimizer_create(&c, dev, &err);
    cr_assert(oref && odev, "%s", err.msg);
    Net *nets[2] = {ref, dev};
    Optimizer *opts[2] = {oref, odev};
    for (int step = 0; step < 3; step++)
        for (int k = 0; k < 2; k++) {
            net_zero_grad(nets[k]);
            net_forward(nets[k], 4, true);
            net_backward(nets[k], 4);
            optimizer_step(opts[k], nets[k], 0.1, NULL);
        }
    Report r = {"tiny", 0, 0, 0, FP32_TOL};
    check_tensor(&r, optimizer_preset_at(0), "training", "step 3", "parameters", &ref->param_block,
                 &dev->param_block, tol);
    optimizer_destroy(oref);
    optimizer_destroy(odev);
    net_destroy(ref);
    net_destroy(dev);
    return r.failures;
}

/* Both backends in `precision` (u: its unit roundoff; step: its smallest subnormal): the
 * proxies' layers, the product shapes and a short training. */
/* Both backends in `precision`; false (said on a FAIL line) when either refuses it. */
static bool both_in_precision(Backend *ref_bk, Backend *dev_bk, const char *precision)
{
    Error err = {{0}};
    if (backend_set_precision(ref_bk, precision, &err) == 0 && backend_set_precision(dev_bk, precision, &err) == 0)
        return true;
    printf("FAIL: %s\n", err.msg);
    return false;
}

static int check_in_precision(Backend *ref_bk, Backend *dev_bk, const char *precision, double u, double step)
{
    if (!both_in_precision(ref_bk, dev_bk, precision)) return 1;
    printf("%s: products within %d ulps' worth (%.2g of the largest magnitude)\n", precision,
           LOWP_PRODUCT_ULPS / 2, LOWP_PRODUCT_ULPS * u);
    const Tolerances tol = {1, LOWP_PRODUCT_ULPS * u, step};
    int failures = check_models(ref_bk, dev_bk, true, &tol);
    failures += check_product_shapes(ref_bk, dev_bk, &tol);
    failures += check_training(ref_bk, dev_bk, LOWP_TRAINING_ULPS * u);
    both_in_precision(ref_bk, dev_bk, "fp32");
    return failures;
}

static int check_bf16(Backend *ref_bk, Backend *dev_bk)
{
    return check_in_precision(ref_bk, dev_bk, "bf16", 0x1p-8, 0x1p-133);
}
static int check_fp16(Backend *ref_bk, Backend *dev_bk)
{
    return check_in_precision(ref_bk, dev_bk, "fp16", 0x1p-11, 0x1p-24);
}

Test(backend_ops, every_product_in_bf16) { on_device(check_bf16, "bf16"); }
Test(backend_ops_harness, every_product_in_bf16) { on_cpu_threads(check_bf16, "bf16"); }
Test(backend_ops, every_product_in_fp16) { on_device(check_fp16, "fp16"); }
Test(backend_ops_harness, every_product_in_fp16) { on_cpu_threads(check_fp16, "fp16"); }

/* ---- vectors and dropout ---- */

static void random_fill(real *x, size_t n, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < n; i++) x[i] = (real)((rand() / (double)RAND_MAX) * 2 - 1);
}

static int check_vectors(Backend *ref_bk, Backend *dev_bk)
{
    static const size_t sizes[] = {1, 3, 257, 100003};
    Report r = {"vectors", 0, 0, 0, FP32_TOL};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        Tensor xa, ya, xb, yb;
        tensor_alloc(&xa, ref_bk, 1, 1, 1, (int)n + 1);
        tensor_alloc(&ya, ref_bk, 1, 1, 1, (int)n + 1);
        tensor_alloc(&xb, dev_bk, 1, 1, 1, (int)n + 1);
        tensor_alloc(&yb, dev_bk, 1, 1, 1, (int)n + 1);
        real *h = malloc((n + 1) * sizeof *h);
        random_fill(h, n + 1, (unsigned)s + 1);
        tensor_upload(&xa, h);
        tensor_upload(&xb, h);
        random_fill(h, n + 1, (unsigned)s + 100);
        tensor_upload(&ya, h);
        tensor_upload(&yb, h);
        /* at an offset of one element, so nothing assumes aligned starts */
        Backend *bks[2] = {ref_bk, dev_bk};
        Tensor *xs[2] = {&xa, &xb}, *ys[2] = {&ya, &yb};
        double sums[2];
        for (int k = 0; k < 2; k++) {
            bk_axpy(bks[k], n, (real)0.37, xs[k]->data + 1, ys[k]->data + 1);
            bk_scale(bks[k], n, (real)-1.5, ys[k]->data + 1);
            bk_copy(bks[k], n / 2, ys[k]->data + 1, xs[k]->data + 1);
            bk_fill(bks[k], n / 3, (real)0.25, xs[k]->data + 1);
            sums[k] = bk_sum_squares(bks[k], n, ys[k]->data + 1);
        }
        char what[32];
        snprintf(what, sizeof what, "n=%zu", n);
        check_tensor(&r, what, "vector", "axpy,scale", "y", &ya, &yb, TOL_ELEMENTWISE);
        check_tensor(&r, what, "vector", "copy,fill", "x", &xa, &xb, TOL_ELEMENTWISE);
        /* the sums are doubles: compared as doubles, not rounded to float first */
        double d = sums[0] != 0 ? fabs(sums[1] - sums[0]) / fabs(sums[0]) : fabs(sums[1]);
        report_line(&r, what, "vector", "sum_sq", "value", d, 1e-10);
        free(h);
        tensor_free(&xa);
        tensor_free(&ya);
        tensor_free(&xb);
        tensor_free(&yb);
    }
    return r.failures;
}

Test(backend_ops, vector_operations_at_odd_sizes) { on_device(check_vectors, "vector"); }
Test(backend_ops_harness, vector_operations_at_odd_sizes) { on_cpu_threads(check_vectors, "vector"); }

/* Masks are a pure function of (seed, step, layer, element): identical, not merely close.
 * Returns the mask values that differ, plus one when about half were not dropped. */
static int check_dropout(Backend *ref_bk, Backend *dev_bk)
{
    const size_t n = 4099;
    Tensor x[2], y[2], mask[2];
    Backend *bks[2] = {ref_bk, dev_bk};
    real *ones = malloc(n * sizeof *ones);
    for (size_t i = 0; i < n; i++) ones[i] = 1;
    for (int k = 0; k < 2; k++) {
        tensor_alloc(&x[k], bks[k], 1, 1, 1, (int)n);
        tensor_alloc(&y[k], bks[k], 1, 1, 1, (int)n);
        tensor_alloc(&mask[k], bks[k], 1, 1, 1, (int)n);
        tensor_upload(&x[k], ones);
        DropoutKey key = {.seed = 42, .step = 9, .first_element = 1000, .layer = 3};
        bk_dropout_forward(bks[k], n, (real)0.5, &key, mask[k].data, x[k].data, y[k].data);
    }
    real *a = tensor_to_host(&mask[0]), *b = tensor_to_host(&mask[1]);
    size_t differ = 0, dropped = 0;
    for (size_t i = 0; i < n; i++) {
        differ += a[i] != b[i];
        dropped += a[i] == 0;
    }
    printf("dropout p=0.5 on %s: %zu of %zu mask values differ from the CPU's, %zu dropped\n",
           backend_device_name(dev_bk), differ, n, dropped);
    bool half = dropped > n / 3 && dropped < 2 * n / 3;
    if (!half) printf("FAIL: %zu of %zu dropped at p = 0.5\n", dropped, n);
    free(a);
    free(b);
    free(ones);
    for (int k = 0; k < 2; k++) {
        tensor_free(&x[k]);
        tensor_free(&y[k]);
        tensor_free(&mask[k]);
    }
    return (int)differ + !half;
}

Test(backend_ops, dropout_masks_identical) { on_device(check_dropout, "dropout mask"); }
Test(backend_ops_harness, dropout_masks_identical) { on_cpu_threads(check_dropout, "dropout mask"); }

/* ---- a batch's pixels: page-locked staging, asynchronous upload, device normalization ---- */
/* The normalized input must equal the host's (batch_normalize) bit for bit on both backends,
 * pixels 0 and 255 included, uploaded as the batch loader does. Returns the values that
 * differ, summed over the two backends. */
static int normalized_differences(Backend *bk, const uint8_t *pixels, int n, int c, size_t hw, const float *mean,
                                  const float *std, const real *want)
{
    const size_t count = (size_t)n * (size_t)c * hw;
    uint8_t *staging = bk_host_alloc(bk, count);
    memcpy(staging, pixels, count);
    BkBuffer *dev = bk_buffer_alloc(bk, count);
    Tensor y;
    tensor_alloc(&y, bk, n, c, 1, (int)hw);
    BkEvent *done = bk_event_create(bk);
    bk_upload_async(bk, bk_buffer_address(dev), staging, count);
    bk_normalize_pixels(bk, (size_t)n, c, hw, bk_buffer_address(dev), mean, std, y.data);
    bk_event_record(bk, done);
    bk_event_wait(done);
    memset(staging, 7, count); /* after the event the staging may change without effect */
    real *got = tensor_to_host(&y);
    int differ = 0;
    for (size_t i = 0; i < count; i++) differ += got[i] != want[i];
    printf("normalize %d x %d x %zu pixels on %s: %d of %zu values differ from the host's\n", n, c, hw,
           backend_device_name(bk), differ, count);
    free(got);
    bk_event_destroy(done);
    tensor_free(&y);
    bk_buffer_free(dev);
    bk_host_free(bk, staging);
    return differ;
}

static int check_normalize(Backend *ref_bk, Backend *dev_bk)
{
    enum { N = 5, C = 3, HW = 17 * 13 };
    const float mean[C] = {0.4914f, 0.4822f, 0.4465f}, std[C] = {0.247f, 0.2435f, 0.2616f};
    uint8_t *pixels = malloc((size_t)N * C * HW);
    for (size_t i = 0; i < (size_t)N * C * HW; i++) pixels[i] = (uint8_t)(i * 2654435761u >> 13);
    pixels[0] = 0;
    pixels[1] = 255;
    real *want = malloc(sizeof *want * (size_t)N * C * HW);
    batch_normalize(pixels, N, C, HW, mean, std, want);
    int differ = normalized_differences(ref_bk, pixels, N, C, HW, mean, std, want) +
                 normalized_differences(dev_bk, pixels, N, C, HW, mean, std, want);
    free(want);
    free(pixels);
    return differ;
}

Test(backend_ops, normalized_pixels_identical) { on_device(check_normalize, "normalized pixel"); }
Test(backend_ops_harness, normalized_pixels_identical) { on_cpu_threads(check_normalize, "normalized pixel"); }

/* ---- graphs: a captured training pass replays to the eager pass's bits ---- */
typedef struct {
    Net *net;
    int n;
} GraphPass;

static void graph_pass(void *ctx)
{
    GraphPass *p = ctx;
    net_forward(p->net, p->n, true);
    net_backward(p->net, p->n);
}

/* resnet8 and lenet at batch 8 on the device: the gradients and the loss of a pass replayed from
 * a graph (bk_graph_capture after an eager warm-up pass) are bit for bit the eager pass's, at
 * the capture and at two launches, the second after an evaluation of 32 images (as train's
 * between epochs), which outgrows the scratch buffers the graph was captured with (the
 * reductions', cuDNN's): the graph must still find its own. The CPU replays by issuing again
 * (checked), a GPU its CUDA graph. Returns the replays that differ. */
static int check_graph_replay(Backend *ref_bk, Backend *dev_bk)
{
    (void)ref_bk;
    static const char *const models[] = {"resnet8", "lenet"};
    int failures = 0;
    for (int k = 0; k < 2; k++) {
        Error err = {{0}};
        Net *net = model_build(models[k], dev_bk, 0, 3, &err);
        cr_assert_not_null(net, "%s", err.msg);
        net_plan(net, 32); /* room for the evaluation between launches */
        net_upload_random_batch(net, 8, 9, 0);
        net->defer_loss = true;
        GraphPass p = {net, 8};
        net_zero_grad(net);
        graph_pass(&p);
        real *eager = tensor_to_host(&net->grad_block);
        double loss_eager[2], loss[2];
        bk_download(dev_bk, loss_eager, bk_buffer_address(net->loss_result), sizeof loss_eager);
        net_zero_grad(net);
        BkGraph *g = bk_graph_capture(dev_bk, graph_pass, &p, &err);
        cr_assert_not_null(g, "%s: %s", models[k], err.msg);
        for (int launch = 0; launch < 3; launch++) {
            if (launch == 2) net_forward(net, 32, false); /* grows the scratch after the capture */
            if (launch > 0) {
                net_zero_grad(net);
                cr_assert_eq(bk_graph_launch(g, &err), 0, "%s: %s", models[k], err.msg);
            }
            real *got = tensor_to_host(&net->grad_block);
            bk_download(dev_bk, loss, bk_buffer_address(net->loss_result), sizeof loss);
            const bool same = !memcmp(got, eager, net->n_weights * sizeof(real)) && !memcmp(loss, loss_eager, sizeof loss);
            if (!same) printf("FAIL: %s: replay %d of the captured pass differs from the eager pass\n", models[k], launch);
            failures += !same;
            free(got);
        }
        printf("graph of a %s pass on %s: %s\n", models[k], backend_device_name(dev_bk), failures ? "differs" : "replays the eager bits");
        bk_graph_destroy(g);
        free(eager);
        net_destroy(net);
    }
    return failures;
}

Test(backend_ops, a_captured_pass_replays_the_eager_bits) { on_device(check_graph_replay, "graph replay"); }
Test(backend_ops_harness, a_captured_pass_replays_the_eager_bits) { on_cpu_threads(check_graph_replay, "graph replay"); }

/* ---- collectives: a job of one rank on the device (NCCL where CUDA has it) ---- */
static void no_bcast(void *ctx, void *bytes, size_t n) { (void)ctx, (void)bytes, (void)n; }

/* At one rank a sum changes nothing: the values come back as they were, after the join and in
 * stream order for doubles. Returns the values that changed. */
static int check_collective(Backend *ref_bk, Backend *dev_bk)
{
    (void)ref_bk;
    Error err = {{0}};
    BkCollectiveSpec one = {0, 1, no_bcast, NULL};
    BkCollective *c = bk_collective_open(dev_bk, &one, &err);
    if (!c) {
        cr_assert_eq(err.msg[0], 0, "collective failed to open: %s", err.msg);
        if (is_cpu(dev_bk)) return 0; /* the CPU has none: MPI on the host sums */
        printf("FAIL: no device collective on %s (NCCL not found)\n", backend_device_name(dev_bk));
        return 1;
    }
    enum { N = 1000 };
    real h[N];
    random_fill(h, N, 17);
    Tensor t;
    tensor_alloc(&t, dev_bk, 1, 1, 1, N);
    tensor_upload(&t, h);
    bk_collective_sum_async(c, t.data, N);
    bk_collective_join(c);
    real *got = tensor_to_host(&t);
    int changed = memcmp(got, h, sizeof h) != 0;
    BkBuffer *d = bk_buffer_alloc(dev_bk, 3 * sizeof(double));
    double v[3] = {1.5, -2.25, 1e300}, back[3];
    bk_upload(dev_bk, bk_buffer_address(d), v, sizeof v);
    bk_collective_sum_double(c, bk_buffer_address(d), 3);
    bk_download(dev_bk, back, bk_buffer_address(d), sizeof back);
    changed += memcmp(back, v, sizeof v) != 0;
    printf("collective of one rank on %s: %d of 2 sums changed their values\n", backend_device_name(dev_bk), changed);
    free(got);
    bk_buffer_free(d);
    tensor_free(&t);
    bk_collective_close(c);
    return changed;
}

Test(backend_ops, collective_of_one_rank) { on_device(check_collective, "collective"); }
/* The CPU has no device collective: NULL without an error, so MPI on the host sums. */
Test(backend_ops_harness, the_cpu_has_no_device_collective)
{
    Backend *cpu = backend_create(1);
    Error err = {{0}};
    error_set(&err, "stale");
    BkCollectiveSpec two = {0, 2, no_bcast, NULL};
    cr_assert_null(bk_collective_open(cpu, &two, &err));
    cr_assert_eq(err.msg[0], 0, "no error expected: %s", err.msg);
    backend_destroy(cpu);
}

/* ---- synchronized batch norm at one rank ---- */
/* A job of one rank: the sums over the ranks are this rank's own. */
static void sum_of_one_rank(void *ctx, double *values, int n) { (void)ctx, (void)values, (void)n; }

enum { BN_N = 4, BN_C = 3, BN_HW = 25 };
/* Batch norm with its fused ReLU, forward in training and backward, on bk: index 0 y, 1 saved
 * mean, 2 saved 1/std, 3 running mean, 4 running variance, 5 dx, 6 dgamma, 7 dbeta. */
enum { BN_TENSORS = 8 };
static void bn_sync_pass(Backend *bk, const BnSync *sync, Tensor *out)
{
    const BatchNormShape s = {BN_C, BN_HW, (real)1e-5, (real)0.1, true};
    backend_reserve(bk, batchnorm_workspace(&s, BN_N));
    real h[BN_N * BN_C * BN_HW];
    Tensor x, dy, gamma, beta;
    tensor_alloc(&x, bk, BN_N, BN_C, 5, 5);
    tensor_alloc(&dy, bk, BN_N, BN_C, 5, 5);
    tensor_alloc(&gamma, bk, 1, BN_C, 1, 1);
    tensor_alloc(&beta, bk, 1, BN_C, 1, 1);
    random_fill(h, BN_N * BN_C * BN_HW, 31);
    tensor_upload(&x, h);
    random_fill(h, BN_N * BN_C * BN_HW, 32);
    tensor_upload(&dy, h);
    random_fill(h, BN_C, 33);
    tensor_upload(&gamma, h);
    random_fill(h, BN_C, 34);
    tensor_upload(&beta, h);
    tensor_alloc(&out[0], bk, BN_N, BN_C, 5, 5);
    tensor_alloc(&out[5], bk, BN_N, BN_C, 5, 5);
    for (int k = 1; k < BN_TENSORS; k++)
        if (k != 5) tensor_alloc(&out[k], bk, 1, BN_C, 1, 1);
    bk_batchnorm_forward_train(bk, &s, BN_N, x.data, gamma.data, beta.data, out[0].data, out[1].data, out[2].data,
                               out[3].data, out[4].data, sync);
    bk_batchnorm_backward(bk, &s, BN_N, x.data, gamma.data, beta.data, out[1].data, out[2].data, dy.data, out[5].data,
                          false, out[6].data, out[7].data, sync);
    tensor_free(&x);
    tensor_free(&dy);
    tensor_free(&gamma);
    tensor_free(&beta);
}

/* Synchronized BN at one rank is BN alone: through the host callback, and on the device with
 * its collective (NCCL) where it has one, whose totals (the count among them) never reach the
 * host. Each against the CPU's BN alone. */
static int check_sync_bn(Backend *ref_bk, Backend *dev_bk)
{
    static const char *const names[BN_TENSORS] = {"y",          "save_mean", "save_invstd", "running_mean",
                                                  "running_var", "dx",        "dgamma",      "dbeta"};
    Report r = {"sync-bn", 0, 0, 0, FP32_TOL};
    Tensor want[BN_TENSORS], got[BN_TENSORS];
    bn_sync_pass(ref_bk, NULL, want);
    Error err = {{0}};
    BkCollectiveSpec one = {0, 1, no_bcast, NULL};
    BkCollective *device = bk_collective_open(dev_bk, &one, &err);
    cr_assert_eq(err.msg[0], 0, "collective failed to open: %s", err.msg);
    BkBuffer *scratch = bk_buffer_alloc(dev_bk, (2 * BN_C + 1) * sizeof(double));
    for (int way = 0; way < 3; way++) {
        if (way == 2 && !device) break;
        BnSync sync = {sum_of_one_rank, NULL, bk_buffer_address(scratch), way == 2 ? device : NULL};
        bn_sync_pass(dev_bk, way ? &sync : NULL, got);
        const char *pass = way == 0 ? "alone" : way == 1 ? "host sum" : "device sum";
        for (int k = 0; k < BN_TENSORS; k++) {
            check_tensor(&r, names[k], "batchnorm_relu", pass, names[k], &want[k], &got[k], TOL_SUMS);
            tensor_free(&got[k]);
        }
    }
    for (int k = 0; k < BN_TENSORS; k++) tensor_free(&want[k]);
    bk_buffer_free(scratch);
    bk_collective_close(device);
    return r.failures;
}

Test(backend_ops, synchronized_batch_norm_of_one_rank) { on_device(check_sync_bn, "sync-bn"); }
Test(backend_ops_harness, synchronized_batch_norm_of_one_rank) { on_cpu_threads(check_sync_bn, "sync-bn"); }

/* ---- fp16 overflow ----
 * fp16's loss scaler halves the scale when a gradient overflows, which it sees as an inf
 * (engine/optim/loss_scale.h): a product whose fp16 result passes 65504 must give inf, as the
 * CPU's emulation rounds (round_lowp.h), not saturate at 65504, which the scaler would take for
 * a finite gradient. Inputs of about 100 make each product's sums' spread about 40,000, so
 * about a tenth of every output overflows and the rest stays finite: both backends must put
 * infs of the same sign at the same places and agree elsewhere as check_in_precision's products
 * do. Each of the three ways a product runs on CUDA: cuDNN NHWC (16 -> 16 channels), cuDNN
 * NCHW (3 input channels), cuBLAS (a 1x1 convolution and a fully connected layer). */
typedef struct {
    size_t count, overflowed, misplaced;
    double worst; /* max |got - want| over the finite values, relative to the largest finite want */
} OverflowCheck;

static OverflowCheck compare_overflow(const Tensor *want_t, const Tensor *got_t)
{
    real *want = tensor_to_host(want_t), *got = tensor_to_host(got_t);
    OverflowCheck c = {tensor_count(want_t), 0, 0, 0};
    double largest = 0, worst = 0;
    for (size_t i = 0; i < c.count; i++) {
        const bool inf_want = isinf(want[i]), inf_got = isinf(got[i]);
        c.overflowed += inf_want;
        if (inf_want != inf_got || (inf_want && signbit(want[i]) != signbit(got[i])) || isnan(got[i])) c.misplaced++;
        else if (!inf_want) {
            largest = fmax(largest, fabs((double)want[i]));
            worst = fmax(worst, fabs((double)got[i] - (double)want[i]));
        }
    }
    c.worst = largest > 0 ? worst / largest : worst;
    free(want);
    free(got);
    return c;
}

/* want_mix: the inputs were scaled for this tensor to overflow in part (a bias gradient, a
 * sum of dy alone, is not: it is compared, finite, all the same). */
static void report_overflow(Report *r, const char *layer, const Tensor *want, const Tensor *got, bool want_mix)
{
    const OverflowCheck c = compare_overflow(want, got);
    const bool mixed = c.overflowed > 0 && c.overflowed < c.count;
    const bool ok = c.misplaced == 0 && c.worst <= r->tol.products && (mixed || !want_mix);
    r->checks++;
    r->failures += !ok;
    printf("%-18s %-24s %zu of %zu inf, %zu misplaced, finite within %.3g (%.0e)%s %s\n", r->model, layer,
           c.overflowed, c.count, c.misplaced, c.worst, r->tol.products,
           mixed || !want_mix ? "" : " (not a mix: inputs too small or large)",
           ok ? "ok" : "FAIL");
}

/* Uniform values in [-a, a), the same on both backends. */
static void upload_scaled(Tensor *on_ref, Tensor *on_dev, unsigned seed, double a)
{
    size_t n = tensor_count(on_ref);
    real *h = malloc(n * sizeof *h);
    cr_assert(h);
    random_fill(h, n, seed);
    for (size_t i = 0; i < n; i++) h[i] = (real)(h[i] * a);
    tensor_upload(on_ref, h);
    tensor_upload(on_dev, h);
    free(h);
}

/* The scale of inputs whose sums of `terms` products spread about 40,000 (an fp16 sum's sd is
 * sqrt(terms) * a^2 / 3 for x and w uniform in [-a, a)). */
static double overflowing_scale(int terms) { return sqrt(1.2e5 / sqrt((double)terms)); }

typedef struct {
    Tensor x, w, b, y, dy, dx, dw, db;
} ProductTensors;

static void product_alloc(ProductTensors *t, Backend *bk, size_t nx, size_t nw, int out_c, size_t ny)
{
    tensor_alloc(&t->x, bk, 1, 1, 1, (int)nx);
    tensor_alloc(&t->w, bk, 1, 1, 1, (int)nw);
    tensor_alloc(&t->b, bk, 1, 1, 1, out_c);
    tensor_alloc(&t->y, bk, 1, 1, 1, (int)ny);
    tensor_alloc(&t->dy, bk, 1, 1, 1, (int)ny);
    tensor_alloc(&t->dx, bk, 1, 1, 1, (int)nx);
    tensor_alloc(&t->dw, bk, 1, 1, 1, (int)nw);
    tensor_alloc(&t->db, bk, 1, 1, 1, out_c);
}

static void product_free(ProductTensors *t)
{
    Tensor *all[] = {&t->x, &t->w, &t->b, &t->y, &t->dy, &t->dx, &t->dw, &t->db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
}

/* x, w, b and dy, the same on both backends: uniform in [-a, a) from seeds seed.. seed + 3. */
static void product_upload(ProductTensors t[2], double a, unsigned seed)
{
    upload_scaled(&t[0].x, &t[1].x, seed, a);
    upload_scaled(&t[0].w, &t[1].w, seed + 1, a);
    upload_scaled(&t[0].b, &t[1].b, seed + 2, a);
    upload_scaled(&t[0].dy, &t[1].dy, seed + 3, a);
}

static void product_report(Report *r, const char *layer, ProductTensors *ref, ProductTensors *dev)
{
    char name[64];
    const char *what[] = {"y", "dx", "dw", "db"};
    Tensor *want[] = {&ref->y, &ref->dx, &ref->dw, &ref->db}, *got[] = {&dev->y, &dev->dx, &dev->dw, &dev->db};
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "%s %s", layer, what[k]);
        report_overflow(r, name, want[k], got[k], k < 3);
    }
}

static void check_conv_overflow(Report *r, Backend *bks[2], const char *layer, ConvShape s, int n)
{
    const size_t nx = (size_t)n * s.in_c * s.in_h * s.in_w, ny = (size_t)n * s.out_c * s.out_h * s.out_w;
    const size_t nw = (size_t)s.out_c * (s.in_c / s.groups) * s.k_h * s.k_w;
    ProductTensors t[2];
    for (int k = 0; k < 2; k++) {
        product_alloc(&t[k], bks[k], nx, nw, s.out_c, ny);
        backend_reserve(bks[k], conv_workspace(&s, nw, n));
    }
    product_upload(t, overflowing_scale((s.in_c / s.groups) * s.k_h * s.k_w), 41);
    for (int k = 0; k < 2; k++) {
        bk_conv2d_forward(bks[k], &s, n, t[k].x.data, t[k].w.data, t[k].b.data, t[k].y.data);
        bk_conv2d_backward(bks[k], &s, n, t[k].x.data, t[k].w.data, t[k].dy.data, t[k].dx.data, false, t[k].dw.data,
                           t[k].db.data);
    }
    product_report(r, layer, &t[0], &t[1]);
    for (int k = 0; k < 2; k++) product_free(&t[k]);
}

static void check_linear_overflow(Report *r, Backend *bks[2], int n, int in, int out)
{
    ProductTensors t[2];
    for (int k = 0; k < 2; k++) product_alloc(&t[k], bks[k], (size_t)n * in, (size_t)in * out, out, (size_t)n * out);
    product_upload(t, overflowing_scale(in), 51);
    for (int k = 0; k < 2; k++) {
        bk_linear_forward(bks[k], n, in, out, t[k].x.data, t[k].w.data, t[k].b.data, t[k].y.data);
        bk_linear_backward(bks[k], n, in, out, t[k].x.data, t[k].w.data, t[k].dy.data, t[k].dx.data, t[k].dw.data,
                           t[k].db.data);
    }
    product_report(r, "fc 64->64", &t[0], &t[1]);
    for (int k = 0; k < 2; k++) product_free(&t[k]);
}

static int check_fp16_overflow(Backend *ref_bk, Backend *dev_bk)
{
    if (!both_in_precision(ref_bk, dev_bk, "fp16")) return 1;
    Report r = {"fp16-overflow", 0, 0, 0, {1, LOWP_PRODUCT_ULPS * 0x1p-11, 0x1p-24}};
    Backend *bks[2] = {ref_bk, dev_bk};
    /* in_c, h, w, out_c, oh, ow, kh, kw, stride, pad, groups */
    check_conv_overflow(&r, bks, "conv 16->16 (NHWC)", (ConvShape){16, 6, 6, 16, 6, 6, 3, 3, 1, 1, 1}, 4);
    check_conv_overflow(&r, bks, "conv 3->8 (NCHW)", (ConvShape){3, 6, 6, 8, 6, 6, 3, 3, 1, 1, 1}, 4);
    check_conv_overflow(&r, bks, "conv 1x1 (cuBLAS)", (ConvShape){16, 6, 6, 16, 6, 6, 1, 1, 1, 0, 1}, 4);
    check_linear_overflow(&r, bks, 64, 64, 64); /* y, dx and dw: sums of 64 terms each */
    both_in_precision(ref_bk, dev_bk, "fp32");
    return r.failures;
}

Test(backend_ops, fp16_products_overflow_to_inf) { on_device(check_fp16_overflow, "fp16 overflow"); }
Test(backend_ops_harness, fp16_products_overflow_to_inf) { on_cpu_threads(check_fp16_overflow, "fp16 overflow"); }
