/* Max and average pooling over each (image, channel) plane. Windows are clipped to
 * the input; max ignores padding, average counts it (PyTorch defaults). */
#include "cpu.h"
#include "guard.h"

/* The first element of the window, then strictly greater ones: the first maximum in row-major
 * order takes the gradient. Selects, not branches: which value wins is data. */
static inline void window_max(const real *xp, int W, int h0, int h1, int w0, int w1, real *y, int32_t *argmax)
{
    int32_t at = h0 * W + w0;
    real best = xp[at];
    for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++) {
            const bool greater = xp[ih * W + iw] > best;
            best = greater ? xp[ih * W + iw] : best;
            at = greater ? ih * W + iw : at;
        }
    *y = best;
    *argmax = at;
}

/* Outputs ow0 .. ow1 - 1 of one row whose K x K windows at stride ST lie wholly inside the
 * plane, from input row ih0 and column ow * ST - pad: the window's size and stride known to the compiler, so the loop
 * over outputs is unrolled and vectorized (the generic loop spent ~25 cycles an output). */
#define MAXPOOL_ROW(NAME, K, ST)                                                                    \
    static void NAME(const real *xp, int W, int pad, int ih0, int ow0, int ow1, real *y, int32_t *argmax) \
    {                                                                                               \
        for (int ow = ow0; ow < ow1; ow++) {                                                        \
            int32_t at = ih0 * W + ow * ST - pad;                                                   \
            real best = xp[at];                                                                     \
            for (int kh = 0; kh < K; kh++)                                                          \
                for (int kw = 0; kw < K; kw++) {                                                    \
                    const int32_t i = (ih0 + kh) * W + ow * ST - pad + kw;                          \
                    const bool greater = xp[i] > best;                                              \
                    best = greater ? xp[i] : best;                                                  \
                    at = greater ? i : at;                                                          \
                }                                                                                   \
            y[ow] = best;                                                                           \
            argmax[ow] = at;                                                                        \
        }                                                                                           \
    }

MAXPOOL_ROW(maxpool_row_2s2, 2, 2)
MAXPOOL_ROW(maxpool_row_3s2, 3, 2)

enum { ROW_KERNEL_MIN = 12 };

typedef void (*MaxpoolRow)(const real *xp, int W, int pad, int ih0, int ow0, int ow1, real *y, int32_t *argmax);

/* The models' windows: 2x2 and 3x3 at stride 2 (NULL: the generic loop only). */
static MaxpoolRow maxpool_row_kernel(const PoolShape *s)
{
    if (s->stride != 2) return NULL;
    return s->k == 2 ? maxpool_row_2s2 : s->k == 3 ? maxpool_row_3s2 : NULL;
}

/* Outputs [from, to) of one row by the generic loop, each window clipped to the input. */
static void clipped_windows(const PoolShape *s, const real *xp, int h0, int h1, int from, int to, real *y,
                            int32_t *argmax)
{
    for (int ow = from; ow < to; ow++) {
        int w0 = ow * s->stride - s->pad, w1 = w0 + s->k;
        if (w0 < 0) w0 = 0;
        if (w1 > s->in_w) w1 = s->in_w;
        window_max(xp, s->in_w, h0, h1, w0, w1, &y[ow], &argmax[ow]);
    }
}

/* One output row: the windows wholly inside the plane by `row`, the clipped ones around them
 * by the generic loop. */
static void maxpool_output_row(const PoolShape *s, MaxpoolRow row, const real *xp, int oh, real *y, int32_t *argmax)
{
    const int H = s->in_h, W = s->in_w;
    int h0 = oh * s->stride - s->pad, h1 = h0 + s->k;
    const bool whole_rows = h0 >= 0 && h1 <= H;
    if (h0 < 0) h0 = 0;
    if (h1 > H) h1 = H;
    /* outputs [inner0, inner1) have windows wholly inside the columns */
    int inner0 = (s->pad + s->stride - 1) / s->stride, inner1 = W - s->k + s->pad >= 0 ? (W - s->k + s->pad) / s->stride + 1 : 0;
    if (inner1 > s->out_w) inner1 = s->out_w;
    /* below about a vector's width of outputs the unrolled kernel was slower than the loop */
    if (!row || !whole_rows || inner1 - inner0 < ROW_KERNEL_MIN) {
        clipped_windows(s, xp, h0, h1, 0, s->out_w, y, argmax);
        return;
    }
    clipped_windows(s, xp, h0, h1, 0, inner0, y, argmax);
    row(xp, W, s->pad, h0, inner0, inner1, y, argmax);
    clipped_windows(s, xp, h0, h1, inner1, s->out_w, y, argmax);
}

void cpu_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                        int32_t *argmax)
{
    BK_GUARD(bk);
    const int planes = n * s->c, ohw = s->out_h * s->out_w;
    const MaxpoolRow row = maxpool_row_kernel(s);
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        const real *xp = x + (size_t)p * s->in_h * s->in_w;
        for (int oh = 0; oh < s->out_h; oh++)
            maxpool_output_row(s, row, xp, oh, y + (size_t)p * ohw + (size_t)oh * s->out_w,
                               argmax + (size_t)p * ohw + (size_t)oh * s->out_w);
    }
}

void cpu_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                         const real *dy, real *dx)
{
    BK_GUARD(bk);
    const int planes = n * s->c, ohw = s->out_h * s->out_w;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        real *dxp = dx + (size_t)p * s->in_h * s->in_w;
        for (int j = 0; j < ohw; j++) dxp[argmax[(size_t)p * ohw + j]] += dy[(size_t)p * ohw + j];
    }
}

void cpu_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y)
{
    BK_GUARD(bk);
    const int planes = n * s->c, H = s->in_h, W = s->in_w;
    const real inv = (real)1 / (real)(s->k * s->k);
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        const real *xp = x + (size_t)p * H * W;
        real *yp = y + (size_t)p * s->out_h * s->out_w;
        for (int oh = 0; oh < s->out_h; oh++) {
            for (int ow = 0; ow < s->out_w; ow++) {
                int h0 = oh * s->stride - s->pad, w0 = ow * s->stride - s->pad;
                real acc = 0;
                for (int ih = h0; ih < h0 + s->k; ih++) {
                    if (ih < 0 || ih >= H) continue;
                    for (int iw = w0; iw < w0 + s->k; iw++)
                        if (iw >= 0 && iw < W) acc += xp[ih * W + iw];
                }
                yp[oh * s->out_w + ow] = acc * inv;
            }
        }
    }
}

void cpu_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx)
{
    BK_GUARD(bk);
    const int planes = n * s->c, H = s->in_h, W = s->in_w;
    const real inv = (real)1 / (real)(s->k * s->k);
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        real *dxp = dx + (size_t)p * H * W;
        const real *dyp = dy + (size_t)p * s->out_h * s->out_w;
        for (int oh = 0; oh < s->out_h; oh++) {
            for (int ow = 0; ow < s->out_w; ow++) {
                int h0 = oh * s->stride - s->pad, w0 = ow * s->stride - s->pad;
                real g = dyp[oh * s->out_w + ow] * inv;
                for (int ih = h0; ih < h0 + s->k; ih++) {
                    if (ih < 0 || ih >= H) continue;
                    for (int iw = w0; iw < w0 + s->k; iw++)
                        if (iw >= 0 && iw < W) dxp[ih * W + iw] += g;
                }
            }
        }
    }
}
