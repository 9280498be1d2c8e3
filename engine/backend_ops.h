/* The arithmetic every backend implements, listed once. An entry
 *     OP(return type, name, (parameters), (arguments))
 * becomes the member `name` of BackendOps (backend_impl.h), the dispatch bk_name (backend.c;
 * backend.h declares and documents it, and the compiler holds the two to the same
 * signature), and each implementation's cpu_name / cuda_name (cpu.h, cuda.h), which its
 * table names in this order. A new operation is one line here, one in backend.h, and its
 * code in each backend. Memory, events and collectives are not here: backend.c wraps them. */
#ifndef BB_BACKEND_OPS_H
#define BB_BACKEND_OPS_H
#include "backend.h"

#define BACKEND_OPERATIONS(OP)                                                                              \
    /* layers */                                                                                            \
    OP(void, conv2d_forward,                                                                                \
       (Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b, real *y),      \
       (bk, s, n, x, w, b, y))                                                                              \
    OP(void, conv2d_backward,                                                                               \
       (Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy, real *dx,     \
        bool accumulate, real *dw, real *db),                                                               \
       (bk, s, n, x, w, dy, dx, accumulate, dw, db))                                                        \
    OP(void, linear_forward,                                                                                \
       (Backend *bk, int n, int in, int out, const real *x, const real *w, const real *b, real *y),         \
       (bk, n, in, out, x, w, b, y))                                                                        \
    OP(void, linear_backward,                                                                               \
       (Backend *bk, int n, int in, int out, const real *x, const real *w, const real *dy, real *dx,        \
        real *dw, real *db),                                                                                \
       (bk, n, in, out, x, w, dy, dx, dw, db))                                                              \
    OP(void, relu_forward, (Backend *bk, size_t count, const real *x, real *y), (bk, count, x, y))          \
    OP(void, relu_backward,                                                                                 \
       (Backend *bk, size_t count, const real *y, const real *dy, real *dx, bool accumulate),               \
       (bk, count, y, dy, dx, accumulate))                                                                  \
    OP(void, add_forward, (Backend *bk, size_t count, const real *a, const real *b, bool relu, real *y),    \
       (bk, count, a, b, relu, y))                                                                          \
    OP(void, accumulate, (Backend *bk, size_t count, const real *dy, real *dx), (bk, count, dy, dx))        \
    OP(void, dropout_forward,                                                                               \
       (Backend *bk, size_t count, real p, const DropoutKey *key, real *mask, const real *x, real *y),      \
       (bk, count, p, key, mask, x, y))                                                                     \
    OP(void, dropout_backward, (Backend *bk, size_t count, const real *mask, const real *dy, real *dx),     \
       (bk, count, mask, dy, dx))                                                                           \
    OP(void, normalize_pixels,                                                                              \
       (Backend *bk, size_t images, int c, size_t hw, const uint8_t *x, const float *mean,                  \
        const float *std, real *y),                                                                         \
       (bk, images, c, hw, x, mean, std, y))                                                                \
    OP(void, maxpool_forward,                                                                               \
       (Backend *bk, const PoolShape *s, int n, const real *x, real *y, int32_t *argmax),                   \
       (bk, s, n, x, y, argmax))                                                                            \
    OP(void, maxpool_backward,                                                                              \
       (Backend *bk, const PoolShape *s, int n, const int32_t *argmax, const real *dy, real *dx,            \
        bool accumulate),                                                                                   \
       (bk, s, n, argmax, dy, dx, accumulate))                                                              \
    OP(void, avgpool_forward, (Backend *bk, const PoolShape *s, int n, const real *x, real *y),             \
       (bk, s, n, x, y))                                                                                    \
    OP(void, avgpool_backward, (Backend *bk, const PoolShape *s, int n, const real *dy, real *dx),          \
       (bk, s, n, dy, dx))                                                                                  \
    OP(void, batchnorm_forward_train,                                                                       \
       (Backend *bk, const BatchNormShape *s, int n, const real *x, const real *gamma, const real *beta,    \
        real *y, real *save_mean, real *save_invstd, real *running_mean, real *running_var,                 \
        const BnSync *sync),                                                                                \
       (bk, s, n, x, gamma, beta, y, save_mean, save_invstd, running_mean, running_var, sync))              \
    OP(void, batchnorm_forward_eval,                                                                        \
       (Backend *bk, const BatchNormShape *s, int n, const real *x, const real *gamma, const real *beta,    \
        const real *running_mean, const real *running_var, real *y),                                        \
       (bk, s, n, x, gamma, beta, running_mean, running_var, y))                                            \
    OP(void, batchnorm_backward,                                                                            \
       (Backend *bk, const BatchNormShape *s, int n, const real *x, const real *gamma, const real *beta,    \
        const real *save_mean, const real *save_invstd, const real *dy, real *dx, bool accumulate,          \
        real *dgamma, real *dbeta, const BnSync *sync),                                                     \
       (bk, s, n, x, gamma, beta, save_mean, save_invstd, dy, dx, accumulate, dgamma, dbeta, sync))         \
    OP(void, lrn_forward, (Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale),     \
       (bk, s, n, x, y, scale))                                                                             \
    OP(void, lrn_backward,                                                                                  \
       (Backend *bk, const LrnShape *s, int n, const real *x, const real *y, const real *scale,             \
        const real *dy, real *dx),                                                                          \
       (bk, s, n, x, y, scale, dy, dx))                                                                     \
    OP(void, softmax_xent_forward,                                                                          \
       (Backend *bk, int n, int classes, const real *logits, const int32_t *labels, real smoothing,         \
        real *probs, double *result),                                                                       \
       (bk, n, classes, logits, labels, smoothing, probs, result))                                          \
    OP(void, softmax_xent_backward,                                                                         \
       (Backend *bk, int n, int classes, const real *probs, const int32_t *labels, real smoothing,          \
        real scale, real *dlogits),                                                                         \
       (bk, n, classes, probs, labels, smoothing, scale, dlogits))                                          \
    /* optimizers */                                                                                        \
    OP(void, param_norms, (Backend *bk, const BkParamList *pl, double *norms), (bk, pl, norms))             \
    OP(void, optimizer_update,                                                                              \
       (Backend *bk, const OptConfig *cfg, const BkParamList *pl, double lr, long updates,                  \
        const double *norms, OptStats *stats, const double *check),                                         \
       (bk, cfg, pl, lr, updates, norms, stats, check))                                                     \
    /* vectors */                                                                                           \
    OP(double, sum_squares, (Backend *bk, size_t count, const real *x), (bk, count, x))                     \
    OP(void, sum_squares_to, (Backend *bk, size_t count, const real *x, double *result),                    \
       (bk, count, x, result))                                                                              \
    OP(void, copy_bytes, (Backend *bk, void *dst, const void *src, size_t bytes), (bk, dst, src, bytes))    \
    OP(void, copy, (Backend *bk, size_t count, const real *x, real *y), (bk, count, x, y))                  \
    OP(void, fill, (Backend *bk, size_t count, real value, real *x), (bk, count, value, x))                 \
    OP(void, scale, (Backend *bk, size_t count, real alpha, real *x), (bk, count, alpha, x))                \
    OP(void, axpy, (Backend *bk, size_t count, real alpha, const real *x, real *y), (bk, count, alpha, x, y))

#endif
