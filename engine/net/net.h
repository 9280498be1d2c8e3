/* A network is an ordered list of layers (a DAG in topological order: each layer
 * names its inputs by index, so residual blocks need no special structure), plus
 * the parameters and buffers the layers registered. Models build nets through the
 * nb_* builder calls; net_plan then allocates every activation for a batch size
 * once, so forward and backward never allocate. */
#ifndef BB_NET_H
#define BB_NET_H
#include <stdbool.h>
#include <stdint.h>

#include "../backend.h"
#include "param_kind.h"
#include "../tensor.h"

#define NET_INPUT (-1) /* the layer reads the net's input batch */
#define NO_INPUT (-2)  /* unused second input */

typedef enum {
    INIT_ZERO,
    INIT_ONE,
    INIT_GAUSSIAN,        /* N(0, a^2): Caffe AlexNet's "gaussian" filler */
    INIT_KAIMING_NORMAL,  /* N(0, 2/fan_out): torchvision ResNet (mode fan_out, relu) */
    INIT_HE_GAUSSIAN,     /* N(0, 2/fan_in): Caffe's "msra" filler */
    INIT_TORCH_DEFAULT,   /* U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's nn.Conv/Linear default */
    INIT_CONSTANT,        /* a */
} InitKind;

typedef struct {
    InitKind kind;
    double a;
} Init;

/* Parameter values and gradients are views into one contiguous block each
 * (net->param_block, net->grad_block), so reductions (MPI) and zeroing touch one
 * buffer. Names are PyTorch's (conv1.weight, layer1.0.bn1.bias). */
typedef struct {
    char name[96];
    ParamKind kind;
    int layer;          /* owning layer */
    int n, c, h, w;     /* shape */
    int fan_in, fan_out;
    Init init;
    Tensor value, grad; /* views */
} Param;

/* Non-trainable state saved in checkpoints (BN running statistics). Owned. */
typedef struct {
    char name[96];
    Tensor value;
} Buffer;

typedef struct Layer Layer;
typedef struct Net Net;

typedef struct {
    const char *kind;
    /* Allocate layer-private tensors for up to `batch` images. */
    void (*plan)(Layer *l, Net *net, int batch);
    void (*forward)(Layer *l, Net *net, int n, bool train);
    /* Adds into the inputs' gradients and the parameters' gradients (or, with
     * writes_fresh_gradient, writes an input's gradient that Layer.fresh_dx marks). */
    void (*backward)(Layer *l, Net *net, int n);
    void (*destroy)(Layer *l);
    /* backward reads the layer's own output (ReLU, LRN): nothing may write over it */
    bool reads_own_output;
    /* elementwise, and backward needs at most the output: it may write over its first input
     * where nothing else reads that (ReLU after BN, after a residual add or a convolution; the
     * residual add over the BN before it) */
    bool may_run_in_place;
    /* backward writes, rather than adds to, an input's gradient that no layer has written yet
     * (Layer.fresh_dx), so the net need not zero it first: one write and one read fewer a
     * value (ReLU, the residual add, batch norm) */
    bool writes_fresh_gradient;
    /* training ties the batch's images together (batch norm's statistics): the net cannot
     * train as per-thread replicas, each over its own images (engine/dist/replicas.h) */
    bool couples_images;
    /* backward's gradient for each input is the layer's own output gradient, or (with a ReLU)
     * that masked, elementwise, or (batch norm) computed value by value from it, each value
     * read before its place is written: where the layer writes an input's gradient first, net_plan
     * gives it the layer's own gradient's memory (the first input's always, the second's where
     * that is safe: net.c), and backward finds it there (the residual add's copies) or works
     * in place */
    bool shares_input_gradients;
} LayerOps;

struct Layer {
    const LayerOps *ops;
    char name[64];
    int in[2], n_in;     /* indices of input layers, NET_INPUT for the net input */
    int c, h, w;         /* output shape per image */
    Tensor out, dout;
    /* set by net_backward before this layer's backward, for layers with writes_fresh_gradient:
     * input k's gradient holds nothing yet (this layer writes it first), and was not zeroed */
    bool fresh_dx[2];
    int param[4], n_param;
    int buffer[3], n_buffer;
    double flops;        /* forward FLOPs per image, multiply-add = 2 */
    double fwd_seconds, bwd_seconds; /* accumulated when net->profile is set */
    void *state;         /* layer-specific, freed by ops->destroy */
};

struct Net {
    char model[64];
    Backend *bk;
    int in_c, in_h, in_w, classes;
    Layer *layers;
    int n_layers, cap_layers;
    Param *params;
    int n_params, cap_params;
    Buffer *buffers;
    int n_buffers, cap_buffers;
    Tensor param_block, grad_block; /* own the parameter and gradient memory */
    size_t n_weights;               /* total parameter count */
    /* The layers' output gradients (Layer.dout) are views into one block, planned by lifetime:
     * layer i's lives in backward from its last consumer's backward to its own, and gradients
     * whose lives do not overlap share memory (net_plan). */
    Tensor dout_block;
    int *dout_birth;                /* per layer: the layer whose backward first writes its dout */
    Tensor input;                   /* the batch, NCHW (filled by net_upload_batch) */
    bool want_input_grad;           /* set before net_plan: gradient checks need d loss/d input */
    Tensor input_grad;
    int32_t *labels;                /* backend memory, batch_cap labels */
    BkBuffer *labels_buf;
    BkBuffer *loss_result;          /* backend memory: the loss layer's mean loss and hits */
    /* Training forwards leave the loss in loss_result unread (net->loss and net->correct stay
     * as they were): a step copies each pass's into its own block and reads them all at once
     * (engine/train/step.h), so the pass never waits for the device. */
    bool defer_loss;
    int batch_cap;
    /* Dropout masks are Philox streams of (seed, step, layer, element); first_image places
     * this forward's images within the step's whole batch (micro-batches, ranks). */
    uint64_t dropout_seed, step, first_image;
    real label_smoothing;
    real loss_scale;                /* gradient scale of the mean loss; 0 = 1/n */
    double loss;                    /* of the last forward */
    int correct;                    /* top-1 hits of the last forward */
    int loss_layer;
    bool profile;                   /* time every layer (benchmarks) */
    /* Called after each layer's backward when set: data parallelism starts reducing the
     * gradients that are final while earlier layers still compute. */
    void (*after_layer_backward)(Net *net, int layer, void *ctx);
    void *after_layer_ctx;
    /* Synchronized BN: when set, BN layers in training complete their statistics with it
     * (an allreduce over the ranks). */
    void (*bn_allreduce)(void *ctx, double *values, int n);
    void *bn_allreduce_ctx;
    BkCollective *bn_device_sum; /* the job's device collective, which a backend sums with instead */
};

Net *net_create(const char *model, Backend *bk, int in_c, int in_h, int in_w);
void net_destroy(Net *net);

/* Builder: each returns the new layer's index. Names follow PyTorch modules. */
int nb_conv(Net *net, const char *name, int in, int out_c, int k, int stride, int pad, int groups,
            bool bias, Init w_init, Init b_init);
int nb_linear(Net *net, const char *name, int in, int out, bool bias, Init w_init, Init b_init);
int nb_relu(Net *net, int in);
int nb_maxpool(Net *net, int in, int k, int stride, int pad);
/* ReLU then max pooling, built as pooling then ReLU: the two commute exactly (the largest of a
 * window's ReLUs is the ReLU of its largest value, the same element in a tie), values and
 * gradients alike, and the ReLU then passes over the pooled values only: a quarter of them
 * for 2x2 windows of stride 2, 1/4.5 for AlexNet's 3x3 of stride 2. Returns the ReLU's index. */
int nb_relu_maxpool(Net *net, int in, int k, int stride, int pad);
int nb_avgpool(Net *net, int in, int k, int stride, int pad);
int nb_global_avgpool(Net *net, int in);
int nb_batchnorm(Net *net, const char *name, int in, bool affine, double eps, double momentum);
/* Batch norm then ReLU as one layer (BatchNormShape.relu): the values and gradients of the two,
 * in fewer passes over memory. Returns the layer's index, as nb_relu(nb_batchnorm(...)) would
 * the ReLU's. */
int nb_batchnorm_relu(Net *net, const char *name, int in, bool affine, double eps, double momentum);
int nb_lrn(Net *net, const char *name, int in, int size, double alpha, double beta, double k);
int nb_dropout(Net *net, int in, double p);
int nb_add(Net *net, int a, int b);
/* The add and the ReLU after it as one layer: max(0, a + b). */
int nb_add_relu(Net *net, int a, int b);
int nb_softmax_xent(Net *net, int in);

/* After building: allocate parameter memory (call once), and activations for a
 * batch capacity (may be called again with a larger capacity). */
void net_finalize(Net *net);
void net_plan(Net *net, int batch_cap);
/* Fills every parameter from its Init with streams derived from seed. */
void net_init_params(Net *net, uint64_t seed);

/* n images already normalized on the host (NCHW) and their labels, uploaded (tests, synthetic
 * batches; training's batches come through the batch loader, engine/data/loader.h). */
void net_upload_batch(Net *net, int n, const real *images, const int32_t *labels);
/* A synthetic batch (normal inputs, uniform labels) from the stream (seed, stream). */
void net_upload_random_batch(Net *net, int n, uint64_t seed, uint64_t stream);
/* Forward over n images in net->input with net->labels; returns the mean loss (downloaded
 * with net->correct), or with defer_loss in training NAN (nothing downloaded). */
double net_forward(Net *net, int n, bool train);
/* Backward of the last forward; ADDS into net->grad_block (zero it per step with
 * net_zero_grad; not zeroing accumulates micro-batches). */
void net_backward(Net *net, int n);
/* What net_backward does before layer i's backward: zeroes the gradients that layer writes
 * first, or marks them fresh_dx where it writes them itself (tests/test_backend_ops.c runs
 * layers one by one). */
void net_begin_layer_backward(Net *net, int i);
void net_zero_grad(Net *net);

double net_flops_per_image(const Net *net);
int net_find_param(const Net *net, const char *name);
/* Whether a layer of this kind ("dropout", LayerOps.kind) is in the net. */
bool net_has_layer(const Net *net, const char *kind);
int net_find_buffer(const Net *net, const char *name);
/* For layer implementations. */
Tensor *net_layer_input(Net *net, Layer *l, int k);
Tensor *net_layer_input_grad(Net *net, Layer *l, int k); /* NULL for the net input */
int net_add_param(Net *net, int layer, const char *suffix, ParamKind kind, int n, int c, int h,
                  int w, int fan_in, int fan_out, Init init);
int net_add_buffer(Net *net, int layer, const char *suffix, int count, real fill);
int net_add_layer(Net *net, const LayerOps *ops, const char *name, int in0, int in1);

#endif
