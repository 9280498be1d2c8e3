/* Max pooling, average pooling and global average pooling (an average pool whose
 * window is the whole plane). Output size uses floor, as PyTorch's default. */
#include <assert.h>
#include <stdlib.h>

#include "../net/net.h"
#include "../base/util.h"

typedef struct {
    PoolShape shape;
    BkBuffer *argmax; /* max pooling only: one int32 per output element, backend memory */
} PoolState;

static void pool_init_shape(Layer *l, PoolState *st, int k, int stride, int pad)
{
    PoolShape *s = &st->shape;
    s->c = l->c;
    s->in_h = l->h;
    s->in_w = l->w;
    s->k = k;
    s->stride = stride;
    s->pad = pad;
    s->out_h = (l->h + 2 * pad - k) / stride + 1;
    s->out_w = (l->w + 2 * pad - k) / stride + 1;
    l->h = s->out_h;
    l->w = s->out_w;
}

static void maxpool_plan(Layer *l, Net *net, int batch)
{
    PoolState *st = l->state;
    bk_buffer_free(st->argmax);
    st->argmax = bk_buffer_alloc(net->bk, (size_t)batch * l->c * l->h * l->w * sizeof(int32_t));
}

static void maxpool_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    PoolState *st = l->state;
    bk_maxpool_forward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data, l->out.data,
                       bk_buffer_address(st->argmax));
}

static void maxpool_backward(Layer *l, Net *net, int n)
{
    PoolState *st = l->state;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    if (dx)
        bk_maxpool_backward(net->bk, &st->shape, n, bk_buffer_address(st->argmax), l->dout.data, dx->data,
                            !l->fresh_dx[0]);
}

static void avgpool_forward(Layer *l, Net *net, int n, bool train)
{
    (void)train;
    PoolState *st = l->state;
    bk_avgpool_forward(net->bk, &st->shape, n, net_layer_input(net, l, 0)->data, l->out.data);
}

static void avgpool_backward(Layer *l, Net *net, int n)
{
    PoolState *st = l->state;
    Tensor *dx = net_layer_input_grad(net, l, 0);
    if (dx) bk_avgpool_backward(net->bk, &st->shape, n, l->dout.data, dx->data);
}

static void pool_destroy(Layer *l)
{
    PoolState *st = l->state;
    bk_buffer_free(st->argmax);
    free(st);
}

static const LayerOps maxpool_ops = {
    .kind = "maxpool", .plan = maxpool_plan, .forward = maxpool_forward, .backward = maxpool_backward,
    .destroy = pool_destroy, .writes_fresh_gradient = true,
};
static const LayerOps avgpool_ops = {
    .kind = "avgpool", .forward = avgpool_forward, .backward = avgpool_backward, .destroy = pool_destroy,
};

static int pool_add(Net *net, const LayerOps *ops, int in, int k, int stride, int pad)
{
    /* pad < k keeps every window at least one input wide (the kernels rely on it) */
    assert(pad >= 0 && pad < k && stride > 0);
    int idx = net_add_layer(net, ops, NULL, in, NO_INPUT);
    Layer *l = &net->layers[idx];
    PoolState *st = xcalloc(1, sizeof *st, "pool state");
    pool_init_shape(l, st, k, stride, pad);
    l->state = st;
    return idx;
}

int nb_maxpool(Net *net, int in, int k, int stride, int pad)
{
    return pool_add(net, &maxpool_ops, in, k, stride, pad);
}

int nb_relu_maxpool(Net *net, int in, int k, int stride, int pad)
{
    return nb_relu(net, nb_maxpool(net, in, k, stride, pad));
}

int nb_avgpool(Net *net, int in, int k, int stride, int pad)
{
    return pool_add(net, &avgpool_ops, in, k, stride, pad);
}

int nb_global_avgpool(Net *net, int in)
{
    int h = in == NET_INPUT ? net->in_h : net->layers[in].h;
    int w = in == NET_INPUT ? net->in_w : net->layers[in].w;
    if (h != w) {
        fprintf(stderr, "bigbatch: internal error: global pooling of a %dx%d plane\n", h, w);
        abort();
    }
    return pool_add(net, &avgpool_ops, in, h, 1, 0);
}
