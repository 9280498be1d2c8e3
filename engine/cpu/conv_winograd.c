/* Winograd F(2x2, 3x3) convolution for stride-1 3x3 layers (Lavin & Gray, arXiv 1509.09308):
 * each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A, so a tile costs 16 multiplies per
 * channel pair instead of 36. The 16 elementwise products become 16 gemms, one per
 * position xi of the 4x4 transformed tile, over a chunk of images:
 *   forward         M[xi] (oc x T) = U[xi] (oc x ic) V[xi] (ic x T)
 *   weight gradient dU[xi]        += dM[xi] V[xi]^T             (dM = A dy A^T)
 *   data gradient   dV[xi]         = U[xi]^T dM[xi]             (dx += B dV B^T)
 * with U = G g G^T the transformed filters, V = B^T d B the transformed input tiles and T
 * the tiles of the chunk. Backward uses the adjoints of the same transforms. Threads take
 * whole chunks of images, each with private buffers and a private dU summed in thread order,
 * so results are identical run to run at a fixed thread count. engine/cpu/conv.c keeps the
 * im2col path as the reference this one is tested against (tests/test_conv_paths.c). */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "guard.h"
#include "winograd_f2.h"

/* A chunk aims at 512 tiles (the gemms' width), less where its transformed input and
 * output would pass 2^20 values (4 MiB) per thread: wide layers have long enough gemms. */
enum { TILE = 16, TARGET_TILES = 512, CHUNK_VALUES = 1 << 20 };

/* ResNet-50's last 3x3 layers (512 channels, 7x7 planes): 16 tiles an image, a chunk of 64 tiles
 * under CHUNK_VALUES, and 16 gemms of 64 columns ran at 132-164 GFLOP/s (counted as direct);
 * one gemm of im2col over a group of images (conv_batched.c) at about 250. */
static int wide_small_plane(const ConvShape *s) { return s->out_h * s->out_w < 64 && conv_batched_applies(s); }

int winograd_applies(const ConvShape *s)
{
    /* Below 16 channels (a group) the 16 gemms are too thin to pay for the transforms. */
    return s->k_h == 3 && s->k_w == 3 && s->stride == 1 && s->pad <= 2 && s->in_c / s->groups >= 16 &&
           s->out_c / s->groups >= 16 && s->out_h >= 4 && s->out_w >= 4 && !wide_small_plane(s);
}

typedef struct {
    int tiles_h, tiles_w, tiles;  /* 2x2 output tiles per image */
    int chunk;                    /* images per gemm */
} Tiling;

static Tiling tiling(const ConvShape *s, int n, int threads)
{
    Tiling t = {(s->out_h + 1) / 2, (s->out_w + 1) / 2, 0, 1};
    t.tiles = t.tiles_h * t.tiles_w;
    int target = TARGET_TILES, cap = CHUNK_VALUES / (TILE * (s->in_c + s->out_c));
    if (target > cap) target = cap;
    t.chunk = (target + t.tiles - 1) / t.tiles;
    int per_thread = (n + threads - 1) / threads;
    if (n > 0 && t.chunk > per_thread) t.chunk = per_thread;
    if (t.chunk < 1) t.chunk = 1;
    return t;
}

/* Chunk k of a batch: its images, and its tiles per channel in V and M, where tile row th of
 * image i of channel c starts at c * tiles + i * tiles-per-image + th * tiles_w. */
typedef struct {
    int first, images;
    size_t tiles;
} Chunk;

static Chunk chunk_at(const Tiling *t, int n, int k)
{
    Chunk c = {k * t->chunk, t->chunk, 0};
    if (n - c.first < c.images) c.images = n - c.first;
    c.tiles = (size_t)c.images * t->tiles;
    return c;
}

static size_t tile_row_at(const Tiling *t, const Chunk *c, int channel, int image, int th)
{
    return channel * c->tiles + (size_t)image * t->tiles + (size_t)th * t->tiles_w;
}

/* ---- filter transform U = G g G^T and its adjoint dW += G^T dU G ---- */

/* A layer's filters: out_c x in_c / groups of them. */
static size_t filter_plane(const ConvShape *s) { return (size_t)s->out_c * (s->in_c / s->groups); }

static void filter_transform(const ConvShape *s, const real *w, real *u)
{
    const size_t plane = filter_plane(s);
    for (size_t oc = 0; oc < plane; oc++) {
        real x[TILE];
        wino_filter(w + oc * 9, 0, x);
        for (int k = 0; k < TILE; k++) u[k * plane + oc] = x[k];
    }
}

static void filter_transform_adjoint(const ConvShape *s, const real *du, real *dw)
{
    const size_t plane = filter_plane(s);
    for (size_t oc = 0; oc < plane; oc++) {
        real d[TILE];
        for (int x = 0; x < TILE; x++) d[x] = du[x * plane + oc];
        wino_filter_adjoint(d, dw + oc * 9);
    }
}

/* ---- input transform V = B^T d B and its adjoint dx += B dV B^T ----
 * A channel's padded plane is held in scratch with its columns split into even and odd, so
 * that every loop over the tiles reads and writes with unit stride and vectorizes: the tile
 * (th, k) covers plane rows 2 th .. 2 th + 3 and columns even[k], odd[k], even[k+1], odd[k+1].
 * Each image row is split once, though two tile rows read it. */

typedef struct {
    size_t len;              /* tiles_w + 1: the deinterleaved length of a padded row */
    int rows;                /* 2 tiles_h + 2: the padded plane's rows */
    real *even, *odd;        /* the plane */
    real *even2, *odd2;      /* the adjoint's spill into the next tile's columns */
} Scratch;

static size_t scratch_elems(const Tiling *t) { return 4 * (2 * (size_t)t->tiles_h + 2) * (t->tiles_w + 1); }

static Scratch scratch_at(const Tiling *t, real *base)
{
    Scratch sc;
    sc.len = (size_t)t->tiles_w + 1;
    sc.rows = 2 * t->tiles_h + 2;
    size_t plane = sc.len * sc.rows;
    sc.even = base;
    sc.odd = sc.even + plane;
    sc.even2 = sc.odd + plane;
    sc.odd2 = sc.even2 + plane;
    return sc;
}

/* Deinterleaved index k covers padded columns 2k and 2k + 1, image columns 2k - pad and
 * 2k + 1 - pad: both inside the image for k in [(pad + 1) / 2, interior_end). */
static int interior_end(const ConvShape *s, int len)
{
    int end = (s->in_w + s->pad) / 2;
    return end < len ? end : len;
}

/* Plane row r is image row r - pad, zero outside the image. */
static void load_plane(const ConvShape *s, const real *xc, const Scratch *sc)
{
    const int len = (int)sc->len, lo = (s->pad + 1) / 2, hi = interior_end(s, len);
    for (int r = 0; r < sc->rows; r++) {
        real *restrict e = sc->even + (size_t)r * len, *restrict o = sc->odd + (size_t)r * len;
        int ih = r - s->pad;
        if (ih < 0 || ih >= s->in_h) {
            memset(e, 0, sizeof(real) * len);
            memset(o, 0, sizeof(real) * len);
            continue;
        }
        const real *restrict xr = xc + (size_t)ih * s->in_w - s->pad;  /* xr[j]: padded column j */
        for (int k = 0; k < len; k++) {
            if (k == lo && lo < hi) {
#pragma omp simd
                for (int m = lo; m < hi; m++) {
                    e[m] = xr[2 * m];
                    o[m] = xr[2 * m + 1];
                }
                k = hi - 1;
                continue;
            }
            int j = 2 * k - s->pad;
            e[k] = j >= 0 && j < s->in_w ? xr[2 * k] : 0;
            o[k] = j + 1 >= 0 && j + 1 < s->in_w ? xr[2 * k + 1] : 0;
        }
    }
}

/* v[(4p + q) stride + k] = (B^T d B)[p][q] of tile (th, k). */
static void transform_rows(int tiles_w, const Scratch *sc, int th, real *restrict v, size_t stride)
{
    const size_t L = sc->len, top = 2 * (size_t)th * L;
    const real *restrict E0 = sc->even + top, *restrict E1 = E0 + L, *restrict E2 = E1 + L, *restrict E3 = E2 + L;
    const real *restrict O0 = sc->odd + top, *restrict O1 = O0 + L, *restrict O2 = O1 + L, *restrict O3 = O2 + L;
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

/* x and v are the chunk's: images from its first, tiles as tile_row_at places them. */
static void input_transform(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *x, real *v,
                            const Scratch *sc)
{
    const size_t stride = (size_t)s->in_c * ch->tiles, hw = (size_t)s->in_h * s->in_w;
    for (int i = 0; i < ch->images; i++)
        for (int c = 0; c < s->in_c; c++) {
            load_plane(s, x + (i * (size_t)s->in_c + c) * hw, sc);
            for (int th = 0; th < t->tiles_h; th++)
                transform_rows(t->tiles_w, sc, th, v + tile_row_at(t, ch, c, i, th), stride);
        }
}

/* The adjoint of transform_rows: the plane rows under tile row th += B dV B^T, each tile's
 * columns 0, 1 in even/odd[k] and its columns 2, 3 (the next tile's 0, 1) in even2/odd2[k]. */
static void transform_rows_adjoint(int tiles_w, const real *restrict d, size_t stride, int th, const Scratch *sc)
{
    const size_t L = sc->len, top = 2 * (size_t)th * L;
    real *restrict E = sc->even + top, *restrict O = sc->odd + top;
    real *restrict E2 = sc->even2 + top, *restrict O2 = sc->odd2 + top;
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

/* dx += the plane, the spill added one tile on. */
static void store_plane_adjoint(const ConvShape *s, int tiles_w, const Scratch *sc, real *dxc)
{
    const int len = (int)sc->len, lo = (s->pad + 1) / 2, hi = interior_end(s, len);
    const int vlo = lo > 0 ? lo : 1, vhi = hi < tiles_w ? hi : tiles_w;  /* both halves present */
    for (int r = 0; r < sc->rows; r++) {
        int ih = r - s->pad;
        if (ih < 0 || ih >= s->in_h) continue;
        const size_t at = (size_t)r * len;
        const real *restrict e = sc->even + at, *restrict o = sc->odd + at;
        const real *restrict e2 = sc->even2 + at, *restrict o2 = sc->odd2 + at;
        real *restrict xr = dxc + (size_t)ih * s->in_w - s->pad;  /* xr[j]: padded column j */
        for (int k = 0; k < len; k++) {
            if (k == vlo && vlo < vhi) {
#pragma omp simd
                for (int m = vlo; m < vhi; m++) {
                    xr[2 * m] += e[m] + e2[m - 1];
                    xr[2 * m + 1] += o[m] + o2[m - 1];
                }
                k = vhi - 1;
                continue;
            }
            real even = (k < tiles_w ? e[k] : 0) + (k > 0 ? e2[k - 1] : 0);
            real odd = (k < tiles_w ? o[k] : 0) + (k > 0 ? o2[k - 1] : 0);
            int j = 2 * k - s->pad;
            if (j >= 0 && j < s->in_w) xr[2 * k] += even;
            if (j + 1 >= 0 && j + 1 < s->in_w) xr[2 * k + 1] += odd;
        }
    }
}

static void input_transform_adjoint(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *dv,
                                    real *dx, const Scratch *sc)
{
    const size_t stride = (size_t)s->in_c * ch->tiles, hw = (size_t)s->in_h * s->in_w;
    for (int i = 0; i < ch->images; i++)
        for (int c = 0; c < s->in_c; c++) {
            memset(sc->even, 0, sizeof(real) * 4 * sc->len * sc->rows);  /* the four planes */
            for (int th = 0; th < t->tiles_h; th++)
                transform_rows_adjoint(t->tiles_w, dv + tile_row_at(t, ch, c, i, th), stride, th, sc);
            store_plane_adjoint(s, t->tiles_w, sc, dx + (i * (size_t)s->in_c + c) * hw);
        }
}

/* ---- output transform y = A^T m A (+ bias) and its adjoint dM = A dy A^T ---- */

/* The two output rows of a tile row, straight into y when the tiles fit it exactly, else
 * through scratch rows (2 of 2 tiles_w). */
static void output_rows(const ConvShape *s, int tiles_w, const real *restrict m, size_t stride, real bias,
                        const Scratch *sc, real *y0, real *y1)
{
    const int direct = y1 && 2 * tiles_w == s->out_w;
    real *restrict p0 = direct ? y0 : sc->even, *restrict p1 = direct ? y1 : sc->even + 2 * (size_t)tiles_w;
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
    if (direct) return;
    memcpy(y0, p0, sizeof(real) * s->out_w);
    if (y1) memcpy(y1, p1, sizeof(real) * s->out_w);
}

static void output_transform(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *m,
                             const real *bias, real *y, const Scratch *sc)
{
    const size_t stride = (size_t)s->out_c * ch->tiles, hw = (size_t)s->out_h * s->out_w;
    for (int i = 0; i < ch->images; i++)
        for (int o = 0; o < s->out_c; o++)
            for (int th = 0; th < t->tiles_h; th++) {
                real *y0 = y + (i * (size_t)s->out_c + o) * hw + (size_t)(2 * th) * s->out_w;
                output_rows(s, t->tiles_w, m + tile_row_at(t, ch, o, i, th), stride, bias ? bias[o] : 0, sc, y0,
                            2 * th + 1 < s->out_h ? y0 + s->out_w : NULL);
            }
}

/* dM of a tile row from the two dy rows (zero past the image's edge). */
static void output_rows_adjoint(const ConvShape *s, int tiles_w, const real *d0, const real *d1,
                                const Scratch *sc, real *restrict m, size_t stride)
{
    const real *restrict p0 = d0, *restrict p1 = d1;
    if (!d1 || 2 * tiles_w != s->out_w) {  /* a partial tile: zero past the edge */
        real *z = sc->even;
        memset(z, 0, sizeof(real) * 4 * (size_t)tiles_w);
        memcpy(z, d0, sizeof(real) * s->out_w);
        if (d1) memcpy(z + 2 * (size_t)tiles_w, d1, sizeof(real) * s->out_w);
        p0 = z;
        p1 = z + 2 * (size_t)tiles_w;
    }
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

static void output_transform_adjoint(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *dy,
                                     real *dm, const Scratch *sc)
{
    const size_t stride = (size_t)s->out_c * ch->tiles, hw = (size_t)s->out_h * s->out_w;
    for (int i = 0; i < ch->images; i++)
        for (int o = 0; o < s->out_c; o++)
            for (int th = 0; th < t->tiles_h; th++) {
                const real *d0 = dy + (i * (size_t)s->out_c + o) * hw + (size_t)(2 * th) * s->out_w;
                output_rows_adjoint(s, t->tiles_w, d0, 2 * th + 1 < s->out_h ? d0 + s->out_w : NULL, sc,
                                    dm + tile_row_at(t, ch, o, i, th), stride);
            }
}

/* ---- the passes ---- */

/* Per thread: V (ic) and M (oc) for a full chunk, dU (oc x ic) and the scratch rows.
 * Shared: the transformed filters U (oc x ic), which every thread reads. */
Workspace winograd_workspace(const ConvShape *s)
{
    Tiling t = tiling(s, 0, 1);
    size_t chunk_tiles = (size_t)t.chunk * t.tiles, plane = filter_plane(s);
    return (Workspace){TILE * chunk_tiles * (size_t)(s->in_c + s->out_c) + TILE * plane + scratch_elems(&t),
                       TILE * plane};
}

typedef struct {
    real *v, *m, *du;
    Scratch scratch;
} ThreadBuffers;

static ThreadBuffers thread_buffers(Backend *bk, int thread, const ConvShape *s, const Tiling *t)
{
    ThreadBuffers b;
    size_t chunk_tiles = (size_t)t->chunk * t->tiles;
    b.v = cpu_workspace(bk, thread);
    b.m = b.v + TILE * chunk_tiles * s->in_c;
    b.du = b.m + TILE * chunk_tiles * s->out_c;
    b.scratch = scratch_at(t, b.du + TILE * filter_plane(s));
    return b;
}

/* What a forward or backward call over n images sets up once: the tiling, the image and
 * filter sizes, and U = G w G^T in the shared workspace. */
typedef struct {
    Tiling t;
    int chunks;
    size_t plane, in_item, out_item;
    real *u;
} Pass;

static Pass pass_begin(Backend *bk, const ConvShape *s, int n, const real *w)
{
    Pass p;
    p.t = tiling(s, n, bk->threads);
    p.chunks = (n + p.t.chunk - 1) / p.t.chunk;
    p.plane = filter_plane(s);
    p.in_item = (size_t)s->in_c * s->in_h * s->in_w;
    p.out_item = (size_t)s->out_c * s->out_h * s->out_w;
    p.u = cpu_shared_workspace(bk);
    filter_transform(s, w, p.u);
    return p;
}

/* Group g's part of position xi's product: its U (oc x ic), and where its rows of V and M start
 * in a chunk of ct tiles. */
typedef struct {
    int ic, oc;
    const real *u;
    size_t v, m;
} Group;

static Group group_at(const ConvShape *s, const Pass *p, int xi, int g, int ct)
{
    Group gr = {s->in_c / s->groups, s->out_c / s->groups, NULL, 0, 0};
    gr.u = p->u + xi * p->plane + (size_t)g * gr.oc * gr.ic;
    gr.v = ((size_t)xi * s->in_c + (size_t)g * gr.ic) * ct;
    gr.m = ((size_t)xi * s->out_c + (size_t)g * gr.oc) * ct;
    return gr;
}

void winograd_conv_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                           const real *b, real *y)
{
    BK_GUARD(bk);
    const Pass p = pass_begin(bk, s, n, w);
    CPU_FOR_T(bk, t, int, k, p.chunks, {
        ThreadBuffers tb = thread_buffers(bk, t, s, &p.t);
        const Chunk ch = chunk_at(&p.t, n, k);
        const int ct = (int)ch.tiles;
        input_transform(s, &p.t, &ch, x + ch.first * p.in_item, tb.v, &tb.scratch);
        for (int xi = 0; xi < TILE; xi++)
            for (int g = 0; g < s->groups; g++) {
                const Group gr = group_at(s, &p, xi, g, ct);
                gemm(CblasNoTrans, CblasNoTrans, gr.oc, ct, gr.ic, 1, gr.u, gr.ic, tb.v + gr.v, ct, 0, tb.m + gr.m, ct);
            }
        output_transform(s, &p.t, &ch, tb.m, b, y + ch.first * p.out_item, &tb.scratch);
    });
}

/* dw += the weight gradient; dx (may be NULL) += the data gradient. */
void winograd_conv_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                            const real *dy, real *dx, real *dw)
{
    BK_GUARD(bk);
    const Pass p = pass_begin(bk, s, n, w);
    for (int th = 0; th < bk->threads; th++)
        memset(thread_buffers(bk, th, s, &p.t).du, 0, sizeof(real) * TILE * p.plane);
    CPU_FOR_STATIC_T(bk, t, int, k, p.chunks, {
        ThreadBuffers tb = thread_buffers(bk, t, s, &p.t);
        const Chunk ch = chunk_at(&p.t, n, k);
        const int ct = (int)ch.tiles;
        input_transform(s, &p.t, &ch, x + ch.first * p.in_item, tb.v, &tb.scratch);
        output_transform_adjoint(s, &p.t, &ch, dy + ch.first * p.out_item, tb.m, &tb.scratch);
        for (int xi = 0; xi < TILE; xi++)
            for (int g = 0; g < s->groups; g++) {
                const Group gr = group_at(s, &p, xi, g, ct);
                const real *mx = tb.m + gr.m;
                real *vx = tb.v + gr.v;
                gemm(CblasNoTrans, CblasTrans, gr.oc, gr.ic, ct, 1, mx, ct, vx, ct, 1, tb.du + (gr.u - p.u), gr.ic);
                if (dx)  /* the group's V is spent: dV takes its place */
                    gemm(CblasTrans, CblasNoTrans, gr.ic, ct, gr.oc, 1, gr.u, gr.ic, mx, ct, 0, vx, ct);
            }
        if (dx) input_transform_adjoint(s, &p.t, &ch, tb.v, dx + ch.first * p.in_item, &tb.scratch);
    });
    /* Sum the private dU into thread 0's, each value in thread order (deterministic), the
     * values split over the threads; then back to 3x3. */
    real *du = thread_buffers(bk, 0, s, &p.t).du;
    const size_t at = (size_t)(du - cpu_workspace(bk, 0)), n_du = TILE * p.plane;
    CPU_FOR(bk, size_t, j, n_du, { du[j] = cpu_thread_copies_at(bk, bk->threads, at + j); });
    filter_transform_adjoint(s, du, dw);
}
