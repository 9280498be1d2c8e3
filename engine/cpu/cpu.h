/* Private to the CPU backend: the Backend layout, per-thread workspace, and the
 * gemm entry point that picks sgemm or dgemm with the engine's scalar type. */
#ifndef BB_CPU_H
#define BB_CPU_H
#include <cblas.h>
#include <omp.h>

#include "../backend.h"

struct Backend {
    int threads;
    size_t ws_elems;  /* per thread */
    real **ws;        /* one workspace per thread */
};

static inline real *cpu_workspace(Backend *bk, int thread) { return bk->ws[thread]; }

static inline void gemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
                        real alpha, const real *a, int lda, const real *b, int ldb, real beta,
                        real *c, int ldc)
{
#ifdef BB_DOUBLE
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

#endif
