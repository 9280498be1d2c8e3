/* Residual addition y = a + b, and with a ReLU after it one layer y = max(0, a + b)
 * (nb_add_relu, as the ResNets end a block): the gradient flows to both inputs unchanged, or
 * through the ReLU's mask, which backward reads from y. Where this layer writes an input's
 * gradient first, that gradient may share this layer's own (net_plan): no copy. */
#include <stdio.h>
#include <stdlib.h>

#include "../net/net.h"

static const LayerOps add_relu_ops;

/* Whether the layer is the add with its ReLU. */
static bool has_relu(const Layer *l) { return l->ops == &add_relu_ops; }

static void add_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    (void)n;
    bk_add_forward(net->bk, tensor_count(&l->out), net_layer_input(net, l, 0)->data,
                   net_layer_input(net, l, 1)->data, has_relu(l), l->out.data);
}

/* Input k's gradient: written or added to (fresh_dx), and nothing to do where it is this
 * layer's own gradient already (shared by net_plan; with the ReLU, once masked there). With
 * the ReLU, the first input's gradient is masked (in place where it shares this layer's: then
 * the second's is that, copied, added or the same memory), else each input's is masked from
 * dout. */
static void add_backward(Layer *l, Net *net, int n)
{
    (void)n;
    const size_t count = tensor_count(&l->out);
    const bool relu = has_relu(l);
    bool masked = false; /* dout holds the ReLU's masked gradient (the first input's, shared) */
    for (int k = 0; k < 2; k++) {
        Tensor *dx = net_layer_input_grad(net, l, k);
        if (!dx || (dx->data == l->dout.data && (!relu || masked))) continue;
        if (relu && !masked) {
            bk_relu_backward(net->bk, count, l->out.data, l->dout.data, dx->data, !l->fresh_dx[k]);
            masked = dx->data == l->dout.data;
        } else if (l->fresh_dx[k])
            bk_copy(net->bk, count, l->dout.data, dx->data);
        else
            bk_accumulate(net->bk, count, l->dout.data, dx->data);
    }
}

static const LayerOps add_ops = {.kind = "add", .forward = add_forward, .backward = add_backward,
                                 .may_run_in_place = true, .writes_fresh_gradient = true,
                                 .shares_input_gradients = true};
static const LayerOps add_relu_ops = {.kind = "add_relu", .forward = add_forward, .backward = add_backward,
                                      .reads_own_output = true, .may_run_in_place = true,
                                      .writes_fresh_gradient = true, .shares_input_gradients = true};

static int add_layer(Net *net, const LayerOps *ops, int a, int b)
{
    if (a < 0 || b < 0) { /* the sum's shape comes from its operands' layers */
        fprintf(stderr, "bigbatch: internal error: an add takes two layers, not the net's input\n");
        abort();
    }
    int idx = net_add_layer(net, ops, NULL, a, b);
    const Layer *la = &net->layers[a], *lb = &net->layers[b];
    if (la->c != lb->c || la->h != lb->h || la->w != lb->w) {
        fprintf(stderr, "bigbatch: internal error: add of %dx%dx%d and %dx%dx%d\n", la->c, la->h,
                la->w, lb->c, lb->h, lb->w);
        abort();
    }
    return idx;
}

int nb_add(Net *net, int a, int b) { return add_layer(net, &add_ops, a, b); }
int nb_add_relu(Net *net, int a, int b) { return add_layer(net, &add_relu_ops, a, b); }
