/* Private to the CUDA backend (make GPU=1): its state, error checks, launch helpers and
 * the operations backend_cuda.cu puts in its table (each the bk_* function of the same
 * name, engine/backend.h, with device pointers for backend addresses). The .cu files are
 * C++ compiled by nvcc; the engine's headers are C, so they are included as extern "C".
 *
 * Every operation is issued on the backend's one stream (st->stream), in call order, so
 * the rules of engine/backend.h hold: forward overwrites, backward adds, bk_download waits
 * for what came before it. Reductions run in double in a fixed order (one block per
 * reduced quantity, a fixed tree in shared memory), so a run is repeatable. */
#ifndef BB_CUDA_H
#define BB_CUDA_H
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
#include "../backend_impl.h"
}

/* A convolution's cuDNN descriptors and the algorithms cudnnFind* chose for it, found once
 * per (shape, batch) and kept for the life of the backend (conv.cu). */
typedef struct CudaConvPlan CudaConvPlan;

typedef struct {
    int device;
    char device_name[256];
    cudaStream_t stream;
    cublasHandle_t cublas;
    cudnnHandle_t cudnn;
    /* cuDNN workspace, grown when a plan needs more (at the first step of a shape only) */
    void *workspace;
    size_t workspace_bytes;
    size_t workspace_limit; /* the most a convolution algorithm may ask for */
    bool tf32;              /* backend_set_precision("tf32"): tensor-core convolutions and gemms */
    bool cudnn_find;        /* rank algorithms by cudnnFind*'s timings (BIGBATCH_CUDNN_FIND=1), not
                             * by the heuristics, which every run reproduces (conv.cu) */
    bool cudnn_deterministic; /* unless BIGBATCH_CUDNN_DETERMINISTIC=0: deterministic algorithms first */
    bool cudnn_verbose;     /* BIGBATCH_CUDNN_VERBOSE=1: print each algorithm chosen (stderr) */
    bool pointwise_gemm;    /* 1x1 unpadded convolutions on cuBLAS (conv_pointwise.cu), unless
                             * BIGBATCH_CUDA_POINTWISE=cudnn */
    CudaConvPlan *plans;    /* a list, newest first */
    /* device scratch for reductions (sum_squares and friends), and pinned host memory for
     * the few values that are downloaded */
    double *reduce;
    double *reduce_host;
    size_t reduce_elems;
    /* optim.cu: the optimizer's parameter list as a device table with its work arrays (one
     * cudaMalloc), and the host copy it was built from (malloc): rebuilt only when the list
     * changes, so an update uploads nothing */
    void *optim_dev;
    void *optim_host;
    size_t optim_bytes; /* of optim_dev */
    /* device memory held by buffers, the workspace and the reduction scratch, and its most
     * (bench's peak_device_mb) */
    size_t held_bytes, peak_bytes;
} CudaState;

static inline CudaState *cuda_state(Backend *bk) { return (CudaState *)bk->impl; }

/* Counts `bytes` taken (or, with gone, given back) in held_bytes and its peak. */
static inline void cuda_count_bytes(CudaState *st, size_t bytes, bool gone)
{
    st->held_bytes = gone ? st->held_bytes - bytes : st->held_bytes + bytes;
    if (st->held_bytes > st->peak_bytes) st->peak_bytes = st->held_bytes;
}

/* Errors in the CUDA runtime, cuBLAS or cuDNN are not recoverable: the message names the
 * call and the file, and the process exits with status 3 as on running out of memory. */
#define CUDA_CHECK(call)                                                                              \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) cuda_die(__FILE__, __LINE__, #call, cudaGetErrorString(e_));           \
    } while (0)
#define CUBLAS_CHECK(call)                                                                            \
    do {                                                                                              \
        cublasStatus_t s_ = (call);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) cuda_die(__FILE__, __LINE__, #call, cublasGetStatusString(s_)); \
    } while (0)
#define CUDNN_CHECK(call)                                                                             \
    do {                                                                                              \
        cudnnStatus_t s_ = (call);                                                                    \
        if (s_ != CUDNN_STATUS_SUCCESS) cuda_die(__FILE__, __LINE__, #call, cudnnGetErrorString(s_)); \
    } while (0)
/* After a kernel launch: a bad launch configuration shows here, not at the next sync. */
#define CUDA_LAUNCHED() CUDA_CHECK(cudaGetLastError())

[[noreturn]] void cuda_die(const char *file, int line, const char *call, const char *what);

/* Grid of 256-thread blocks covering `count` elements (grid-stride loops cover the rest). */
enum { CUDA_THREADS = 256 };
static inline unsigned cuda_blocks(size_t count)
{
    size_t b = (count + CUDA_THREADS - 1) / CUDA_THREADS;
    if (b < 1) b = 1;
    return b > 65535u * 8 ? 65535u * 8 : (unsigned)b;
}

/* The cuDNN workspace holding at least `bytes` (grown on the stream's order). */
void *cuda_workspace(Backend *bk, size_t bytes);
/* Device scratch of at least `elems` doubles for reductions, and its pinned host mirror. */
double *cuda_reduce_scratch(Backend *bk, size_t elems);

/* memory, stream and events: backend_cuda.cu */
void *cuda_buffer_alloc(Backend *bk, size_t bytes, size_t *block);
void cuda_buffer_free(Backend *bk, void *address, size_t block);
void cuda_upload(Backend *bk, void *dev, const void *host, size_t bytes);
void cuda_download(Backend *bk, void *host, const void *dev, size_t bytes);
void *cuda_host_address(Backend *bk, void *dev);
void *cuda_host_alloc(Backend *bk, size_t bytes);
/* nccl.cu */
void *cuda_collective_open(Backend *bk, const BkCollectiveSpec *spec, Error *err);
void cuda_collective_close(Backend *bk, void *impl);
void cuda_collective_sum_async(Backend *bk, void *impl, real *dev, size_t count);
void cuda_collective_join(Backend *bk, void *impl);
void cuda_collective_sum_double(Backend *bk, void *impl, double *dev, size_t count);
void cuda_host_free(Backend *bk, void *host);
void cuda_synchronize(Backend *bk);
void *cuda_event_create(Backend *bk);
void cuda_event_destroy(Backend *bk, void *event);
void cuda_event_record(Backend *bk, void *event);
void cuda_event_wait(Backend *bk, void *event);
/* conv.cu (cuDNN), linear.cu (cuBLAS) */
void cuda_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *b, real *y);
void cuda_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *dy, real *dx, real *dw, real *db);
void cuda_conv_plans_free(Backend *bk);
/* conv_pointwise.cu: 1x1 unpadded convolutions as cuBLAS products (conv.cu dispatches) */
bool cuda_conv_is_pointwise(const ConvShape *s);
void cuda_conv_pointwise_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, real *y);
void cuda_conv_pointwise_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                  const real *dy, real *dx, real *dw);
void cuda_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                         const real *b, real *y);
void cuda_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                          const real *dy, real *dx, real *dw, real *db);
/* elementwise.cu */
void cuda_relu_forward(Backend *bk, size_t count, const real *x, real *y);
void cuda_relu_backward(Backend *bk, size_t count, const real *y, const real *dy, real *dx, bool accumulate);
void cuda_add_forward(Backend *bk, size_t count, const real *a, const real *b, real *y);
void cuda_accumulate(Backend *bk, size_t count, const real *dy, real *dx);
void cuda_dropout_forward(Backend *bk, size_t count, real p, const DropoutKey *key, real *mask,
                          const real *x, real *y);
void cuda_dropout_backward(Backend *bk, size_t count, const real *mask, const real *dy, real *dx);
void cuda_normalize_pixels(Backend *bk, size_t images, int c, size_t hw, const uint8_t *x, const float *mean,
                           const float *std, real *y);
/* pool.cu */
void cuda_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                          int32_t *argmax);
void cuda_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                           const real *dy, real *dx, bool accumulate);
void cuda_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y);
void cuda_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx);
/* batchnorm.cu, lrn.cu */
void cuda_batchnorm_forward_train(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                  const real *gamma, const real *beta, real *y, real *save_mean,
                                  real *save_invstd, real *running_mean, real *running_var,
                                  const BnSync *sync);
void cuda_batchnorm_forward_eval(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                 const real *gamma, const real *beta, const real *running_mean,
                                 const real *running_var, real *y);
void cuda_batchnorm_backward(Backend *bk, const BatchNormShape *s, int n, const real *x,
                             const real *gamma, const real *save_mean, const real *save_invstd,
                             const real *dy, real *dx, bool accumulate, real *dgamma, real *dbeta,
                             const BnSync *sync);
void cuda_lrn_forward(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale);
void cuda_lrn_backward(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                       const real *scale, const real *dy, real *dx);
/* softmax_xent.cu */
void cuda_softmax_xent_forward(Backend *bk, int n, int classes, const real *logits,
                               const int32_t *labels, real smoothing, real *probs, double *result);
void cuda_softmax_xent_backward(Backend *bk, int n, int classes, const real *probs,
                                const int32_t *labels, real smoothing, real scale, real *dlogits);
/* optim.cu */
void cuda_param_norms(Backend *bk, const BkParamList *pl, double *norms);
void cuda_optimizer_update(Backend *bk, const OptConfig *cfg, const BkParamList *pl, double lr,
                           long updates, const double *norms, OptStats *stats);
/* vector.cu */
double cuda_sum_squares(Backend *bk, size_t count, const real *x);
void cuda_copy(Backend *bk, size_t count, const real *x, real *y);
void cuda_fill(Backend *bk, size_t count, real value, real *x);
void cuda_scale(Backend *bk, size_t count, real alpha, real *x);
void cuda_axpy(Backend *bk, size_t count, real alpha, const real *x, real *y);

#endif
