/* Cross-channel LRN. The window of channel c spans [c - size/2, c + (size-1)/2]
 * (PyTorch's padding; Caffe's for odd sizes). Backward follows Caffe:
 * dx_c = dy_c * scale_c^-beta - (2 alpha beta / size) x_c sum_{c' : c in win(c')} dy_c' y_c' / scale_c' */
#include "cpu.h"

void bk_lrn_forward(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale)
{
    const int C = s->c, HW = s->hw, lo = s->size / 2, hi = (s->size - 1) / 2;
    const real a = s->alpha / s->size;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int i = 0; i < n; i++) {
        const real *xi = x + (size_t)i * C * HW;
        real *yi = y + (size_t)i * C * HW, *si = scale + (size_t)i * C * HW;
        for (int c = 0; c < C; c++) {
            int c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
            for (int j = 0; j < HW; j++) {
                real acc = 0;
                for (int q = c0; q <= c1; q++) acc += xi[(size_t)q * HW + j] * xi[(size_t)q * HW + j];
                real sc = s->k + a * acc;
                si[(size_t)c * HW + j] = sc;
                yi[(size_t)c * HW + j] = xi[(size_t)c * HW + j] * pow(sc, -s->beta);
            }
        }
    }
}

void bk_lrn_backward(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                     const real *scale, const real *dy, real *dx)
{
    const int C = s->c, HW = s->hw, lo = s->size / 2, hi = (s->size - 1) / 2;
    const real coef = 2 * s->alpha * s->beta / s->size;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int i = 0; i < n; i++) {
        size_t base = (size_t)i * C * HW;
        for (int c = 0; c < C; c++) {
            /* channels c' whose window contains c: c - hi <= c' <= c + lo */
            int c0 = c - hi < 0 ? 0 : c - hi, c1 = c + lo >= C ? C - 1 : c + lo;
            for (int j = 0; j < HW; j++) {
                size_t at = base + (size_t)c * HW + j;
                real acc = 0;
                for (int q = c0; q <= c1; q++) {
                    size_t aq = base + (size_t)q * HW + j;
                    acc += dy[aq] * y[aq] / scale[aq];
                }
                dx[at] += dy[at] * pow(scale[at], -s->beta) - coef * x[at] * acc;
            }
        }
    }
}
