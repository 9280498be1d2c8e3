/* The loss layer: mean softmax cross-entropy over the batch, with optional label
 * smoothing. Its output holds the class probabilities; the loss and the number of
 * correct predictions go to the net. */
#include "../net/net.h"

static void xent_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    /* net_forward downloads the result once, after the whole forward */
    bk_softmax_xent_forward(net->bk, n, l->c, net_layer_input(net, l, 0)->data, net->labels,
                            net->label_smoothing, l->out.data, bk_buffer_address(net->loss_result));
}

static void xent_backward(Layer *l, Net *net, int n)
{
    Tensor *dx = net_layer_input_grad(net, l, 0);
    real scale = net->loss_scale > 0 ? net->loss_scale : (real)1 / (real)n;
    if (dx)
        bk_softmax_xent_backward(net->bk, n, l->c, l->out.data, net->labels, net->label_smoothing,
                                 scale, dx->data);
}

static const LayerOps xent_ops = {.kind = "softmax_xent", .forward = xent_forward, .backward = xent_backward};

int nb_softmax_xent(Net *net, int in)
{
    int idx = net_add_layer(net, &xent_ops, "loss", in, NO_INPUT);
    Layer *l = &net->layers[idx];
    l->c = l->c * l->h * l->w;
    l->h = l->w = 1;
    net->classes = l->c;
    net->loss_layer = idx;
    return idx;
}
