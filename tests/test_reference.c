/* End-to-end comparison with PyTorch (llm.c style). tests/make_reference.py builds
 * the same networks in PyTorch and dumps, per case, the initial parameters, a batch,
 * the logits, loss and parameter gradients of one forward/backward in train mode,
 * the BN running statistics, the losses of 10 SGD steps and the final parameters
 * (format: see make_reference.py). This test loads those fixtures into the engine's
 * nets by parameter name and checks that the float32 engine (2 threads) reproduces
 * everything:
 *   logits, loss, gradients, BN statistics after one forward:
 *       max |ours - torch| / max |torch| <= 1e-4 per tensor
 *   the 10 step losses, final parameters, final BN statistics: <= 1e-3
 * Run from the repository root (or set BB_REFERENCE_DIR to the fixture folder). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/net/models.h"
#include "../engine/net/net.h"
#include "../engine/optim/optimizer.h"
#include "reference_fixture.c"
#include "tensor_access.h"

#define TOL_FIRST 1e-4
#define TOL_STEPS 1e-3
#define MAX_STEPS 64

static const char *fixture_dir(void)
{
    const char *d = getenv("BB_REFERENCE_DIR");
    return d && *d ? d : "tests/fixtures/reference";
}

/* The mini-AlexNet of make_reference.py (class MiniAlexNet): covers conv with
 * stride 2 and bias, LRN, BN without affine, grouped conv and padded average
 * pooling, which lenet and resnet8 do not. */
static Net *build_mini_alexnet(Backend *bk)
{
    const Init torch_init = {INIT_TORCH_DEFAULT, 0};
    Net *net = net_create("mini-alexnet", bk, 3, 24, 24);
    int x = nb_relu(net, nb_conv(net, "conv1", NET_INPUT, 16, 5, 2, 2, 1, true, torch_init, torch_init));
    x = nb_lrn(net, "norm1", x, 5, 0.1, 0.75, 2.0);
    x = nb_maxpool(net, x, 3, 2, 0);
    x = nb_batchnorm(net, "bn2", x, false, 1e-4, 0.1);
    x = nb_relu(net, nb_conv(net, "conv2", x, 16, 3, 1, 1, 2, true, torch_init, torch_init));
    x = nb_avgpool(net, x, 3, 2, 1);
    x = nb_relu(net, nb_linear(net, "fc1", x, 32, true, torch_init, torch_init));
    x = nb_linear(net, "fc2", x, 10, true, torch_init, torch_init);
    nb_softmax_xent(net, x);
    net_finalize(net);
    net_init_params(net, 1);
    return net;
}

/* Running maxima of the relative differences of one category, for the summary. */
typedef struct {
    double worst;
    char where[160];
} Worst;

static void worst_note(Worst *w, double rel, const char *name)
{
    if (rel >= w->worst) {
        w->worst = rel;
        snprintf(w->where, sizeof w->where, "%s", name);
    }
}

/* max |got - want| / max |want| over the tensor (absolute when want is all zero);
 * reports the worst element and fails the test above tol. */
static double compare(const char *what, const real *got, const float *want, size_t count, double tol,
                      Worst *summary)
{
    double max_want = 0, max_diff = 0;
    size_t at = 0;
    bool finite = true;
    for (size_t i = 0; i < count; i++) {
        double d = fabs((double)got[i] - (double)want[i]);
        if (!isfinite((double)got[i])) finite = false;
        if (fabs((double)want[i]) > max_want) max_want = fabs((double)want[i]);
        if (d > max_diff || (!isfinite(d) && isfinite(max_diff))) {
            max_diff = d;
            at = i;
        }
    }
    double rel = max_diff / (max_want > 0 ? max_want : 1);
    if (!finite) rel = INFINITY;
    worst_note(summary, rel, what);
    cr_expect(rel <= tol,
              "%s: max |diff| %.3g relative to max |torch| %.3g = %.3g > %.0e; worst element [%zu]: "
              "engine %.9g torch %.9g (%zu elements)",
              what, max_diff, max_want, rel, tol, at, count ? (double)got[at] : 0.0,
              count ? (double)want[at] : 0.0, count);
    return rel;
}

/* compare() of the first `count` values of a tensor, downloaded. */
static double compare_tensor(const char *what, const Tensor *got, const float *want, size_t count, double tol,
                             Worst *summary)
{
    real *host = tensor_to_host(got);
    double rel = compare(what, host, want, count, tol, summary);
    free(host);
    return rel;
}

/* Shapes compare without leading 1s: the engine stores a linear weight [out, in] as
 * 1x1xoutxin and a bias as 1x1x1xout. */
static bool same_shape(const Param *p, const FxTensor *t, char *desc, size_t desc_len)
{
    int64_t ours[4] = {p->n, p->c, p->h, p->w};
    int a = 0;
    while (a < 3 && ours[a] == 1) a++;
    int b = 0;
    while (b < t->ndim - 1 && t->shape[b] == 1) b++;
    bool same = (4 - a) == (t->ndim - b);
    for (int i = 0; same && a + i < 4; i++) same = ours[a + i] == t->shape[b + i];
    int len = snprintf(desc, desc_len, "engine [%d,%d,%d,%d] vs torch [", p->n, p->c, p->h, p->w);
    for (int i = 0; i < t->ndim && len > 0 && (size_t)len < desc_len; i++)
        len += snprintf(desc + len, desc_len - (size_t)len, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    if (len > 0 && (size_t)len < desc_len) snprintf(desc + len, desc_len - (size_t)len, "]");
    return same && tensor_count(&p->value) == t->count;
}

static const FxTensor *need(const Fixture *fx, const char *name, FxDtype dtype)
{
    const FxTensor *t = fixture_get(fx, name);
    cr_assert_not_null(t, "fixture has no tensor '%s'", name);
    cr_assert_eq(t->dtype, dtype, "fixture tensor '%s' has the wrong dtype", name);
    return t;
}

static double meta_number(const Fixture *fx, const char *key)
{
    const char *v = fixture_meta(fx, key);
    cr_assert_not_null(v, "fixture metadata has no '%s'", key);
    char *end;
    double d = strtod(v, &end);
    cr_assert(end != v && *end == 0, "fixture metadata %s = '%s' is not a number", key, v);
    return d;
}

/* Every fixture tensor under `prefix` must name a parameter (kind 'p') or buffer
 * ('b') of the net, and vice versa. */
static void check_names(const Fixture *fx, const Net *net, const char *prefix, char kind)
{
    size_t plen = strlen(prefix);
    for (int i = 0; i < fx->n_tensors; i++) {
        const char *name = fx->tensors[i].name;
        if (strncmp(name, prefix, plen) != 0) continue;
        int idx = kind == 'p' ? net_find_param(net, name + plen) : net_find_buffer(net, name + plen);
        cr_expect(idx >= 0, "torch %s '%s' has no counterpart in the engine's net",
                  kind == 'p' ? "parameter" : "buffer", name);
    }
    int count = kind == 'p' ? net->n_params : net->n_buffers;
    for (int i = 0; i < count; i++) {
        char full[256];
        snprintf(full, sizeof full, "%s%s", prefix, kind == 'p' ? net->params[i].name : net->buffers[i].name);
        cr_expect_not_null(fixture_get(fx, full), "engine %s '%s' is missing from the fixture (%s)",
                           kind == 'p' ? "parameter" : "buffer", full + plen, full);
    }
}

/* Compares every parameter's value (field 'v') or gradient ('g') with prefix/<name>. */
static void compare_params(const Fixture *fx, Net *net, const char *prefix, char field, double tol,
                           Worst *summary)
{
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        char full[256], desc[128];
        snprintf(full, sizeof full, "%s%s", prefix, pr->name);
        const FxTensor *t = fixture_get(fx, full);
        if (!t) continue; /* reported by check_names */
        cr_assert(t->dtype == FX_F32 && same_shape(pr, t, desc, sizeof desc), "%s: shape %s", full, desc);
        compare_tensor(full, field == 'v' ? &pr->value : &pr->grad, t->f32, t->count, tol, summary);
    }
}

static void compare_buffers(const Fixture *fx, Net *net, const char *prefix, double tol, Worst *summary)
{
    for (int b = 0; b < net->n_buffers; b++) {
        Buffer *buf = &net->buffers[b];
        char full[256];
        snprintf(full, sizeof full, "%s%s", prefix, buf->name);
        const FxTensor *t = fixture_get(fx, full);
        if (!t) continue; /* reported by check_names */
        cr_assert(t->dtype == FX_F32 && t->count == tensor_count(&buf->value),
                  "%s: %zu elements in torch, %zu in the engine", full, t->count, tensor_count(&buf->value));
        compare_tensor(full, &buf->value, t->f32, t->count, tol, summary);
    }
}

static void run_case(const char *case_name)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s.safetensors", fixture_dir(), case_name);
    Fixture fx;
    cr_assert_eq(fixture_load(&fx, path, err, sizeof err), 0, "%s", err);
    const char *model = fixture_meta(&fx, "model");
    cr_assert(model && !strcmp(model, case_name), "%s: metadata model is '%s'", path, model ? model : "(none)");

    Backend *bk = backend_create(2);
    Net *net;
    if (!strcmp(case_name, "mini-alexnet")) {
        net = build_mini_alexnet(bk);
    } else {
        Error e = {{0}};
        net = model_build(case_name, bk, 0, 1, &e);
        cr_assert_not_null(net, "model_build(%s): %s", case_name, e.msg);
    }
    net->label_smoothing = (real)meta_number(&fx, "label_smoothing");

    /* The batch. */
    const FxTensor *input = need(&fx, "input", FX_F32), *labels = need(&fx, "labels", FX_I32);
    cr_assert(input->ndim == 4 && input->shape[1] == net->in_c && input->shape[2] == net->in_h &&
                  input->shape[3] == net->in_w,
              "input shape does not match the net's %dx%dx%d", net->in_c, net->in_h, net->in_w);
    int n = (int)input->shape[0];
    cr_assert(labels->ndim == 1 && labels->shape[0] == n, "labels do not match the batch of %d", n);
    net_plan(net, n);
    upload_f32(&net->input, input->f32);
    for (int i = 0; i < n; i++)
        cr_assert(labels->i32[i] >= 0 && labels->i32[i] < net->classes, "label %d out of range", labels->i32[i]);
    labels_set(bk, net->labels, labels->i32, n);

    /* Initial parameters by name, every one on both sides. */
    check_names(&fx, net, "init/", 'p');
    check_names(&fx, net, "grad/", 'p');
    check_names(&fx, net, "final/", 'p');
    check_names(&fx, net, "buffer_fwd/", 'b');
    check_names(&fx, net, "buffer_final/", 'b');
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        char full[256], desc[128];
        snprintf(full, sizeof full, "init/%s", pr->name);
        const FxTensor *t = fixture_get(&fx, full);
        cr_assert_not_null(t, "no initial value for %s", pr->name);
        cr_assert(t->dtype == FX_F32 && same_shape(pr, t, desc, sizeof desc), "%s: shape %s", full, desc);
        upload_f32(&pr->value, t->f32);
    }

    /* One forward/backward in train mode. */
    Worst w_logits = {0, ""}, w_loss = {0, ""}, w_grad = {0, ""}, w_buf = {0, ""};
    Worst w_steps = {0, ""}, w_final = {0, ""}, w_buf_final = {0, ""};
    net_zero_grad(net);
    double loss = net_forward(net, n, true);
    net_backward(net, n);

    const Layer *loss_layer = &net->layers[net->loss_layer];
    cr_assert(loss_layer->in[0] >= 0, "the loss reads the net input directly");
    const Tensor *logits = &net->layers[loss_layer->in[0]].out;
    const FxTensor *want_logits = need(&fx, "logits", FX_F32);
    cr_assert(want_logits->ndim == 2 && want_logits->shape[0] == n && want_logits->shape[1] == net->classes &&
                  tensor_count(logits) == want_logits->count,
              "logits: torch and engine shapes differ");
    compare_tensor("logits", logits, want_logits->f32, want_logits->count, TOL_FIRST, &w_logits);
    const FxTensor *want_loss = need(&fx, "loss", FX_F32);
    real loss_r = (real)loss;
    compare("loss", &loss_r, want_loss->f32, 1, TOL_FIRST, &w_loss);
    compare_params(&fx, net, "grad/", 'g', TOL_FIRST, &w_grad);
    compare_buffers(&fx, net, "buffer_fwd/", TOL_FIRST, &w_buf);

    /* SGD steps on the same batch. */
    OptConfig cfg;
    opt_config_defaults(&cfg);
    cfg.momentum = meta_number(&fx, "momentum");
    cfg.dampening = meta_number(&fx, "dampening");
    cfg.nesterov = meta_number(&fx, "nesterov") != 0;
    cfg.weight_decay = meta_number(&fx, "weight_decay");
    double lr = meta_number(&fx, "lr");
    int steps = (int)meta_number(&fx, "steps");
    cr_assert(steps > 0 && steps <= MAX_STEPS, "steps = %d", steps);
    const FxTensor *want_steps = need(&fx, "step_losses", FX_F32);
    cr_assert_eq(want_steps->count, (size_t)steps, "step_losses has %zu entries, steps = %d", want_steps->count, steps);
    Error e = {{0}};
    Optimizer *opt = optimizer_create(&cfg, net, &e);
    cr_assert_not_null(opt, "optimizer_create: %s", e.msg);
    real losses[MAX_STEPS];
    for (int s = 0; s < steps; s++) {
        net_zero_grad(net);
        losses[s] = (real)net_forward(net, n, true);
        net_backward(net, n);
        optimizer_step(opt, net, lr, NULL);
    }
    compare("step_losses", losses, want_steps->f32, (size_t)steps, TOL_STEPS, &w_steps);
    compare_params(&fx, net, "final/", 'v', TOL_STEPS, &w_final);
    compare_buffers(&fx, net, "buffer_final/", TOL_STEPS, &w_buf_final);

    fprintf(stderr,
            "reference %-12s (max |diff| / max |torch|) logits %.2e, loss %.2e, grads %.2e (%s), "
            "bn stats %.2e; %d steps (nesterov %d): losses %.2e, final params %.2e (%s), final bn stats %.2e\n",
            case_name, w_logits.worst, w_loss.worst, w_grad.worst, w_grad.where, w_buf.worst, steps,
            (int)cfg.nesterov, w_steps.worst, w_final.worst, w_final.where, w_buf_final.worst);

    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
    fixture_free(&fx);
}

Test(reference, lenet) { run_case("lenet"); }
Test(reference, resnet8) { run_case("resnet8"); }
Test(reference, mini_alexnet) { run_case("mini-alexnet"); }
