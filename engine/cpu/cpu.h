/* Private to the CPU backend: its state, per-thread workspace, the gemm entry point that
 * picks sgemm or dgemm with the engine's scalar type, and the operations backend_cpu.c
 * puts in its table (each the bk_* function of the same name, engine/backend.h). */
#ifndef BB_CPU_H
#define BB_CPU_H
#include <cblas.h>
#include <omp.h>

#include "../backend_impl.h"
#include "threads.h"

typedef struct {
    size_t ws_elems;      /* per thread */
    real **ws;            /* one workspace per thread */
    size_t shared_elems;
    real *shared;         /* one workspace all threads read */
    CpuSpan *spans;       /* one per thread: the balanced loops' claims (threads.h) */
    BkPrecision precision;/* the products' arithmetic: fp32, or bf16/fp16 emulated (low_precision.c) */
    size_t lowp_elems;
    real *lowp;           /* the emulation's rounded copies, grown at a layer's first call */
} CpuState;

static inline real *cpu_workspace(Backend *bk, int thread) { return ((CpuState *)bk->impl)->ws[thread]; }
static inline real *cpu_shared_workspace(Backend *bk) { return ((CpuState *)bk->impl)->shared; }
static inline size_t cpu_shared_elems(Backend *bk) { return ((CpuState *)bk->impl)->shared_elems; }
static inline CpuSpan *cpu_spans(Backend *bk) { return ((CpuState *)bk->impl)->spans; }
static inline bool cpu_low_precision(const Backend *bk)
{
    return ((const CpuState *)bk->impl)->precision != BK_PRECISION_FP32;
}

/* The sum of the T threads' workspace values at `at`, in thread order. */
static inline real cpu_thread_copies_at(Backend *bk, int T, size_t at)
{
    real acc = 0;
    for (int u = 0; u < T; u++) acc += cpu_workspace(bk, u)[at];
    return acc;
}

/* dst[j] += the sum over threads u = 0, 1, ... in that order of thread u's workspace value at
 * offset + j, j < count: the private weight gradients added the same way every run. Called by
 * each thread t of T in cpu_run's fn, which share the values out once all have written their
 * copies. */
static inline void cpu_sum_thread_copies(Backend *bk, int t, int T, size_t offset, size_t count, real *dst)
{
    cpu_barrier(T);
    size_t from, to;
    cpu_share(count, t, T, &from, &to);
    for (size_t j = from; j < to; j++) dst[j] += cpu_thread_copies_at(bk, T, offset + j);
}

static inline void gemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                        real alpha, const real *a, int lda, const real *b, int ldb, real beta,
                        real *c, int ldc)
{
#ifdef BB_DOUBLE
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

/* denormals.c: subnormals flushed to zero (x86) in the calling thread, in the OpenMP threads
 * of a region of `threads`, and in every thread they create. */
void cpu_flush_denormals(int threads);
/* memory.c */
void *cpu_buffer_alloc(Backend *bk, size_t bytes, size_t *block);
void cpu_buffer_free(Backend *bk, void *address, size_t block);
void cpu_upload(Backend *bk, void *dev, const void *host, size_t bytes);
void cpu_download(Backend *bk, void *host, const void *dev, size_t bytes);
void *cpu_host_address(Backend *bk, void *dev);
void *cpu_host_alloc(Backend *bk, size_t bytes);
void cpu_host_free(Backend *bk, void *host);
void cpu_synchronize(Backend *bk);
void *cpu_event_create(Backend *bk);
void cpu_event_destroy(Backend *bk, void *event);
void cpu_event_record(Backend *bk, void *event);
void cpu_event_wait(Backend *bk, void *event);
/* low_precision.c: --precision bf16/fp16, the products on rounded copies around the fp32 code */
void lowp_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                         real *y);
void lowp_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                          real *dx, bool accumulate, real *dw, real *db);
void lowp_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *b, real *y);
void lowp_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *dy,
                          real *dx, real *dw, real *db);
/* memory.c: a cache-line aligned block of `bytes` (a multiple of 64), or exit naming what it
 * was for; and *area replaced with a zeroed such block of `elems` */
void *cpu_aligned_or_exit(size_t bytes, const char *what);
void cpu_workspace_grow(real **area, size_t elems);
/* conv.c: the dispatcher, the one entry of the fp32 convolutions (the im2col reference path
 * and its pieces: conv_im2col.h) */
void conv_forward_fp32(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                       real *y);
void conv_backward_fp32(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                        real *dx, bool accumulate, real *dw, real *db);
/* conv_batched.c: one gemm over a group of images, for wide layers with small output planes */
int conv_batched_applies(const ConvShape *s);
Workspace conv_batched_workspace(const ConvShape *s, size_t weight_elems, int batch);
void conv_batched_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *b, real *y);
void conv_batched_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                           const real *dy, real *dx, real *dw);
/* conv_winograd_rows.c: F(2x2, 3x3) with a row of tiles in each vector, for the layers
 * winograd_rows_applies accepts (AVX-512 only); its backward writes dx or adds to it */
int winograd_rows_applies(const ConvShape *s);
Workspace winograd_rows_workspace(const ConvShape *s, size_t weight_elems, int batch);
void winograd_rows_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                           real *y);
void winograd_rows_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                            real *dx, bool accumulate, real *dw);
/* conv_winograd_cl.c: F(2x2, 3x3) with channels in the vectors, for the layers
 * winograd_cl_applies accepts; its backward writes dx (!accumulate) or adds to it */
int winograd_cl_applies(const ConvShape *s);
Workspace winograd_cl_workspace(const ConvShape *s, size_t weight_elems, int batch);
void winograd_cl_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                         real *y);
void winograd_cl_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                          real *dx, bool accumulate, real *dw);
/* conv_winograd.c: F(2x2, 3x3) and F(2x2, 5x5) for the layers winograd_applies accepts */
int winograd_applies(const ConvShape *s);
Workspace winograd_workspace(const ConvShape *s);
void winograd_conv_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                           const real *b, real *y);
void winograd_conv_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                            const real *dy, real *dx, real *dw);
/* conv_phased.c: a strided layer whose filter spans three strides (AlexNet's conv1) as
 * conv_winograd.c's 3x3 over its input's phases, for the layers phased_applies accepts */
int phased_applies(const ConvShape *s);
Workspace phased_workspace(const ConvShape *s, size_t weight_elems, int batch);
void phased_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b, real *y);
void phased_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy, real *dx,
                     real *dw);
/* conv_direct.c: direct 3x3, 5x5 and 1x1 stride-2 convolution for the small-channel layers
 * direct_applies accepts (its internal pieces: conv_direct.h) */
int direct_applies(const ConvShape *s);
Workspace direct_workspace(const ConvShape *s, size_t weight_elems, int batch);
/* whether its weight gradient goes by outer products (conv_direct_outer.c: vectors along the
 * output channels) */
int direct_outer_gradient_applies(const ConvShape *s);
void direct_conv_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *b, real *y);
void direct_conv_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *dy, real *dx, bool accumulate, real *dw);
/* linear.c: the fp32 products */
void linear_forward_fp32(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *b, real *y);
void linear_backward_fp32(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *dy,
                          real *dx, real *dw, real *db);
/* the arithmetic, one function each (backend_ops.h): low_precision.c (conv2d, linear),
 * elementwise.c, pool.c, batchnorm.c, lrn.c, softmax_xent.c, optim.c, vector.c */
#define CPU_OP_PROTOTYPE(ret, name, params, args) ret cpu_##name params;
BACKEND_OPERATIONS(CPU_OP_PROTOTYPE)
#undef CPU_OP_PROTOTYPE
/* vector.c. Loops over a parameter tensor split across threads only from this many elements:
 * below it, waking the threads costs more than the pass. Elementwise arithmetic is the same
 * on any number of threads, and sums use blocks that depend on the count alone. */
enum { CPU_PARALLEL_MIN = 1 << 15 };

#endif
