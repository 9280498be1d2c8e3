/* Vector reductions and updates used by optimizers and statistics. Reductions are
 * accumulated in double and combined in a fixed order. */
#include <string.h>

#include "cpu.h"
#include "guard.h"

/* A sum of squares is taken over SUM_BLOCKS equal blocks, each over SUM_LANES interleaved
 * lanes, added up in order: the blocks depend on the count alone, so the result is the
 * same on any number of threads, and the lanes break the chain of dependent adds that
 * kept a single running sum from vectorizing. */
enum { SUM_BLOCKS = 64, SUM_LANES = 8 };

static double block_sum_squares(size_t count, const real *x)
{
    double lane[SUM_LANES] = {0};
    size_t i = 0;
    for (; i + SUM_LANES <= count; i += SUM_LANES)
        for (int k = 0; k < SUM_LANES; k++) lane[k] += (double)x[i + k] * (double)x[i + k];
    for (; i < count; i++) lane[i % SUM_LANES] += (double)x[i] * (double)x[i];
    double total = 0;
    for (int k = 0; k < SUM_LANES; k++) total += lane[k];
    return total;
}

double cpu_sum_squares(Backend *bk, size_t count, const real *x)
{
    BK_GUARD(bk);
    if (count < CPU_PARALLEL_MIN) return block_sum_squares(count, x);
    double part[SUM_BLOCKS];
    const size_t per = (count + SUM_BLOCKS - 1) / SUM_BLOCKS;
    CPU_FOR(bk, int, b, SUM_BLOCKS, {
        size_t lo = (size_t)b * per, hi = lo + per < count ? lo + per : count;
        part[b] = lo < hi ? block_sum_squares(hi - lo, x + lo) : 0;
    });
    double total = 0;
    for (int b = 0; b < SUM_BLOCKS; b++) total += part[b];
    return total;
}

void cpu_sum_squares_to(Backend *bk, size_t count, const real *x, double *result)
{
    BK_GUARD(bk);
    *result = cpu_sum_squares(bk, count, x);
}

void cpu_copy_bytes(Backend *bk, void *dst, const void *src, size_t bytes)
{
    BK_GUARD(bk);
    if (bytes) memcpy(dst, src, bytes);
}

void cpu_copy(Backend *bk, size_t count, const real *x, real *y)
{
    BK_GUARD(bk);
    /* split across threads as axpy: one core's memcpy is slower than two threads' adds (the
     * residual add's backward copies activation-sized gradients) */
    CPU_FOR_IF(bk, count >= CPU_PARALLEL_MIN, size_t, i, count, { y[i] = x[i]; });
}

void cpu_fill(Backend *bk, size_t count, real value, real *x)
{
    BK_GUARD(bk);
    if (value == 0) { /* zeroing gradients every step: memset's streaming stores, a slice per thread */
        const int slices = count >= CPU_PARALLEL_MIN ? bk->threads : 1;
        CPU_FOR_IF(bk, slices > 1, int, t, slices, {
            size_t from = count * t / slices, to = count * (t + 1) / slices;
            memset(x + from, 0, (to - from) * sizeof *x);
        });
        return;
    }
    for (size_t i = 0; i < count; i++) x[i] = value;
}

void cpu_scale(Backend *bk, size_t count, real alpha, real *x)
{
    BK_GUARD(bk);
    CPU_FOR_IF(bk, count >= CPU_PARALLEL_MIN, size_t, i, count, { x[i] *= alpha; });
}

void cpu_axpy(Backend *bk, size_t count, real alpha, const real *x, real *y)
{
    BK_GUARD(bk);
    CPU_FOR_IF(bk, count >= CPU_PARALLEL_MIN, size_t, i, count, { y[i] += alpha * x[i]; });
}
