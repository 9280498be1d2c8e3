/* What a backend implementation sees (engine/cpu/, engine/cuda/): the layout of a Backend,
 * a buffer and an event, and the table of operations that engine/backend.c dispatches
 * every bk_* call through. Nothing outside the implementations and backend.c includes it.
 *
 * Each member has the signature of the bk_* function of the same name (engine/backend.h),
 * except memory and events: an implementation allocates and frees addresses, and backend.c
 * wraps them in BkBuffer and BkEvent, so a buffer or event always knows its backend. */
#ifndef BB_BACKEND_IMPL_H
#define BB_BACKEND_IMPL_H
#include "backend.h"

typedef struct BackendOps BackendOps;

struct Backend {
    const BackendOps *ops;
    int threads;
    void *impl; /* the implementation's own state */
};

struct BkBuffer {
    Backend *bk;
    void *address;
    size_t block; /* bytes taken, what the implementation frees */
};

struct BkEvent {
    Backend *bk;
    void *impl;
};

struct BkCollective {
    Backend *bk;
    void *impl;
};

struct BackendOps {
    const char *name;                              /* "cpu", "cpu-guarded", "cuda" */
    const char *(*device_name)(const Backend *bk); /* "NVIDIA H200"; NULL: the name */
    void (*destroy)(Backend *bk);
    /* a backend of one thread on bk's device and memory (backend_open_thread); NULL: none */
    Backend *(*open_thread)(Backend *bk);
    void (*reserve)(Backend *bk, Workspace need);
    size_t (*peak_bytes)(const Backend *bk);       /* NULL: not counted */
    /* tf32 on or off (backend_set_precision); NULL: fp32 only */
    void (*set_tf32)(Backend *bk, bool on);
    /* memory: zero-filled; *block receives the bytes taken (NULL when out of memory) */
    void *(*buffer_alloc)(Backend *bk, size_t bytes, size_t *block);
    void (*buffer_free)(Backend *bk, void *address, size_t block);
    void (*upload)(Backend *bk, void *dev, const void *host, size_t bytes);
    void (*download)(Backend *bk, void *host, const void *dev, size_t bytes);
    void *(*host_address)(Backend *bk, void *dev);
    void *(*host_alloc)(Backend *bk, size_t bytes); /* NULL when out of memory */
    void (*host_free)(Backend *bk, void *host);
    void (*upload_async)(Backend *bk, void *dev, const void *host, size_t bytes);
    void (*synchronize)(Backend *bk);
    void *(*event_create)(Backend *bk);
    void (*event_destroy)(Backend *bk, void *event);
    void (*event_record)(Backend *bk, void *event);
    void (*event_wait)(Backend *bk, void *event);
    /* collectives: NULL collective_open when the backend has none; the implementation's
     * open returns its state, or NULL with err set (or, with err->msg empty, none) */
    void *(*collective_open)(Backend *bk, const BkCollectiveSpec *spec, Error *err);
    void (*collective_close)(Backend *bk, void *impl);
    void (*collective_sum_async)(Backend *bk, void *impl, real *dev, size_t count);
    void (*collective_join)(Backend *bk, void *impl);
    void (*collective_sum_double)(Backend *bk, void *impl, double *dev, size_t count);
    /* layers */
    void (*conv2d_forward)(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                           const real *b, real *y);
    void (*conv2d_backward)(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                            const real *dy, real *dx, real *dw, real *db);
    void (*linear_forward)(Backend *bk, int n, int in, int out, const real *x, const real *w,
                           const real *b, real *y);
    void (*linear_backward)(Backend *bk, int n, int in, int out, const real *x, const real *w,
                            const real *dy, real *dx, real *dw, real *db);
    void (*relu_forward)(Backend *bk, size_t count, const real *x, real *y);
    void (*relu_backward)(Backend *bk, size_t count, const real *y, const real *dy, real *dx, bool accumulate);
    void (*add_forward)(Backend *bk, size_t count, const real *a, const real *b, real *y);
    void (*accumulate)(Backend *bk, size_t count, const real *dy, real *dx);
    void (*dropout_forward)(Backend *bk, size_t count, real p, const DropoutKey *key, real *mask,
                            const real *x, real *y);
    void (*dropout_backward)(Backend *bk, size_t count, const real *mask, const real *dy, real *dx);
    void (*normalize_pixels)(Backend *bk, size_t images, int c, size_t hw, const uint8_t *x,
                             const float *mean, const float *std, real *y);
    void (*maxpool_forward)(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                            int32_t *argmax);
    void (*maxpool_backward)(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                             const real *dy, real *dx, bool accumulate);
    void (*avgpool_forward)(Backend *bk, const PoolShape *s, int n, const real *x, real *y);
    void (*avgpool_backward)(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx);
    void (*batchnorm_forward_train)(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                    const real *gamma, const real *beta, real *y, real *save_mean,
                                    real *save_invstd, real *running_mean, real *running_var,
                                    const BnSync *sync);
    void (*batchnorm_forward_eval)(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                   const real *gamma, const real *beta, const real *running_mean,
                                   const real *running_var, real *y);
    void (*batchnorm_backward)(Backend *bk, const BatchNormShape *s, int n, const real *x,
                               const real *gamma, const real *save_mean, const real *save_invstd,
                               const real *dy, real *dx, bool accumulate, real *dgamma, real *dbeta,
                               const BnSync *sync);
    void (*lrn_forward)(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale);
    void (*lrn_backward)(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                         const real *scale, const real *dy, real *dx);
    void (*softmax_xent_forward)(Backend *bk, int n, int classes, const real *logits,
                                 const int32_t *labels, real smoothing, real *probs, double *result);
    void (*softmax_xent_backward)(Backend *bk, int n, int classes, const real *probs,
                                  const int32_t *labels, real smoothing, real scale, real *dlogits);
    /* optimizers */
    void (*param_norms)(Backend *bk, const BkParamList *pl, double *norms);
    void (*optimizer_update)(Backend *bk, const OptConfig *cfg, const BkParamList *pl, double lr,
                             long updates, const double *norms, OptStats *stats);
    /* vectors */
    double (*sum_squares)(Backend *bk, size_t count, const real *x);
    void (*copy)(Backend *bk, size_t count, const real *x, real *y);
    void (*fill)(Backend *bk, size_t count, real value, real *x);
    void (*scale)(Backend *bk, size_t count, real alpha, real *x);
    void (*axpy)(Backend *bk, size_t count, real alpha, const real *x, real *y);
};

/* The implementations' constructors (backend.c's device table calls them): a Backend with
 * its ops and state, or NULL with err set (no such device, or out of memory). device_index
 * is N of NAME:N, or -1 for a bare NAME (the backend's choice). */
Backend *cpu_backend_open(int device_index, int threads, Error *err);
const char *cpu_backend_name(void); /* "cpu", or "cpu-guarded" in the guarded build */
#ifdef BB_CUDA
Backend *cuda_backend_open(int device_index, int threads, Error *err);
#endif

#endif
