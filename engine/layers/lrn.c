/* Local response normalization across channels (original AlexNet). */
#include <stdlib.h>

#include "../net/net.h"
#include "../base/util.h"

typedef struct {
    LrnShape shape;
    Tensor scale;
} LrnState;

static void lrn_plan(Layer *l, Net *net, int batch)
{
    LrnState *st = l->state;
    backend_reserve(net->bk, lrn_workspace(&st->shape));
    tensor_free(&st->scale);
    tensor_alloc(&st->scale, net->bk, batch, l->c, l->h, l->w);
}

static void lrn_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    LrnState *st = l->state;
    bk_lrn_forward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data, l->out.data,
                   st->scale.data);
}

static void lrn_backward(Layer *l, Net *net, int n)
{
    LrnState *st = l->state;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    if (dx)
        bk_lrn_backward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data, l->out.data,
                        st->scale.data, l->dout.data, dx->data);
}

static void lrn_destroy(Layer *l)
{
    LrnState *st = l->state;
    tensor_free(&st->scale);
    free(st);
}

static const LayerOps lrn_ops = {
    .kind = "lrn", .plan = lrn_plan, .forward = lrn_forward, .backward = lrn_backward,
    .destroy = lrn_destroy, .reads_own_output = true,
};

int nb_lrn(Net *net, const char *name, int in, int size, double alpha, double beta, double k)
{
    int idx = net_add_layer(net, &lrn_ops, name, in, NO_INPUT);
    Layer *l = &net->layers[idx];
    LrnState *st = xcalloc(1, sizeof *st, "lrn state");
    st->shape = (LrnShape){l->c, l->h * l->w, size, (real)alpha, (real)beta, (real)k};
    l->state = st;
    return idx;
}
