/* Elementwise operations, split across threads in static chunks. */
#include "cpu.h"

void bk_relu_forward(Backend *bk, size_t count, const real *x, real *y)
{
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (size_t i = 0; i < count; i++) y[i] = x[i] > 0 ? x[i] : 0;
}

void bk_relu_backward(Backend *bk, size_t count, const real *y, const real *dy, real *dx)
{
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (size_t i = 0; i < count; i++) dx[i] += y[i] > 0 ? dy[i] : 0; /* branch-free: vectorizes */
}

void bk_add_forward(Backend *bk, size_t count, const real *a, const real *b, real *y)
{
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (size_t i = 0; i < count; i++) y[i] = a[i] + b[i];
}

void bk_accumulate(Backend *bk, size_t count, const real *dy, real *dx)
{
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (size_t i = 0; i < count; i++) dx[i] += dy[i];
}

void bk_dropout_forward(Backend *bk, size_t count, real p, Rng *rng, real *mask, const real *x,
                        real *y)
{
    /* The mask is drawn serially so it depends only on the seed, not on threads. */
    real keep = 1 / (1 - p);
    for (size_t i = 0; i < count; i++) mask[i] = rng_uniform(rng) < (double)p ? 0 : keep;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (size_t i = 0; i < count; i++) y[i] = x[i] * mask[i];
}

void bk_dropout_backward(Backend *bk, size_t count, const real *mask, const real *dy, real *dx)
{
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (size_t i = 0; i < count; i++) dx[i] += dy[i] * mask[i];
}
