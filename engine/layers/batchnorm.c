/* Batch normalization: batch statistics in training, running statistics in
 * evaluation; the affine scale/shift is optional (NVCaffe's AlexNet-BN has none). With a ReLU
 * after it (ResNets' conv-BN-ReLU) the two are one layer (nb_batchnorm_relu): one pass over
 * memory forward and none of the ReLU's backward, the same values and gradients. Backward writes
 * the input's gradient over the layer's own where net_plan gives it that memory. */
#include <stdlib.h>

#include "../net/net.h"
#include "../base/util.h"

typedef struct {
    BatchNormShape shape;
    bool affine;
    Tensor mean, invstd;
    BkBuffer *sync_scratch; /* backend memory: 2c + 1 partial sums for synchronized BN */
} BatchNormState;

/* The net's synchronized-BN allreduce, or NULL when BN uses this batch alone. */
static const BnSync *bn_sync(const Net *net, BatchNormState *st, BnSync *out)
{
    if (!net->bn_allreduce) return NULL;
    *out = (BnSync){net->bn_allreduce, net->bn_allreduce_ctx, bk_buffer_address(st->sync_scratch),
                    net->bn_device_sum};
    return out;
}

static void bn_forward(Layer *l, Net *net, int n, bool train)
{
    BatchNormState *st = l->state;
    const real *g = st->affine ? net->params[l->param[0]].value.data : NULL;
    const real *b = st->affine ? net->params[l->param[1]].value.data : NULL;
    real *rm = net->buffers[l->buffer[0]].value.data, *rv = net->buffers[l->buffer[1]].value.data;
    const real *x = net_layer_input(net, l, 0)->data;
    BnSync sync;
    if (train)
        bk_batchnorm_forward_train(net->bk, &st->shape, n, x, g, b, l->out.data, st->mean.data,
                                   st->invstd.data, rm, rv, bn_sync(net, st, &sync));
    else
        bk_batchnorm_forward_eval(net->bk, &st->shape, n, x, g, b, rm, rv, l->out.data);
}

static void bn_backward(Layer *l, Net *net, int n)
{
    BatchNormState *st = l->state;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    if (!dx) {
        fprintf(stderr, "bigbatch: internal error: batch norm directly on the input\n");
        abort();
    }
    const real *g = st->affine ? net->params[l->param[0]].value.data : NULL;
    const real *b = st->affine ? net->params[l->param[1]].value.data : NULL;
    real *dg = st->affine ? net->params[l->param[0]].grad.data : NULL;
    real *db = st->affine ? net->params[l->param[1]].grad.data : NULL;
    BnSync sync;
    bk_batchnorm_backward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data, g, b, st->mean.data,
                          st->invstd.data, l->dout.data, dx->data, !l->fresh_dx[0], dg, db, bn_sync(net, st, &sync));
}

static void bn_plan(Layer *l, Net *net, int batch)
{
    BatchNormState *st = l->state;
    backend_reserve(net->bk, batchnorm_workspace(&st->shape, batch));
}

static void bn_destroy(Layer *l)
{
    BatchNormState *st = l->state;
    tensor_free(&st->mean);
    tensor_free(&st->invstd);
    bk_buffer_free(st->sync_scratch);
    free(st);
}

/* The input's gradient may take the layer's own gradient's memory (shares_input_gradients):
 * backward's last pass reads each value of dy, then writes dx's at the same place. */
static const LayerOps bn_ops = {
    .kind = "batchnorm", .plan = bn_plan, .forward = bn_forward, .backward = bn_backward, .destroy = bn_destroy,
    .writes_fresh_gradient = true, .couples_images = true, .shares_input_gradients = true,
};
static const LayerOps bn_relu_ops = {
    .kind = "batchnorm_relu", .plan = bn_plan, .forward = bn_forward, .backward = bn_backward,
    .destroy = bn_destroy, .writes_fresh_gradient = true, .couples_images = true, .shares_input_gradients = true,
};

static int add_batchnorm(Net *net, const char *name, int in, bool affine, double eps, double momentum, bool relu)
{
    int idx = net_add_layer(net, relu ? &bn_relu_ops : &bn_ops, name, in, NO_INPUT);
    Layer *l = &net->layers[idx];
    BatchNormState *st = xcalloc(1, sizeof *st, "batchnorm state");
    st->shape = (BatchNormShape){l->c, l->h * l->w, (real)eps, (real)momentum, relu};
    st->affine = affine;
    tensor_alloc(&st->mean, net->bk, 1, l->c, 1, 1);
    tensor_alloc(&st->invstd, net->bk, 1, l->c, 1, 1);
    st->sync_scratch = bk_buffer_alloc(net->bk, (size_t)(2 * l->c + 1) * sizeof(double));
    l->state = st;
    if (affine) {
        net_add_param(net, idx, "weight", PARAM_BN_SCALE, 1, 1, 1, l->c, 1, 1, (Init){INIT_ONE, 0});
        net_add_param(net, idx, "bias", PARAM_BN_SHIFT, 1, 1, 1, l->c, 1, 1, (Init){INIT_ZERO, 0});
    }
    net_add_buffer(net, idx, "running_mean", l->c, 0);
    net_add_buffer(net, idx, "running_var", l->c, 1);
    return idx;
}

int nb_batchnorm(Net *net, const char *name, int in, bool affine, double eps, double momentum)
{
    return add_batchnorm(net, name, in, affine, eps, momentum, false);
}

int nb_batchnorm_relu(Net *net, const char *name, int in, bool affine, double eps, double momentum)
{
    return add_batchnorm(net, name, in, affine, eps, momentum, true);
}
