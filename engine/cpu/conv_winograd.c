/* Winograd F(2x2, 3x3) and F(2x2, 5x5) convolution for stride-1 3x3 and 5x5 layers (Lavin &
 * Gray, arXiv 1509.09308): each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A, so a tile costs
 * 16 multiplies per channel pair instead of 36 (3x3), or 36 instead of 100 (5x5, the AlexNets'
 * conv2). The elementwise products become 16 (36) gemms, one per position xi of the 4x4 (6x6)
 * transformed tile, over a chunk of images:
 *   forward         M[xi] (oc x T) = U[xi] (oc x ic) V[xi] (ic x T)
 *   weight gradient dU[xi]        += dM[xi] V[xi]^T             (dM = A dy A^T)
 *   data gradient   dV[xi]         = U[xi]^T dM[xi]             (dx += B dV B^T)
 * with U = G g G^T the transformed filters, V = B^T d B the transformed input tiles and T
 * the tiles of the chunk. Backward uses the adjoints of the same transforms. Threads take
 * whole chunks of images, each with private buffers and a private dU summed in thread order,
 * so results are identical run to run at a fixed thread count. engine/cpu/conv_im2col.c is the
 * reference, im2col, this one is tested against (tests/test_conv_paths.c). */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "guard.h"
#include "winograd_f2.h"
#include "winograd_tiles.h"

/* A chunk aims at 512 tiles (the gemms' width), less where its transformed input and
 * output would pass 2^20 values (4 MiB) per thread: wide layers have long enough gemms. */
enum { TARGET_TILES = 512, CHUNK_VALUES = 1 << 20 };

/* ResNet-50's last 3x3 layers (512 channels, 7x7 planes): 16 tiles an image, a chunk of 64 tiles
 * under CHUNK_VALUES, and 16 gemms of 64 columns ran at 132-164 GFLOP/s (counted as direct);
 * one gemm of im2col over a group of images (conv_batched.c) at about 250. */
static int wide_small_plane(const ConvShape *s) { return s->out_h * s->out_w < 64 && conv_batched_applies(s); }

int winograd_applies(const ConvShape *s)
{
    /* Below 16 channels (a group) the gemms are too thin to pay for the transforms. */
    return (s->k_h == 3 || s->k_h == 5) && s->k_w == s->k_h && s->stride == 1 && s->pad < s->k_h &&
           s->in_c / s->groups >= 16 && s->out_c / s->groups >= 16 && s->out_h >= 4 && s->out_w >= 4 &&
           !wide_small_plane(s);
}

static const WinoForm *form_of(const ConvShape *s) { return s->k_h == 5 ? &wino_tiles_5x5 : &wino_tiles_3x3; }

typedef struct {
    const WinoForm *f;
    int tiles_h, tiles_w, tiles;  /* 2x2 output tiles per image */
    int chunk;                    /* images per gemm */
} Tiling;

static Tiling tiling(const ConvShape *s, int n, int threads)
{
    Tiling t = {form_of(s), (s->out_h + 1) / 2, (s->out_w + 1) / 2, 0, 1};
    t.tiles = t.tiles_h * t.tiles_w;
    int target = TARGET_TILES, cap = CHUNK_VALUES / (t.f->xis * (s->in_c + s->out_c));
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

enum { MAX_XIS = 36 };

/* A layer's filters: out_c x in_c / groups of them. */
static size_t filter_plane(const ConvShape *s) { return (size_t)s->out_c * (s->in_c / s->groups); }

/* In blocks of filters, split over the threads: U's xi's are a multiple of 4 KiB apart in the
 * AlexNets' layers, and a filter at a time their 16 or 36 values went to the same L1 sets (on
 * BVLC AlexNet's conv3, 98,304 filters, the transforms took 5% of the backward's time). */
enum { FILTER_BLOCK = 64 };

static void filter_transform(Backend *bk, const ConvShape *s, const WinoForm *f, const real *w, real *u)
{
    const size_t plane = filter_plane(s), taps = (size_t)f->taps * f->taps;
    CPU_FOR(bk, size_t, block, (plane + FILTER_BLOCK - 1) / FILTER_BLOCK, {
        const size_t first = block * FILTER_BLOCK, count = plane - first < FILTER_BLOCK ? plane - first : FILTER_BLOCK;
        real x[MAX_XIS][FILTER_BLOCK];
        for (size_t i = 0; i < count; i++) {
            real one[MAX_XIS];
            f->filter(w + (first + i) * taps, one);
            for (int k = 0; k < f->xis; k++) x[k][i] = one[k];
        }
        for (int k = 0; k < f->xis; k++) memcpy(u + k * plane + first, x[k], sizeof(real) * count);
    });
}

static void filter_transform_adjoint(Backend *bk, const ConvShape *s, const WinoForm *f, const real *du, real *dw)
{
    const size_t plane = filter_plane(s), taps = (size_t)f->taps * f->taps;
    CPU_FOR(bk, size_t, block, (plane + FILTER_BLOCK - 1) / FILTER_BLOCK, {
        const size_t first = block * FILTER_BLOCK, count = plane - first < FILTER_BLOCK ? plane - first : FILTER_BLOCK;
        real x[MAX_XIS][FILTER_BLOCK];
        for (int k = 0; k < f->xis; k++) memcpy(x[k], du + k * plane + first, sizeof(real) * count);
        for (size_t i = 0; i < count; i++) {
            real one[MAX_XIS];
            for (int k = 0; k < f->xis; k++) one[k] = x[k][i];
            f->filter_adjoint(one, dw + (first + i) * taps);
        }
    });
}

/* ---- input transform V = B^T d B and its adjoint dx += B dV B^T ----
 * A channel's padded plane is held in a WinoPlane (winograd_tiles.h), its columns split into
 * even and odd. Each image row is split once, though two or three tile rows read it. */

static size_t plane_elems(const Tiling *t)
{
    const int spills = t->f->side / 2 - 1;
    return 2 * (size_t)(1 + spills) * (2 * (size_t)t->tiles_h + 2 * spills) * (t->tiles_w + spills);
}

static WinoPlane plane_at(const Tiling *t, real *base)
{
    WinoPlane p;
    p.spills = t->f->side / 2 - 1;
    p.len = (size_t)t->tiles_w + p.spills;
    p.rows = 2 * t->tiles_h + 2 * p.spills;
    const size_t plane = p.len * p.rows;
    for (int k = 0; k <= p.spills; k++) {
        p.even[k] = base + 2 * k * plane;
        p.odd[k] = p.even[k] + plane;
    }
    return p;
}

/* Deinterleaved index k covers padded columns 2k and 2k + 1, image columns 2k - pad and
 * 2k + 1 - pad: both inside the image for k in [(pad + 1) / 2, interior_end). */
static int interior_end(const ConvShape *s, int len)
{
    int end = (s->in_w + s->pad) / 2;
    return end < len ? end : len;
}

/* Plane row r is image row r - pad, zero outside the image. */
static void load_plane(const ConvShape *s, const real *xc, const WinoPlane *p)
{
    const int len = (int)p->len, lo = (s->pad + 1) / 2, hi = interior_end(s, len);
    for (int r = 0; r < p->rows; r++) {
        real *restrict e = p->even[0] + (size_t)r * len, *restrict o = p->odd[0] + (size_t)r * len;
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

/* x and v are the chunk's: images from its first, tiles as tile_row_at places them. */
static void input_transform(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *x, real *v,
                            const WinoPlane *p)
{
    const size_t stride = wino_xi_stride(ch->tiles, s->in_c), hw = (size_t)s->in_h * s->in_w;
    for (int i = 0; i < ch->images; i++)
        for (int c = 0; c < s->in_c; c++) {
            load_plane(s, x + (i * (size_t)s->in_c + c) * hw, p);
            for (int th = 0; th < t->tiles_h; th++)
                t->f->input_rows(t->tiles_w, p, th, v + tile_row_at(t, ch, c, i, th), stride);
        }
}

/* Deinterleaved column k of row `at` with the spills added, each one tile on. */
static real plane_column(const real *const *planes, int spills, int tiles_w, size_t at, int k)
{
    real sum = k < tiles_w ? planes[0][at + k] : 0;
    for (int sp = 1; sp <= spills; sp++) sum += k >= sp ? planes[sp][at + k - sp] : 0;
    return sum;
}

/* dx += the plane, the spills added one and two tiles on. */
static void store_plane_adjoint(const ConvShape *s, int tiles_w, const WinoPlane *p, real *dxc)
{
    const int len = (int)p->len, lo = (s->pad + 1) / 2, hi = interior_end(s, len), S = p->spills;
    const int vlo = lo > S ? lo : S, vhi = hi < tiles_w ? hi : tiles_w;  /* every part present */
    for (int r = 0; r < p->rows; r++) {
        int ih = r - s->pad;
        if (ih < 0 || ih >= s->in_h) continue;
        const size_t at = (size_t)r * len;
        const real *restrict e = p->even[0] + at, *restrict o = p->odd[0] + at;
        const real *restrict e1 = p->even[1] + at, *restrict o1 = p->odd[1] + at;
        const real *restrict e2 = p->even[S] + at, *restrict o2 = p->odd[S] + at;
        real *restrict xr = dxc + (size_t)ih * s->in_w - s->pad;  /* xr[j]: padded column j */
        for (int k = 0; k < len; k++) {
            if (k == vlo && vlo < vhi && S == 1) {
#pragma omp simd
                for (int m = vlo; m < vhi; m++) {
                    xr[2 * m] += e[m] + e1[m - 1];
                    xr[2 * m + 1] += o[m] + o1[m - 1];
                }
                k = vhi - 1;
                continue;
            }
            if (k == vlo && vlo < vhi) {
#pragma omp simd
                for (int m = vlo; m < vhi; m++) {
                    xr[2 * m] += e[m] + e1[m - 1] + e2[m - 2];
                    xr[2 * m + 1] += o[m] + o1[m - 1] + o2[m - 2];
                }
                k = vhi - 1;
                continue;
            }
            real even = plane_column((const real *const *)p->even, S, tiles_w, at, k);
            real odd = plane_column((const real *const *)p->odd, S, tiles_w, at, k);
            int j = 2 * k - s->pad;
            if (j >= 0 && j < s->in_w) xr[2 * k] += even;
            if (j + 1 >= 0 && j + 1 < s->in_w) xr[2 * k + 1] += odd;
        }
    }
}

static void input_transform_adjoint(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *dv,
                                    real *dx, const WinoPlane *p)
{
    const size_t stride = wino_xi_stride(ch->tiles, s->in_c), hw = (size_t)s->in_h * s->in_w;
    for (int i = 0; i < ch->images; i++)
        for (int c = 0; c < s->in_c; c++) {
            memset(p->even[0], 0, sizeof(real) * 2 * (1 + p->spills) * p->len * p->rows);  /* all planes */
            for (int th = 0; th < t->tiles_h; th++)
                t->f->input_rows_adjoint(t->tiles_w, dv + tile_row_at(t, ch, c, i, th), stride, th, p);
            store_plane_adjoint(s, t->tiles_w, p, dx + (i * (size_t)s->in_c + c) * hw);
        }
}

/* ---- output transform y = A^T m A (+ bias) and its adjoint dM = A dy A^T ---- */

/* The two output rows of a tile row, straight into y when the tiles fit it exactly, else
 * through scratch rows (2 of 2 tiles_w). */
static void output_rows(const ConvShape *s, const WinoForm *f, int tiles_w, const real *m, size_t stride,
                        real bias, const WinoPlane *p, real *y0, real *y1)
{
    const int direct = y1 && 2 * tiles_w == s->out_w;
    real *p0 = direct ? y0 : p->even[0], *p1 = direct ? y1 : p->even[0] + 2 * (size_t)tiles_w;
    f->output_rows(tiles_w, m, stride, bias, p0, p1);
    if (direct) return;
    memcpy(y0, p0, sizeof(real) * s->out_w);
    if (y1) memcpy(y1, p1, sizeof(real) * s->out_w);
}

static void output_transform(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *m,
                             const real *bias, real *y, const WinoPlane *p)
{
    const size_t stride = wino_xi_stride(ch->tiles, s->out_c), hw = (size_t)s->out_h * s->out_w;
    for (int i = 0; i < ch->images; i++)
        for (int o = 0; o < s->out_c; o++)
            for (int th = 0; th < t->tiles_h; th++) {
                real *y0 = y + (i * (size_t)s->out_c + o) * hw + (size_t)(2 * th) * s->out_w;
                output_rows(s, t->f, t->tiles_w, m + tile_row_at(t, ch, o, i, th), stride, bias ? bias[o] : 0, p,
                            y0, 2 * th + 1 < s->out_h ? y0 + s->out_w : NULL);
            }
}

/* dM of a tile row from the two dy rows (zero past the image's edge). */
static void output_rows_adjoint(const ConvShape *s, const WinoForm *f, int tiles_w, const real *d0,
                                const real *d1, const WinoPlane *p, real *m, size_t stride)
{
    const real *p0 = d0, *p1 = d1;
    if (!d1 || 2 * tiles_w != s->out_w) {  /* a partial tile: zero past the edge */
        real *z = p->even[0];
        memset(z, 0, sizeof(real) * 4 * (size_t)tiles_w);
        memcpy(z, d0, sizeof(real) * s->out_w);
        if (d1) memcpy(z + 2 * (size_t)tiles_w, d1, sizeof(real) * s->out_w);
        p0 = z;
        p1 = z + 2 * (size_t)tiles_w;
    }
    f->output_rows_adjoint(tiles_w, p0, p1, m, stride);
}

static void output_transform_adjoint(const ConvShape *s, const Tiling *t, const Chunk *ch, const real *dy,
                                     real *dm, const WinoPlane *p)
{
    const size_t stride = wino_xi_stride(ch->tiles, s->out_c), hw = (size_t)s->out_h * s->out_w;
    for (int i = 0; i < ch->images; i++)
        for (int o = 0; o < s->out_c; o++)
            for (int th = 0; th < t->tiles_h; th++) {
                const real *d0 = dy + (i * (size_t)s->out_c + o) * hw + (size_t)(2 * th) * s->out_w;
                output_rows_adjoint(s, t->f, t->tiles_w, d0, 2 * th + 1 < s->out_h ? d0 + s->out_w : NULL, p,
                                    dm + tile_row_at(t, ch, o, i, th), stride);
            }
}

/* ---- the passes ---- */

/* Per thread: V (ic) and M (oc) for a full chunk, dU (oc x ic) and the scratch rows.
 * Shared: the transformed filters U (oc x ic), which every thread reads. */
Workspace winograd_workspace(const ConvShape *s)
{
    Tiling t = tiling(s, 0, 1);
    const size_t xis = t.f->xis, chunk_tiles = (size_t)t.chunk * t.tiles, plane = filter_plane(s);
    const size_t v_and_m = wino_xi_stride(chunk_tiles, s->in_c) + wino_xi_stride(chunk_tiles, s->out_c);
    return (Workspace){xis * (v_and_m + plane) + plane_elems(&t), xis * plane};
}

typedef struct {
    real *v, *m, *du;
    WinoPlane plane;
} ThreadBuffers;

static ThreadBuffers thread_buffers(Backend *bk, int thread, const ConvShape *s, const Tiling *t)
{
    ThreadBuffers b;
    const size_t xis = t->f->xis, chunk_tiles = (size_t)t->chunk * t->tiles;
    b.v = cpu_workspace(bk, thread);
    b.m = b.v + xis * wino_xi_stride(chunk_tiles, s->in_c);
    b.du = b.m + xis * wino_xi_stride(chunk_tiles, s->out_c);
    b.plane = plane_at(t, b.du + xis * filter_plane(s));
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
    filter_transform(bk, s, p.t.f, w, p.u);
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
    gr.v = xi * wino_xi_stride(ct, s->in_c) + (size_t)g * gr.ic * ct;
    gr.m = xi * wino_xi_stride(ct, s->out_c) + (size_t)g * gr.oc * ct;
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
        input_transform(s, &p.t, &ch, x + ch.first * p.in_item, tb.v, &tb.plane);
        for (int xi = 0; xi < p.t.f->xis; xi++)
            for (int g = 0; g < s->groups; g++) {
                const Group gr = group_at(s, &p, xi, g, ct);
                gemm(CblasNoTrans, CblasNoTrans, gr.oc, ct, gr.ic, 1, gr.u, gr.ic, tb.v + gr.v, ct, 0, tb.m + gr.m, ct);
            }
        output_transform(s, &p.t, &ch, tb.m, b, y + ch.first * p.out_item, &tb.plane);
    });
}

/* dw += the weight gradient; dx (may be NULL) += the data gradient. */
void winograd_conv_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                            const real *dy, real *dx, real *dw)
{
    BK_GUARD(bk);
    const Pass p = pass_begin(bk, s, n, w);
    for (int th = 0; th < bk->threads; th++)
        memset(thread_buffers(bk, th, s, &p.t).du, 0, sizeof(real) * p.t.f->xis * p.plane);
    CPU_FOR_STATIC_T(bk, t, int, k, p.chunks, {
        ThreadBuffers tb = thread_buffers(bk, t, s, &p.t);
        const Chunk ch = chunk_at(&p.t, n, k);
        const int ct = (int)ch.tiles;
        input_transform(s, &p.t, &ch, x + ch.first * p.in_item, tb.v, &tb.plane);
        output_transform_adjoint(s, &p.t, &ch, dy + ch.first * p.out_item, tb.m, &tb.plane);
        for (int xi = 0; xi < p.t.f->xis; xi++)
            for (int g = 0; g < s->groups; g++) {
                const Group gr = group_at(s, &p, xi, g, ct);
                const real *mx = tb.m + gr.m;
                real *vx = tb.v + gr.v;
                gemm(CblasNoTrans, CblasTrans, gr.oc, gr.ic, ct, 1, mx, ct, vx, ct, 1, tb.du + (gr.u - p.u), gr.ic);
                if (dx)  /* the group's V is spent: dV takes its place */
                    gemm(CblasTrans, CblasNoTrans, gr.ic, ct, gr.oc, 1, gr.u, gr.ic, mx, ct, 0, vx, ct);
            }
        if (dx) input_transform_adjoint(s, &p.t, &ch, tb.v, dx + ch.first * p.in_item, &tb.plane);
    });
    /* Sum the private dU into thread 0's, each value in thread order (deterministic), the
     * values split over the threads; then back to the filters' taps. */
    real *du = thread_buffers(bk, 0, s, &p.t).du;
    const size_t at = (size_t)(du - cpu_workspace(bk, 0)), n_du = p.t.f->xis * p.plane;
    CPU_FOR(bk, size_t, j, n_du, { du[j] = cpu_thread_copies_at(bk, bk->threads, at + j); });
    filter_transform_adjoint(bk, s, p.t.f, du, dw);
}
