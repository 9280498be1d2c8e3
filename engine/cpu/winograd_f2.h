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
 * otherwise, fall into different L1 sets. */
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

/* u = G g G^T of a 3x3 filter g (row by row), turned half a circle first where `turned`. */
static inline void wino_filter(const real *f, int turned, real u[WINO_XI])
{
    real g[9], gg[4][3];
    for (int t = 0; t < 9; t++) g[t] = f[turned ? 8 - t : t];
    for (int j = 0; j < 3; j++) {
        gg[0][j] = g[j];
        gg[1][j] = (real)0.5 * (g[j] + g[3 + j] + g[6 + j]);
        gg[2][j] = (real)0.5 * (g[j] - g[3 + j] + g[6 + j]);
        gg[3][j] = g[6 + j];
    }
    for (int a = 0; a < 4; a++) {
        u[4 * a + 0] = gg[a][0];
        u[4 * a + 1] = (real)0.5 * (gg[a][0] + gg[a][1] + gg[a][2]);
        u[4 * a + 2] = (real)0.5 * (gg[a][0] - gg[a][1] + gg[a][2]);
        u[4 * a + 3] = gg[a][2];
    }
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
