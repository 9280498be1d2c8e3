/* Fully connected layers are single large gemms with the batch as one dimension;
 * they run outside any parallel region so OpenBLAS threads them itself. */
#include "cpu.h"
#include "guard.h"

void cpu_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                       const real *b, real *y)
{
    BK_GUARD(bk);
    gemm(CblasNoTrans, CblasTrans, n, out, in, 1, x, in, w, in, 0, y, out);
    if (b) {
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out; o++) y[(size_t)i * out + o] += b[o];
    }
}

void cpu_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                        const real *dy, real *dx, real *dw, real *db)
{
    BK_GUARD(bk);
    if (dx) gemm(CblasNoTrans, CblasNoTrans, n, in, out, 1, dy, out, w, in, 1, dx, in);
    gemm(CblasTrans, CblasNoTrans, out, in, n, 1, dy, out, x, in, 1, dw, in);
    if (db) {
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out; o++) db[o] += dy[(size_t)i * out + o];
    }
}
