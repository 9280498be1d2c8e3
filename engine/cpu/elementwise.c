/* Elementwise operations, split across threads in static chunks (threads.h). */
#include "../base/philox.h"
#include "../data/pixel.h"
#include "cpu.h"
#include "guard.h"

void cpu_relu_forward(Backend *bk, size_t count, const real *x, real *y)
{
    BK_GUARD(bk);
    CPU_FOR(bk, size_t, i, count, { y[i] = x[i] > 0 ? x[i] : 0; });
}

void cpu_relu_backward(Backend *bk, size_t count, const real *y, const real *dy, real *dx, bool accumulate)
{
    BK_GUARD(bk);
    /* two loops, so each stays branch-free and vectorizes; writing spares a read of dx */
    if (accumulate)
        CPU_FOR(bk, size_t, i, count, { dx[i] += y[i] > 0 ? dy[i] : 0; });
    else
        CPU_FOR(bk, size_t, i, count, { dx[i] = y[i] > 0 ? dy[i] : 0; });
}

void cpu_add_forward(Backend *bk, size_t count, const real *a, const real *b, bool relu, real *y)
{
    BK_GUARD(bk);
    if (relu)
        CPU_FOR(bk, size_t, i, count, {
            const real v = a[i] + b[i];
            y[i] = v > 0 ? v : 0;
        });
    else
        CPU_FOR(bk, size_t, i, count, { y[i] = a[i] + b[i]; });
}

void cpu_accumulate(Backend *bk, size_t count, const real *dy, real *dx)
{
    BK_GUARD(bk);
    CPU_FOR(bk, size_t, i, count, { dx[i] += dy[i]; });
}

/* Each block of four elements takes one Philox call; the blocks are independent, so the
 * mask is the same on any number of threads. */
void cpu_dropout_forward(Backend *bk, size_t count, real p, const DropoutKey *key, real *mask,
                        const real *x, real *y)
{
    BK_GUARD(bk);
    if (!count) return;
    const real keep = 1 / (1 - p);
    const uint64_t first = key->first_element, b0 = first / 4, b1 = (first + count - 1) / 4;
    CPU_FOR(bk, uint64_t, j, b1 - b0 + 1, {
        const uint64_t b = b0 + j;
        Philox4x32 r = philox_dropout_block(key->seed, key->step, key->layer, b);
        for (int k = 0; k < 4; k++) {
            uint64_t e = 4 * b + (uint64_t)k;
            if (e < first || e >= first + count) continue;
            size_t i = (size_t)(e - first);
            mask[i] = philox_uniform24(r.v[k]) < (double)p ? 0 : keep;
            y[i] = x[i] * mask[i];
        }
    });
}

void cpu_dropout_backward(Backend *bk, size_t count, const real *mask, const real *dy, real *dx)
{
    BK_GUARD(bk);
    CPU_FOR(bk, size_t, i, count, { dx[i] += dy[i] * mask[i]; });
}

void cpu_normalize_pixels(Backend *bk, size_t images, int c, size_t hw, const uint8_t *x, const float *mean,
                          const float *std, real *y)
{
    BK_GUARD(bk);
    const size_t planes = images * (size_t)c;
    CPU_FOR(bk, size_t, p, planes, {
        const real m = (real)mean[p % (size_t)c], s = (real)std[p % (size_t)c];
        for (size_t i = p * hw; i < (p + 1) * hw; i++) y[i] = pixel_normalize(x[i], m, s);
    });
}
