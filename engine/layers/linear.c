/* Fully connected layer over the flattened C*H*W features of each image. */
#include "../net/net.h"

static void linear_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    Tensor *x = net_layer_input(net, l, 0);
    const real *b = l->n_param > 1 ? net->params[l->param[1]].value.data : NULL;
    bk_linear_forward(net->bk, n, (int)tensor_per_item(x), l->c, x->data,
                      net->params[l->param[0]].value.data, b, l->out.data);
}

static void linear_backward(Layer *l, Net *net, int n)
{
    Tensor *x = net_layer_input(net, l, 0), *dx = net_layer_input_grad(net, l, 0);
    real *db = l->n_param > 1 ? net->params[l->param[1]].grad.data : NULL;
    bk_linear_backward(net->bk, n, (int)tensor_per_item(x), l->c, x->data,
                       net->params[l->param[0]].value.data, l->dout.data, dx ? dx->data : NULL,
                       net->params[l->param[0]].grad.data, db);
}

static const LayerOps linear_ops = {.kind = "linear", .forward = linear_forward, .backward = linear_backward};

int nb_linear(Net *net, const char *name, int in, int out, bool bias, Init w_init, Init b_init)
{
    int idx = net_add_layer(net, &linear_ops, name, in, NO_INPUT);
    Layer *l = &net->layers[idx];
    int features = l->c * l->h * l->w;
    l->c = out;
    l->h = l->w = 1;
    l->flops = 2.0 * features * out;
    net_add_param(net, idx, "weight", PARAM_WEIGHT, 1, 1, out, features, features, out, w_init);
    if (bias) net_add_param(net, idx, "bias", PARAM_BIAS, 1, 1, 1, out, features, out, b_init);
    return idx;
}
