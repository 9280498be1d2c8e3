/* Training by per-thread replicas (engine/dist/replicas.h) against the net training itself (each
 * operation split across the threads): the same loss, top-1 hits and parameter gradients
 * (up to the order of the sums: relative 1e-5 of the largest), with gradients that already
 * hold values, dropout (whose masks follow each image's place in the batch), uneven shares
 * (7 images on 3 threads), a thread without images, the same bits when repeated, and every
 * layer handed to after_layer_backward once, in backward order. Also which nets suit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/net/models.h"
#include "../engine/dist/replicas.h"
#include "tensor_access.h"

typedef struct {
    double loss;
    int correct;
    real *grad; /* host copy of the gradient block */
} PassResult;

/* A pass over a synthetic batch of n images from gradients of `start` (0 or the batch's own
 * gradient, when `twice`), through replicas when `replicated`. */
static PassResult run_pass(const char *model, int threads, int n, bool replicated, bool twice)
{
    Backend *bk = backend_create(threads);
    Error err = {{0}};
    Net *net = model_build(model, bk, 0, 7, &err);
    cr_assert(net, "%s", err.msg);
    net_plan(net, n);
    net_upload_random_batch(net, n, 11, 3);
    net->dropout_seed = 5;
    net->step = 2;
    net->first_image = 64; /* as if another rank's share came first */
    Replicas *r = NULL;
    if (replicated) {
        r = replicas_build(net, n, &err);
        cr_assert(r, "%s: no replicas (%s)", model, err.msg);
    }
    net_zero_grad(net);
    PassResult out;
    out.loss = net_train_pass(net, r, n, false);
    if (twice) net_train_pass(net, r, n, false);
    out.correct = net->correct;
    out.grad = tensor_to_host(&net->grad_block);
    replicas_close(r);
    net_destroy(net);
    backend_destroy(bk);
    return out;
}

static size_t weights_of(const char *model)
{
    Backend *bk = backend_create(1);
    Error err = {{0}};
    Net *net = model_build(model, bk, 0, 7, &err);
    cr_assert(net, "%s", err.msg);
    size_t count = net->n_weights;
    net_destroy(net);
    backend_destroy(bk);
    return count;
}

static void expect_same_pass(const char *model, int threads, int n, bool twice)
{
    PassResult a = run_pass(model, threads, n, false, twice), b = run_pass(model, threads, n, true, twice);
    const size_t count = weights_of(model);
    double largest = 0, worst = 0;
    for (size_t i = 0; i < count; i++) {
        largest = fmax(largest, fabs((double)a.grad[i]));
        worst = fmax(worst, fabs((double)a.grad[i] - (double)b.grad[i]));
    }
    cr_expect(largest > 0, "%s: the gradient is zero", model);
    cr_expect(worst <= 1e-5 * largest, "%s on %d threads, %d images: gradients differ by %g (largest %g)", model,
              threads, n, worst, largest);
    cr_expect(fabs(a.loss - b.loss) <= 1e-6 * fabs(a.loss), "%s: loss %.9g by the net, %.9g by replicas", model,
              a.loss, b.loss);
    cr_expect_eq(a.correct, b.correct, "%s: %d hits by the net, %d by replicas", model, a.correct, b.correct);
    free(a.grad);
    free(b.grad);
}

Test(replicas, lenet_two_threads) { expect_same_pass("lenet", 2, 32, false); }
Test(replicas, lenet_uneven_shares) { expect_same_pass("lenet", 3, 7, false); }
Test(replicas, a_thread_without_images) { expect_same_pass("lenet", 2, 1, false); }
Test(replicas, adds_to_the_gradient) { expect_same_pass("lenet", 2, 8, true); }
Test(replicas, dropout_lrn_alexnet_cifar) { expect_same_pass("alexnet-cifar", 2, 6, false); }

Test(replicas, repeats_bit_for_bit)
{
    PassResult a = run_pass("alexnet-cifar", 2, 6, true, false), b = run_pass("alexnet-cifar", 2, 6, true, false);
    cr_expect(memcmp(a.grad, b.grad, weights_of("alexnet-cifar") * sizeof(real)) == 0);
    cr_expect(a.loss == b.loss);
    free(a.grad);
    free(b.grad);
}

typedef struct {
    int calls, next;
    bool in_order;
} LayerLog;

static void log_layer(Net *net, int layer, void *ctx)
{
    (void)net;
    LayerLog *log = ctx;
    log->in_order &= layer == log->next;
    log->next = layer - 1;
    log->calls++;
}

Test(replicas, hands_every_layer_to_the_allreduce)
{
    Backend *bk = backend_create(2);
    Error err = {{0}};
    Net *net = model_build("lenet", bk, 0, 7, &err);
    cr_assert(net, "%s", err.msg);
    net_plan(net, 4);
    net_upload_random_batch(net, 4, 1, 1);
    Replicas *r = replicas_build(net, 4, &err);
    cr_assert(r, "%s", err.msg);
    LayerLog log = {0, net->n_layers - 1, true};
    net->after_layer_backward = log_layer;
    net->after_layer_ctx = &log;
    net_zero_grad(net);
    net_train_pass(net, r, 4, false);
    cr_expect_eq(log.calls, net->n_layers);
    cr_expect(log.in_order);
    replicas_close(r);
    net_destroy(net);
    backend_destroy(bk);
}

/* Whether model at batch trains by replicas on `threads` threads. */
static bool suits(const char *model, int threads, int batch)
{
    Backend *bk = backend_create(threads);
    Error err = {{0}};
    Net *net = model_build(model, bk, 0, 7, &err);
    cr_assert(net, "%s", err.msg);
    bool s = replicas_suit(net, batch);
    net_destroy(net);
    backend_destroy(bk);
    return s;
}

Test(replicas, which_nets_suit)
{
    cr_expect(suits("lenet", 2, 32));
    cr_expect(suits("lenet", 2, 128));
    cr_expect(!suits("lenet", 1, 128), "one thread needs no replicas");
    cr_expect(!suits("alexnet-bn-cifar", 2, 32), "batch norm ties a batch's images together");
    cr_expect(!suits("resnet8", 2, 32), "batch norm ties a batch's images together");
    cr_expect(!suits("simple-cnn", 2, 128), "3.3M weights outweigh the activations");
    cr_expect(!suits("alexnet-cifar", 2, 32), "11 MB of outputs a thread: beyond its core's caches");
    cr_expect(!suits("lenet", 2, 16), "its weights outweigh 8 images' outputs");
    cr_expect(!suits("lenet", 2, 256), "5 MB of outputs a thread: beyond its core's caches");
}

Test(replicas, none_for_batch_norm)
{
    Backend *bk = backend_create(2);
    Error err = {{0}};
    Net *net = model_build("resnet8", bk, 0, 7, &err);
    cr_assert(net, "%s", err.msg);
    cr_expect_null(replicas_build(net, 8, &err));
    cr_expect_eq(err.msg[0], 0, "not an error: the net trains itself");
    net_destroy(net);
    backend_destroy(bk);
}
