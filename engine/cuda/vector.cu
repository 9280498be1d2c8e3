/* Vector reductions and updates (engine/cpu/vector.c) on the backend's stream, and the
 * fixed-order sum of squares other files reuse (reduce.cuh). sum_squares is the one
 * operation here that waits for the device: it returns a host value. axpy rounds the product
 * before the add (__fmul_rn) as the CPU build does (gcc -std=c11 contracts nothing into an
 * FMA), so it matches the CPU bit for bit. */
#include "reduce.cuh"

/* ---- the fixed-order sum of squares ---- */
/* Each block's threads sum a grid-stride share in ascending order; the grid depends only on
 * count, so the partials are repeatable. */
static __global__ void sum_squares_partial(size_t count, const real *x, double *partial)
{
    double acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        double v = x[i];
        acc += v * v;
    }
    double total = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

static __global__ void sum_partials(unsigned blocks, const double *partial, double *out)
{
    double acc = 0;
    for (unsigned i = threadIdx.x; i < blocks; i += blockDim.x) acc += partial[i];
    double total = block_sum(acc);
    if (threadIdx.x == 0) *out = total;
}

void cuda_sum_squares_to(Backend *bk, size_t count, const real *x, double *out)
{
    cudaStream_t stream = cuda_state(bk)->stream;
    double *partial = cuda_reduce_scratch(bk, CUDA_REDUCE_BLOCKS);
    unsigned blocks = cuda_blocks(count);
    if (blocks > CUDA_REDUCE_BLOCKS) blocks = CUDA_REDUCE_BLOCKS;
    sum_squares_partial<<<blocks, CUDA_THREADS, 0, stream>>>(count, x, partial);
    CUDA_LAUNCHED();
    sum_partials<<<1, CUDA_THREADS, 0, stream>>>(blocks, partial, out);
    CUDA_LAUNCHED();
}

double cuda_sum_squares(Backend *bk, size_t count, const real *x)
{
    CudaState *st = cuda_state(bk);
    /* the total goes after the partials, so growing the scratch here keeps both */
    double *total = cuda_reduce_scratch(bk, CUDA_REDUCE_BLOCKS + 1) + CUDA_REDUCE_BLOCKS;
    cuda_sum_squares_to(bk, count, x, total);
    CUDA_CHECK(cudaMemcpyAsync(st->reduce_host, total, sizeof(double), cudaMemcpyDeviceToHost, st->stream));
    CUDA_CHECK(cudaStreamSynchronize(st->stream));
    return st->reduce_host[0];
}

/* ---- copies and updates ---- */
void cuda_copy_bytes(Backend *bk, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cuda_state(bk)->stream));
}

void cuda_copy(Backend *bk, size_t count, const real *x, real *y)
{
    if (!count || x == y) return;
    CUDA_CHECK(cudaMemcpyAsync(y, x, count * sizeof(real), cudaMemcpyDeviceToDevice, cuda_state(bk)->stream));
}

static __global__ void fill_kernel(size_t count, real value, real *x)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) x[i] = value;
}

void cuda_fill(Backend *bk, size_t count, real value, real *x)
{
    if (!count) return;
    cudaStream_t stream = cuda_state(bk)->stream;
    if (value == 0) { /* zeroing gradients every step: the copy engine's memset */
        CUDA_CHECK(cudaMemsetAsync(x, 0, count * sizeof *x, stream));
        return;
    }
    fill_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, stream>>>(count, value, x);
    CUDA_LAUNCHED();
}

static __global__ void scale_kernel(size_t count, real alpha, real *x)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) x[i] *= alpha;
}

void cuda_scale(Backend *bk, size_t count, real alpha, real *x)
{
    if (!count) return;
    scale_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, alpha, x);
    CUDA_LAUNCHED();
}

static __global__ void axpy_kernel(size_t count, real alpha, const real *x, real *y)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        y[i] += __fmul_rn(alpha, x[i]); /* no FMA: the CPU rounds the product first */
}

void cuda_axpy(Backend *bk, size_t count, real alpha, const real *x, real *y)
{
    if (!count) return;
    axpy_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, alpha, x, y);
    CUDA_LAUNCHED();
}
