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

void cpu_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                       const real *b, real *y)
{
    BK_GUARD(bk);
    /* A region even for one block (LeNet's fc3): outside one OpenBLAS threads the product
     * itself, and simple-cnn's fc2 (32 x 1024 x 10) took 1.3-1.8 ms that way against 0.04. */
#pragma omp parallel num_threads(bk->threads)
    {
        int o0, o1;
        linear_block(out, omp_get_num_threads(), omp_get_thread_num(), &o0, &o1);
        if (o1 > o0) {
            gemm(CblasNoTrans, CblasTrans, n, o1 - o0, in, 1, x, in, w + (size_t)o0 * in, in, 0, y + o0, out);
            if (b)
                for (int i = 0; i < n; i++)
                    for (int o = o0; o < o1; o++) y[(size_t)i * out + o] += b[o];
        }
    }
}

void cpu_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                        const real *dy, real *dx, real *dw, real *db)
{
    BK_GUARD(bk);
#pragma omp parallel num_threads(bk->threads)
    {
        const int threads = omp_get_num_threads(), t = omp_get_thread_num();
        int i0, i1, o0, o1;
        linear_block(in, threads, t, &i0, &i1);
        if (dx && i1 > i0) gemm(CblasNoTrans, CblasNoTrans, n, i1 - i0, out, 1, dy, out, w + i0, in, 1, dx + i0, in);
        /* from the last thread down: where dw has fewer blocks than dx, they go to other threads */
        linear_block(out, threads, threads - 1 - t, &o0, &o1);
        if (o1 > o0) {
            gemm(CblasTrans, CblasNoTrans, o1 - o0, in, n, 1, dy + o0, out, x, in, 1, dw + (size_t)o0 * in, in);
            if (db)
                for (int i = 0; i < n; i++)
                    for (int o = o0; o < o1; o++) db[o] += dy[(size_t)i * out + o];
        }
    }
}
