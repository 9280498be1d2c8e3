/* Max and average pooling over each (image, channel) plane. Windows are clipped to
 * the input; max ignores padding, average counts it (PyTorch defaults). */
#include "cpu.h"
#include "guard.h"

void cpu_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                        int32_t *argmax)
{
    BK_GUARD(bk);
    const int planes = n * s->c, H = s->in_h, W = s->in_w;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        const real *xp = x + (size_t)p * H * W;
        real *yp = y + (size_t)p * s->out_h * s->out_w;
        int32_t *ap = argmax + (size_t)p * s->out_h * s->out_w;
        for (int oh = 0; oh < s->out_h; oh++) {
            /* the window clipped to the input, so the inner loops test nothing but values */
            int h0 = oh * s->stride - s->pad, h1 = h0 + s->k;
            if (h0 < 0) h0 = 0;
            if (h1 > H) h1 = H;
            for (int ow = 0; ow < s->out_w; ow++) {
                int w0 = ow * s->stride - s->pad, w1 = w0 + s->k;
                if (w0 < 0) w0 = 0;
                if (w1 > W) w1 = W;
                /* the first element of the window, then strictly greater ones: the first
                 * maximum in row-major order takes the gradient */
                int32_t at = h0 * W + w0;
                real best = xp[at];
                for (int ih = h0; ih < h1; ih++) {
                    const real *xr = xp + ih * W;
                    for (int iw = w0; iw < w1; iw++) {
                        if (xr[iw] > best) {
                            best = xr[iw];
                            at = ih * W + iw;
                        }
                    }
                }
                yp[oh * s->out_w + ow] = best;
                ap[oh * s->out_w + ow] = at;
            }
        }
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
