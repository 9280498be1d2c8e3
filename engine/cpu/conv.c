/* Convolution as im2col + gemm, one image per iteration. The weight gradient is summed either
 * from one partial gradient per image, added in image order (where the batch's partials fit
 * IM2COL_PARTIALS_MAX: every layer of the proxies that takes this path), so that the images
 * can go to whichever thread is free (threads.h) and the result does not depend on the
 * threads at all; or, for large filters, from a private accumulator per thread, summed in
 * thread order, so results are identical run to run at a fixed thread count. This is the
 * reference path; stride-1 3x3 and 5x5 "same" layers with few channels take the direct path
 * (conv_direct.c), 3x3 and 5x5 ones with more Winograd's (conv_winograd.c), AlexNet's strided
 * 11x11 stem Winograd's over its input's phases (conv_phased.c), each tested against this one. */
#include <string.h>

#include "cpu.h"
#include "guard.h"
#include "plane_sum.h"

static size_t conv_col_elems(const ConvShape *s)
{
    return (size_t)(s->in_c / s->groups) * s->k_h * s->k_w * s->out_h * s->out_w;
}

static size_t conv_weight_elems(const ConvShape *s)
{
    return (size_t)s->out_c * (s->in_c / s->groups) * s->k_h * s->k_w;
}

/* Where a batch's per-image weight gradients total at most this many values (16 MiB of
 * floats), they are kept: the CIFAR proxies' first layers hold 0.4-4.8 thousand weights,
 * BVLC AlexNet's conv1 35 thousand; ResNet-50's wide 1x1 layers take the private copies. */
enum { IM2COL_PARTIALS_MAX = 1 << 22 };

static int partials_fit(size_t weight_elems, int n) { return (size_t)n * weight_elems <= IM2COL_PARTIALS_MAX; }

/* Per thread: a column buffer and its gradient, and a private weight gradient where the
 * partials do not fit; shared: the partials where they do. */
Workspace conv_im2col_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    if (partials_fit(weight_elems, batch)) return (Workspace){2 * conv_col_elems(s), (size_t)batch * weight_elems};
    return (Workspace){2 * conv_col_elems(s) + weight_elems, 0};
}

/* The bias gradient's per-image plane sums: [image][channel] doubles, in reals. */
static size_t bias_sums_elems(const ConvShape *s, int batch)
{
    return (size_t)batch * s->out_c * (sizeof(double) / sizeof(real));
}

/* The path a layer shape takes: the first of these that applies. */
typedef enum {
    PATH_WINOGRAD_ROWS,
    PATH_WINOGRAD_CL,
    PATH_DIRECT,
    PATH_WINOGRAD,
    PATH_PHASED,
    PATH_BATCHED,
    PATH_IM2COL
} ConvPath;

/* The paths whose backward writes dx (or adds, as asked); the others only add into it. */
static bool path_writes_dx(ConvPath p) { return p == PATH_WINOGRAD_ROWS || p == PATH_WINOGRAD_CL || p == PATH_DIRECT; }

static ConvPath conv_path(const ConvShape *s)
{
    return winograd_rows_applies(s)  ? PATH_WINOGRAD_ROWS
           : winograd_cl_applies(s)  ? PATH_WINOGRAD_CL
           : direct_applies(s)       ? PATH_DIRECT
           : winograd_applies(s)     ? PATH_WINOGRAD
           : phased_applies(s)       ? PATH_PHASED
           : conv_batched_applies(s) ? PATH_BATCHED
                                     : PATH_IM2COL;
}

/* Sized for the path the layer takes, not the largest of them. The shared part also holds the
 * bias gradient's sums, which are taken after the path's backward is done with it. */
Workspace conv_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    Workspace w;
    switch (conv_path(s)) {
    case PATH_WINOGRAD_ROWS: w = winograd_rows_workspace(s, weight_elems, batch); break;
    case PATH_WINOGRAD_CL: w = winograd_cl_workspace(s, weight_elems, batch); break;
    case PATH_DIRECT: w = direct_workspace(s, weight_elems, batch); break;
    case PATH_WINOGRAD: w = winograd_workspace(s); break;
    case PATH_PHASED: w = phased_workspace(s, weight_elems, batch); break;
    case PATH_BATCHED: w = conv_batched_workspace(s, weight_elems, batch); break;
    default: w = conv_im2col_workspace(s, weight_elems, batch);
    }
    const size_t sums = bias_sums_elems(s, batch);
    if (w.shared < sums) w.shared = sums;
    return w;
}

/* col[(c*kh + ki)*kw + kj][oh*OW + ow] = x[c][oh*stride - pad + ki][ow*stride - pad + kj]
 * The valid output columns [lo, hi) of each kernel offset are computed once, so
 * the inner loops have no bounds tests. */
static void col_range(const ConvShape *s, int kj, int *lo, int *hi)
{
    int iw0 = kj - s->pad, st = s->stride;
    int a = iw0 >= 0 ? 0 : (-iw0 + st - 1) / st;       /* first ow with iw >= 0 */
    int b = (s->in_w - 1 - iw0) / st + 1;               /* first ow with iw >= W */
    if (s->in_w - 1 - iw0 < 0) b = 0;
    if (b > s->out_w) b = s->out_w;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

void conv_im2col(const ConvShape *s, int channels, const real *x, real *col, size_t ld)
{
    const int H = s->in_h, W = s->in_w, OH = s->out_h, OW = s->out_w, st = s->stride;
    for (int c = 0; c < channels; c++) {
        const real *xc = x + (size_t)c * H * W;
        for (int ki = 0; ki < s->k_h; ki++) {
            for (int kj = 0; kj < s->k_w; kj++) {
                real *row = col + ((size_t)(c * s->k_h + ki) * s->k_w + kj) * ld;
                int lo, hi;
                col_range(s, kj, &lo, &hi);
                const int iw0 = kj - s->pad;
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh * st - s->pad + ki;
                    real *out = row + (size_t)oh * OW;
                    if (ih < 0 || ih >= H) {
                        for (int ow = 0; ow < OW; ow++) out[ow] = 0;
                        continue;
                    }
                    const real *xr = xc + (size_t)ih * W;
                    for (int ow = 0; ow < lo; ow++) out[ow] = 0;
                    if (st == 1)
                        for (int ow = lo; ow < hi; ow++) out[ow] = xr[iw0 + ow];
                    else
                        for (int ow = lo; ow < hi; ow++) out[ow] = xr[iw0 + ow * st];
                    for (int ow = hi; ow < OW; ow++) out[ow] = 0;
                }
            }
        }
    }
}

/* The adjoint of im2col: dx += scatter(col). */
void conv_col2im_add(const ConvShape *s, int channels, const real *col, size_t ld, real *dx)
{
    const int H = s->in_h, W = s->in_w, OH = s->out_h, OW = s->out_w, st = s->stride;
    for (int c = 0; c < channels; c++) {
        real *dxc = dx + (size_t)c * H * W;
        for (int ki = 0; ki < s->k_h; ki++) {
            for (int kj = 0; kj < s->k_w; kj++) {
                const real *row = col + ((size_t)(c * s->k_h + ki) * s->k_w + kj) * ld;
                int lo, hi;
                col_range(s, kj, &lo, &hi);
                const int iw0 = kj - s->pad;
                for (int oh = 0; oh < OH; oh++) {
                    int ih = oh * st - s->pad + ki;
                    if (ih < 0 || ih >= H) continue;
                    const real *in = row + (size_t)oh * OW;
                    real *dr = dxc + (size_t)ih * W;
                    if (st == 1)
                        for (int ow = lo; ow < hi; ow++) dr[iw0 + ow] += in[ow];
                    else
                        for (int ow = lo; ow < hi; ow++) dr[iw0 + ow * st] += in[ow];
                }
            }
        }
    }
}

void conv_im2col_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *b, real *y)
{
    BK_GUARD(bk);
    const int G = s->groups, icg = s->in_c / G, ocg = s->out_c / G;
    const int K = icg * s->k_h * s->k_w, OHW = s->out_h * s->out_w;
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, out_item = (size_t)s->out_c * OHW;
    const int pointwise = conv_is_pointwise(s);
    CPU_FOR_T(bk, t, int, i, n, {
        real *col = cpu_workspace(bk, t);
        const real *xi = x + i * in_item;
        real *yi = y + i * out_item;
        for (int g = 0; g < G; g++) {
            const real *xg = xi + (size_t)g * icg * s->in_h * s->in_w;
            const real *cg = xg;
            if (!pointwise) {
                conv_im2col(s, icg, xg, col, (size_t)OHW);
                cg = col;
            }
            gemm(CblasNoTrans, CblasNoTrans, ocg, OHW, K, 1, w + (size_t)g * ocg * K, K, cg, OHW, 0,
                 yi + (size_t)g * ocg * OHW, OHW);
        }
        if (b) {
            for (int c = 0; c < s->out_c; c++) {
                real *yc = yi + (size_t)c * OHW;
                for (int j = 0; j < OHW; j++) yc[j] += b[c];
            }
        }
    });
}

typedef struct {
    Backend *bk;
    const ConvShape *s;
    int n;
    const real *x, *w, *dy;
    real *dx, *dw;
} ConvBackward;

/* Image i's weight gradient: = into dw_i (beta 0), or added to it (beta 1); col is scratch. */
static void image_weight_gradient(const ConvShape *s, const real *x, const real *dy, size_t i, real beta,
                                  real *col, real *dw_i)
{
    const int G = s->groups, icg = s->in_c / G, ocg = s->out_c / G;
    const int K = icg * s->k_h * s->k_w, OHW = s->out_h * s->out_w;
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, out_item = (size_t)s->out_c * OHW;
    for (int g = 0; g < G; g++) {
        const real *xg = x + i * in_item + (size_t)g * icg * s->in_h * s->in_w;
        const real *cg = xg;
        if (!conv_is_pointwise(s)) {
            conv_im2col(s, icg, xg, col, (size_t)OHW);
            cg = col;
        }
        gemm(CblasNoTrans, CblasTrans, ocg, K, OHW, 1, dy + i * out_item + (size_t)g * ocg * OHW, OHW, cg, OHW,
             beta, dw_i + (size_t)g * ocg * K, K);
    }
}

/* dx_i += image i's data gradient; dcol is scratch. */
static void image_data_gradient(const ConvShape *s, const real *w, const real *dy, size_t i, real *dcol,
                                real *dx)
{
    const int G = s->groups, icg = s->in_c / G, ocg = s->out_c / G;
    const int K = icg * s->k_h * s->k_w, OHW = s->out_h * s->out_w;
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, out_item = (size_t)s->out_c * OHW;
    for (int g = 0; g < G; g++) {
        const real *dyg = dy + i * out_item + (size_t)g * ocg * OHW, *wg = w + (size_t)g * ocg * K;
        real *dxg = dx + i * in_item + (size_t)g * icg * s->in_h * s->in_w;
        if (conv_is_pointwise(s)) {
            gemm(CblasTrans, CblasNoTrans, K, OHW, ocg, 1, wg, K, dyg, OHW, 1, dxg, OHW);
        } else {
            gemm(CblasTrans, CblasNoTrans, K, OHW, ocg, 1, wg, K, dyg, OHW, 0, dcol, OHW);
            conv_col2im_add(s, icg, dcol, (size_t)OHW, dxg);
        }
    }
}

/* Thread t's images into its private weight gradient (and their input gradients), then its
 * share of the private copies' sum into dw. */
static void im2col_backward_images(void *ctx, int t, int T)
{
    const ConvBackward *a = ctx;
    const size_t col_elems = conv_col_elems(a->s), w_elems = conv_weight_elems(a->s);
    real *col = cpu_workspace(a->bk, t), *dcol = col + col_elems, *dw_t = dcol + col_elems;
    memset(dw_t, 0, sizeof(real) * w_elems);
    size_t from, to;
    cpu_share((size_t)a->n, t, T, &from, &to);
    for (size_t i = from; i < to; i++) {
        image_weight_gradient(a->s, a->x, a->dy, i, 1, col, dw_t);
        if (a->dx) image_data_gradient(a->s, a->w, a->dy, i, dcol, a->dx);
    }
    cpu_sum_thread_copies(a->bk, t, T, 2 * col_elems, w_elems, a->dw);
}

/* Each image's weight gradient into its own partial and its data gradient, on whichever
 * thread is free; then dw += the partials, added in image order, the values split over the
 * threads. */
static void im2col_backward_partials(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                     const real *dy, real *dx, real *dw, size_t w_elems)
{
    const size_t col_elems = conv_col_elems(s);
    real *partials = cpu_shared_workspace(bk);
    CPU_FOR_T(bk, t, int, i, n, {
        real *col = cpu_workspace(bk, t);
        image_weight_gradient(s, x, dy, (size_t)i, 0, col, partials + (size_t)i * w_elems);
        if (dx) image_data_gradient(s, w, dy, (size_t)i, col + col_elems, dx);
    });
    conv_add_partials(bk, partials, n, w_elems, dw);
}

/* dst[j] += the sum of count partials' value j (partials `elems` apart), added in partial
 * order, the values split over the threads: the same bits on any number of them. */
void conv_add_partials(Backend *bk, const real *partials, int count, size_t elems, real *dst)
{
    CPU_FOR_IF(bk, elems >= CPU_PARALLEL_MIN, size_t, j, elems, {
        real total = 0;
        for (int i = 0; i < count; i++) total += partials[(size_t)i * elems + j];
        dst[j] += total;
    });
}

void conv_im2col_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *dy, real *dx, real *dw)
{
    BK_GUARD(bk);
    const size_t w_elems = conv_weight_elems(s);
    /* the reservation decides (a batch smaller than the one reserved for may fit where that did not) */
    if (partials_fit(w_elems, n) && (size_t)n * w_elems <= cpu_shared_elems(bk)) {
        im2col_backward_partials(bk, s, n, x, w, dy, dx, dw, w_elems);
        return;
    }
    ConvBackward a = {bk, s, n, x, w, dy, dx, dw};
    cpu_run(bk->threads, im2col_backward_images, &a);
}

/* db[c] += the sum of dy's planes c. Each thread sums the planes of the images the convolution's
 * backward gave it, which its own core has just read (one channel per thread read every image,
 * half of them from the other core's cache); the per-channel totals then add the images' sums
 * in image order, so results do not depend on the number of threads. */
typedef struct {
    const ConvShape *s;
    int n;
    const real *dy;
    real *db;
    double *sums;
} BiasBackward;

static void bias_backward_share(void *ctx, int t, int T)
{
    const BiasBackward *a = ctx;
    const size_t OHW = (size_t)a->s->out_h * a->s->out_w, C = (size_t)a->s->out_c, out_item = C * OHW;
    size_t from, to;
    cpu_share((size_t)a->n, t, T, &from, &to);
    for (size_t i = from; i < to; i++)
        for (size_t c = 0; c < C; c++) a->sums[i * C + c] = plane_sum(a->dy + i * out_item + c * OHW, OHW);
    cpu_barrier(T);
    cpu_share(C, t, T, &from, &to);
    enum { CHUNK = 256 }; /* channels a time: their totals on the stack */
    for (size_t c0 = from; c0 < to; c0 += CHUNK) {
        double total[CHUNK];
        const size_t c1 = c0 + CHUNK < to ? c0 + CHUNK : to;
        image_order_totals(a->sums, a->n, C, c0, c1, total);
        for (size_t c = c0; c < c1; c++) a->db[c] += (real)total[c - c0];
    }
}

static void conv_bias_backward(Backend *bk, const ConvShape *s, int n, const real *dy, real *db)
{
    BiasBackward a = {s, n, dy, db, (double *)cpu_shared_workspace(bk)};
    cpu_run(bk->threads, bias_backward_share, &a);
}

void conv_forward_fp32(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                       real *y)
{
    switch (conv_path(s)) {
    case PATH_WINOGRAD_ROWS: winograd_rows_forward(bk, s, n, x, w, b, y); break;
    case PATH_WINOGRAD_CL: winograd_cl_forward(bk, s, n, x, w, b, y); break;
    case PATH_DIRECT: direct_conv_forward(bk, s, n, x, w, b, y); break;
    case PATH_WINOGRAD: winograd_conv_forward(bk, s, n, x, w, b, y); break;
    case PATH_PHASED: phased_forward(bk, s, n, x, w, b, y); break;
    case PATH_BATCHED: conv_batched_forward(bk, s, n, x, w, b, y); break;
    default: conv_im2col_forward(bk, s, n, x, w, b, y);
    }
}

void conv_backward_fp32(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                        real *dx, bool accumulate, real *dw, real *db)
{
    BK_GUARD(bk);
    const ConvPath path = conv_path(s);
    if (!path_writes_dx(path) && dx && !accumulate && n > 0)
        cpu_fill(bk, (size_t)n * s->in_c * s->in_h * s->in_w, 0, dx);
    switch (path) {
    case PATH_WINOGRAD_ROWS: winograd_rows_backward(bk, s, n, x, w, dy, dx, accumulate, dw); break;
    case PATH_WINOGRAD_CL: winograd_cl_backward(bk, s, n, x, w, dy, dx, accumulate, dw); break;
    case PATH_DIRECT: direct_conv_backward(bk, s, n, x, w, dy, dx, accumulate, dw); break;
    case PATH_WINOGRAD: winograd_conv_backward(bk, s, n, x, w, dy, dx, dw); break;
    case PATH_PHASED: phased_backward(bk, s, n, x, w, dy, dx, dw); break;
    case PATH_BATCHED: conv_batched_backward(bk, s, n, x, w, dy, dx, dw); break;
    default: conv_im2col_backward(bk, s, n, x, w, dy, dx, dw);
    }
    if (db) conv_bias_backward(bk, s, n, dy, db);
}

void cpu_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                        const real *b, real *y)
{
    if (cpu_low_precision(bk)) lowp_conv2d_forward(bk, s, n, x, w, b, y);
    else conv_forward_fp32(bk, s, n, x, w, b, y);
}

void cpu_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *dy, real *dx, bool accumulate, real *dw, real *db)
{
    if (cpu_low_precision(bk)) lowp_conv2d_backward(bk, s, n, x, w, dy, dx, accumulate, dw, db);
    else conv_backward_fp32(bk, s, n, x, w, dy, dx, accumulate, dw, db);
}
