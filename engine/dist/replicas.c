/* Per-thread net replicas (see replicas.h). */
#include "replicas.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "../net/models.h"

/* Where replicas pay, measured on 2 threads against the per-layer split (bench/ab_scaling.py,
 * bench/results/2026-12-05-replicas.txt): lenet, whose layers output 0.16-0.6M values a thread
 * at batch 32-128 (79% -> 88% and 85% -> 90% of the cores' own img/s in the steadiest runs).
 * Where a thread's outputs outgrow its core's caches they gain nothing measurable (alexnet-cifar
 * at 32, 2.8M a thread: -6% in one run, +5% in another) and cost a second set of activations;
 * where the weights come near the outputs, the replicas' gradients (each written, added and
 * zeroed every step) eat the gain (simple-cnn at 128, 1.1 times: 2,874 -> 2,859 img/s). */
#define REPLICA_OUTPUTS_MAX (1024.0 * 1024)

struct Replicas {
    int count;
    Backend **bk;
    Net **net;
};

/* Whether a layer ties a batch's images together in training. */
static bool couples_images(const Net *net)
{
    for (int i = 0; i < net->n_layers; i++)
        if (net->layers[i].ops->couples_images) return true;
    return false;
}

/* The most images one of `threads` replicas takes from a batch of batch_cap. */
static int images_per_thread(int batch_cap, int threads) { return (batch_cap + threads - 1) / threads; }

/* Replica k's share [*from, *to) of n items (a batch's images, or the weights). */
static void replica_share(size_t n, int count, int k, size_t *from, size_t *to)
{
    *from = n * (size_t)k / (size_t)count;
    *to = n * (size_t)(k + 1) / (size_t)count;
}

bool replicas_suit(const Net *net, int batch_cap)
{
    const int T = backend_threads(net->bk);
    if (T < 2 || couples_images(net)) return false;
    double outputs = 0; /* values the layers output for one image */
    for (int i = 0; i < net->n_layers; i++) outputs += (double)net->layers[i].c * net->layers[i].h * net->layers[i].w;
    const double per_thread = outputs * images_per_thread(batch_cap, T);
    return per_thread <= REPLICA_OUTPUTS_MAX && 2.0 * (double)net->n_weights <= per_thread;
}

void replicas_close(Replicas *r)
{
    if (!r) return;
    for (int k = 0; k < r->count; k++) {
        net_destroy(r->net[k]);
        backend_destroy(r->bk[k]);
    }
    free(r->net);
    free(r->bk);
    free(r);
}

/* The replica reads the net's parameters: its own copy of them goes. */
static void share_parameters(Net *replica, const Net *net)
{
    for (int p = 0; p < net->n_params; p++) replica->params[p].value.data = net->params[p].value.data;
    tensor_free(&replica->param_block);
}

Replicas *replicas_open(Net *net, int batch_cap, Error *err)
{
    return replicas_suit(net, batch_cap) ? replicas_build(net, batch_cap, err) : NULL;
}

Replicas *replicas_build(Net *net, int batch_cap, Error *err)
{
    if (couples_images(net)) return NULL;
    Replicas *r = xcalloc(1, sizeof *r, "net replicas");
    const int T = backend_threads(net->bk);
    r->bk = xcalloc((size_t)T, sizeof *r->bk, "net replicas");
    r->net = xcalloc((size_t)T, sizeof *r->net, "net replicas");
    for (int k = 0; k < T; k++) {
        r->bk[k] = backend_open_thread(net->bk);
        if (!r->bk[k]) break; /* a backend without one-thread backends: the net runs itself */
        r->count = k + 1;
        r->net[k] = model_build(net->model, r->bk[k], net->classes, 0, err);
        if (!r->net[k]) {
            error_prefix(err, "a thread's replica of the net");
            replicas_close(r);
            return NULL;
        }
        share_parameters(r->net[k], net);
        net_plan(r->net[k], images_per_thread(batch_cap, T));
    }
    if (r->count < T) {
        replicas_close(r);
        return NULL;
    }
    return r;
}

/* Replica k forward and backward over its images of the net's batch. */
static void replica_pass(Replicas *r, const Net *net, int k, int n, bool skip_diverged)
{
    Net *s = r->net[k];
    size_t from, to;
    replica_share((size_t)n, r->count, k, &from, &to);
    s->input.data = net->input.data + (size_t)from * tensor_per_item(&net->input);
    s->labels = net->labels + from;
    s->dropout_seed = net->dropout_seed;
    s->step = net->step;
    s->first_image = net->first_image + (uint64_t)from; /* the masks of one net's batch */
    s->label_smoothing = net->label_smoothing;
    s->loss_scale = net->loss_scale > 0 ? net->loss_scale : (real)1 / (real)n;
    s->profile = net->profile && k == 0;
    s->loss = 0;
    s->correct = 0;
    if (to == from) return;
    double loss = net_forward(s, (int)(to - from), true);
    if (!skip_diverged || isfinite(loss)) net_backward(s, (int)(to - from));
}

/* Share k of net->grad_block += (replica 0's + replica 1's + ...), summed in that order, by
 * replica k's thread on its own backend; the replicas' gradients are then zeroed there, ready
 * for the next pass (they are zero between passes). */
static void add_gradient_share(Replicas *r, Net *net, int k)
{
    size_t from, to;
    replica_share(net->n_weights, r->count, k, &from, &to);
    if (to == from) return;
    Backend *bk = r->bk[k];
    real *first = r->net[0]->grad_block.data + from;
    for (int j = 1; j < r->count; j++) bk_axpy(bk, to - from, 1, r->net[j]->grad_block.data + from, first);
    bk_axpy(bk, to - from, 1, first, net->grad_block.data + from);
    for (int j = 0; j < r->count; j++) bk_fill(bk, to - from, 0, r->net[j]->grad_block.data + from);
}

/* The first replica's layer times, moved to the net's. */
static void take_profile(Net *net, Net *first)
{
    for (int i = 0; i < net->n_layers; i++) {
        net->layers[i].fwd_seconds += first->layers[i].fwd_seconds;
        net->layers[i].bwd_seconds += first->layers[i].bwd_seconds;
        first->layers[i].fwd_seconds = first->layers[i].bwd_seconds = 0;
    }
}

static double replicas_train_pass(Replicas *r, Net *net, int n, bool skip_diverged)
{
#pragma omp parallel num_threads(r->count)
    {
#pragma omp for schedule(static, 1)
        for (int k = 0; k < r->count; k++) replica_pass(r, net, k, n, skip_diverged);
#pragma omp for schedule(static, 1)
        for (int k = 0; k < r->count; k++) add_gradient_share(r, net, k);
    }
    double loss_sum = 0;
    int correct = 0;
    for (int k = 0; k < r->count; k++) {
        size_t from, to;
        replica_share((size_t)n, r->count, k, &from, &to);
        loss_sum += r->net[k]->loss * (double)(to - from);
        correct += r->net[k]->correct;
    }
    if (net->profile) take_profile(net, r->net[0]);
    if (net->after_layer_backward)
        for (int i = net->n_layers - 1; i >= 0; i--) net->after_layer_backward(net, i, net->after_layer_ctx);
    net->loss = loss_sum / n;
    net->correct = correct;
    return net->loss;
}

double net_train_pass(Net *net, Replicas *r, int n, bool skip_diverged)
{
    if (r) return replicas_train_pass(r, net, n, skip_diverged);
    double loss = net_forward(net, n, true);
    if (!skip_diverged || isfinite(loss)) net_backward(net, n);
    return loss;
}
