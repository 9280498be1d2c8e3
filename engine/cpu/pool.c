/* Max and average pooling over each (image, channel) plane. Windows are clipped to
 * the input; max ignores padding, average counts it (PyTorch defaults). */
#include <float.h>

#include "cpu.h"

void bk_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                        int32_t *argmax)
{
    const int planes = n * s->c, H = s->in_h, W = s->in_w;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        const real *xp = x + (size_t)p * H * W;
        real *yp = y + (size_t)p * s->out_h * s->out_w;
        int32_t *ap = argmax + (size_t)p * s->out_h * s->out_w;
        for (int oh = 0; oh < s->out_h; oh++) {
            for (int ow = 0; ow < s->out_w; ow++) {
                int h0 = oh * s->stride - s->pad, w0 = ow * s->stride - s->pad;
                real best = -FLT_MAX;
                int32_t at = -1;
                for (int ih = h0; ih < h0 + s->k; ih++) {
                    if (ih < 0 || ih >= H) continue;
                    for (int iw = w0; iw < w0 + s->k; iw++) {
                        if (iw < 0 || iw >= W) continue;
                        real v = xp[ih * W + iw];
                        if (at < 0 || v > best) {
                            best = v;
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

void bk_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                         const real *dy, real *dx)
{
    const int planes = n * s->c, ohw = s->out_h * s->out_w;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int p = 0; p < planes; p++) {
        real *dxp = dx + (size_t)p * s->in_h * s->in_w;
        for (int j = 0; j < ohw; j++) dxp[argmax[(size_t)p * ohw + j]] += dy[(size_t)p * ohw + j];
    }
}

void bk_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y)
{
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

void bk_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx)
{
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
