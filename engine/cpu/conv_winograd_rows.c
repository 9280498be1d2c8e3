/* Winograd F(2x2, 3x3) with a row of tiles in each vector, for stride-1 3x3 "same" layers on
 * planes 2 * VLEN pixels wide (32 with AVX-512: ResNet-20's and ResNet-8's 16-channel layers on
 * 32x32). A plane row of 32 pixels is the 16 tiles of a tile row, so the transforms need no
 * transposes: a row's even and odd columns (two permutes) and the same moved a lane (an align)
 * give each tile's four columns, and an output tile row's two columns interleave back into
 * its two plane rows. With 16 channels, conv_winograd_cl.c's channels-last form has one
 * vector of output channels to reuse each broadcast for, as many loads as multiply-adds;
 * here the 16 products (one per position xi of the transformed tile) are 1x1 convolutions of
 * the transformed planes, each on the direct path's register-blocked kernel (8 output
 * channels by 32 tiles, a broadcast filter value feeding two multiply-adds):
 *   forward         M[xi] (K x T) = U[xi] (K x C) V[xi] (C x T)     (Y = A^T M A)
 *   data gradient   the forward of dy with the filters turned and transposed (pad 1)
 *   weight gradient dU[xi] (K x C) += dM[xi] V[xi]^T, summed along the tiles in vector lanes
 * The weight gradient sums fixed chunks of the batch's images apart, each into its own lanes,
 * added in chunk order, then lane order: the results do not depend on the thread count.
 * AVX-512 only (its permutes); elsewhere conv_winograd_cl.c and the direct path take these
 * layers. conv_im2col.c is the reference, im2col (tests/test_conv_paths.c). */
#include <string.h>

#include "guard.h"
#include "winograd_f2.h"

#if defined(__AVX512F__) && !defined(BB_DOUBLE)
#include <immintrin.h>
#define ROWS_PATH 1
#else
#define ROWS_PATH 0
#endif

enum { XI = WINO_XI, ROW = 2 * VLEN /* a plane's width */ };

int winograd_rows_applies(const ConvShape *s)
{
    return ROWS_PATH && s->k_h == 3 && s->k_w == 3 && s->stride == 1 && s->pad == 1 && s->groups == 1 &&
           s->in_w == ROW && s->out_w == ROW && s->in_h == s->out_h && s->in_h % 2 == 0 && s->in_h > 0 &&
           s->in_c % OCB == 0 && s->out_c % OCB == 0 && s->in_c >= 16 && s->out_c >= 16 && s->in_c <= 64 &&
           s->out_c <= 64;
}

#if ROWS_PATH

/* An image's tiles: H / 2 tile rows of VLEN. */
static size_t image_tiles(int h) { return (size_t)h / 2 * VLEN; }

/* q = the plane row at p as the four columns of its VLEN tiles: column 2 tw - 1 (the odd
 * columns moved a lane right, zero first), 2 tw (even), 2 tw + 1 (odd), 2 tw + 2 (the even
 * moved a lane left, zero last). NULL: a row of zeros (above or below the plane). */
static inline void tile_columns(const real *p, Vec q[4])
{
    if (!p) {
        for (int j = 0; j < 4; j++) q[j] = (Vec){0};
        return;
    }
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512 lo = _mm512_loadu_ps(p), hi = _mm512_loadu_ps(p + VLEN);
    const __m512 e = _mm512_permutex2var_ps(lo, even, hi), o = _mm512_permutex2var_ps(lo, odd, hi);
    const __m512i zero = _mm512_setzero_si512();
    q[0] = (Vec)_mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(o), zero, 15));
    q[1] = (Vec)e;
    q[2] = (Vec)o;
    q[3] = (Vec)_mm512_castsi512_ps(_mm512_alignr_epi32(zero, _mm512_castps_si512(e), 1));
}

/* A plane's rows as even and odd columns: e[tw] = column 2 tw, o[tw] = 2 tw + 1. */
static inline void split_row(const real *p, Vec *e, Vec *o)
{
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512 lo = _mm512_loadu_ps(p), hi = _mm512_loadu_ps(p + VLEN);
    *e = (Vec)_mm512_permutex2var_ps(lo, even, hi);
    *o = (Vec)_mm512_permutex2var_ps(lo, odd, hi);
}

/* The plane row at p = even columns e and odd columns o interleaved (plus b), or added to it. */
static inline void join_row(Vec e, Vec o, real b, int accumulate, real *p)
{
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    Vec lo = (Vec)_mm512_permutex2var_ps((__m512)e, first, (__m512)o) + b;
    Vec hi = (Vec)_mm512_permutex2var_ps((__m512)e, second, (__m512)o) + b;
    if (accumulate) {
        lo += VLOAD(p);
        hi += VLOAD(p + VLEN);
    }
    VSTORE(p, lo);
    VSTORE(p + VLEN, hi);
}

/* V[xi] of one plane of h rows: tile row th at v + xi * xi_step + th * VLEN. A tile row's
 * window is plane rows 2 th - 1 .. 2 th + 2; its last two are the next one's first two. */
static void input_plane(const real *plane, int h, real *v, size_t xi_step)
{
    Vec d[4][4], o[XI];
    tile_columns(NULL, d[0]);
    tile_columns(plane, d[1]);
    for (int th = 0; th < h / 2; th++) {
        tile_columns(plane + (size_t)(2 * th + 1) * ROW, d[2]);
        tile_columns(2 * th + 2 < h ? plane + (size_t)(2 * th + 2) * ROW : NULL, d[3]);
        wino_input(d, o);
        for (int x = 0; x < XI; x++) VSTORE(v + x * xi_step + (size_t)th * VLEN, o[x]);
        for (int j = 0; j < 4; j++) { /* not memcpy: GCC moved those in halves through the stack */
            d[0][j] = d[2][j];
            d[1][j] = d[3][j];
        }
    }
}

/* A plane of h rows (+ b, or added to) from its tiles' products M[xi] at m + xi * xi_step. */
static void output_plane(const real *m, size_t xi_step, int h, real b, int accumulate, real *plane)
{
    for (int th = 0; th < h / 2; th++) {
        Vec q[XI], y[2][2];
        for (int x = 0; x < XI; x++) q[x] = VLOAD(m + x * xi_step + (size_t)th * VLEN);
        wino_output(q, y);
        for (int i = 0; i < 2; i++) join_row(y[i][0], y[i][1], b, accumulate, plane + (size_t)(2 * th + i) * ROW);
    }
}

/* dM[xi] of one plane of dy: tile row th from plane rows 2 th and 2 th + 1. */
static void gradient_plane(const real *plane, int h, real *dm, size_t xi_step)
{
    for (int th = 0; th < h / 2; th++) {
        Vec y[2][2], o[XI];
        for (int i = 0; i < 2; i++) split_row(plane + (size_t)(2 * th + i) * ROW, &y[i][0], &y[i][1]);
        wino_gradient(y, o);
        for (int x = 0; x < XI; x++) VSTORE(dm + x * xi_step + (size_t)th * VLEN, o[x]);
    }
}

/* The filters as the direct kernels read a 1x1 layer's, one set per xi: [xi][out block][in][OCB],
 * output channel o of input channel i the transformed filter (o, i) of w (out_c x in_c x 9),
 * or where `turned` the data gradient's: filter (i, o) turned half a circle. */
static void arrange_filters(const ConvShape *s, const real *w, int turned, real *a)
{
    const int in = turned ? s->out_c : s->in_c, out = turned ? s->in_c : s->out_c;
    const size_t per_xi = (size_t)in * out;
    for (int o = 0; o < out; o++)
        for (int i = 0; i < in; i++) {
            const real *f = turned ? w + ((size_t)i * s->in_c + o) * 9 : w + ((size_t)o * s->in_c + i) * 9;
            real u[XI];
            wino_filter(f, turned, u);
            const size_t at = (size_t)(o / OCB * OCB) * in + (size_t)i * OCB + o % OCB;
            for (int x = 0; x < XI; x++) a[x * per_xi + at] = u[x];
        }
}

/* dst (K planes) = or += the convolution of n images of src (C planes), h rows each, with the
 * arranged filters a, through each thread's scratch: V, then M. */
static void convolve(Backend *bk, int C, int K, int h, int n, const real *src, const real *a, const real *bias,
                     int accumulate, real *dst)
{
    const size_t tiles = image_tiles(h), v_xi = wino_xi_stride(tiles, C), m_xi = wino_xi_stride(tiles, K);
    const size_t plane = (size_t)h * ROW;
    const TapLayout one = {.chan = tiles, .count = 1};
    CPU_FOR_T(bk, t, int, i, n, {
        real *v = cpu_workspace(bk, t), *m = v + XI * v_xi;
        for (int c = 0; c < C; c++) input_plane(src + ((size_t)i * C + c) * plane, h, v + c * tiles, v_xi);
        for (int x = 0; x < XI; x++)
            direct_convolve_image(&one, v + x * v_xi, C, a + (size_t)x * C * K, K, (int)tiles, NULL, 0, m + x * m_xi);
        for (int k = 0; k < K; k++)
            output_plane(m + k * tiles, m_xi, h, bias ? bias[k] : 0, accumulate, dst + ((size_t)i * K + k) * plane);
    });
}

/* ---- the weight gradient ---- */

enum { KR = 4, CR = 4 }; /* output by input channels a register block */

/* lanes[k][c] (KR x CR vectors from k0, c0, rows of C) (+)= sum over the tiles of
 * dm[k] * v[c], lane by lane. */
static void lane_block(const real *dm, const real *v, size_t tiles, int C, int k0, int c0, int first, real *lanes)
{
    Vec acc[KR][CR]; /* indexed by constants alone (the loops unrolled), so that it lives in registers */
    real *at = lanes + ((size_t)k0 * C + c0) * VLEN;
#pragma GCC unroll 4
    for (int k = 0; k < KR; k++)
#pragma GCC unroll 4
        for (int c = 0; c < CR; c++) {
            acc[k][c] = (Vec){0};
            if (!first) acc[k][c] = VLOAD(at + ((size_t)k * C + c) * VLEN);
        }
    for (size_t p = 0; p < tiles; p += VLEN) {
        Vec d[KR];
#pragma GCC unroll 4
        for (int k = 0; k < KR; k++) d[k] = VLOAD(dm + (k0 + k) * tiles + p);
#pragma GCC unroll 4
        for (int c = 0; c < CR; c++) {
            const Vec x = VLOAD(v + (c0 + c) * tiles + p);
#pragma GCC unroll 4
            for (int k = 0; k < KR; k++) acc[k][c] += d[k] * x;
        }
    }
#pragma GCC unroll 4
    for (int k = 0; k < KR; k++)
#pragma GCC unroll 4
        for (int c = 0; c < CR; c++) VSTORE(at + ((size_t)k * C + c) * VLEN, acc[k][c]);
}

/* Image chunk `chunk`'s lanes ([xi][out][in] vectors) over its images, one at a time. */
static void chunk_lanes(const ConvShape *s, int n, int chunks, int chunk, const real *x, const real *dy,
                        real *scratch, real *lanes)
{
    const int C = s->in_c, K = s->out_c, h = s->in_h;
    const size_t tiles = image_tiles(h), v_xi = wino_xi_stride(tiles, C), m_xi = wino_xi_stride(tiles, K);
    const size_t plane = (size_t)h * ROW, per_xi = (size_t)C * K * VLEN;
    real *v = scratch, *dm = v + XI * v_xi;
    const int n0 = direct_chunk_first(n, chunks, chunk), n1 = direct_chunk_first(n, chunks, chunk + 1);
    for (int i = n0; i < n1; i++) {
        for (int c = 0; c < C; c++) input_plane(x + ((size_t)i * C + c) * plane, h, v + c * tiles, v_xi);
        for (int k = 0; k < K; k++) gradient_plane(dy + ((size_t)i * K + k) * plane, h, dm + k * tiles, m_xi);
        for (int xi = 0; xi < XI; xi++)
            for (int k = 0; k < K; k += KR)
                for (int c = 0; c < C; c += CR)
                    lane_block(dm + xi * m_xi, v + xi * v_xi, tiles, C, k, c, i == n0, lanes + xi * per_xi);
    }
}

/* dw += G^T dU G, dU of filter (k, c) its chunks' lanes added in chunk order, then lane order. */
static void filter_gradients(const ConvShape *s, int chunks, const real *lanes, real *dw)
{
    const int C = s->in_c, K = s->out_c;
    const size_t per_xi = (size_t)C * K * VLEN, per_chunk = XI * per_xi;
    for (int k = 0; k < K; k++)
        for (int c = 0; c < C; c++) {
            real du[XI];
            for (int x = 0; x < XI; x++) {
                const real *l = lanes + x * per_xi + ((size_t)k * C + c) * VLEN;
                Vec sum = VLOAD(l);
                for (int j = 1; j < chunks; j++) sum += VLOAD(l + j * per_chunk);
                real total = 0;
                for (int lane = 0; lane < VLEN; lane++) total += sum[lane];
                du[x] = total;
            }
            wino_filter_adjoint(du, dw + ((size_t)k * C + c) * 9);
        }
}

#endif

Workspace winograd_rows_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    (void)weight_elems; /* as direct_workspace's signature: the transformed filters decide */
    Workspace w = {0, 0};
#if ROWS_PATH
    const size_t tiles = image_tiles(s->in_h);
    const size_t scratch = XI * (wino_xi_stride(tiles, s->in_c) + wino_xi_stride(tiles, s->out_c));
    const size_t filters = (size_t)XI * s->in_c * s->out_c;
    w.per_thread = scratch;
    w.shared = filters * VLEN * direct_image_chunks(batch);
#else
    (void)s;
    (void)batch;
#endif
    return w;
}

void winograd_rows_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b, real *y)
{
    BK_GUARD(bk);
#if ROWS_PATH
    real *a = cpu_shared_workspace(bk);
    arrange_filters(s, w, 0, a);
    convolve(bk, s->in_c, s->out_c, s->in_h, n, x, a, b, 0, y);
#else
    (void)s, (void)n, (void)x, (void)w, (void)b, (void)y;
#endif
}

void winograd_rows_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                            real *dx, bool accumulate, real *dw)
{
    BK_GUARD(bk);
#if ROWS_PATH
    if (n <= 0) return;
    real *shared = cpu_shared_workspace(bk);
    const int chunks = direct_image_chunks(n);
    CPU_FOR_T(bk, t, int, c, chunks, {
        chunk_lanes(s, n, chunks, c, x, dy, cpu_workspace(bk, t), shared + c * (size_t)XI * s->in_c * s->out_c * VLEN);
    });
    filter_gradients(s, chunks, shared, dw);
    if (!dx) return;
    arrange_filters(s, w, 1, shared);
    convolve(bk, s->out_c, s->in_c, s->in_h, n, dy, shared, NULL, accumulate, dx);
#else
    (void)s, (void)n, (void)x, (void)w, (void)dy, (void)dx, (void)accumulate, (void)dw;
#endif
}
