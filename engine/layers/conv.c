/* 2-D convolution with stride, padding and groups (BVLC AlexNet uses groups of 2). */
#include <stdlib.h>

#include "../net/net.h"
#include "../base/util.h"

typedef struct {
    ConvShape shape;
} ConvState;

static void conv_plan(Layer *l, Net *net, int batch)
{
    ConvState *st = l->state;
    const Param *w = &net->params[l->param[0]];
    backend_reserve(net->bk, conv_workspace(&st->shape, (size_t)w->n * w->c * w->h * w->w, batch));
}

static void conv_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    ConvState *st = l->state;
    const real *b = l->n_param > 1 ? net->params[l->param[1]].value.data : NULL;
    bk_conv2d_forward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data,
                      net->params[l->param[0]].value.data, b, l->out.data);
}

static void conv_backward(Layer *l, Net *net, int n)
{
    ConvState *st = l->state;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    real *db = l->n_param > 1 ? net->params[l->param[1]].grad.data : NULL;
    bk_conv2d_backward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data,
                       net->params[l->param[0]].value.data, l->dout.data, dx ? dx->data : NULL, !l->fresh_dx[0],
                       net->params[l->param[0]].grad.data, db);
}

static void conv_destroy(Layer *l) { free(l->state); }

static const LayerOps conv_ops = {
    .kind = "conv", .plan = conv_plan, .forward = conv_forward, .backward = conv_backward,
    .destroy = conv_destroy, .writes_fresh_gradient = true,
};

int nb_conv(Net *net, const char *name, int in, int out_c, int k, int stride, int pad, int groups,
            bool bias, Init w_init, Init b_init)
{
    int idx = net_add_layer(net, &conv_ops, name, in, NO_INPUT);
    Layer *l = &net->layers[idx];
    ConvState *st = xcalloc(1, sizeof *st, "conv state");
    ConvShape *s = &st->shape;
    s->in_c = l->c;
    s->in_h = l->h;
    s->in_w = l->w;
    s->out_c = out_c;
    s->k_h = s->k_w = k;
    s->stride = stride;
    s->pad = pad;
    s->groups = groups;
    s->out_h = (s->in_h + 2 * pad - k) / stride + 1;
    s->out_w = (s->in_w + 2 * pad - k) / stride + 1;
    if (s->in_c % groups || out_c % groups || s->out_h < 1 || s->out_w < 1) {
        fprintf(stderr, "bigbatch: internal error: conv %s: bad shape (in %dx%dx%d, groups %d)\n",
                l->name, s->in_c, s->in_h, s->in_w, groups);
        abort();
    }
    l->state = st;
    l->c = out_c;
    l->h = s->out_h;
    l->w = s->out_w;
    int icg = s->in_c / groups;
    l->flops = 2.0 * out_c * s->out_h * s->out_w * icg * k * k;
    net_add_param(net, idx, "weight", PARAM_WEIGHT, out_c, icg, k, k, icg * k * k, out_c / groups * k * k,
                  w_init);
    if (bias) net_add_param(net, idx, "bias", PARAM_BIAS, 1, 1, 1, out_c, icg * k * k, out_c, b_init);
    return idx;
}
