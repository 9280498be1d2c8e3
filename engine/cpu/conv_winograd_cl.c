/* Winograd F(2x2, 3x3) with the channels in the vectors, for stride-1 3x3 "same" layers of
 * 16 to 128 channels on even planes up to 56x56 (ResNet-20's and ResNet-8's 16x16 and 8x8
 * layers, ResNet-50's first two stages' 3x3; 32x32 ones where conv_winograd_rows.c does not
 * apply). There the direct path runs near the multiply-add rate, and so does PyTorch's oneDNN; only
 * fewer multiply-adds go faster: a 2x2 output tile costs 16 per channel pair instead of 36.
 * conv_winograd.c's form (tiles in the vectors, 16 OpenBLAS gemms a chunk) spent most of its
 * time in its transforms on these shapes: a tile's 4x4 window lies across rows and the
 * vectors want it along one. Here an image is first turned channels-last (16x16 blocks
 * transposed in registers), so every transform is vector arithmetic on whole vectors of
 * channels, and the 16 products (one per position xi of the transformed tile) are register-
 * blocked kernels over the channels, R tiles by NV vectors of output channels at a time:
 *   forward         M[xi] (T x K) = V[xi] (T x C) U[xi] (C x K)      (Y = A^T M A)
 *   data gradient   the forward of dy with the filters turned and transposed (pad 1)
 *   weight gradient dU[xi] (C x K) += V[xi]^T dM[xi]                  (dM = A dy A^T)
 * with U = G g G^T, V = B^T d B (Lavin & Gray, arXiv 1509.09308). A plane of more than BAND
 * tiles goes a band of them at a time, so that its V and M stay in L2. The weight gradient sums
 * over fixed chunks of the batch's images, each into its own dU, added in chunk order: the
 * results do not depend on the thread count. conv_im2col.c is the reference (im2col) this path
 * is tested against (tests/test_conv_paths.c). */
#include <string.h>

#include "guard.h"
#include "winograd_f2.h"

#if defined(__AVX512F__) && !defined(BB_DOUBLE)
#include <immintrin.h>
#endif

enum { XI = WINO_XI };

int winograd_cl_applies(const ConvShape *s)
{
    return s->k_h == 3 && s->k_w == 3 && s->stride == 1 && s->pad == 1 && s->groups == 1 &&
           s->in_h == s->out_h && s->in_w == s->out_w && s->in_h % 2 == 0 && s->in_w % 2 == 0 &&
           (s->in_h * s->in_w) % 16 == 0 && s->in_h * s->in_w <= 3136 && s->in_c % 16 == 0 &&
           s->out_c % 16 == 0 && s->in_c >= 16 && s->out_c >= 16 && s->in_c <= 128 && s->out_c <= 128;
}

/* An image's geometry for a gemm of C channels in and K out. */
typedef struct {
    int C, K, H, W;
    int TW, T;    /* 2x2 tiles a row, an image */
    size_t prow;  /* a padded channels-last row: (W + 2) * C */
} Geometry;

static Geometry geometry(int C, int K, int H, int W)
{
    Geometry g = {C, K, H, W, W / 2, H / 2 * (W / 2), (size_t)(W + 2) * C};
    return g;
}

static size_t padded_elems(const Geometry *g) { return (size_t)(g->H + 2) * g->prow; }

/* ---- 16x16 (VLEN x VLEN) blocks turned over ---- */

/* out[j] lane i = src[i * stride + j]: VLEN rows of VLEN values, as columns. */
static inline void transpose_block(const real *src, size_t stride, Vec out[VLEN])
{
#if defined(__AVX512F__) && !defined(BB_DOUBLE)
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * stride);
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)
        for (int h = 0; h < 2; h++) {
            r[i + h] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + h]), _mm512_castps_pd(t[i + h + 2])));
            r[i + h + 2] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + h]), _mm512_castps_pd(t[i + h + 2])));
        }
    for (int i = 0; i < 16; i += 8)
        for (int h = 0; h < 4; h++) {
            t[i + h] = _mm512_shuffle_f32x4(r[i + h], r[i + h + 4], 0x88);
            t[i + h + 4] = _mm512_shuffle_f32x4(r[i + h], r[i + h + 4], 0xdd);
        }
    for (int h = 0; h < 8; h++) {
        r[h] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0x88);
        r[h + 8] = _mm512_shuffle_f32x4(t[h], t[h + 8], 0xdd);
    }
    /* r[k] is column c(k): undo the order the three rounds left */
    static const int column[16] = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
    for (int k = 0; k < 16; k++) VSTORE(&out[column[k]], r[k]);
#else
    for (int j = 0; j < VLEN; j++)
        for (int i = 0; i < VLEN; i++) out[j][i] = src[i * stride + j];
#endif
}

/* x (C planes of H x W) channels-last into xt, rows and columns of zeros round it. */
static void to_channels_last(const Geometry *g, const real *x, real *xt)
{
    const int H = g->H, W = g->W, C = g->C;
    const size_t pixels = (size_t)H * W;
    memset(xt, 0, sizeof(real) * g->prow);
    memset(xt + (size_t)(H + 1) * g->prow, 0, sizeof(real) * g->prow);
    for (int h = 1; h <= H; h++) {
        memset(xt + h * g->prow, 0, sizeof(real) * C);
        memset(xt + h * g->prow + (size_t)(W + 1) * C, 0, sizeof(real) * C);
    }
    for (int c = 0; c < C; c += VLEN)
        for (size_t p = 0; p < pixels; p += VLEN) {
            Vec col[VLEN];
            transpose_block(x + c * pixels + p, pixels, col);
            size_t h = p / W, w = p % W;
            for (int j = 0; j < VLEN; j++) {
                VSTORE(xt + (h + 1) * g->prow + (w + 1) * C + c, col[j]);
                if (++w == (size_t)W) {
                    w = 0;
                    h++;
                }
            }
        }
}

/* x (C planes of `pixels`) channels-last into xt (pixels x C), without a border (dy). */
static void plain_channels_last(int C, size_t pixels, const real *x, real *xt)
{
    for (int c = 0; c < C; c += VLEN)
        for (size_t p = 0; p < pixels; p += VLEN) {
            Vec col[VLEN];
            transpose_block(x + c * pixels + p, pixels, col);
            for (int j = 0; j < VLEN; j++) VSTORE(xt + (p + j) * C + c, col[j]);
        }
}

/* dst (K planes of `pixels`) = or += yt (pixels x K) turned back, plus bias. */
static void from_channels_last(int K, size_t pixels, const real *yt, const real *bias, int accumulate, real *dst)
{
    for (int k = 0; k < K; k += VLEN)
        for (size_t p = 0; p < pixels; p += VLEN) {
            Vec row[VLEN];
            transpose_block(yt + p * K + k, (size_t)K, row);
            for (int j = 0; j < VLEN; j++) {
                real *d = dst + (k + j) * pixels + p;
                Vec v = row[j], old;
                if (bias) v += bias[k + j];
                if (accumulate) {
                    old = VLOAD(d);
                    v += old;
                }
                VSTORE(d, v);
            }
        }
}

/* ---- transforms of tiles, a vector of channels at a time ---- */

/* V[xi] = (B^T d B)[xi] of the 4x4 window d whose (i, j) is at d0 + i * row + j * step. */
static inline void input_tile(const real *d0, size_t row, size_t step, real *v, size_t xi_step)
{
    Vec d[4][4], o[XI];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) d[i][j] = VLOAD(d0 + i * row + j * step);
    wino_input(d, o);
    for (int x = 0; x < XI; x++) VSTORE(v + x * xi_step, o[x]);
}

/* The 2x2 outputs (A^T m A) of the tile whose m[xi] is at m + xi * xi_step, to y0 + i * row + j * step. */
static inline void output_tile(const real *m, size_t xi_step, real *y0, size_t row, size_t step)
{
    Vec q[XI], y[2][2];
    for (int x = 0; x < XI; x++) q[x] = VLOAD(m + x * xi_step);
    wino_output(q, y);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) VSTORE(y0 + i * row + j * step, y[i][j]);
}

/* dM[xi] = (A y A^T)[xi] of the 2x2 block y whose (i, j) is at y0 + i * row + j * step. */
static inline void gradient_tile(const real *y0, size_t row, size_t step, real *dm, size_t xi_step)
{
    Vec y[2][2], o[XI];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) y[i][j] = VLOAD(y0 + i * row + j * step);
    wino_gradient(y, o);
    for (int x = 0; x < XI; x++) VSTORE(dm + x * xi_step, o[x]);
}

/* An image's tiles [t0, t1) from its padded channels-last input xt into V (tile t at
 * v + (t - t0) * C). */
static void input_tiles(const Geometry *g, const real *xt, int t0, int t1, real *v, size_t xi_step)
{
    for (int t = t0; t < t1; t++) {
        const int th = t / g->TW, tw = t % g->TW;
        const real *d0 = xt + 2 * th * g->prow + (size_t)2 * tw * g->C;
        real *at = v + (size_t)(t - t0) * g->C;
        for (int c = 0; c < g->C; c += VLEN) input_tile(d0 + c, g->prow, (size_t)g->C, at + c, xi_step);
    }
}

/* Tiles [t0, t1)'s 2x2 outputs from M (tile t at m + (t - t0) * K) into the image's
 * channels-last output yt. */
static void output_tiles(const Geometry *g, const real *m, size_t xi_step, int t0, int t1, real *yt)
{
    for (int t = t0; t < t1; t++) {
        const int th = t / g->TW, tw = t % g->TW;
        for (int c = 0; c < g->K; c += VLEN)
            output_tile(m + (size_t)(t - t0) * g->K + c, xi_step, yt + ((size_t)2 * th * g->W + 2 * tw) * g->K + c,
                        (size_t)g->W * g->K, (size_t)g->K);
    }
}

/* Tiles [t0, t1)'s dM from the image's channels-last dy (yt) into dm (tile t at dm + (t - t0) * K). */
static void gradient_tiles(const Geometry *g, const real *yt, int t0, int t1, real *dm, size_t xi_step)
{
    for (int t = t0; t < t1; t++) {
        const int th = t / g->TW, tw = t % g->TW;
        for (int k = 0; k < g->K; k += VLEN)
            gradient_tile(yt + ((size_t)2 * th * g->W + 2 * tw) * g->K + k, (size_t)g->W * g->K, (size_t)g->K,
                          dm + (size_t)(t - t0) * g->K + k, xi_step);
    }
}

/* ---- the products, register-blocked ----
 * c[r][v] (+)= sum over l of a[r * a_row + l * a_step] * b[l * b_step + v * VLEN], R rows and
 * NV vectors: the forward's (rows tiles, l channels) and the weight gradient's (rows input
 * channels, l tiles). */
typedef struct {
    const real *a, *b;
    size_t a_row, a_step, b_step, c_row;
    int L, load_c;
    real *c;
} Block;

#define PRODUCT_KERNEL(NAME, R, NV)                                                                \
    static void NAME(const Block *k)                                                               \
    {                                                                                              \
        Vec acc[R][NV]; /* indexed by constants alone, so that it lives in registers */             \
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++)                                       \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] = (Vec){0};             \
        if (k->load_c)                                                                             \
            _Pragma("GCC unroll 16") for (int r = 0; r < R; r++)                                   \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                               \
                    acc[r][v] = VLOAD(k->c + r * k->c_row + v * VLEN);                          \
        const real *a = k->a, *b = k->b;                                                           \
        for (int l = 0; l < k->L; l++, a += k->a_step, b += k->b_step) {                          \
            Vec u[NV];                                                                             \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) u[v] = VLOAD(b + v * VLEN);    \
            _Pragma("GCC unroll 16") for (int r = 0; r < R; r++) {                                 \
                const real s = a[r * k->a_row];                                                    \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] += s * u[v];        \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 16") for (int r = 0; r < R; r++)                                       \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                   \
                VSTORE(k->c + r * k->c_row + v * VLEN, acc[r][v]);                   \
    }

PRODUCT_KERNEL(product_4x4, 4, 4)
PRODUCT_KERNEL(product_8x2, 8, 2)
PRODUCT_KERNEL(product_16x1, 16, 1)
PRODUCT_KERNEL(product_1x4, 1, 4) /* a band's last rows, fewer than a block */
PRODUCT_KERNEL(product_1x2, 1, 2)
PRODUCT_KERNEL(product_1x1, 1, 1)

/* Rows a kernel takes for nv (4, 2 or 1) vectors of output channels, and the kernel: a block
 * of them, or one row. */
static int block_rows(int nv) { return 16 / nv; }

static void product_block(int nv, int block, const Block *k)
{
    switch (nv) {
    case 4: block ? product_4x4(k) : product_1x4(k); break;
    case 2: block ? product_8x2(k) : product_1x2(k); break;
    default: block ? product_16x1(k) : product_1x1(k); break;
    }
}

/* For each xi: c[xi] (rows x K) (+)= a[xi] (rows x L) b[xi] (L x K), in kernel blocks. */
static void products(Block k, int rows, int K, size_t a_xi, size_t b_xi, size_t c_xi, size_t a_rows)
{
    for (int xi = 0; xi < XI; xi++)
        for (int kb = 0, nv; kb < K; kb += nv * VLEN) {
            const int left = (K - kb) / VLEN;
            nv = left >= 4 ? 4 : left >= 2 ? 2 : 1;
            const int R = block_rows(nv);
            for (int r = 0; r < rows;) {
                const int block = rows - r >= R;
                Block b = k;
                b.a = k.a + xi * a_xi + r * a_rows;
                b.b = k.b + xi * b_xi + kb;
                b.c = k.c + xi * c_xi + r * k.c_row + kb;
                product_block(nv, block, &b);
                r += block ? R : 1;
            }
        }
}

/* ---- filters ---- */

/* u[xi * in * out + i * out + o] = (G g G^T)[xi] for the 3x3 filter g of (o, i), read from w
 * (out_c x in_c x 9) as filter (o, i) when !turned, else as the data gradient's: filter (i, o)
 * turned half a circle, so o runs over the layer's input channels. */
static void transform_filters(const ConvShape *s, const real *w, int turned, real *u)
{
    const int in = turned ? s->out_c : s->in_c, out = turned ? s->in_c : s->out_c;
    for (int o = 0; o < out; o++)
        for (int i = 0; i < in; i++) {
            const real *f = turned ? w + ((size_t)i * s->in_c + o) * 9 : w + ((size_t)o * s->in_c + i) * 9;
            real x[XI];
            wino_filter(f, turned, x);
            for (int k = 0; k < XI; k++) u[k * (size_t)in * out + (size_t)i * out + o] = x[k];
        }
}

/* dw (out_c x in_c x 9) += G^T dU G, dU laid out [xi][in][out]. */
static void filter_gradients(const ConvShape *s, const real *du, real *dw)
{
    const size_t xi_step = (size_t)s->in_c * s->out_c;
    for (int o = 0; o < s->out_c; o++)
        for (int i = 0; i < s->in_c; i++) {
            real d[XI];
            for (int x = 0; x < XI; x++) d[x] = du[x * xi_step + (size_t)i * s->out_c + o];
            wino_filter_adjoint(d, dw + ((size_t)o * s->in_c + i) * 9);
        }
}

/* ---- the passes ---- */

/* The tiles whose V and M (or dM) a thread holds at once: an image's tiles on planes up to
 * 16x16; on larger ones (ResNet-50's 56x56 and 28x28) bands of them, so that V and M stay
 * in L2 while the 16 products pass over them. */
enum { BAND = 128 };

static int forward_band(const Geometry *g) { return g->T < BAND ? g->T : BAND; }

/* The weight gradient's tiles a product pass: whole images, about 128 tiles, or a band of an
 * image: each product's sums then run long enough between loading and storing their
 * accumulators. */
static int gradient_band(const Geometry *g) { return g->T < BAND ? (BAND + g->T - 1) / g->T * g->T : BAND; }

/* Per thread: an image's padded channels-last input and its channels-last output (forward) or
 * dy (weight gradient), V and M (or dM) for a band of tiles. */
static size_t band_scratch(const Geometry *g, int band)
{
    return padded_elems(g) + (size_t)g->H * g->W * g->K +
           XI * (wino_xi_stride((size_t)band, g->C) + wino_xi_stride((size_t)band, g->K));
}

Workspace winograd_cl_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    (void)weight_elems; /* as direct_workspace's signature: the transformed filters decide */
    const Geometry f = geometry(s->in_c, s->out_c, s->in_h, s->in_w), d = geometry(s->out_c, s->in_c, s->in_h, s->in_w);
    size_t thread = band_scratch(&f, forward_band(&f));
    if (thread < band_scratch(&d, forward_band(&d))) thread = band_scratch(&d, forward_band(&d));
    if (thread < band_scratch(&f, gradient_band(&f))) thread = band_scratch(&f, gradient_band(&f));
    const size_t filters = (size_t)XI * s->in_c * s->out_c;
    Workspace w = {thread, filters * (1 + direct_image_chunks(batch))};
    return w;
}

/* dst (+)= the convolution of n images of src (geometry g: C channels) with the transformed
 * filters u, through each thread's scratch, band by band of each image's tiles. */
static void convolve(Backend *bk, const Geometry *g, int n, const real *src, const real *u, const real *bias,
                     int accumulate, real *dst)
{
    const size_t pixels = (size_t)g->H * g->W, src_item = g->C * pixels, dst_item = g->K * pixels;
    const int band = forward_band(g);
    const size_t v_xi = wino_xi_stride((size_t)band, g->C), m_xi = wino_xi_stride((size_t)band, g->K);
    CPU_FOR_T(bk, t, int, i, n, {
        real *xt = cpu_workspace(bk, t), *yt = xt + padded_elems(g), *v = yt + pixels * g->K, *m = v + XI * v_xi;
        to_channels_last(g, src + i * src_item, xt);
        for (int t0 = 0; t0 < g->T; t0 += band) {
            const int t1 = g->T - t0 < band ? g->T : t0 + band;
            input_tiles(g, xt, t0, t1, v, v_xi);
            const Block k = {.a = v, .b = u, .a_row = (size_t)g->C, .a_step = 1, .b_step = (size_t)g->K,
                             .c_row = (size_t)g->K, .L = g->C, .c = m};
            products(k, t1 - t0, g->K, v_xi, (size_t)g->C * g->K, m_xi, (size_t)g->C);
            output_tiles(g, m, m_xi, t0, t1, yt);
        }
        from_channels_last(g->K, pixels, yt, bias, accumulate, dst + i * dst_item);
    });
}

void winograd_cl_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b, real *y)
{
    BK_GUARD(bk);
    real *u = cpu_shared_workspace(bk);
    transform_filters(s, w, 0, u);
    const Geometry g = geometry(s->in_c, s->out_c, s->in_h, s->in_w);
    convolve(bk, &g, n, x, u, b, 0, y);
}

/* Image chunk `chunk`'s dU (C x K per xi) = its images' sum of V^T dM, their tiles taken in
 * order, gradient_band of them a product pass. */
static void chunk_gradient(const Geometry *g, int n, int chunks, int chunk, const real *x, const real *dy,
                           real *scratch, real *du)
{
    const int n0 = direct_chunk_first(n, chunks, chunk), n1 = direct_chunk_first(n, chunks, chunk + 1);
    const int band = gradient_band(g);
    const size_t pixels = (size_t)g->H * g->W;
    const size_t v_xi = wino_xi_stride((size_t)band, g->C), dm_xi = wino_xi_stride((size_t)band, g->K);
    real *xt = scratch, *yt = xt + padded_elems(g), *v = yt + pixels * g->K, *dm = v + XI * v_xi;
    Block k = {.a = v, .b = dm, .a_row = 1, .a_step = (size_t)g->C, .b_step = (size_t)g->K, .c_row = (size_t)g->K,
               .c = du};
    int filled = 0;
    for (int i = n0; i < n1; i++) {
        to_channels_last(g, x + (size_t)i * g->C * pixels, xt);
        plain_channels_last(g->K, pixels, dy + (size_t)i * g->K * pixels, yt);
        for (int t0 = 0; t0 < g->T;) {
            const int t1 = g->T - t0 < band - filled ? g->T : t0 + band - filled;
            input_tiles(g, xt, t0, t1, v + (size_t)filled * g->C, v_xi);
            gradient_tiles(g, yt, t0, t1, dm + (size_t)filled * g->K, dm_xi);
            filled += t1 - t0;
            t0 = t1;
            if (filled == band || (i == n1 - 1 && t0 == g->T)) {
                k.L = filled;
                products(k, g->C, g->K, v_xi, dm_xi, (size_t)g->C * g->K, 1);
                k.load_c = 1;
                filled = 0;
            }
        }
    }
}

void winograd_cl_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                          real *dx, bool accumulate, real *dw)
{
    BK_GUARD(bk);
    if (n <= 0) return;
    const Geometry g = geometry(s->in_c, s->out_c, s->in_h, s->in_w);
    const size_t filters = (size_t)XI * s->in_c * s->out_c;
    real *u = cpu_shared_workspace(bk), *du = u + filters;
    const int chunks = direct_image_chunks(n);
    CPU_FOR_T(bk, t, int, c, chunks, { chunk_gradient(&g, n, chunks, c, x, dy, cpu_workspace(bk, t), du + c * filters); });
    CPU_FOR(bk, size_t, j, filters, {
        for (int c = 1; c < chunks; c++) du[j] += du[c * filters + j];
    });
    filter_gradients(s, du, dw);
    if (!dx) return;
    transform_filters(s, w, 1, u);
    const Geometry d = geometry(s->out_c, s->in_c, s->in_h, s->in_w);
    convolve(bk, &d, n, dy, u, NULL, accumulate, dx);
}
