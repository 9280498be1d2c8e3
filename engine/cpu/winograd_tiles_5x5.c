/* F(2x2, 5x5) on rows of tiles for conv_winograd.c (winograd_tiles.h): 6x6 input tiles, their 36
 * transformed values, 36 multiplies per 2x2 outputs and channel pair instead of 100. The points
 * are 0, 1, -1, 2, -2 and infinity, those of F(4, 3), so B^T is F(4, 3)'s:
 *   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
 *   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 1]
 *   G   = [1/4 0 0 0 0; -1/6 (x5); -1/6 1/6 -1/6 1/6 -1/6; (1 2 4 8 16)/24; (1 -2 4 -8 16)/24;
 *          0 0 0 0 1]
 * (checked against direct correlation by tests/test_conv_paths.c). The filters are transformed
 * in double: they are few, and their rounding then adds nothing to the products'. */
#include "winograd_tiles.h"

enum { N = 6, XIS = 36 };

/* The loops over a row's tiles vectorize with their small loops unrolled (GCC unroll) and the
 * rows declared independent (GCC ivdep); under `omp simd`, as in winograd_tiles_3x3.c, GCC
 * vectorized none of them (the 6x6 arrays became per-lane arrays it could not map). Clang,
 * which builds the fuzzers, has no ivdep. */
#if defined(__GNUC__) && !defined(__clang__)
#define TILES_INDEPENDENT _Pragma("GCC ivdep")
#else
#define TILES_INDEPENDENT
#endif

/* o = B^T d over one column (or row) of six values, and its adjoint. */
static inline void bt6(const real d[N], real o[N])
{
    o[0] = 4 * d[0] - 5 * d[2] + d[4];
    o[1] = d[3] + d[4] - 4 * (d[1] + d[2]);
    o[2] = d[4] - d[3] + 4 * (d[1] - d[2]);
    o[3] = d[4] - d[2] + 2 * (d[3] - d[1]);
    o[4] = d[4] - d[2] - 2 * (d[3] - d[1]);
    o[5] = 4 * d[1] - 5 * d[3] + d[5];
}

static inline void b6(const real v[N], real d[N])
{
    d[0] = 4 * v[0];
    d[1] = 4 * (v[2] - v[1] + v[5]) + 2 * (v[4] - v[3]);
    d[2] = -5 * v[0] - 4 * (v[1] + v[2]) - (v[3] + v[4]);
    d[3] = (v[1] - v[2]) + 2 * (v[3] - v[4]) - 5 * v[5];
    d[4] = v[0] + v[1] + v[2] + v[3] + v[4];
    d[5] = v[5];
}

/* y = A^T m over six values, and its adjoint m = A y. */
static inline void at6(const real m[N], real y[2])
{
    y[0] = m[0] + m[1] + m[2] + m[3] + m[4];
    y[1] = m[1] - m[2] + 2 * (m[3] - m[4]) + m[5];
}

static inline void a6(const real y[2], real m[N])
{
    m[0] = y[0];
    m[1] = y[0] + y[1];
    m[2] = y[0] - y[1];
    m[3] = y[0] + 2 * y[1];
    m[4] = y[0] - 2 * y[1];
    m[5] = y[1];
}

/* o = G g over five values, and its adjoint g = G^T o. */
static void g6(const double g[5], double o[N])
{
    o[0] = g[0] / 4;
    o[1] = -(g[0] + g[1] + g[2] + g[3] + g[4]) / 6;
    o[2] = -(g[0] - g[1] + g[2] - g[3] + g[4]) / 6;
    o[3] = (g[0] + 2 * g[1] + 4 * g[2] + 8 * g[3] + 16 * g[4]) / 24;
    o[4] = (g[0] - 2 * g[1] + 4 * g[2] - 8 * g[3] + 16 * g[4]) / 24;
    o[5] = g[4];
}

static void gt6(const double o[N], double g[5])
{
    const double p = -(o[1] + o[2]) / 6, q = (o[2] - o[1]) / 6, r = (o[3] + o[4]) / 24, t = (o[3] - o[4]) / 24;
    g[0] = o[0] / 4 + p + r;
    g[1] = q + 2 * t;
    g[2] = p + 4 * r;
    g[3] = q + 8 * t;
    g[4] = p + 16 * r + o[5];
}

static void filter(const real *g, real *u)
{
    double rows[5][N], col[5], out[N];
    for (int i = 0; i < 5; i++) {
        double gi[5];
        for (int j = 0; j < 5; j++) gi[j] = g[5 * i + j];
        g6(gi, rows[i]); /* g G^T: each filter row */
    }
    for (int b = 0; b < N; b++) {
        for (int i = 0; i < 5; i++) col[i] = rows[i][b];
        g6(col, out); /* G (g G^T): each column */
        for (int a = 0; a < N; a++) u[N * a + b] = (real)out[a];
    }
}

static void filter_adjoint(const real *du, real *g)
{
    double cols[N][5], col[N], row[N], out[5];
    for (int b = 0; b < N; b++) {
        for (int a = 0; a < N; a++) col[a] = du[N * a + b];
        gt6(col, cols[b]); /* G^T du: each column */
    }
    for (int i = 0; i < 5; i++) {
        for (int b = 0; b < N; b++) row[b] = cols[b][i];
        gt6(row, out); /* (G^T du) G: each row */
        for (int j = 0; j < 5; j++) g[5 * i + j] += (real)out[j];
    }
}

/* The six rows of plane column c (a tile's column), from the tile row's top. */
static inline void column(const real *c, size_t L, real d[N])
{
#pragma GCC unroll 6
    for (int r = 0; r < N; r++) d[r] = c[r * L];
}

static void input_rows(int tiles_w, const WinoPlane *p, int th, real *restrict v, size_t stride)
{
    const size_t L = p->len, top = 2 * (size_t)th * L;
    const real *restrict E = p->even[0] + top, *restrict O = p->odd[0] + top;
TILES_INDEPENDENT
    for (int k = 0; k < tiles_w; k++) {
        real d[N][N], t[N][N]; /* d[j]: the tile's column j; t[i][j] = (B^T d)[i] at column j */
        column(E + k, L, d[0]), column(O + k, L, d[1]), column(E + k + 1, L, d[2]);
        column(O + k + 1, L, d[3]), column(E + k + 2, L, d[4]), column(O + k + 2, L, d[5]);
#pragma GCC unroll 6
        for (int j = 0; j < N; j++) {
            real o[N];
            bt6(d[j], o);
#pragma GCC unroll 6
            for (int i = 0; i < N; i++) t[i][j] = o[i];
        }
#pragma GCC unroll 6
        for (int i = 0; i < N; i++) {
            real o[N];
            bt6(t[i], o);
#pragma GCC unroll 6
            for (int q = 0; q < N; q++) v[(N * i + q) * stride + k] = o[q];
        }
    }
}

static void input_rows_adjoint(int tiles_w, const real *restrict d, size_t stride, int th, const WinoPlane *p)
{
    const size_t L = p->len, top = 2 * (size_t)th * L;
    /* the tile's columns 0, 1 in the plane, 2, 3 in spill 1 and 4, 5 in spill 2 */
    real *restrict E0 = p->even[0] + top, *restrict O0 = p->odd[0] + top;
    real *restrict E1 = p->even[1] + top, *restrict O1 = p->odd[1] + top;
    real *restrict E2 = p->even[2] + top, *restrict O2 = p->odd[2] + top;
TILES_INDEPENDENT
    for (int k = 0; k < tiles_w; k++) {
        real w[N][N]; /* w[r][q] = (B dV)[r][q] */
#pragma GCC unroll 6
        for (int q = 0; q < N; q++) {
            real col[N], o[N];
#pragma GCC unroll 6
            for (int i = 0; i < N; i++) col[i] = d[(N * i + q) * stride + k];
            b6(col, o);
#pragma GCC unroll 6
            for (int r = 0; r < N; r++) w[r][q] = o[r];
        }
#pragma GCC unroll 6
        for (int r = 0; r < N; r++) {
            real o[N];
            b6(w[r], o);
            const size_t at = r * L + k;
            E0[at] += o[0], O0[at] += o[1], E1[at] += o[2], O1[at] += o[3], E2[at] += o[4], O2[at] += o[5];
        }
    }
}

static void output_rows(int tiles_w, const real *restrict m, size_t stride, real bias, real *restrict p0,
                        real *restrict p1)
{
TILES_INDEPENDENT
    for (int k = 0; k < tiles_w; k++) {
        real r[2][N]; /* A^T m: the two row combinations at each column */
#pragma GCC unroll 6
        for (int q = 0; q < N; q++) {
            real col[N], y[2];
#pragma GCC unroll 6
            for (int i = 0; i < N; i++) col[i] = m[(N * i + q) * stride + k];
            at6(col, y);
            r[0][q] = y[0], r[1][q] = y[1];
        }
        real y0[2], y1[2];
        at6(r[0], y0);
        at6(r[1], y1);
        p0[2 * k] = y0[0] + bias, p0[2 * k + 1] = y0[1] + bias;
        p1[2 * k] = y1[0] + bias, p1[2 * k + 1] = y1[1] + bias;
    }
}

static void output_rows_adjoint(int tiles_w, const real *restrict p0, const real *restrict p1, real *restrict m,
                                size_t stride)
{
TILES_INDEPENDENT
    for (int k = 0; k < tiles_w; k++) {
        real c0[2] = {p0[2 * k], p1[2 * k]}, c1[2] = {p0[2 * k + 1], p1[2 * k + 1]};
        real u0[N], u1[N]; /* A dy: each of dy's two columns */
        a6(c0, u0);
        a6(c1, u1);
#pragma GCC unroll 6
        for (int i = 0; i < N; i++) {
            real y[2] = {u0[i], u1[i]}, o[N];
            a6(y, o);
#pragma GCC unroll 6
            for (int q = 0; q < N; q++) m[(N * i + q) * stride + k] = o[q];
        }
    }
}

const WinoForm wino_tiles_5x5 = {5, N, XIS, filter, filter_adjoint, input_rows, input_rows_adjoint, output_rows,
                                 output_rows_adjoint};
