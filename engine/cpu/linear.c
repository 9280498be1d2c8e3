/* Fully connected layers: y = x w^T + b, dx += dy w, dw += dy^T x, db += column sums of dy.
 * Each product is split by us across the threads in one parallel region, every thread taking
 * a contiguous block of the output units (or of the inputs, for dx) with one sgemm of its own
 * (OpenBLAS runs single-threaded inside a parallel region). Each thread streams its share of w,
 * as OpenBLAS's own split would, but the bias and its gradient ride in the same region, and a
 * small layer does not pay for OpenBLAS's threading: LeNet's fc1 (32 x 400 x 120) took longer on
 * two threads than on one. A run repeats bit for bit at a fixed thread count; another count may
 * round differently, as OpenBLAS's own split did (its kernels' edge tiles sum in their own order). */
#include "cpu.h"
#include "guard.h"

/* Columns per block are a multiple of this (a cache line of floats), so two threads do not
 * write the same line of an output row except where a row's end meets the next row's start. */
enum { LINEAR_BLOCK_ALIGN = 16, LINEAR_BLOCK_MIN = 32 };

/* How many blocks [0, total) is split into: as many as the threads, but none under
 * LINEAR_BLOCK_MIN columns. */
static int linear_blocks(int total, int threads)
{
    int blocks = total / LINEAR_BLOCK_MIN;
    if (blocks < 1) blocks = 1;
    return blocks < threads ? blocks : threads;
}

/* Block t of [0, total); an empty block for a thread with none. */
static void linear_block(int total, int threads, int t, int *from, int *to)
{
    const int blocks = linear_blocks(total, threads);
    *from = *to = 0;
    if (t >= blocks) return;
    const int units = (total + LINEAR_BLOCK_ALIGN - 1) / LINEAR_BLOCK_ALIGN;
    *from = (int)((long)units * t / blocks) * LINEAR_BLOCK_ALIGN;
    *to = (int)((long)units * (t + 1) / blocks) * LINEAR_BLOCK_ALIGN;
    if (*from > total) *from = total;
    if (*to > total) *to = total;
}

typedef struct {
    int n, in, out;
    const real *x, *w, *b, *dy;
    real *y, *dx, *dw, *db;
} LinearArgs;

static void linear_forward_block(void *ctx, int t, int T)
{
    const LinearArgs *a = ctx;
    int o0, o1;
    linear_block(a->out, T, t, &o0, &o1);
    if (o1 <= o0) return;
    gemm(CblasNoTrans, CblasTrans, a->n, o1 - o0, a->in, 1, a->x, a->in, a->w + (size_t)o0 * a->in, a->in, 0,
         a->y + o0, a->out);
    if (a->b)
        for (int i = 0; i < a->n; i++)
            for (int o = o0; o < o1; o++) a->y[(size_t)i * a->out + o] += a->b[o];
}

void linear_forward_fp32(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *b, real *y)
{
    BK_GUARD(bk);
    /* Our threads even for one block (LeNet's fc3): outside a region OpenBLAS threads the
     * product itself, and simple-cnn's fc2 (32 x 1024 x 10) took 1.3-1.8 ms that way against 0.04. */
    LinearArgs a = {n, in, out, x, w, b, NULL, y, NULL, NULL, NULL};
    cpu_run(bk->threads, linear_forward_block, &a);
}

static void linear_backward_block(void *ctx, int t, int T)
{
    const LinearArgs *a = ctx;
    int i0, i1, o0, o1;
    linear_block(a->in, T, t, &i0, &i1);
    if (a->dx && i1 > i0)
        gemm(CblasNoTrans, CblasNoTrans, a->n, i1 - i0, a->out, 1, a->dy, a->out, a->w + i0, a->in, 1, a->dx + i0,
             a->in);
    /* from the last thread down: where dw has fewer blocks than dx, they go to other threads */
    linear_block(a->out, T, T - 1 - t, &o0, &o1);
    if (o1 <= o0) return;
    gemm(CblasTrans, CblasNoTrans, o1 - o0, a->in, a->n, 1, a->dy + o0, a->out, a->x, a->in, 1,
         a->dw + (size_t)o0 * a->in, a->in);
    if (a->db)
        for (int i = 0; i < a->n; i++)
            for (int o = o0; o < o1; o++) a->db[o] += a->dy[(size_t)i * a->out + o];
}

void linear_backward_fp32(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *dy,
                          real *dx, real *dw, real *db)
{
    BK_GUARD(bk);
    LinearArgs a = {n, in, out, x, w, NULL, dy, NULL, dx, dw, db};
    cpu_run(bk->threads, linear_backward_block, &a);
}
