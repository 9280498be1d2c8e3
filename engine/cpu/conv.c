/* The one dispatcher of the CPU convolutions: conv_path picks the path a layer shape takes,
 * and the backend's fp32 convolution (low_precision.c wraps it for bf16/fp16) goes there; it
 * also sums the bias gradient, whichever the path. Stride-1 3x3 and 5x5 "same" layers with few
 * channels take the direct path (conv_direct.c), 3x3 and 5x5 ones with more Winograd's
 * (conv_winograd*.c), AlexNet's strided 11x11 stem Winograd's over its input's phases
 * (conv_phased.c), wide layers with small planes one gemm over several images
 * (conv_batched.c), the rest the reference, im2col + gemm (conv_im2col.c), which every other
 * path is tested against. No path file calls back into this one. */
#include "conv_im2col.h"
#include "guard.h"
#include "plane_sum.h"

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
