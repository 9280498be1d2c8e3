/* Elementwise operations (engine/cpu/elementwise.c), grid-stride loops on the backend's
 * stream. Dropout calls the same Philox functions as the CPU (engine/base/philox.h, host and
 * device), one call per block of four elements, so a mask is identical on both backends.
 * Products are rounded before they are added (__fmul_rn): the CPU build contracts nothing
 * into an FMA (gcc -std=c11), and this keeps the results equal to it bit for bit. */
#include "../base/philox.h"
#include "cuda.h"
#include "fast_divide.h"

#define GRID_STRIDE(i, count)                                                                    \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (count);                  \
         i += (size_t)gridDim.x * blockDim.x)

static __global__ void relu_forward_kernel(size_t count, const real *x, real *y)
{
    GRID_STRIDE(i, count) y[i] = x[i] > 0 ? x[i] : 0;
}

void cuda_relu_forward(Backend *bk, size_t count, const real *x, real *y)
{
    if (!count) return;
    relu_forward_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, x, y);
    CUDA_LAUNCHED();
}

static __global__ void relu_backward_kernel(size_t count, const real *y, const real *dy, real *dx, bool accumulate)
{
    GRID_STRIDE(i, count) {
        const real g = y[i] > 0 ? dy[i] : 0;
        dx[i] = accumulate ? dx[i] + g : g;
    }
}

void cuda_relu_backward(Backend *bk, size_t count, const real *y, const real *dy, real *dx, bool accumulate)
{
    if (!count) return;
    relu_backward_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, y, dy, dx,
                                                                                          accumulate);
    CUDA_LAUNCHED();
}

static __global__ void add_kernel(size_t count, const real *a, const real *b, bool relu, real *y)
{
    GRID_STRIDE(i, count) {
        const real v = a[i] + b[i];
        y[i] = relu && !(v > 0) ? 0 : v;
    }
}

void cuda_add_forward(Backend *bk, size_t count, const real *a, const real *b, bool relu, real *y)
{
    if (!count) return;
    add_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, a, b, relu, y);
    CUDA_LAUNCHED();
}

static __global__ void accumulate_kernel(size_t count, const real *dy, real *dx)
{
    GRID_STRIDE(i, count) dx[i] += dy[i];
}

void cuda_accumulate(Backend *bk, size_t count, const real *dy, real *dx)
{
    if (!count) return;
    accumulate_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, dy, dx);
    CUDA_LAUNCHED();
}

/* One thread per Philox block b0 + t (elements 4b .. 4b+3 of the whole stream), keeping
 * those of [first, first + count): the CPU's loop, a block per iteration. */
static __global__ void dropout_forward_kernel(DropoutKey key, size_t count, uint64_t b0, uint64_t blocks,
                                              real p, real keep, real *mask, const real *x, real *y)
{
    const uint64_t first = key.first_element, end = first + count;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < blocks;
         t += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t b = b0 + t;
        Philox4x32 r = philox_dropout_block(key.seed, key.step, key.layer, b);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            uint64_t e = 4 * b + (uint64_t)k;
            if (e < first || e >= end) continue;
            size_t i = (size_t)(e - first);
            real m = philox_uniform24(r.v[k]) < (double)p ? 0 : keep;
            mask[i] = m;
            y[i] = x[i] * m;
        }
    }
}

void cuda_dropout_forward(Backend *bk, size_t count, real p, const DropoutKey *key, real *mask,
                          const real *x, real *y)
{
    if (!count) return;
    const real keep = 1 / (1 - p); /* the CPU's float expression */
    const uint64_t first = key->first_element, b0 = first / 4, b1 = (first + count - 1) / 4;
    const uint64_t blocks = b1 - b0 + 1;
    dropout_forward_kernel<<<cuda_blocks((size_t)blocks), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(
        *key, count, b0, blocks, p, keep, mask, x, y);
    CUDA_LAUNCHED();
}

static __global__ void dropout_backward_kernel(size_t count, const real *mask, const real *dy, real *dx)
{
    GRID_STRIDE(i, count) dx[i] += __fmul_rn(dy[i], mask[i]);
}

void cuda_dropout_backward(Backend *bk, size_t count, const real *mask, const real *dy, real *dx)
{
    if (!count) return;
    dropout_backward_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, mask, dy, dx);
    CUDA_LAUNCHED();
}

/* A batch's normalization (pixel_normalize of engine/data/pixel.h): the same three roundings as
 * the CPU, spelled with the _rn intrinsics so nothing is contracted or approximated. The
 * per-channel constants travel as a kernel argument. */
enum { NORMALIZE_MAX_CHANNELS = 16 };
typedef struct {
    float mean[NORMALIZE_MAX_CHANNELS], std[NORMALIZE_MAX_CHANNELS];
} ChannelStats;

static __global__ void normalize_kernel(size_t count, ChannelOfIndex channels, const uint8_t *x, ChannelStats st,
                                        real *y)
{
    GRID_STRIDE(i, count) {
        const int ch = channel_at(channels, i);
        y[i] = __fdiv_rn(__fsub_rn(__fdiv_rn((float)x[i], 255.0f), st.mean[ch]), st.std[ch]);
    }
}

void cuda_normalize_pixels(Backend *bk, size_t images, int c, size_t hw, const uint8_t *x, const float *mean,
                           const float *std, real *y)
{
    const size_t count = images * (size_t)c * hw;
    if (!count) return;
    if (c > NORMALIZE_MAX_CHANNELS) cuda_die(__FILE__, __LINE__, "normalize_pixels", "more than 16 channels");
    ChannelStats st = {};
    for (int ch = 0; ch < c; ch++) {
        st.mean[ch] = mean[ch];
        st.std[ch] = std[ch];
    }
    const ChannelOfIndex channels = channel_of_index(count, (uint64_t)c, hw);
    normalize_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(count, channels, x, st, y);
    CUDA_LAUNCHED();
}
