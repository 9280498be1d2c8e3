/* The reference convolution: im2col + gemm, one image per iteration, which every fast path is
 * tested against (tests/test_conv_paths.c) and the dispatcher (conv.c) takes where none
 * applies. A leaf: it calls BLAS and the backend's helpers, no other convolution file. The
 * weight gradient is summed either from one partial gradient per image, added in image order
 * (where the batch's partials fit IM2COL_PARTIALS_MAX: every layer of the proxies that takes
 * this path), so that the images can go to whichever thread is free (threads.h) and the result
 * does not depend on the threads at all; or, for large filters, from a private accumulator per
 * thread, summed in thread order, so results are identical run to run at a fixed thread count. */
#include <string.h>

#include "conv_im2col.h"
#include "guard.h"

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
