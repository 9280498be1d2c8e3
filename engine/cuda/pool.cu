/* Max and average pooling (engine/cpu/pool.c): windows clipped to the input; max ignores
 * padding, average counts it in the divisor (PyTorch defaults). Forward takes one thread
 * per output. Backward takes one thread per INPUT element, which gathers the outputs whose
 * window holds it in row-major order and adds their gradients into its dx one by one: no
 * two threads write one element (3x3 stride-2 windows overlap), and the adds come in the
 * CPU's order, so dx equals the CPU's bit for bit. */
#include "cuda.h"

#define GRID_STRIDE(i, count)                                                                    \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (count);                  \
         i += (size_t)gridDim.x * blockDim.x)

/* The outputs [*o0, *o1] along one axis whose unclipped window [o*stride - pad, +k) holds
 * input i (empty when *o0 > *o1). */
static __device__ inline void covering(int i, int k, int stride, int pad, int out, int *o0, int *o1)
{
    int lo = i + pad - k + 1; /* the first o with o*stride >= lo */
    *o0 = lo <= 0 ? 0 : (lo + stride - 1) / stride;
    int hi = (i + pad) / stride; /* i + pad >= 0 */
    *o1 = hi < out - 1 ? hi : out - 1;
}

/* ---- max ---- */
static __global__ void maxpool_forward_kernel(PoolShape s, size_t total, const real *x, real *y,
                                              int32_t *argmax)
{
    const int H = s.in_h, W = s.in_w;
    const size_t ohw = (size_t)s.out_h * s.out_w;
    GRID_STRIDE(o, total) {
        const size_t p = o / ohw;
        const int r = (int)(o - p * ohw), oh = r / s.out_w, ow = r % s.out_w;
        const real *xp = x + p * H * W;
        int h0 = oh * s.stride - s.pad, h1 = h0 + s.k;
        if (h0 < 0) h0 = 0;
        if (h1 > H) h1 = H;
        int w0 = ow * s.stride - s.pad, w1 = w0 + s.k;
        if (w0 < 0) w0 = 0;
        if (w1 > W) w1 = W;
        /* the window's first element, then strictly greater ones: the first maximum in
         * row-major order takes the gradient, as on the CPU */
        int32_t at = h0 * W + w0;
        real best = xp[at];
        for (int ih = h0; ih < h1; ih++) {
            for (int iw = w0; iw < w1; iw++) {
                real v = xp[ih * W + iw];
                if (v > best) {
                    best = v;
                    at = ih * W + iw;
                }
            }
        }
        y[o] = best;
        argmax[o] = at;
    }
}

void cuda_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                          int32_t *argmax)
{
    const size_t total = (size_t)n * s->c * s->out_h * s->out_w;
    if (!total) return;
    maxpool_forward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(*s, total, x, y,
                                                                                            argmax);
    CUDA_LAUNCHED();
}

static __global__ void maxpool_backward_kernel(PoolShape s, size_t total, const int32_t *argmax,
                                               const real *dy, real *dx, bool accumulate)
{
    const size_t hw = (size_t)s.in_h * s.in_w, ohw = (size_t)s.out_h * s.out_w;
    GRID_STRIDE(e, total) {
        const size_t p = e / hw;
        const int r = (int)(e - p * hw), ih = r / s.in_w, iw = r % s.in_w;
        int oh0, oh1, ow0, ow1;
        covering(ih, s.k, s.stride, s.pad, s.out_h, &oh0, &oh1);
        covering(iw, s.k, s.stride, s.pad, s.out_w, &ow0, &ow1);
        const int32_t *ap = argmax + p * ohw;
        const real *dyp = dy + p * ohw;
        real v = accumulate ? dx[e] : 0;
        for (int oh = oh0; oh <= oh1; oh++)
            for (int ow = ow0; ow <= ow1; ow++)
                if (ap[oh * s.out_w + ow] == r) v += dyp[oh * s.out_w + ow];
        dx[e] = v;
    }
}

void cuda_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                           const real *dy, real *dx, bool accumulate)
{
    const size_t total = (size_t)n * s->c * s->in_h * s->in_w;
    if (!total) return;
    maxpool_backward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(*s, total, argmax,
                                                                                             dy, dx, accumulate);
    CUDA_LAUNCHED();
}

/* ---- average: the divisor is k*k, padding included ---- */
static __global__ void avgpool_forward_kernel(PoolShape s, size_t total, real inv, const real *x, real *y)
{
    const int H = s.in_h, W = s.in_w;
    const size_t ohw = (size_t)s.out_h * s.out_w;
    GRID_STRIDE(o, total) {
        const size_t p = o / ohw;
        const int r = (int)(o - p * ohw), oh = r / s.out_w, ow = r % s.out_w;
        const real *xp = x + p * H * W;
        const int h0 = oh * s.stride - s.pad, w0 = ow * s.stride - s.pad;
        real acc = 0;
        for (int ih = h0; ih < h0 + s.k; ih++) {
            if (ih < 0 || ih >= H) continue;
            for (int iw = w0; iw < w0 + s.k; iw++)
                if (iw >= 0 && iw < W) acc += xp[ih * W + iw];
        }
        y[o] = acc * inv;
    }
}

void cuda_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y)
{
    const size_t total = (size_t)n * s->c * s->out_h * s->out_w;
    if (!total) return;
    const real inv = (real)1 / (real)(s->k * s->k);
    avgpool_forward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(*s, total, inv, x,
                                                                                            y);
    CUDA_LAUNCHED();
}

static __global__ void avgpool_backward_kernel(PoolShape s, size_t total, real inv, const real *dy, real *dx)
{
    const size_t hw = (size_t)s.in_h * s.in_w, ohw = (size_t)s.out_h * s.out_w;
    GRID_STRIDE(e, total) {
        const size_t p = e / hw;
        const int r = (int)(e - p * hw), ih = r / s.in_w, iw = r % s.in_w;
        int oh0, oh1, ow0, ow1;
        covering(ih, s.k, s.stride, s.pad, s.out_h, &oh0, &oh1);
        covering(iw, s.k, s.stride, s.pad, s.out_w, &ow0, &ow1);
        const real *dyp = dy + p * ohw;
        real v = dx[e];
        /* the CPU's g = dy * inv, rounded before the add (no FMA) */
        for (int oh = oh0; oh <= oh1; oh++)
            for (int ow = ow0; ow <= ow1; ow++) v += __fmul_rn(dyp[oh * s.out_w + ow], inv);
        dx[e] = v;
    }
}

void cuda_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx)
{
    const size_t total = (size_t)n * s->c * s->in_h * s->in_w;
    if (!total) return;
    const real inv = (real)1 / (real)(s->k * s->k);
    avgpool_backward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(*s, total, inv, dy,
                                                                                             dx);
    CUDA_LAUNCHED();
}
