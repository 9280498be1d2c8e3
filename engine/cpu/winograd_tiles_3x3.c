/* F(2x2, 3x3) on rows of tiles for conv_winograd.c (winograd_tiles.h): 4x4 input tiles, their
 * 16 transformed values. B^T, G and A^T as in Lavin & Gray's paper; winograd_f2.h holds the same
 * transforms on one tile of vectors for the other two F(2x2, 3x3) forms. */
#include "winograd_f2.h"
#include "winograd_tiles.h"

static void filter(const real *g, real *u) { wino_filter(g, 0, u); }

static void filter_adjoint(const real *du, real *g) { wino_filter_adjoint(du, g); }

static void input_rows(int tiles_w, const WinoPlane *p, int th, real *restrict v, size_t stride)
{
    const size_t L = p->len, top = 2 * (size_t)th * L;
    const real *restrict E0 = p->even[0] + top, *restrict E1 = E0 + L, *restrict E2 = E1 + L, *restrict E3 = E2 + L;
    const real *restrict O0 = p->odd[0] + top, *restrict O1 = O0 + L, *restrict O2 = O1 + L, *restrict O3 = O2 + L;
#pragma omp simd
    for (int k = 0; k < tiles_w; k++) {
        /* B^T d: four row combinations, at the tile's columns 0 (e), 1 (o), 2 (f), 3 (g) */
        real e0 = E0[k] - E2[k], e1 = E1[k] + E2[k], e2 = E2[k] - E1[k], e3 = E1[k] - E3[k];
        real o0 = O0[k] - O2[k], o1 = O1[k] + O2[k], o2 = O2[k] - O1[k], o3 = O1[k] - O3[k];
        real f0 = E0[k + 1] - E2[k + 1], f1 = E1[k + 1] + E2[k + 1];
        real f2 = E2[k + 1] - E1[k + 1], f3 = E1[k + 1] - E3[k + 1];
        real g0 = O0[k + 1] - O2[k + 1], g1 = O1[k + 1] + O2[k + 1];
        real g2 = O2[k + 1] - O1[k + 1], g3 = O1[k + 1] - O3[k + 1];
        /* (B^T d) B: the same combination of columns */
        v[0 * stride + k] = e0 - f0, v[1 * stride + k] = o0 + f0, v[2 * stride + k] = f0 - o0, v[3 * stride + k] = o0 - g0;
        v[4 * stride + k] = e1 - f1, v[5 * stride + k] = o1 + f1, v[6 * stride + k] = f1 - o1, v[7 * stride + k] = o1 - g1;
        v[8 * stride + k] = e2 - f2, v[9 * stride + k] = o2 + f2, v[10 * stride + k] = f2 - o2, v[11 * stride + k] = o2 - g2;
        v[12 * stride + k] = e3 - f3, v[13 * stride + k] = o3 + f3, v[14 * stride + k] = f3 - o3, v[15 * stride + k] = o3 - g3;
    }
}

static void input_rows_adjoint(int tiles_w, const real *restrict d, size_t stride, int th, const WinoPlane *p)
{
    const size_t L = p->len, top = 2 * (size_t)th * L;
    real *restrict E = p->even[0] + top, *restrict O = p->odd[0] + top;
    real *restrict E2 = p->even[1] + top, *restrict O2 = p->odd[1] + top;
#pragma omp simd
    for (int k = 0; k < tiles_w; k++) {
        real w[4][4];
        for (int q = 0; q < 4; q++) {  /* B dV: rows */
            real d0 = d[q * stride + k], d1 = d[(4 + q) * stride + k];
            real d2 = d[(8 + q) * stride + k], d3 = d[(12 + q) * stride + k];
            w[0][q] = d0;
            w[1][q] = d1 - d2 + d3;
            w[2][q] = d1 + d2 - d0;
            w[3][q] = -d3;
        }
        for (int r = 0; r < 4; r++) {  /* (B dV) B^T: columns */
            E[r * L + k] += w[r][0];
            O[r * L + k] += w[r][1] - w[r][2] + w[r][3];
            E2[r * L + k] += w[r][1] + w[r][2] - w[r][0];
            O2[r * L + k] -= w[r][3];
        }
    }
}

static void output_rows(int tiles_w, const real *restrict m, size_t stride, real bias, real *restrict p0,
                        real *restrict p1)
{
#pragma omp simd
    for (int k = 0; k < tiles_w; k++) {
        real r0[4], r1[4];
        for (int q = 0; q < 4; q++) {  /* A^T m: rows */
            real a0 = m[q * stride + k], a1 = m[(4 + q) * stride + k];
            real a2 = m[(8 + q) * stride + k], a3 = m[(12 + q) * stride + k];
            r0[q] = a0 + a1 + a2;
            r1[q] = a1 - a2 - a3;
        }
        p0[2 * k] = r0[0] + r0[1] + r0[2] + bias;
        p0[2 * k + 1] = r0[1] - r0[2] - r0[3] + bias;
        p1[2 * k] = r1[0] + r1[1] + r1[2] + bias;
        p1[2 * k + 1] = r1[1] - r1[2] - r1[3] + bias;
    }
}

static void output_rows_adjoint(int tiles_w, const real *restrict p0, const real *restrict p1, real *restrict m,
                                size_t stride)
{
#pragma omp simd
    for (int k = 0; k < tiles_w; k++) {
        real g00 = p0[2 * k], g01 = p0[2 * k + 1], g10 = p1[2 * k], g11 = p1[2 * k + 1];
        real u[4][2] = {{g00, g01}, {g00 + g10, g01 + g11}, {g00 - g10, g01 - g11}, {-g10, -g11}};
        for (int p = 0; p < 4; p++) {
            m[(4 * p + 0) * stride + k] = u[p][0];
            m[(4 * p + 1) * stride + k] = u[p][0] + u[p][1];
            m[(4 * p + 2) * stride + k] = u[p][0] - u[p][1];
            m[(4 * p + 3) * stride + k] = -u[p][1];
        }
    }
}

const WinoForm wino_tiles_3x3 = {3, 4, 16, filter, filter_adjoint, input_rows, input_rows_adjoint, output_rows,
                                 output_rows_adjoint};
