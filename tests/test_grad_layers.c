/* Finite-difference gradient checks in double precision for every layer.
 * This file is linked against the engine compiled with -DBB_DOUBLE (same sources,
 * real = double), so central differences agree with backprop to ~1e-8 and a
 * tolerance of 1e-5 relative catches any real mistake in a backward pass.
 * Each case builds: input -> layer(s) under test -> linear -> softmax xent, then
 * checks d loss / d input and d loss / d every parameter. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../engine/net/models.h"
#include "../engine/net/net.h"
#include "../engine/base/rng.h"
#include "tensor_access.h"

typedef void (*BuildFn)(Net *net);

static const Init GAUSS = {INIT_GAUSSIAN, 0.5};

static double loss_at(Net *net, int n)
{
    net->dropout_seed = 7; /* same dropout mask for every evaluation */
    net->step = 7;
    net->first_image = 0;
    return net_forward(net, n, true);
}

/* Compares analytic and numeric derivatives for up to `samples` entries of x. */
static int check_tensor(Net *net, int n, Tensor *x, const Tensor *grad, const char *what, int samples)
{
    const double eps = 1e-6;
    const size_t count = tensor_count(x);
    real *analytic = tensor_to_host(grad);
    int bad = 0;
    size_t stride = count > (size_t)samples ? count / (size_t)samples : 1;
    for (size_t j = (stride > 1 ? stride / 2 : 0); j < count; j += stride) {
        real saved = tensor_get(x, j);
        tensor_set(x, j, (real)(saved + eps));
        double lp = loss_at(net, n);
        tensor_set(x, j, (real)(saved - eps));
        double lm = loss_at(net, n);
        tensor_set(x, j, saved);
        double numeric = (lp - lm) / (2 * eps), a = analytic[j];
        double scale = fmax(1e-3, fmax(fabs(a), fabs(numeric)));
        if (fabs(a - numeric) / scale > 1e-5) {
            if (bad < 5)
                cr_log_error("%s[%zu]: analytic %.10g numeric %.10g", what, j, a, numeric);
            bad++;
        }
    }
    free(analytic);
    return bad;
}

/* Normal values for t, from rng. */
static void fill_normal(Tensor *t, Rng *rng, double scale)
{
    size_t count = tensor_count(t);
    real *v = malloc(count * sizeof *v);
    for (size_t i = 0; i < count; i++) v[i] = (real)(scale * rng_normal(rng));
    tensor_upload(t, v);
    free(v);
}

/* A net from `build` planned for n images (at most 16), with random parameters (not the
 * layers' defaults, so that BN scale, biases etc. are all exercised with non-trivial values),
 * input and labels from the stream `seed`. */
static Net *random_net(Backend *bk, int c, int h, int w, int n, BuildFn build, uint64_t seed)
{
    Net *net = net_create("gradcheck", bk, c, h, w);
    build(net);
    net_finalize(net);
    Rng rng;
    rng_seed(&rng, seed, 1);
    fill_normal(&net->param_block, &rng, 0.5);
    net->want_input_grad = true;
    net_plan(net, n);
    fill_normal(&net->input, &rng, 1);
    int32_t labels[16];
    for (int i = 0; i < n; i++) labels[i] = (int32_t)rng_below(&rng, (uint32_t)net->classes);
    labels_set(bk, net->labels, labels, n);
    return net;
}

/* Checks every derivative of a net from `build`; `bn_writes`: the net's batch norm (layer
 * "bn") must have written its input's gradient, not added to it. Two backward passes: the
 * second starts from memory the first left holding gradients, where a layer that should write
 * but adds shows. */
static void check_net(int c, int h, int w, int n, BuildFn build, bool bn_writes)
{
    Backend *bk = backend_create(2);
    Net *net = random_net(bk, c, h, w, n, build, 42);

    for (int pass = 0; pass < 2; pass++) {
        net_zero_grad(net);
        loss_at(net, n);
        net_backward(net, n);
    }
    if (bn_writes) {
        const Layer *bn = NULL;
        for (int i = 0; i < net->n_layers; i++)
            if (!strcmp(net->layers[i].name, "bn")) bn = &net->layers[i];
        cr_assert(bn && bn->fresh_dx[0], "the batch norm did not write its input's gradient");
    }

    tensor_set_batch(&net->input_grad, n);
    int bad = check_tensor(net, n, &net->input, &net->input_grad, "input", 60);
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        bad += check_tensor(net, n, &pr->value, &pr->grad, pr->name, 40);
    }
    cr_expect_eq(bad, 0, "%d derivatives disagree with finite differences", bad);
    net_destroy(net);
    backend_destroy(bk);
}

static void run_check(int c, int h, int w, int n, BuildFn build) { check_net(c, h, w, n, build, false); }
static void run_check_bn_writes(int c, int h, int w, int n, BuildFn build) { check_net(c, h, w, n, build, true); }

static int head(Net *net, int x)
{
    x = nb_linear(net, "head", x, 5, true, GAUSS, GAUSS);
    return nb_softmax_xent(net, x);
}

static void b_conv3(Net *net) { head(net, nb_conv(net, "conv", NET_INPUT, 4, 3, 1, 1, 1, true, GAUSS, GAUSS)); }
static void b_conv_strided(Net *net) { head(net, nb_conv(net, "conv", NET_INPUT, 3, 5, 2, 2, 1, true, GAUSS, GAUSS)); }
static void b_conv_grouped(Net *net) { head(net, nb_conv(net, "conv", NET_INPUT, 6, 3, 1, 0, 2, true, GAUSS, GAUSS)); }
/* 16 -> 16 channels, stride 1, 3x3: the Winograd path (engine/cpu/conv_winograd.c), on an odd
 * size so the last tiles are partial. BN after it keeps the logits moderate (144 inputs per
 * output at the check's 0.5 weights would saturate the softmax and cost central differences
 * their digits) and gives every output position its own gradient. */
static void b_conv_winograd(Net *net)
{
    int y = nb_conv(net, "conv", NET_INPUT, 16, 3, 1, 1, 1, true, GAUSS, GAUSS);
    head(net, nb_batchnorm(net, "bn", y, true, 1e-5, 0.1));
}
/* 32 -> 32 channels, 5x5 in groups of 2 (16 a group): F(2x2, 5x5) (engine/cpu/conv_winograd.c),
 * which the direct path, taking no groups, leaves to it; odd planes, partial tiles. */
static void b_conv_winograd_5x5(Net *net)
{
    int y = nb_conv(net, "conv", NET_INPUT, 32, 5, 1, 2, 2, true, GAUSS, GAUSS);
    head(net, nb_batchnorm(net, "bn", y, true, 1e-5, 0.1));
}
/* 8 -> 8 channels on 5 x 8 planes: the direct path (engine/cpu/conv_direct.c), whose vectors
 * run across row ends, two whole ones and the last eight pixels. BN after it as above. */
static void b_conv_direct(Net *net)
{
    int y = nb_conv(net, "conv", NET_INPUT, 8, 3, 1, 1, 1, true, GAUSS, GAUSS);
    head(net, nb_batchnorm(net, "bn", y, true, 1e-5, 0.1));
}
/* The direct path's 5x5 filters (padding 2) on 5 x 6 planes: shifts of two columns wrap
 * round every row, and most taps of the edge pixels fall outside. */
static void b_conv_direct_5x5(Net *net)
{
    int y = nb_conv(net, "conv", NET_INPUT, 8, 5, 1, 2, 1, true, GAUSS, GAUSS);
    head(net, nb_batchnorm(net, "bn", y, true, 1e-5, 0.1));
}
static void b_conv_pointwise(Net *net) { head(net, nb_conv(net, "conv", NET_INPUT, 5, 1, 1, 0, 1, false, GAUSS, GAUSS)); }
static void b_conv_pointwise_s2(Net *net) { head(net, nb_conv(net, "conv", NET_INPUT, 5, 1, 2, 0, 1, false, GAUSS, GAUSS)); }
static void b_linear(Net *net) { head(net, nb_linear(net, "fc", NET_INPUT, 7, true, GAUSS, GAUSS)); }
static void b_relu(Net *net) { head(net, nb_relu(net, NET_INPUT)); }
static void b_maxpool(Net *net) { head(net, nb_maxpool(net, NET_INPUT, 3, 2, 0)); }
static void b_maxpool_pad(Net *net) { head(net, nb_maxpool(net, NET_INPUT, 3, 2, 1)); }
static void b_avgpool(Net *net) { head(net, nb_avgpool(net, NET_INPUT, 3, 2, 1)); }
static void b_gap(Net *net) { head(net, nb_global_avgpool(net, NET_INPUT)); }
static void b_bn_affine(Net *net) { head(net, nb_batchnorm(net, "bn", NET_INPUT, true, 1e-5, 0.1)); }
static void b_bn_plain(Net *net) { head(net, nb_batchnorm(net, "bn", NET_INPUT, false, 1e-4, 0.1)); }
static void b_bn_relu(Net *net) { head(net, nb_batchnorm_relu(net, "bn", NET_INPUT, true, 1e-5, 0.1)); }
static void b_bn_relu_plain(Net *net) { head(net, nb_batchnorm_relu(net, "bn", NET_INPUT, false, 1e-4, 0.1)); }
static void b_lrn(Net *net) { head(net, nb_lrn(net, "norm", NET_INPUT, 5, 1e-1, 0.75, 2)); }
static void b_lrn_even(Net *net) { head(net, nb_lrn(net, "norm", NET_INPUT, 4, 0.3, 0.6, 1)); }
static void b_dropout(Net *net) { head(net, nb_dropout(net, NET_INPUT, 0.4)); }
static void b_add(Net *net)
{
    int a = nb_conv(net, "a", NET_INPUT, 3, 3, 1, 1, 1, false, GAUSS, GAUSS);
    head(net, nb_add(net, a, nb_relu(net, a))); /* a feeds two consumers */
}
/* A ResNet basic block with a projection shortcut: its first BN and ReLU, and its add and
 * last ReLU, two layers each, or one each (nb_batchnorm_relu, nb_add_relu: the models). The
 * add's first input (bn2) shares the add's gradient (LayerOps.shares_input_gradients), and so may its second. */
static void residual_block(Net *net, bool fused)
{
    int y = nb_conv(net, "conv1", NET_INPUT, 4, 3, 2, 1, 1, false, GAUSS, GAUSS);
    y = fused ? nb_batchnorm_relu(net, "bn1", y, true, 1e-5, 0.1) : nb_relu(net, nb_batchnorm(net, "bn1", y, true, 1e-5, 0.1));
    y = nb_batchnorm(net, "bn2", nb_conv(net, "conv2", y, 4, 3, 1, 1, 1, false, GAUSS, GAUSS), true, 1e-5, 0.1);
    int s = nb_batchnorm(net, "ds.1", nb_conv(net, "ds.0", NET_INPUT, 4, 1, 2, 0, 1, false, GAUSS, GAUSS), true, 1e-5, 0.1);
    head(net, fused ? nb_add_relu(net, y, s) : nb_relu(net, nb_add(net, y, s)));
}
static void b_residual(Net *net) { residual_block(net, false); }
static void b_residual_fused(Net *net) { residual_block(net, true); }
/* Gradients that a layer writes rather than adds to (writes_fresh_gradient: ReLU, add, BN):
 * a tensor added to itself (the second place adds), and a ReLU's output read first by a BN and
 * last by an add, so the add writes its gradient and the BN must add to it. */
static void b_fresh_gradients(Net *net)
{
    int a = nb_conv(net, "a", NET_INPUT, 3, 3, 1, 1, 1, false, GAUSS, GAUSS);
    int c = nb_relu(net, nb_add(net, a, a));
    head(net, nb_add(net, nb_batchnorm(net, "bn", c, true, 1e-5, 0.1), c));
}
/* The same with the ReLU fused into the adds: one adds a tensor to itself (no shared gradient),
 * one writes the gradient of a tensor a BN read first. */
static void b_fresh_gradients_add_relu(Net *net)
{
    int a = nb_conv(net, "a", NET_INPUT, 3, 3, 1, 1, 1, false, GAUSS, GAUSS);
    int c = nb_add_relu(net, a, a);
    head(net, nb_add_relu(net, nb_batchnorm(net, "bn", c, true, 1e-5, 0.1), c));
}
/* Batch norm on a layer's output that only it reads, so its backward writes the input's
 * gradient (fresh_dx) rather than adding to it as on the net's input: a + a (a convolution's
 * output twice: an add takes layers, not the net's input; its own backward is exact) feeds the
 * BN, so a's gradient is the BN's written one, doubled. */
static int doubled_conv(Net *net)
{
    int a = nb_conv(net, "a", NET_INPUT, 3, 3, 1, 1, 1, false, GAUSS, GAUSS);
    return nb_add(net, a, a);
}
static void b_bn_writes(Net *net) { head(net, nb_batchnorm(net, "bn", doubled_conv(net), true, 1e-5, 0.1)); }
static void b_bn_relu_writes(Net *net) { head(net, nb_batchnorm_relu(net, "bn", doubled_conv(net), true, 1e-5, 0.1)); }
static void b_add_relu(Net *net)
{
    int a = nb_conv(net, "a", NET_INPUT, 3, 3, 1, 1, 1, false, GAUSS, GAUSS);
    head(net, nb_add_relu(net, a, nb_conv(net, "b", NET_INPUT, 3, 3, 1, 1, 1, true, GAUSS, GAUSS)));
}
static void b_smoothing(Net *net)
{
    net->label_smoothing = (real)0.1;
    head(net, nb_relu(net, NET_INPUT));
}

Test(gradcheck, conv_3x3_padded) { run_check(3, 6, 6, 2, b_conv3); }
Test(gradcheck, conv_5x5_stride2_pad2) { run_check(2, 9, 7, 2, b_conv_strided); }
Test(gradcheck, conv_3x3_winograd) { run_check(16, 7, 5, 2, b_conv_winograd); }
Test(gradcheck, conv_5x5_winograd) { run_check(32, 7, 5, 2, b_conv_winograd_5x5); }
Test(gradcheck, conv_3x3_direct) { run_check(8, 5, 8, 2, b_conv_direct); }
Test(gradcheck, conv_5x5_direct) { run_check(8, 5, 6, 2, b_conv_direct_5x5); }
Test(gradcheck, conv_grouped) { run_check(4, 5, 5, 3, b_conv_grouped); }
Test(gradcheck, conv_pointwise) { run_check(3, 4, 4, 2, b_conv_pointwise); }
Test(gradcheck, conv_pointwise_stride2) { run_check(3, 5, 5, 2, b_conv_pointwise_s2); }
Test(gradcheck, linear) { run_check(3, 2, 2, 4, b_linear); }
Test(gradcheck, relu) { run_check(2, 3, 3, 3, b_relu); }
Test(gradcheck, maxpool_3s2) { run_check(2, 7, 7, 2, b_maxpool); }
Test(gradcheck, maxpool_padded) { run_check(2, 6, 6, 2, b_maxpool_pad); }
Test(gradcheck, avgpool_padded) { run_check(2, 6, 6, 2, b_avgpool); }
Test(gradcheck, global_avgpool) { run_check(3, 4, 4, 2, b_gap); }
Test(gradcheck, batchnorm_train_affine) { run_check(3, 3, 3, 4, b_bn_affine); }
Test(gradcheck, batchnorm_train_no_affine) { run_check(3, 3, 3, 4, b_bn_plain); }
Test(gradcheck, batchnorm_relu_train) { run_check(3, 3, 3, 4, b_bn_relu); }
Test(gradcheck, batchnorm_relu_train_no_affine) { run_check(3, 3, 3, 4, b_bn_relu_plain); }
Test(gradcheck, batchnorm_writes_input_gradient) { run_check_bn_writes(3, 3, 3, 4, b_bn_writes); }
Test(gradcheck, batchnorm_relu_writes_input_gradient) { run_check_bn_writes(3, 3, 3, 4, b_bn_relu_writes); }
Test(gradcheck, lrn) { run_check(7, 3, 3, 2, b_lrn); }
Test(gradcheck, lrn_even_size) { run_check(6, 2, 2, 2, b_lrn_even); }
Test(gradcheck, dropout) { run_check(3, 3, 3, 3, b_dropout); }
Test(gradcheck, residual_add) { run_check(3, 4, 4, 2, b_add); }
Test(gradcheck, residual_block) { run_check(3, 6, 6, 3, b_residual); }
Test(gradcheck, residual_block_fused_bn_relu) { run_check(3, 6, 6, 3, b_residual_fused); }
Test(gradcheck, gradients_written_or_added) { run_check(2, 4, 4, 3, b_fresh_gradients); }
Test(gradcheck, gradients_written_or_added_add_relu) { run_check(2, 4, 4, 3, b_fresh_gradients_add_relu); }
Test(gradcheck, add_relu) { run_check(3, 4, 4, 2, b_add_relu); }
Test(gradcheck, softmax_xent_label_smoothing) { run_check(4, 1, 1, 5, b_smoothing); }

/* One training step's loss, gradients (parameters, then the input) and evaluation loss of a
 * net from `build`, with random parameters, input and labels from a fixed seed. */
static real *step_results(BuildFn build, size_t *count)
{
    Backend *bk = backend_create(2);
    Net *net = random_net(bk, 3, 6, 6, 3, build, 5);
    net_zero_grad(net);
    const double train_loss = loss_at(net, 3);
    net_backward(net, 3);
    tensor_set_batch(&net->input_grad, 3);
    const size_t params = tensor_count(&net->grad_block), inputs = tensor_count(&net->input_grad);
    *count = params + inputs + 2;
    real *out = malloc(*count * sizeof *out);
    cr_assert_not_null(out);
    tensor_download(&net->grad_block, out);
    tensor_download(&net->input_grad, out + params);
    out[params + inputs] = (real)train_loss;
    out[params + inputs + 1] = (real)net_forward(net, 3, false);
    net_destroy(net);
    backend_destroy(bk);
    return out;
}

/* nb_batchnorm_relu and nb_add_relu are BN, or the add, then ReLU to the bit: values,
 * gradients, evaluation. */
Test(known_answer, fused_relus_are_the_layers_apart)
{
    size_t n_apart, n_fused;
    real *apart = step_results(b_residual, &n_apart), *fused = step_results(b_residual_fused, &n_fused);
    cr_assert_eq(n_apart, n_fused);
    size_t differ = 0;
    for (size_t i = 0; i < n_apart; i++) differ += memcmp(&apart[i], &fused[i], sizeof(real)) != 0;
    cr_expect_eq(differ, 0, "%zu of %zu values differ", differ, n_apart);
    free(apart);
    free(fused);
}

/* Evaluation-mode BN is a known affine map of the running statistics. */
Test(known_answer, batchnorm_eval_uses_running_stats)
{
    Backend *bk = backend_create(1);
    Net *net = net_create("bn", bk, 2, 1, 2);
    int bn = nb_batchnorm(net, "bn", NET_INPUT, true, 0, 0.1);
    nb_softmax_xent(net, bn);
    net_finalize(net);
    net->want_input_grad = true;
    net_plan(net, 1);
    const real rm[2] = {1, -2}, rv[2] = {4, 0.25}, gamma[2] = {3, 1}, beta[2] = {0.5, 0};
    tensor_upload(&net->buffers[0].value, rm);
    tensor_upload(&net->buffers[1].value, rv);
    tensor_upload(&net->params[0].value, gamma);
    tensor_upload(&net->params[1].value, beta);
    const real in[4] = {3, 5, -2, -1.5};
    const int32_t label[1] = {0};
    net_upload_batch(net, 1, in, label);
    net_forward(net, 1, false);
    real y[4];
    tensor_download(&net->layers[bn].out, y);
    cr_expect(fabs(y[0] - (3 * (3 - 1) / 2.0 + 0.5)) < 1e-12);
    cr_expect(fabs(y[1] - (3 * (5 - 1) / 2.0 + 0.5)) < 1e-12);
    cr_expect(fabs(y[2] - (1 * (-2 + 2) / 0.5)) < 1e-12);
    cr_expect(fabs(y[3] - (1 * (-1.5 + 2) / 0.5)) < 1e-12);
    net_destroy(net);
    backend_destroy(bk);
}

/* Training-mode BN updates running statistics as PyTorch: momentum 0.1, unbiased var. */
Test(known_answer, batchnorm_running_update)
{
    Backend *bk = backend_create(1);
    Net *net = net_create("bn", bk, 1, 1, 2);
    int bn = nb_batchnorm(net, "bn", NET_INPUT, false, 1e-5, 0.1);
    nb_softmax_xent(net, bn);
    net_finalize(net);
    net->want_input_grad = true;
    net_plan(net, 2);
    const real in[4] = {1, 2, 3, 6}; /* mean 3, biased var 3.5, unbiased 14/3 */
    const int32_t labels[2] = {0, 0};
    net_upload_batch(net, 2, in, labels);
    net_forward(net, 2, true);
    cr_expect(fabs(tensor_get(&net->buffers[0].value, 0) - 0.3) < 1e-12);
    cr_expect(fabs(tensor_get(&net->buffers[1].value, 0) - (0.9 + 0.1 * 14.0 / 3.0)) < 1e-12);
    net_destroy(net);
    backend_destroy(bk);
}

/* The published sizes of the full networks. */
Test(known_answer, published_parameter_counts)
{
    Backend *bk = backend_create(1);
    struct { const char *name; size_t params; double gmacs_lo, gmacs_hi; } want[] = {
        {"resnet50", 25557032, 4.08, 4.11},
        {"alexnet", 60965224, 0.72, 0.73},
        {"resnet20", 272474, 0.040, 0.042},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        Error err;
        Net *net = model_build(want[i].name, bk, 0, 1, &err);
        cr_assert(net, "%s", err.msg);
        cr_expect_eq(net->n_weights, want[i].params, "%s: %zu parameters", want[i].name, net->n_weights);
        double g = net_flops_per_image(net) / 2e9;
        cr_expect(g >= want[i].gmacs_lo && g <= want[i].gmacs_hi, "%s: %.4f GMACs", want[i].name, g);
        net_destroy(net);
    }
    backend_destroy(bk);
}
