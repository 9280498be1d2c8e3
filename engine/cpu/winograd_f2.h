/* Winograd F(2x2, 3x3)'s transforms (Lavin & Gray, arXiv 1509.09308), shared by the forms
 * that lay tiles out differently (conv_winograd.c, conv_winograd_cl.c, conv_winograd_rows.c):
 * a 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A, the 16 values of a transformed 4x4 tile
 * indexed xi = 4 * row + column. The vector forms transform a vector of tiles (or channels)
 * at once, lane by lane. Internal to engine/cpu. */
#ifndef BB_CPU_WINOGRAD_F2_H
#define BB_CPU_WINOGRAD_F2_H
#include "conv_direct.h"

enum { WINO_XI = 16 };

/* A vector at any float's address. Not load_vec's memcpy: GCC split those 64-byte copies into
 * two 32-byte moves through the stack, and each reload of the whole stalled on them. */
typedef real VecAny __attribute__((vector_size(VLEN * sizeof(real)), aligned(sizeof(real)), may_alias));
#define VLOAD(p) (*(const VecAny *)(p))
#define VSTORE(p, v) (*(VecAny *)(p) = (v))

/* The distance between the xi's of `tiles` x `channels` transformed values (V, M, dM): a vector
 * more than their size, so that a tile's 16 stores (or loads), often a multiple of 4 KiB apart
 * otherwise, fall into different L1 sets. conv_winograd.c's V and M too, for both its forms
 * (F(2x2, 5x5)'s 36 reads a tile had made its output transform 3x slower). */
static inline size_t wino_xi_stride(size_t tiles, int channels) { return tiles * (size_t)channels + VLEN; }

/* o[xi] = (B^T d B)[xi] of the 4x4 window d. */
static inline void wino_input(Vec d[4][4], Vec o[WINO_XI])
{
    Vec r[4][4];
    for (int j = 0; j < 4; j++) {
        r[0][j] = d[0][j] - d[2][j];
        r[1][j] = d[1][j] + d[2][j];
        r[2][j] = d[2][j] - d[1][j];
        r[3][j] = d[1][j] - d[3][j];
    }
    for (int i = 0; i < 4; i++) {
        o[4 * i + 0] = r[i][0] - r[i][2];
        o[4 * i + 1] = r[i][1] + r[i][2];
        o[4 * i + 2] = r[i][2] - r[i][1];
        o[4 * i + 3] = r[i][1] - r[i][3];
    }
}

/* y = A^T m A: the 2x2 outputs of a tile's 16 products. */
static inline void wino_output(Vec m[WINO_XI], Vec y[2][2])
{
    Vec s[4][2];
    for (int a = 0; a < 4; a++) {
        s[a][0] = m[4 * a] + m[4 * a + 1] + m[4 * a + 2];
        s[a][1] = m[4 * a + 1] - m[4 * a + 2] - m[4 * a + 3];
    }
    for (int j = 0; j < 2; j++) {
        y[0][j] = s[0][j] + s[1][j] + s[2][j];
        y[1][j] = s[1][j] - s[2][j] - s[3][j];
    }
}

/* o = A y A^T: the output transform's adjoint, a 2x2 block of dy as a tile's 16 gradients. */
static inline void wino_gradient(Vec y[2][2], Vec o[WINO_XI])
{
    Vec e[4][2];
    for (int j = 0; j < 2; j++) {
        e[0][j] = y[0][j];
        e[1][j] = y[0][j] + y[1][j];
        e[2][j] = y[0][j] - y[1][j];
        e[3][j] = -y[1][j];
    }
    for (int a = 0; a < 4; a++) {
        o[4 * a + 0] = e[a][0];
        o[4 * a + 1] = e[a][0] + e[a][1];
        o[4 * a + 2] = e[a][0] - e[a][1];
        o[4 * a + 3] = -e[a][1];
    }
}

/* u[0..3] = G r of one row (or column) r of three values. */
static inline void wino_filter_row(real r0, real r1, real r2, real *u)
{
    u[0] = r0;
    u[1] = (real)0.5 * (r0 + r1 + r2);
    u[2] = (real)0.5 * (r0 - r1 + r2);
    u[3] = r2;
}

/* u = G g G^T of a 3x3 filter g (row by row), turned half a circle first where `turned`. In
 * scalars: with arrays in between, GCC stored values one at a time and read them back as
 * vectors, a store-forwarding stall per filter (most of the transform's time). */
static inline void wino_filter(const real *f, int turned, real u[WINO_XI])
{
#define F(t) f[turned ? 8 - (t) : (t)]
    const real p0 = F(0), p1 = F(1), p2 = F(2), q0 = F(3), q1 = F(4), q2 = F(5), r0 = F(6), r1 = F(7), r2 = F(8);
#undef F
    wino_filter_row(p0, p1, p2, u);
    wino_filter_row((real)0.5 * (p0 + q0 + r0), (real)0.5 * (p1 + q1 + r1), (real)0.5 * (p2 + q2 + r2), u + 4);
    wino_filter_row((real)0.5 * (p0 - q0 + r0), (real)0.5 * (p1 - q1 + r1), (real)0.5 * (p2 - q2 + r2), u + 8);
    wino_filter_row(r0, r1, r2, u + 12);
}

/* g (3x3) += G^T du G: the filter transform's adjoint. */
static inline void wino_filter_adjoint(const real du[WINO_XI], real *g)
{
    real z[3][4];
    for (int q = 0; q < 4; q++) {
        z[0][q] = du[q] + (real)0.5 * (du[4 + q] + du[8 + q]);
        z[1][q] = (real)0.5 * (du[4 + q] - du[8 + q]);
        z[2][q] = (real)0.5 * (du[4 + q] + du[8 + q]) + du[12 + q];
    }
    for (int a = 0; a < 3; a++) {
        g[3 * a + 0] += z[a][0] + (real)0.5 * (z[a][1] + z[a][2]);
        g[3 * a + 1] += (real)0.5 * (z[a][1] - z[a][2]);
        g[3 * a + 2] += (real)0.5 * (z[a][1] + z[a][2]) + z[a][3];
    }
}

#endif
