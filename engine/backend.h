/* The arithmetic boundary. Layers, models, optimizers and the training loop call
 * only these operations on tensors; the CPU implementation (engine/cpu/, OpenMP over
 * the batch + single-threaded OpenBLAS sgemm inside it: threads at one level only)
 * is the reference, and a CUDA/cuDNN backend can implement the same list later.
 *
 * Conventions: every backward operation ADDS into its input gradient (dx) and into
 * parameter gradients (dw, db), so that a tensor feeding two consumers (the residual
 * shortcut) and micro-batch accumulation need no special cases. Forward operations
 * overwrite their output. `n` is the number of images actually present. */
#ifndef BB_BACKEND_H
#define BB_BACKEND_H
#include <stddef.h>
#include <stdint.h>

#include "real.h"
#include "rng.h"
#include "tensor.h"

typedef struct Backend Backend;

Backend *backend_create(int threads);
void backend_destroy(Backend *bk);
int backend_threads(const Backend *bk);
/* Workspace is planned once, before training: each operation's need is declared
 * here at build time so the step itself never allocates. Sizes are in elements,
 * per thread. */
void backend_reserve(Backend *bk, size_t elems_per_thread);
/* Single-threaded sgemm rate check and conv FLOP accounting live in the benchmark. */

/* ---- convolution (im2col + gemm on the CPU) ---- */
typedef struct {
    int in_c, in_h, in_w;
    int out_c, out_h, out_w;
    int k_h, k_w, stride, pad, groups;
} ConvShape;
size_t conv_workspace_elems(const ConvShape *s, size_t weight_elems);
void bk_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                       const real *b, real *y);
/* dx may be NULL (first layer); db may be NULL (no bias). */
void bk_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                        const real *dy, real *dx, real *dw, real *db);

/* ---- fully connected: y[n,out] = x[n,in] W[out,in]^T + b ---- */
void bk_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                       const real *b, real *y);
void bk_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                        const real *dy, real *dx, real *dw, real *db);

/* ---- elementwise ---- */
void bk_relu_forward(Backend *bk, size_t count, const real *x, real *y);
void bk_relu_backward(Backend *bk, size_t count, const real *y, const real *dy, real *dx);
void bk_add_forward(Backend *bk, size_t count, const real *a, const real *b, real *y);
void bk_accumulate(Backend *bk, size_t count, const real *dy, real *dx); /* dx += dy */
/* Inverted dropout: mask holds 0 or 1/(1-p). The mask is drawn from `rng`. */
void bk_dropout_forward(Backend *bk, size_t count, real p, Rng *rng, real *mask, const real *x,
                        real *y);
void bk_dropout_backward(Backend *bk, size_t count, const real *mask, const real *dy, real *dx);

/* ---- pooling ---- */
typedef struct {
    int c, in_h, in_w, out_h, out_w, k, stride, pad;
} PoolShape;
/* argmax: one int32 per output element, the flat input index within its plane. */
void bk_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                        int32_t *argmax);
void bk_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                         const real *dy, real *dx);
/* Average pooling counts the padding in the divisor (PyTorch's default). */
void bk_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y);
void bk_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx);

/* ---- normalization ---- */
typedef struct {
    int c, hw;
    real eps, momentum; /* running = (1-momentum)*running + momentum*batch (PyTorch) */
} BatchNormShape;
/* Training: batch statistics; saves mean and 1/sqrt(var+eps) for backward and
 * updates the running statistics (unbiased variance, as PyTorch and Caffe).
 * gamma/beta may be NULL (no affine: NVCaffe's AlexNet-BN). Backward recomputes
 * the normalized input from x and the saved statistics, as PyTorch does, instead
 * of keeping another activation-sized tensor. */
/* Synchronized BN (--sync-bn): the statistics span the images of every rank. The backend
 * hands its per-channel partial sums to `sum` (an allreduce), which replaces them with the
 * sums over all ranks; NULL: this batch alone. */
typedef struct {
    void (*sum)(void *ctx, double *values, int n);
    void *ctx;
    double *scratch; /* 2*c + 1 doubles */
} BnSync;
void bk_batchnorm_forward_train(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                const real *gamma, const real *beta, real *y, real *save_mean,
                                real *save_invstd, real *running_mean, real *running_var,
                                const BnSync *sync);
void bk_batchnorm_forward_eval(Backend *bk, const BatchNormShape *s, int n, const real *x,
                               const real *gamma, const real *beta, const real *running_mean,
                               const real *running_var, real *y);
/* dgamma/dbeta get this rank's share (the gradient allreduce sums them); dx uses the
 * sums over all ranks when sync is given. */
void bk_batchnorm_backward(Backend *bk, const BatchNormShape *s, int n, const real *x,
                           const real *gamma, const real *save_mean, const real *save_invstd,
                           const real *dy, real *dx, real *dgamma, real *dbeta, const BnSync *sync);

/* Local response normalization across channels (Caffe ACROSS_CHANNELS, PyTorch
 * LocalResponseNorm): y = x / (k + alpha/size * sum_{window} x^2)^beta. `scale`
 * keeps the denominator base for backward. */
typedef struct {
    int c, hw, size;
    real alpha, beta, k;
} LrnShape;
/* Per-thread workspace that bk_lrn_backward needs (reserve it before the first step). */
size_t lrn_workspace_elems(const LrnShape *s);
void bk_lrn_forward(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale);
void bk_lrn_backward(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                     const real *scale, const real *dy, real *dx);

/* ---- loss: mean softmax cross-entropy with optional label smoothing ----
 * Returns the mean loss; writes probabilities and counts correct top-1 predictions.
 * Targets are (1-smoothing)*onehot + smoothing/classes, as PyTorch. */
double bk_softmax_xent_forward(Backend *bk, int n, int classes, const real *logits,
                               const int32_t *labels, real smoothing, real *probs,
                               int *correct);
/* dlogits += (probs - target) * scale; scale is 1/n for a mean over the batch. */
void bk_softmax_xent_backward(Backend *bk, int n, int classes, const real *probs,
                              const int32_t *labels, real smoothing, real scale, real *dlogits);

/* ---- vector operations for optimizers and statistics ---- */
double bk_sum_squares(Backend *bk, size_t count, const real *x);
void bk_copy(Backend *bk, size_t count, const real *x, real *y);
void bk_fill(Backend *bk, size_t count, real value, real *x);
void bk_scale(Backend *bk, size_t count, real alpha, real *x);               /* x *= alpha */
void bk_axpy(Backend *bk, size_t count, real alpha, const real *x, real *y); /* y += a x */

#endif
