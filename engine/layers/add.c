/* Residual addition y = a + b; the gradient flows unchanged to both inputs. */
#include <stdio.h>
#include <stdlib.h>

#include "../net.h"

static void add_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    (void)n;
    bk_add_forward(net->bk, tensor_count(&l->out), net_layer_input(net, l, 0)->data,
                   net_layer_input(net, l, 1)->data, l->out.data);
}

static void add_backward(Layer *l, Net *net, int n)
{
    (void)n;
    for (int k = 0; k < 2; k++) {
        Tensor *dx = net_layer_input_grad(net, l, k);
        if (!dx) continue;
        if (l->fresh_dx[k])
            bk_copy(net->bk, tensor_count(&l->out), l->dout.data, dx->data);
        else
            bk_accumulate(net->bk, tensor_count(&l->out), l->dout.data, dx->data);
    }
}

static const LayerOps add_ops = {.kind = "add", .forward = add_forward, .backward = add_backward,
                                 .may_run_in_place = true, .writes_fresh_gradient = true};

int nb_add(Net *net, int a, int b)
{
    int idx = net_add_layer(net, &add_ops, NULL, a, b);
    const Layer *la = &net->layers[a], *lb = &net->layers[b];
    if (la->c != lb->c || la->h != lb->h || la->w != lb->w) {
        fprintf(stderr, "bigbatch: internal error: add of %dx%dx%d and %dx%dx%d\n", la->c, la->h,
                la->w, lb->c, lb->h, lb->w);
        abort();
    }
    return idx;
}
