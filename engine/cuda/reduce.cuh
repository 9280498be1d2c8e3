/* Fixed-order double reductions for the CUDA backend's kernels (defined in vector.cu where
 * not inline). The CPU sums in double; here every reduction is a per-thread strided sum in
 * ascending index order followed by a fixed shared-memory tree, and the number of blocks
 * depends only on the element count, so a result is the same on every run and every GPU. */
#ifndef BB_CUDA_REDUCE_CUH
#define BB_CUDA_REDUCE_CUH
#include "cuda.h"

/* The most blocks the first pass of cuda_sum_squares_to uses: the partial sums it leaves in
 * cuda_reduce_scratch elements [0, CUDA_REDUCE_BLOCKS). */
enum { CUDA_REDUCE_BLOCKS = 1024 };

/* The sum of v over the threads of a block of CUDA_THREADS (256) threads, returned to every
 * thread. Every thread of the block must call it (it holds __syncthreads); it may be called
 * several times in one kernel (it waits before its shared memory is reused). */
__device__ inline double block_sum(double v)
{
    __shared__ double part[CUDA_THREADS];
    const unsigned t = threadIdx.x;
    part[t] = v;
    __syncthreads();
    for (unsigned half = CUDA_THREADS / 2; half > 0; half >>= 1) {
        if (t < half) part[t] += part[t + half];
        __syncthreads();
    }
    double total = part[0];
    __syncthreads(); /* everyone has read part[0] before a next call overwrites it */
    return total;
}

/* cuda_sum_squares_to (bk_sum_squares_to, declared with the operations in cuda.h) writes
 * sum_i (double)x[i]^2 into the device double *out, on the stream, without waiting:
 * per-block partials in cuda_reduce_scratch (elements [0, CUDA_REDUCE_BLOCKS), overwritten),
 * then one block adds them in order. count 0 writes 0. It grows the scratch to
 * CUDA_REDUCE_BLOCKS if smaller (waiting for the stream, once), which moves it: a caller that
 * keeps scratch pointers of its own asks cuda_reduce_scratch for CUDA_REDUCE_BLOCKS + its own
 * elements first, and puts its own after the first CUDA_REDUCE_BLOCKS. */

#endif
