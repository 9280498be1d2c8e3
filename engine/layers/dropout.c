/* Inverted dropout: active only in training; evaluation is the identity. */
#include <stdlib.h>

#include "../net/net.h"
#include "../base/util.h"

typedef struct {
    real p;
    Tensor mask;
    bool active; /* whether the last forward applied a mask */
} DropoutState;

static void dropout_plan(Layer *l, Net *net, int batch)
{
    DropoutState *st = l->state;
    tensor_free(&st->mask);
    tensor_alloc(&st->mask, net->bk, batch, l->c, l->h, l->w);
}

static void dropout_forward(Layer *l, Net *net, int n, bool train)
{
    (void)n;
    DropoutState *st = l->state;
    const real *x = net_layer_input(net, l, 0)->data;
    size_t count = tensor_count(&l->out);
    st->active = train && st->p > 0;
    if (st->active) {
        /* the layer's index names its stream; elements count from the step's first image */
        DropoutKey key = {net->dropout_seed, net->step, net->first_image * tensor_per_item(&l->out),
                          (uint32_t)(l - net->layers)};
        bk_dropout_forward(net->bk, count, st->p, &key, st->mask.data, x, l->out.data);
    } else {
        bk_copy(net->bk, count, x, l->out.data);
    }
}

static void dropout_backward(Layer *l, Net *net, int n)
{
    (void)n;
    DropoutState *st = l->state;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    if (!dx) return;
    if (st->active)
        bk_dropout_backward(net->bk, tensor_count(&l->out), st->mask.data, l->dout.data, dx->data);
    else
        bk_accumulate(net->bk, tensor_count(&l->out), l->dout.data, dx->data);
}

static void dropout_destroy(Layer *l)
{
    DropoutState *st = l->state;
    tensor_free(&st->mask);
    free(st);
}

static const LayerOps dropout_ops = {
    .kind = "dropout", .plan = dropout_plan, .forward = dropout_forward, .backward = dropout_backward,
    .destroy = dropout_destroy,
};

int nb_dropout(Net *net, int in, double p)
{
    int idx = net_add_layer(net, &dropout_ops, NULL, in, NO_INPUT);
    DropoutState *st = xcalloc(1, sizeof *st, "dropout state");
    st->p = (real)p;
    net->layers[idx].state = st;
    return idx;
}
