/* The CUDA backend's lifetime, memory, stream and events, and its table of operations
 * (make GPU=1). One stream per backend carries every operation in call order; buffers are
 * cudaMalloc'd device memory, zero-filled on that stream; uploads are asynchronous from the
 * caller's point of view (the runtime stages pageable memory before returning), downloads
 * wait for the stream. The host never reads device memory in place (host_address: NULL), so
 * MPI and checkpoints go through bk_download / bk_upload. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

extern "C" {
#include "../base/util.h"
}

void cuda_die(const char *file, int line, const char *call, const char *what)
{
    fprintf(stderr, "bigbatch: CUDA error at %s:%d: %s: %s\n", file, line, call, what);
    exit(3);
}

/* The most one convolution algorithm may ask for: cudnnFind* skips algorithms needing more. */
static const size_t WORKSPACE_LIMIT = (size_t)1 << 30;

void cuda_free_counted(CudaState *st, void *address, size_t bytes)
{
    CUDA_CHECK(cudaFree(address));
    cuda_count_bytes(st, bytes, true);
}

void cuda_scratch_free(CudaState *st, void *address, size_t bytes)
{
    if (!address) return;
    /* a graph captured before this buffer was outgrown (an evaluation at a larger batch, say,
     * after the training pass's capture) still addresses it: freeing it would leave the replays
     * writing into freed memory */
    if (st->graphs > 0) {
        CudaRetired *r = (CudaRetired *)xcalloc(1, sizeof *r, "retired CUDA scratch");
        *r = CudaRetired{address, bytes, st->retired};
        st->retired = r;
        return;
    }
    cuda_free_counted(st, address, bytes);
}

void cuda_retired_free(CudaState *st)
{
    if (!st->retired) return;
    CUDA_CHECK(cudaStreamSynchronize(st->stream)); /* no replay still runs on them */
    while (st->retired) {
        CudaRetired *next = st->retired->next;
        cuda_free_counted(st, st->retired->address, st->retired->bytes);
        free(st->retired);
        st->retired = next;
    }
}

void *cuda_buffer_grow(CudaState *st, void **buf, size_t *have, size_t bytes, const char *what)
{
    if (bytes <= *have) return *buf;
    /* the stream may still use the old one: cudaFree waits for the device */
    cuda_scratch_free(st, *buf, *have);
    *buf = NULL;
    *have = 0;
    if (cudaMalloc(buf, bytes) != cudaSuccess) {
        fprintf(stderr, "bigbatch: out of GPU memory allocating %zu bytes of %s\n", bytes, what);
        exit(3);
    }
    *have = bytes;
    cuda_count_bytes(st, bytes, false);
    return *buf;
}

void *cuda_workspace(Backend *bk, size_t bytes)
{
    CudaState *st = cuda_state(bk);
    return cuda_buffer_grow(st, &st->workspace, &st->workspace_bytes, bytes, "cuDNN workspace");
}

double *cuda_reduce_scratch(Backend *bk, size_t elems)
{
    CudaState *st = cuda_state(bk);
    if (elems <= st->reduce_elems) return st->reduce;
    CUDA_CHECK(cudaStreamSynchronize(st->stream)); /* nothing in flight uses the old ones */
    cuda_scratch_free(st, st->reduce, st->reduce_elems * sizeof(double));
    if (st->reduce_host) CUDA_CHECK(cudaFreeHost(st->reduce_host)); /* no graph reads it: sync BN only */
    CUDA_CHECK(cudaMalloc(&st->reduce, elems * sizeof(double)));
    cuda_count_bytes(st, elems * sizeof(double), false);
    CUDA_CHECK(cudaMallocHost(&st->reduce_host, elems * sizeof(double)));
    st->reduce_elems = elems;
    return st->reduce;
}

/* ---- memory ---- */
void *cuda_buffer_alloc(Backend *bk, size_t bytes, size_t *block)
{
    *block = bytes ? bytes : 1;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, *block);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* clear it: the caller reports running out of memory */
        return NULL;
    }
    CUDA_CHECK(e);
    CUDA_CHECK(cudaMemsetAsync(p, 0, *block, cuda_state(bk)->stream));
    cuda_count_bytes(cuda_state(bk), *block, false);
    return p;
}

void cuda_buffer_free(Backend *bk, void *address, size_t block)
{
    cuda_free_counted(cuda_state(bk), address, block);
}

void cuda_upload(Backend *bk, void *dev, const void *host, size_t bytes)
{
    if (bytes) CUDA_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, cuda_state(bk)->stream));
}

void cuda_download(Backend *bk, void *host, const void *dev, size_t bytes)
{
    CudaState *st = cuda_state(bk);
    if (bytes) CUDA_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, st->stream));
    CUDA_CHECK(cudaStreamSynchronize(st->stream));
}

void *cuda_host_address(Backend *bk, void *dev)
{
    (void)bk, (void)dev;
    return NULL;
}

/* Page-locked host memory: the batch loader's double buffers, copied without staging. */
void *cuda_host_alloc(Backend *bk, size_t bytes)
{
    (void)bk;
    void *p = NULL;
    cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return NULL;
    }
    CUDA_CHECK(e);
    return p;
}

void cuda_host_free(Backend *bk, void *host)
{
    (void)bk;
    CUDA_CHECK(cudaFreeHost(host)); /* waits for the device: no copy still reads it */
}

void cuda_synchronize(Backend *bk) { CUDA_CHECK(cudaStreamSynchronize(cuda_state(bk)->stream)); }

/* ---- events: a gradient bucket's reduction waits for the backward that wrote it ---- */
void *cuda_event_create(Backend *bk)
{
    (void)bk;
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return (void *)e;
}

void cuda_event_destroy(Backend *bk, void *event)
{
    (void)bk;
    CUDA_CHECK(cudaEventDestroy((cudaEvent_t)event));
}

void cuda_event_record(Backend *bk, void *event)
{
    CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, cuda_state(bk)->stream));
}

void cuda_event_wait(Backend *bk, void *event)
{
    (void)bk;
    CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)event));
}

/* ---- lifetime ---- */
static const char *cuda_device_name(const Backend *bk) { return ((const CudaState *)bk->impl)->device_name; }
static const char *cuda_device_key(const Backend *bk) { return ((const CudaState *)bk->impl)->device_key; }

/* --precision: the math of the gemms (cuBLAS) and, through the plans of that precision
 * (conv.cu), of the convolutions. fp32: FMA, as the CPU computes. tf32: tensor cores on fp32
 * data. bf16/fp16: the products take converted copies (lowp.cu) through cublasGemmEx with fp32
 * compute, on tensor cores in any math mode; reduced-precision reductions (split-k sums in the
 * output's type) are ruled out, though every low-precision product here writes fp32 anyway. */
static bool cuda_set_precision(Backend *bk, BkPrecision precision)
{
    CudaState *st = cuda_state(bk);
    st->precision = precision;
    const cublasMath_t math = precision == BK_PRECISION_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                              : cuda_low_precision(st)
                                  ? (cublasMath_t)(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
                                  : CUBLAS_DEFAULT_MATH;
    CUBLAS_CHECK(cublasSetMathMode(st->cublas, math));
    return true;
}

static size_t cuda_peak_bytes(const Backend *bk) { return ((const CudaState *)bk->impl)->peak_bytes; }

static void cuda_reserve(Backend *bk, Workspace need)
{
    (void)bk, (void)need; /* the CPU's im2col and Winograd workspace; cuDNN plans size their own */
}

static void cuda_destroy(Backend *bk)
{
    CudaState *st = cuda_state(bk);
    cudaStreamSynchronize(st->stream);
    cuda_conv_plans_free(bk);
    cuda_retired_free(st);
    if (st->workspace) cudaFree(st->workspace);
    if (st->reduce) cudaFree(st->reduce);
    if (st->lowp) cudaFree(st->lowp);
    if (st->reduce_host) cudaFreeHost(st->reduce_host);
    if (st->optim_dev) cudaFree(st->optim_dev);
    free(st->optim_host);
    cudnnDestroy(st->cudnn);
    if (st->cublas_workspace) cudaFree(st->cublas_workspace);
    cublasDestroy(st->cublas);
    cudaStreamDestroy(st->stream);
    free(st);
    free(bk);
}

#define CUDA_OP_ENTRY(ret, name, params, args) .name = cuda_##name,
static const BackendOps CUDA_OPS = {
    .name = "cuda",
    .device_name = cuda_device_name,
    .device_key = cuda_device_key,
    .destroy = cuda_destroy,
    .open_thread = nullptr, /* one stream runs every operation across the whole device */
    .reserve = cuda_reserve,
    .peak_bytes = cuda_peak_bytes,
    .set_precision = cuda_set_precision,
    .buffer_alloc = cuda_buffer_alloc,
    .buffer_free = cuda_buffer_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .host_address = cuda_host_address,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .upload_async = cuda_upload, /* from page-locked memory cudaMemcpyAsync returns at once */
    .synchronize = cuda_synchronize,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_wait = cuda_event_wait,
    .collective_open = cuda_collective_open,
    .collective_close = cuda_collective_close,
    .collective_sum_async = cuda_collective_sum_async,
    .collective_join = cuda_collective_join,
    .collective_sum_double = cuda_collective_sum_double,
    .graph_begin = cuda_graph_begin,
    .graph_end = cuda_graph_end,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
    BACKEND_OPERATIONS(CUDA_OP_ENTRY)
};
#undef CUDA_OP_ENTRY

/* The device to use, or -1 with err set. */
static int pick_device(int requested, Error *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        error_set(err, "device cuda: no CUDA device (%s)",
                  e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports none");
        cudaGetLastError();
        return -1;
    }
    if (requested >= 0) { /* cuda:N; a bare "cuda" (-1) takes the local rank's */
        if (requested >= count) {
            error_set(err, "device cuda:%d: this node has %d CUDA device%s (cuda:0..%d)", requested, count,
                      count == 1 ? "" : "s", count - 1);
            return -1;
        }
        return requested;
    }
    return backend_local_slot() % count; /* each rank and sweep worker its own GPU */
}

/* The convolutions' workspace limit: WORKSPACE_LIMIT, or BIGBATCH_CUDNN_WORKSPACE_MB (1 to
 * 1048576) to let cuDNN's faster, hungrier algorithms in. 0, or -1 with err naming it. */
static int workspace_limit_from_env(size_t *limit, Error *err)
{
    const char *mb = getenv("BIGBATCH_CUDNN_WORKSPACE_MB");
    *limit = WORKSPACE_LIMIT;
    if (!mb || !*mb) return 0;
    char *end = NULL;
    errno = 0;
    const long v = strtol(mb, &end, 10);
    if (errno || *end || v < 1 || v > 1048576) {
        error_set(err, "BIGBATCH_CUDNN_WORKSPACE_MB=%s: not a number of MB from 1 to 1048576", mb);
        return -1;
    }
    *limit = (size_t)v << 20;
    return 0;
}

static int cuda_state_init(CudaState *st, int device, Error *err)
{
    if (workspace_limit_from_env(&st->workspace_limit, err) != 0) return -1; /* before any handle */
    st->device = device;
    cudaDeviceProp prop;
    if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        error_set(err, "device cuda:%d: %s", device, cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    snprintf(st->device_name, sizeof st->device_name, "cuda:%d %.200s", device, prop.name);
    /* the bus id, not the index: with CUDA_VISIBLE_DEVICES per rank every rank's GPU is cuda:0 */
    char bus[32];
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof bus, device) == cudaSuccess)
        snprintf(st->device_key, sizeof st->device_key, "cuda pci %s", bus);
    else
        snprintf(st->device_key, sizeof st->device_key, "%.63s", st->device_name);
    CUDA_CHECK(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&st->cublas));
    CUBLAS_CHECK(cublasSetStream(st->cublas, st->stream));
    /* FP32 as the CPU computes it: no TF32 tensor cores (until backend_set_precision) */
    st->precision = BK_PRECISION_FP32;
    CUBLAS_CHECK(cublasSetMathMode(st->cublas, CUBLAS_DEFAULT_MATH));
    /* cuBLAS's workspace given, not allocated by it, so a graph capture allocates nothing: the
     * size its documentation recommends (32 MiB on Hopper and later, 4 MiB before) */
    const size_t cublas_bytes = (size_t)(prop.major >= 9 ? 32 : 4) << 20;
    CUDA_CHECK(cudaMalloc(&st->cublas_workspace, cublas_bytes));
    cuda_count_bytes(st, cublas_bytes, false);
    CUBLAS_CHECK(cublasSetWorkspace(st->cublas, st->cublas_workspace, cublas_bytes));
    CUDNN_CHECK(cudnnCreate(&st->cudnn));
    CUDNN_CHECK(cudnnSetStream(st->cudnn, st->stream));
    const char *find = getenv("BIGBATCH_CUDNN_FIND");
    st->cudnn_find = find && !strcmp(find, "1");
    const char *deterministic = getenv("BIGBATCH_CUDNN_DETERMINISTIC");
    st->cudnn_deterministic = !(deterministic && !strcmp(deterministic, "0"));
    const char *verbose = getenv("BIGBATCH_CUDNN_VERBOSE");
    st->cudnn_verbose = verbose && !strcmp(verbose, "1");
    const char *pointwise = getenv("BIGBATCH_CUDA_POINTWISE");
    st->pointwise_gemm = !(pointwise && !strcmp(pointwise, "cudnn"));
    return 0;
}

Backend *cuda_backend_open(int device_index, int threads, Error *err)
{
    int device = pick_device(device_index, err);
    if (device < 0) return NULL;
    CudaState *st = (CudaState *)xcalloc(1, sizeof *st, "CUDA backend state");
    if (cuda_state_init(st, device, err)) {
        free(st);
        return NULL;
    }
    Backend *bk = (Backend *)xcalloc(1, sizeof *bk, "backend");
    bk->ops = &CUDA_OPS;
    bk->threads = threads < 1 ? 1 : threads;
    bk->impl = st;
    return bk;
}
