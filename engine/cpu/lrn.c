/* Cross-channel LRN. The window of channel c spans [c - size/2, c + (size-1)/2]
 * (PyTorch's padding; Caffe's for odd sizes). Backward follows Caffe:
 * dx_c = dy_c * scale_c^-beta - (2 alpha beta / size) x_c sum_{c' : c in win(c')} dy_c' y_c' / scale_c'
 * The loops run over pixels innermost (one channel row at a time) so they vectorize;
 * the window sums add the same terms in the same channel order as a per-pixel loop. */
#include "cpu.h"
#include "guard.h"

Workspace lrn_workspace(const LrnShape *s)
{
    return (Workspace){(size_t)(s->c + 2) * s->hw, 0};
}

/* scale^-beta. AlexNet's beta = 0.75 is sqrt(s) * sqrt(sqrt(s)) in the denominator:
 * three correctly rounded operations instead of a pow call, which made LRN 40% of an
 * alexnet-cifar training step. */
static void lrn_pow_neg(int n, real beta, const real *scale, real *out)
{
    if (beta == (real)0.75) {
        for (int j = 0; j < n; j++) {
            real r = sqrt(scale[j]);
            out[j] = 1 / (r * sqrt(r));
        }
    } else {
        for (int j = 0; j < n; j++) out[j] = pow(scale[j], -beta);
    }
}

void cpu_lrn_forward(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale)
{
    BK_GUARD(bk);
    const int C = s->c, HW = s->hw, lo = s->size / 2, hi = (s->size - 1) / 2;
    const real a = s->alpha / s->size;
    CPU_FOR(bk, int, i, n, {
        const real *xi = x + (size_t)i * C * HW;
        real *yi = y + (size_t)i * C * HW, *si = scale + (size_t)i * C * HW;
        for (int c = 0; c < C; c++) {
            int c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
            real *sc = si + (size_t)c * HW, *yc = yi + (size_t)c * HW;
            const real *xc = xi + (size_t)c * HW;
            for (int j = 0; j < HW; j++) sc[j] = 0;
            for (int q = c0; q <= c1; q++) {
                const real *xq = xi + (size_t)q * HW;
                for (int j = 0; j < HW; j++) sc[j] += xq[j] * xq[j];
            }
            for (int j = 0; j < HW; j++) sc[j] = s->k + a * sc[j];
            lrn_pow_neg(HW, s->beta, sc, yc);
            for (int j = 0; j < HW; j++) yc[j] *= xc[j];
        }
    });
}

void cpu_lrn_backward(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                     const real *scale, const real *dy, real *dx)
{
    BK_GUARD(bk);
    const int C = s->c, HW = s->hw, lo = s->size / 2, hi = (s->size - 1) / 2;
    const real coef = 2 * s->alpha * s->beta / s->size;
    CPU_FOR_T(bk, t, int, i, n, {
        const size_t base = (size_t)i * C * HW;
        /* ratio[q] = dy_q y_q / scale_q, once per element; one row each for the window
         * sum and the power (lrn_workspace). */
        real *ratio = cpu_workspace(bk, t), *acc = ratio + (size_t)C * HW,
             *pw = acc + HW;
        for (size_t e = 0; e < (size_t)C * HW; e++) ratio[e] = dy[base + e] * y[base + e] / scale[base + e];
        for (int c = 0; c < C; c++) {
            /* channels c' whose window contains c: c - hi <= c' <= c + lo */
            int c0 = c - hi < 0 ? 0 : c - hi, c1 = c + lo >= C ? C - 1 : c + lo;
            const size_t at = base + (size_t)c * HW;
            for (int j = 0; j < HW; j++) acc[j] = 0;
            for (int q = c0; q <= c1; q++) {
                const real *rq = ratio + (size_t)q * HW;
                for (int j = 0; j < HW; j++) acc[j] += rq[j];
            }
            lrn_pow_neg(HW, s->beta, scale + at, pw);
            for (int j = 0; j < HW; j++) dx[at + j] += dy[at + j] * pw[j] - coef * x[at + j] * acc[j];
        }
    });
}
