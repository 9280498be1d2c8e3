/* Net construction, memory planning and the forward/backward sweeps. */
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/rng.h"
#include "../base/util.h"

const char *param_kind_name(ParamKind k)
{
    switch (k) {
    case PARAM_WEIGHT: return "weight";
    case PARAM_BIAS: return "bias";
    case PARAM_BN_SCALE: return "bn-scale";
    case PARAM_BN_SHIFT: return "bn-shift";
    }
    return "?";
}

Net *net_create(const char *model, Backend *bk, int in_c, int in_h, int in_w)
{
    Net *net = xcalloc(1, sizeof *net, "net");
    snprintf(net->model, sizeof net->model, "%s", model);
    net->bk = bk;
    net->in_c = in_c;
    net->in_h = in_h;
    net->in_w = in_w;
    net->loss_layer = -1;
    net->dropout_seed = 1;
    net->loss_result = bk_buffer_alloc(bk, 2 * sizeof(double));
    return net;
}

void net_destroy(Net *net)
{
    if (!net) return;
    for (int i = 0; i < net->n_layers; i++) {
        Layer *l = &net->layers[i];
        if (l->ops->destroy) l->ops->destroy(l);
        tensor_free(&l->out);
    }
    tensor_free(&net->dout_block);
    free(net->dout_birth);
    for (int i = 0; i < net->n_buffers; i++) tensor_free(&net->buffers[i].value);
    tensor_free(&net->param_block);
    tensor_free(&net->grad_block);
    tensor_free(&net->input);
    tensor_free(&net->input_grad);
    bk_buffer_free(net->labels_buf);
    bk_buffer_free(net->loss_result);
    free(net->layers);
    free(net->params);
    free(net->buffers);
    free(net);
}

int net_add_layer(Net *net, const LayerOps *ops, const char *name, int in0, int in1)
{
    if (net->n_layers == net->cap_layers) {
        net->cap_layers = net->cap_layers ? 2 * net->cap_layers : 32;
        net->layers = xrealloc(net->layers, sizeof *net->layers * net->cap_layers, "layers");
    }
    int idx = net->n_layers++;
    Layer *l = &net->layers[idx];
    memset(l, 0, sizeof *l);
    l->ops = ops;
    if (name && *name)
        snprintf(l->name, sizeof l->name, "%s", name);
    else
        snprintf(l->name, sizeof l->name, "%s%d", ops->kind, idx);
    l->in[0] = in0;
    l->in[1] = in1;
    l->n_in = in1 == NO_INPUT ? 1 : 2;
    /* Output shape defaults to the first input's; layers that change it overwrite. */
    if (in0 == NET_INPUT) {
        l->c = net->in_c;
        l->h = net->in_h;
        l->w = net->in_w;
    } else {
        l->c = net->layers[in0].c;
        l->h = net->layers[in0].h;
        l->w = net->layers[in0].w;
    }
    return idx;
}

int net_add_param(Net *net, int layer, const char *suffix, ParamKind kind, int n, int c, int h,
                  int w, int fan_in, int fan_out, Init init)
{
    if (net->param_block.buffer) {
        fprintf(stderr, "bigbatch: internal error: parameter added after net_finalize\n");
        abort();
    }
    if (net->n_params == net->cap_params) {
        net->cap_params = net->cap_params ? 2 * net->cap_params : 32;
        net->params = xrealloc(net->params, sizeof *net->params * net->cap_params, "params");
    }
    int idx = net->n_params++;
    Param *p = &net->params[idx];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s.%s", net->layers[layer].name, suffix);
    p->kind = kind;
    p->layer = layer;
    p->n = n;
    p->c = c;
    p->h = h;
    p->w = w;
    p->fan_in = fan_in;
    p->fan_out = fan_out;
    p->init = init;
    Layer *l = &net->layers[layer];
    l->param[l->n_param++] = idx;
    return idx;
}

int net_add_buffer(Net *net, int layer, const char *suffix, int count, real fill)
{
    if (net->n_buffers == net->cap_buffers) {
        net->cap_buffers = net->cap_buffers ? 2 * net->cap_buffers : 16;
        net->buffers = xrealloc(net->buffers, sizeof *net->buffers * net->cap_buffers, "buffers");
    }
    int idx = net->n_buffers++;
    Buffer *b = &net->buffers[idx];
    snprintf(b->name, sizeof b->name, "%s.%s", net->layers[layer].name, suffix);
    tensor_alloc(&b->value, net->bk, 1, count, 1, 1);
    bk_fill(net->bk, (size_t)count, fill, b->value.data);
    Layer *l = &net->layers[layer];
    l->buffer[l->n_buffer++] = idx;
    return idx;
}

void net_finalize(Net *net)
{
    size_t total = 0;
    for (int i = 0; i < net->n_params; i++) {
        Param *p = &net->params[i];
        total += (size_t)p->n * p->c * p->h * p->w;
    }
    net->n_weights = total;
    tensor_alloc(&net->param_block, net->bk, 1, 1, 1, (int)total);
    tensor_alloc(&net->grad_block, net->bk, 1, 1, 1, (int)total);
    size_t off = 0;
    for (int i = 0; i < net->n_params; i++) {
        Param *p = &net->params[i];
        p->value = tensor_view(&net->param_block, off, p->n, p->c, p->h, p->w);
        p->grad = tensor_view(&net->grad_block, off, p->n, p->c, p->h, p->w);
        off += tensor_count(&p->value);
    }
}

/* Whether layer i's output gradient lives in its last consumer's own
 * (LayerOps.shares_input_gradients), which writes i's gradient first (so it holds nothing else
 * yet): i is that layer's only input (whose own gradient is not shared further), its first, or
 * its second (not both) where the first shares too and i's other consumers all come before
 * the first input's layer, so that their backwards add into the shared memory only after that
 * layer's backward has read it (a residual block's input, read by its first convolution and
 * the add). */
static bool shares_consumer_gradient(const Net *net, int i)
{
    const int b = net->dout_birth[i];
    const Layer *l = &net->layers[b];
    if (b == i || !l->ops->shares_input_gradients || !l->ops->writes_fresh_gradient) return false;
    if (l->n_in == 2 && l->in[0] == l->in[1]) return false;
    /* a one-input layer (batch norm) writes i's gradient over its own: only where its own is its
     * alone, not also the memory of its consumer's other inputs, which may still be read (a
     * residual add's shortcut, or the block's input) */
    if (l->n_in == 1) return l->in[0] == i && !shares_consumer_gradient(net, b);
    if (l->in[0] == i) return true;
    if (l->n_in != 2 || l->in[1] != i || !shares_consumer_gradient(net, l->in[0])) return false;
    for (int j = l->in[0]; j < b; j++)
        for (int k = 0; k < net->layers[j].n_in; k++)
            if (net->layers[j].in[k] == i) return false;
    return true;
}

/* Where each layer's output gradient lives in dout_block, for batch_cap images: gradients are
 * given slots in backward order, a slot reused once the gradient in it has been consumed (its
 * layer's backward has run), the best-fitting free slot first; a slot grows to the largest
 * gradient it holds. Returns the block's size in values; offsets[i] receives layer i's. */
static size_t plan_douts(Net *net, int batch_cap, size_t *offsets)
{
    const int L = net->n_layers;
    int *slot_of = xmalloc(sizeof *slot_of * (size_t)(L ? L : 1), "gradient plan");
    size_t *slot_size = xcalloc((size_t)(L ? L : 1), sizeof *slot_size, "gradient plan");
    int *slot_free_after = xmalloc(sizeof *slot_free_after * (size_t)(L ? L : 1), "gradient plan");
    int slots = 0;
    /* births in backward order: layer b's backward is the first to touch the douts born at b */
    for (int b = L - 1; b >= 0; b--) {
        for (int i = b; i >= 0; i--) {
            if (net->dout_birth[i] != b) continue;
            size_t need = (size_t)batch_cap * (size_t)net->layers[i].c * net->layers[i].h * net->layers[i].w;
            int best = -1;
            for (int s = 0; s < slots; s++) {
                if (slot_free_after[s] < b) continue; /* still live: freed at a backward not yet run */
                bool fits = slot_size[s] >= need, best_fits = best >= 0 && slot_size[best] >= need;
                if (best < 0 || (fits && (!best_fits || slot_size[s] < slot_size[best])) ||
                    (!fits && !best_fits && slot_size[s] > slot_size[best]))
                    best = s;
            }
            if (shares_consumer_gradient(net, i)) best = slot_of[b]; /* layer b's own, in use since */
            if (best < 0) best = slots++;
            if (slot_size[best] < need) slot_size[best] = need;
            slot_free_after[best] = i - 1; /* free for douts born at a backward after layer i's */
            slot_of[i] = best;
        }
    }
    size_t total = 0, *slot_offset = xmalloc(sizeof *slot_offset * (size_t)(slots ? slots : 1), "gradient plan");
    for (int s = 0; s < slots; s++) {
        slot_offset[s] = total;
        total += (slot_size[s] + 15) & ~(size_t)15; /* 64-byte starts for the kernels */
    }
    for (int i = 0; i < L; i++) offsets[i] = slot_offset[slot_of[i]];
    free(slot_offset);
    free(slot_of);
    free(slot_size);
    free(slot_free_after);
    return total;
}

/* A layer that may run in place does, over its first input's output, when that input is a
 * layer whose output only it reads and whose own backward does not read it (the input batch is
 * the caller's, never written over; an add of a tensor to itself is not in place). */
static bool runs_in_place(const Net *net, int i)
{
    const Layer *l = &net->layers[i];
    const int in = l->in[0];
    if (!l->ops->may_run_in_place || in < 0 || net->layers[in].ops->reads_own_output) return false;
    if (l->n_in == 2 && l->in[1] == in) return false;
    for (int j = in + 1; j < net->n_layers; j++)
        for (int k = 0; k < net->layers[j].n_in; k++)
            if (j != i && net->layers[j].in[k] == in) return false;
    return true;
}

/* Layer i's dout is first written by the backward of its last consumer (its own when it has
 * none: the loss). */
static void find_dout_births(Net *net)
{
    free(net->dout_birth);
    net->dout_birth = xmalloc(sizeof *net->dout_birth * (size_t)(net->n_layers ? net->n_layers : 1), "gradient plan");
    for (int i = 0; i < net->n_layers; i++) net->dout_birth[i] = i;
    for (int j = 0; j < net->n_layers; j++)
        for (int k = 0; k < net->layers[j].n_in; k++) {
            int in = net->layers[j].in[k];
            if (in >= 0 && net->dout_birth[in] < j) net->dout_birth[in] = j;
        }
}

void net_plan(Net *net, int batch_cap)
{
    if (batch_cap <= net->batch_cap) return;
    tensor_free(&net->input);
    bk_buffer_free(net->labels_buf);
    tensor_alloc(&net->input, net->bk, batch_cap, net->in_c, net->in_h, net->in_w);
    tensor_free(&net->input_grad);
    if (net->want_input_grad) tensor_alloc(&net->input_grad, net->bk, batch_cap, net->in_c, net->in_h, net->in_w);
    net->labels_buf = bk_buffer_alloc(net->bk, (size_t)batch_cap * sizeof *net->labels);
    net->labels = bk_buffer_address(net->labels_buf);
    find_dout_births(net);
    size_t *offsets = xmalloc(sizeof *offsets * (size_t)(net->n_layers ? net->n_layers : 1), "gradient plan");
    tensor_free(&net->dout_block);
    tensor_alloc(&net->dout_block, net->bk, 1, 1, 1, (int)plan_douts(net, batch_cap, offsets));
    for (int i = 0; i < net->n_layers; i++) {
        Layer *l = &net->layers[i];
        tensor_free(&l->out);
        if (runs_in_place(net, i))
            l->out = tensor_view(&net->layers[l->in[0]].out, 0, batch_cap, l->c, l->h, l->w);
        else
            tensor_alloc(&l->out, net->bk, batch_cap, l->c, l->h, l->w);
        l->dout = tensor_view(&net->dout_block, offsets[i], batch_cap, l->c, l->h, l->w);
        if (l->ops->plan) l->ops->plan(l, net, batch_cap);
    }
    free(offsets);
    net->batch_cap = batch_cap;
}

static double init_fan_bound(const Param *p) { return p->fan_in > 0 ? 1.0 / sqrt((double)p->fan_in) : 0; }

/* Drawn on the host from one stream per parameter, then uploaded. */
static void init_param(const Param *p, uint64_t seed, int i, real *v)
{
    Rng rng;
    rng_seed(&rng, seed, 1000 + (uint64_t)i); /* one stream per parameter */
    size_t count = tensor_count(&p->value);
    for (size_t j = 0; j < count; j++) {
        switch (p->init.kind) {
        case INIT_ZERO: v[j] = 0; break;
        case INIT_ONE: v[j] = 1; break;
        case INIT_CONSTANT: v[j] = (real)p->init.a; break;
        case INIT_GAUSSIAN: v[j] = (real)(p->init.a * rng_normal(&rng)); break;
        case INIT_KAIMING_NORMAL: v[j] = (real)(sqrt(2.0 / (double)p->fan_out) * rng_normal(&rng)); break;
        case INIT_HE_GAUSSIAN: v[j] = (real)(sqrt(2.0 / (double)p->fan_in) * rng_normal(&rng)); break;
        case INIT_TORCH_DEFAULT: v[j] = (real)((2 * rng_uniform(&rng) - 1) * init_fan_bound(p)); break;
        }
    }
}

void net_init_params(Net *net, uint64_t seed)
{
    size_t largest = 1;
    for (int i = 0; i < net->n_params; i++)
        if (tensor_count(&net->params[i].value) > largest) largest = tensor_count(&net->params[i].value);
    real *host = xmalloc(largest * sizeof *host, "parameter initialisation");
    for (int i = 0; i < net->n_params; i++) {
        init_param(&net->params[i], seed, i, host);
        tensor_upload(&net->params[i].value, host);
    }
    free(host);
}

void net_upload_batch(Net *net, int n, const real *images, const int32_t *labels)
{
    if (n > net->batch_cap) {
        fprintf(stderr, "bigbatch: internal error: batch %d above the planned %d\n", n, net->batch_cap);
        abort();
    }
    bk_upload(net->bk, net->input.data, images, (size_t)n * tensor_per_item(&net->input) * sizeof(real));
    bk_upload(net->bk, net->labels, labels, (size_t)n * sizeof *labels);
}

void net_upload_random_batch(Net *net, int n, uint64_t seed, uint64_t stream)
{
    Rng rng;
    rng_seed(&rng, seed, stream);
    size_t count = (size_t)n * tensor_per_item(&net->input);
    real *images = xmalloc((count ? count : 1) * sizeof *images, "synthetic batch");
    int32_t *labels = xmalloc((size_t)(n ? n : 1) * sizeof *labels, "synthetic batch");
    for (size_t i = 0; i < count; i++) images[i] = (real)rng_normal(&rng);
    for (int i = 0; i < n; i++) labels[i] = (int32_t)rng_below(&rng, (uint32_t)net->classes);
    net_upload_batch(net, n, images, labels);
    free(images);
    free(labels);
}

Tensor *net_layer_input(Net *net, Layer *l, int k)
{
    return l->in[k] == NET_INPUT ? &net->input : &net->layers[l->in[k]].out;
}

Tensor *net_layer_input_grad(Net *net, Layer *l, int k)
{
    if (l->in[k] == NET_INPUT) return net->want_input_grad ? &net->input_grad : NULL;
    return &net->layers[l->in[k]].dout;
}

/* A layer's time when profiling: a GPU runs operations asynchronously, so the clock is read
 * only after what was issued has finished (the CPU backend returns at once). */
static double profile_clock(Net *net)
{
    bk_synchronize(net->bk);
    return now_seconds();
}

double net_forward(Net *net, int n, bool train)
{
    if (n > net->batch_cap) {
        fprintf(stderr, "bigbatch: internal error: batch %d above the planned %d\n", n, net->batch_cap);
        abort();
    }
    tensor_set_batch(&net->input, n);
    for (int i = 0; i < net->n_layers; i++) {
        Layer *l = &net->layers[i];
        tensor_set_batch(&l->out, n);
        tensor_set_batch(&l->dout, n);
        double t = net->profile ? profile_clock(net) : 0;
        l->ops->forward(l, net, n, train);
        if (net->profile) l->fwd_seconds += profile_clock(net) - t;
    }
    if (net->loss_layer >= 0 && train && net->defer_loss) return NAN;
    if (net->loss_layer >= 0) {
        double result[2];
        bk_download(net->bk, result, bk_buffer_address(net->loss_result), sizeof result);
        net->loss = result[0];
        net->correct = (int)result[1];
    }
    return net->loss;
}

/* The douts layer i is the first to write (its inputs' whose last consumer it is, and its own
 * when it has no consumer) start from zero, their memory having held other gradients; or,
 * where the layer writes a fresh gradient itself, are marked fresh_dx instead (an input taken
 * twice only at its first place). */
void net_begin_layer_backward(Net *net, int i)
{
    Layer *l = &net->layers[i];
    if (net->dout_birth[i] == i) tensor_zero(&net->layers[i].dout);
    for (int k = 0; k < l->n_in; k++) {
        int in = l->in[k];
        l->fresh_dx[k] = false;
        if (in < 0 || net->dout_birth[in] != i || (k == 1 && l->in[0] == in)) continue;
        if (l->ops->writes_fresh_gradient)
            l->fresh_dx[k] = true;
        else
            tensor_zero(&net->layers[in].dout);
    }
}

void net_backward(Net *net, int n)
{
    if (net->want_input_grad) {
        tensor_set_batch(&net->input_grad, n);
        tensor_zero(&net->input_grad);
    }
    for (int i = net->n_layers - 1; i >= 0; i--) {
        Layer *l = &net->layers[i];
        double t = net->profile ? profile_clock(net) : 0;
        net_begin_layer_backward(net, i);
        l->ops->backward(l, net, n);
        if (net->profile) l->bwd_seconds += profile_clock(net) - t;
        if (net->after_layer_backward) net->after_layer_backward(net, i, net->after_layer_ctx);
    }
}

void net_zero_grad(Net *net) { tensor_zero(&net->grad_block); }

double net_flops_per_image(const Net *net)
{
    double f = 0;
    for (int i = 0; i < net->n_layers; i++) f += net->layers[i].flops;
    return f;
}

int net_find_param(const Net *net, const char *name)
{
    for (int i = 0; i < net->n_params; i++)
        if (strcmp(net->params[i].name, name) == 0) return i;
    return -1;
}

bool net_has_layer(const Net *net, const char *kind)
{
    for (int i = 0; i < net->n_layers; i++)
        if (strcmp(net->layers[i].ops->kind, kind) == 0) return true;
    return false;
}

int net_find_buffer(const Net *net, const char *name)
{
    for (int i = 0; i < net->n_buffers; i++)
        if (strcmp(net->buffers[i].name, name) == 0) return i;
    return -1;
}
