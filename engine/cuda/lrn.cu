/* Cross-channel LRN (engine/cpu/lrn.c), one thread per element. The window of channel c
 * spans [c - size/2, c + (size-1)/2]; `scale` keeps k + alpha/size * sum x^2, and
 * backward follows Caffe:
 *   dx_c += dy_c * scale_c^-beta - (2 alpha beta / size) x_c sum_{c' : c in win(c')} dy_c' y_c' / scale_c'
 * There is no workspace for the ratios the CPU keeps per image, so each thread recomputes
 * the few of its window. Every product is rounded before it is added (__fmul_rn: the CPU
 * build contracts nothing into an FMA) and the sums run in the CPU's channel order, so
 * with beta = 0.75 the results equal the CPU's bit for bit. */
#include "cuda.h"

#define GRID_STRIDE(i, count)                                                                    \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (count);                  \
         i += (size_t)gridDim.x * blockDim.x)

/* scale^-beta as the CPU computes it: AlexNet's 0.75 as 1 / (sqrt(s) * sqrt(sqrt(s))) in
 * correctly rounded float operations, any other beta by powf. */
static __device__ inline real lrn_pow_neg(real scale, real beta)
{
    if (beta == (real)0.75) {
        real r = __fsqrt_rn(scale);
        return __fdiv_rn(1.0f, __fmul_rn(r, __fsqrt_rn(r)));
    }
    return powf(scale, -beta);
}

static __global__ void lrn_forward_kernel(LrnShape s, size_t total, real a, const real *x, real *y, real *scale)
{
    const int C = s.c, HW = s.hw, lo = s.size / 2, hi = (s.size - 1) / 2;
    const size_t chw = (size_t)C * HW;
    GRID_STRIDE(e, total) {
        const size_t i = e / chw, rem = e - i * chw;
        const int c = (int)(rem / HW);
        const size_t pixel = i * chw + (rem - (size_t)c * HW); /* channel 0 of this pixel */
        const int c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
        real sum = 0;
        for (int q = c0; q <= c1; q++) {
            real xq = x[pixel + (size_t)q * HW];
            sum = __fadd_rn(sum, __fmul_rn(xq, xq));
        }
        const real sc = __fadd_rn(s.k, __fmul_rn(a, sum));
        scale[e] = sc;
        y[e] = __fmul_rn(lrn_pow_neg(sc, s.beta), x[e]);
    }
}

void cuda_lrn_forward(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale)
{
    const size_t total = (size_t)n * s->c * s->hw;
    if (!total) return;
    const real a = s->alpha / s->size; /* the CPU's float expression */
    lrn_forward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(*s, total, a, x, y,
                                                                                        scale);
    CUDA_LAUNCHED();
}

static __global__ void lrn_backward_kernel(LrnShape s, size_t total, real coef, const real *x, const real *y,
                                           const real *scale, const real *dy, real *dx)
{
    const int C = s.c, HW = s.hw, lo = s.size / 2, hi = (s.size - 1) / 2;
    const size_t chw = (size_t)C * HW;
    GRID_STRIDE(e, total) {
        const size_t i = e / chw, rem = e - i * chw;
        const int c = (int)(rem / HW);
        const size_t pixel = i * chw + (rem - (size_t)c * HW);
        /* channels c' whose window contains c: c - hi <= c' <= c + lo */
        const int c0 = c - hi < 0 ? 0 : c - hi, c1 = c + lo >= C ? C - 1 : c + lo;
        real acc = 0;
        for (int q = c0; q <= c1; q++) {
            const size_t at = pixel + (size_t)q * HW;
            acc = __fadd_rn(acc, __fdiv_rn(__fmul_rn(dy[at], y[at]), scale[at]));
        }
        const real pw = lrn_pow_neg(scale[e], s.beta);
        dx[e] = __fadd_rn(dx[e], __fsub_rn(__fmul_rn(dy[e], pw), __fmul_rn(__fmul_rn(coef, x[e]), acc)));
    }
}

void cuda_lrn_backward(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                       const real *scale, const real *dy, real *dx)
{
    const size_t total = (size_t)n * s->c * s->hw;
    if (!total) return;
    const real coef = 2 * s->alpha * s->beta / s->size; /* the CPU's float expression */
    lrn_backward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(*s, total, coef, x, y,
                                                                                         scale, dy, dx);
    CUDA_LAUNCHED();
}
