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
#include "layout.h"

/* A convolution's cuDNN descriptors and the algorithms cudnnFind* chose for it, found once
 * per (shape, batch) and kept for the life of the backend (conv.cu). */
typedef struct CudaConvPlan CudaConvPlan;

/* A scratch buffer outgrown while a graph was alive (graph.cu), kept: the graph's nodes hold
 * its address and still run on it. */
typedef struct CudaRetired {
    void *address;
    size_t bytes;
    struct CudaRetired *next;
} CudaRetired;

typedef struct {
    int device;
    char device_name[256];
    char device_key[64]; /* "cuda pci DOMAIN:BUS:DEVICE.FUNCTION": backend_device_key */
    cudaStream_t stream;
    cublasHandle_t cublas;
    void *cublas_workspace; /* cuBLAS's own (cublasSetWorkspace): it allocates none inside a graph capture */
    cudnnHandle_t cudnn;
    /* cuDNN workspace, grown when a plan needs more (at the first step of a shape only) */
    void *workspace;
    size_t workspace_bytes;
    size_t workspace_limit; /* the most a convolution algorithm may ask for */
    BkPrecision precision;  /* backend_set_precision's: fp32 (FMA), tf32 (tensor cores on fp32 data),
                             * or bf16/fp16 (lowp.cu: the products on converted copies) */
    /* bf16/fp16: the products' converted operands and their fp32 results before rounding
     * (lowp.cu), grown when a layer needs more (at the first step of a shape only) */
    void *lowp;
    size_t lowp_bytes;
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
    /* graph.cu: the graphs alive (instantiated, not destroyed), and the scratch buffers
     * (workspace, reduce, lowp) outgrown meanwhile, freed when the last graph goes */
    int graphs;
    CudaRetired *retired;
} CudaState;

static inline CudaState *cuda_state(Backend *bk) { return (CudaState *)bk->impl; }

/* --precision bf16 or fp16: the products take the paths of lowp.cu's conversions. */
static inline bool cuda_low_precision(const CudaState *st)
{
    return st->precision == BK_PRECISION_BF16 || st->precision == BK_PRECISION_FP16;
}

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

/* *buf holding at least `bytes` (*have of them now; `what` names it when memory runs out),
 * counted in held_bytes; a smaller one is freed first (cuda_scratch_free), its contents dropped. */
void *cuda_buffer_grow(CudaState *st, void **buf, size_t *have, size_t bytes, const char *what);
/* cudaFree (which waits for the device: nothing still uses it; NULL frees nothing), `bytes`
 * uncounted from held_bytes. */
void cuda_free_counted(CudaState *st, void *address, size_t bytes);
/* Frees an outgrown scratch buffer of `bytes` (uncounting it), or keeps it in st->retired while a
 * graph is alive: a graph replays the addresses it was captured with. */
void cuda_scratch_free(CudaState *st, void *address, size_t bytes);
/* Frees st->retired (the device idle first): no graph is alive, or the backend closes. */
void cuda_retired_free(CudaState *st);
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
void cuda_host_free(Backend *bk, void *host);
void cuda_synchronize(Backend *bk);
void *cuda_event_create(Backend *bk);
void cuda_event_destroy(Backend *bk, void *event);
void cuda_event_record(Backend *bk, void *event);
void cuda_event_wait(Backend *bk, void *event);
/* nccl.cu */
void *cuda_collective_open(Backend *bk, const BkCollectiveSpec *spec, Error *err);
void cuda_collective_close(Backend *bk, void *impl);
void cuda_collective_sum_async(Backend *bk, void *impl, real *dev, size_t count);
void cuda_collective_join(Backend *bk, void *impl);
void cuda_collective_sum_double(Backend *bk, void *impl, double *dev, size_t count);
/* lowp.cu: --precision bf16/fp16, rounding at the CPU emulation's points (engine/cpu/low_precision.c) */
enum { LOWP_BYTES = 2 }; /* bytes of a bf16 or fp16 value */
/* How a rounded source meets its fp32 destination (as low_precision.c's RoundMode). */
typedef enum {
    LOWP_COPY,      /* dst = r(src) */
    LOWP_INTO_FP32, /* dst += r(src): a gradient into the fp32 master's */
    LOWP_INTO_LOWP  /* dst = r(dst + r(src)): into a gradient held in low precision */
} LowpMode;
cudnnDataType_t cuda_lowp_cudnn_type(const CudaState *st);
/* `batch` products C_i [m, nn] = op(A_i) op(B_i) + beta C_i (A_i at a + i * sa, and so on),
 * A and B bf16/fp16, C and the sums fp32 (as cublasSgemm): cublasGemmEx for one. */
void cuda_lowp_gemm(CudaState *st, cublasOperation_t ta, cublasOperation_t tb, int m, int nn, int k, const void *a,
                    int lda, long long sa, const void *b, int ldb, long long sb, float beta, float *c, int ldc,
                    long long sc, int batch);
/* The low-precision scratch cut into k parts of the given bytes (0: NULL), each 256-byte
 * aligned; valid until the next call. */
void cuda_lowp_parts(Backend *bk, int k, const size_t *bytes, void **parts);
/* dst (bf16/fp16, n values) = src rounded to nearest even. */
void cuda_lowp_convert(Backend *bk, size_t n, const float *src, void *dst);
/* dst (fp32, n values) combined with src rounded, by mode; src fp32, or (src_lowp) already
 * bf16/fp16, whose rounding is then exact. */
void cuda_lowp_round(Backend *bk, LowpMode mode, size_t n, const void *src, bool src_lowp, float *dst);
/* The same between an fp32 NCHW tensor of dims d and its bf16/fp16 copy, which is NHWC when
 * `nhwc` (conv.cu's channels-last plans; a filter's dims from filter_dims: KRSC), else NCHW:
 * convert fills the copy, round (src the copy) writes the fp32 NCHW dst. */
void cuda_lowp_convert_layout(Backend *bk, Dims4 d, bool nhwc, const float *src, void *dst);
void cuda_lowp_round_layout(Backend *bk, LowpMode mode, Dims4 d, bool nhwc, const void *src, float *dst);
/* dst[i] = b[(i / plane) % c] rounded, over count values: a bias broadcast over [n, c, plane]
 * (NHWC: plane 1), into a bf16/fp16 dst (dst_lowp) or an fp32 one. */
void cuda_lowp_fill_bias(Backend *bk, size_t count, int c, size_t plane, const float *b, void *dst, bool dst_lowp);
/* db[k] += r(sum over images and the plane of dy[., k, .]) for dy bf16/fp16 [n, c, plane]
 * (NHWC: n * h * w images of plane 1). */
void cuda_lowp_bias_grad(Backend *bk, size_t n, int c, size_t plane, const void *dy, float *db);
/* graph.cu: the graphs of bk_graph_capture (BackendOps' graph_*) */
int cuda_graph_begin(Backend *bk, Error *err);
void *cuda_graph_end(Backend *bk, bool keep, Error *err);
int cuda_graph_launch(Backend *bk, void *graph, Error *err);
void cuda_graph_destroy(Backend *bk, void *graph);
/* conv.cu (cuDNN) */
void cuda_conv_plans_free(Backend *bk);
/* conv_pointwise.cu: 1x1 unpadded convolutions as cuBLAS products (conv.cu dispatches) */
bool cuda_conv_is_pointwise(const ConvShape *s);
void cuda_conv_pointwise_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, real *y);
void cuda_conv_pointwise_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                  const real *dy, real *dx, real *dw);
/* the same in bf16/fp16, the bias included (conv_pointwise.cu) */
void cuda_conv_pointwise_forward_lowp(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                      const real *b, real *y);
void cuda_conv_pointwise_backward_lowp(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                       const real *dy, real *dx, bool accumulate, real *dw, real *db);
/* the arithmetic, one function each (backend_ops.h): conv.cu, linear.cu, elementwise.cu, pool.cu,
 * batchnorm.cu, lrn.cu, softmax_xent.cu, optim.cu, vector.cu */
#define CUDA_OP_PROTOTYPE(ret, name, params, args) ret cuda_##name params;
BACKEND_OPERATIONS(CUDA_OP_PROTOTYPE)
#undef CUDA_OP_PROTOTYPE

#endif
