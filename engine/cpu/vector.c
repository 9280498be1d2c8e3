/* Vector reductions and updates used by optimizers and statistics. Reductions are
 * accumulated in double and combined in a fixed order. */
#include <string.h>

#include "cpu.h"
#include "guard.h"

double cpu_sum_squares(Backend *bk, size_t count, const real *x)
{
    BK_GUARD(bk);
    double acc = 0;
    for (size_t i = 0; i < count; i++) acc += (double)x[i] * (double)x[i];
    return acc;
}

void cpu_copy(Backend *bk, size_t count, const real *x, real *y)
{
    BK_GUARD(bk);
    memcpy(y, x, count * sizeof(real));
}

void cpu_fill(Backend *bk, size_t count, real value, real *x)
{
    BK_GUARD(bk);
    if (value == 0) { /* zeroing gradients every step: memset's streaming stores */
        memset(x, 0, count * sizeof *x);
        return;
    }
    for (size_t i = 0; i < count; i++) x[i] = value;
}

void cpu_scale(Backend *bk, size_t count, real alpha, real *x)
{
    BK_GUARD(bk);
    for (size_t i = 0; i < count; i++) x[i] *= alpha;
}

void cpu_axpy(Backend *bk, size_t count, real alpha, const real *x, real *y)
{
    BK_GUARD(bk);
    for (size_t i = 0; i < count; i++) y[i] += alpha * x[i];
}
