/* Rectified linear unit; backward reads the output, so no mask is stored. */
#include "../net/net.h"

static void relu_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    (void)n;
    bk_relu_forward(net->bk, tensor_count(&l->out), net_layer_input(net, l, 0)->data, l->out.data);
}

static void relu_backward(Layer *l, Net *net, int n)
{
    (void)n;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    if (dx) bk_relu_backward(net->bk, tensor_count(&l->out), l->out.data, l->dout.data, dx->data, !l->fresh_dx[0]);
}

static const LayerOps relu_ops = {
    .kind = "relu", .forward = relu_forward, .backward = relu_backward, .reads_own_output = true,
    .may_run_in_place = true, .writes_fresh_gradient = true,
};

int nb_relu(Net *net, int in) { return net_add_layer(net, &relu_ops, NULL, in, NO_INPUT); }
