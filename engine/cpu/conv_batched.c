/* Wide convolutions with small output planes (ResNet-50's last two stages, 14x14 and 7x7 pixels)
 * as one gemm over a group of images instead of one an image: the
 * group's im2col matrices (a 1x1 layer's planes) side by side, so that the gemm has a few
 * hundred columns. One gemm an image had 49-196 columns: on one core of the Intel Xeon,
 * OpenBLAS ran those at 83-122 GFLOP/s forward and 101-121 for the weight gradient, against
 * 123-140 with 400-800 columns. Each thread takes its even share of the batch's images in
 * groups of about GROUP_COLUMNS columns, into a private weight gradient added up in thread
 * order (cpu_sum_thread_copies): the same results run to run at a fixed thread count, as the
 * im2col path's wide layers. The im2col path (conv_im2col.c) is the reference this one is tested
 * against (tests/test_conv_paths.c). */
#include <string.h>

#include "conv_im2col.h"
#include "guard.h"

enum { BATCHED_BELOW_PIXELS = 256, GROUP_COLUMNS = 512, BATCHED_MIN_WEIGHTS = 1 << 16 };

static int out_pixels(const ConvShape *s) { return s->out_h * s->out_w; }
static size_t col_rows(const ConvShape *s) { return (size_t)s->in_c * s->k_h * s->k_w; }
static size_t in_item(const ConvShape *s) { return (size_t)s->in_c * s->in_h * s->in_w; }
static size_t out_item(const ConvShape *s) { return (size_t)s->out_c * out_pixels(s); }
static size_t layer_weights(const ConvShape *s) { return col_rows(s) * s->out_c; }

/* Ungrouped layers of at least BATCHED_MIN_WEIGHTS weights whose output planes have fewer than
 * BATCHED_BELOW_PIXELS pixels (the CIFAR proxies' small layers keep their per-image path). */
int conv_batched_applies(const ConvShape *s)
{
    return s->groups == 1 && out_pixels(s) < BATCHED_BELOW_PIXELS && layer_weights(s) >= BATCHED_MIN_WEIGHTS;
}

/* The images that make about GROUP_COLUMNS columns. */
static int wanted_images(const ConvShape *s) { return (GROUP_COLUMNS + out_pixels(s) - 1) / out_pixels(s); }

/* The images a gemm takes of a share of `share`: about GROUP_COLUMNS columns, the share cut
 * into groups of even size (16 images of 49 pixels on two threads: 8 and 8). */
static int group_images(const ConvShape *s, int share)
{
    const int want = wanted_images(s);
    if (share <= want) return share > 0 ? share : 1;
    const int groups = (share + want - 1) / want;
    return (share + groups - 1) / groups;
}

/* The most columns a group of a batch of n has: group_images never passes `want` or n. */
static size_t most_columns(const ConvShape *s, int n)
{
    const int want = wanted_images(s);
    return (size_t)(n < want ? (n > 0 ? n : 1) : want) * out_pixels(s);
}

/* Per thread: a group's columns and their gradient (col_rows x columns each), its output or dy
 * (out_c x columns), and a private weight gradient. */
Workspace conv_batched_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    const size_t cols = most_columns(s, batch);
    return (Workspace){(2 * col_rows(s) + s->out_c) * cols + weight_elems, 0};
}

typedef struct {
    Backend *bk;
    const ConvShape *s;
    int n;
    const real *x, *w, *b, *dy;
    real *y, *dx, *dw;
} Batched;

/* A thread's workspace, laid out for a batch of n. */
typedef struct {
    real *cols, *dcols, *outs, *dw;
} GroupBuffers;

static GroupBuffers group_buffers(const Batched *a, int t)
{
    const size_t cols = most_columns(a->s, a->n);
    GroupBuffers g;
    g.cols = cpu_workspace(a->bk, t);
    g.dcols = g.cols + col_rows(a->s) * cols;
    g.outs = g.dcols + col_rows(a->s) * cols;
    g.dw = g.outs + (size_t)a->s->out_c * cols;
    return g;
}

/* The images' planes (`channels` of `pixels` each, images `item` apart) side by side:
 * cols[c][j * pixels + p] = images[j][c][p], rows ld apart. */
static void planes_to_columns(const real *images, int g, int channels, int pixels, size_t item, size_t ld,
                              real *cols)
{
    for (int j = 0; j < g; j++)
        for (int c = 0; c < channels; c++)
            memcpy(cols + c * ld + (size_t)j * pixels, images + j * item + (size_t)c * pixels, sizeof(real) * pixels);
}

/* And back: images[j][c][p] = (or with `add`, +=) cols[c][j * pixels + p] (+ bias[c]). */
static void columns_to_planes(const real *cols, int g, int channels, int pixels, size_t ld, size_t item,
                              const real *bias, bool add, real *images)
{
    for (int j = 0; j < g; j++)
        for (int c = 0; c < channels; c++) {
            const real *from = cols + c * ld + (size_t)j * pixels;
            real *to = images + j * item + (size_t)c * pixels;
            if (add)
                for (int p = 0; p < pixels; p++) to[p] += from[p];
            else if (bias)
                for (int p = 0; p < pixels; p++) to[p] = from[p] + bias[c];
            else
                memcpy(to, from, sizeof(real) * pixels);
        }
}

/* The group's im2col matrices side by side (a pointwise layer's input planes as they are). */
static void group_columns(const ConvShape *s, const real *x, int g, size_t ld, real *cols)
{
    if (conv_is_pointwise(s)) {
        planes_to_columns(x, g, s->in_c, out_pixels(s), in_item(s), ld, cols);
        return;
    }
    for (int j = 0; j < g; j++) conv_im2col(s, s->in_c, x + j * in_item(s), cols + (size_t)j * out_pixels(s), ld);
}

/* dx += the group's column gradients, image by image. */
static void group_columns_back(const ConvShape *s, const real *dcols, int g, size_t ld, real *dx)
{
    if (conv_is_pointwise(s)) {
        columns_to_planes(dcols, g, s->in_c, out_pixels(s), ld, in_item(s), NULL, true, dx);
        return;
    }
    for (int j = 0; j < g; j++) conv_col2im_add(s, s->in_c, dcols + (size_t)j * out_pixels(s), ld, dx + j * in_item(s));
}

/* fn for each group of thread t's even share of the batch, the group's columns gathered. */
typedef void GroupStep(const Batched *a, const GroupBuffers *buf, size_t first, int g, int ld);

static void each_group(const Batched *a, int t, int T, const GroupBuffers *buf, GroupStep *fn)
{
    size_t from, to;
    cpu_share((size_t)a->n, t, T, &from, &to);
    const int most = group_images(a->s, (int)(to - from));
    for (size_t first = from; first < to; first += (size_t)most) {
        const int g = to - first < (size_t)most ? (int)(to - first) : most, ld = g * out_pixels(a->s);
        group_columns(a->s, a->x + first * in_item(a->s), g, (size_t)ld, buf->cols);
        fn(a, buf, first, g, ld);
    }
}

static void forward_group(const Batched *a, const GroupBuffers *buf, size_t first, int g, int ld)
{
    const ConvShape *s = a->s;
    const int K = (int)col_rows(s);
    gemm(CblasNoTrans, CblasNoTrans, s->out_c, ld, K, 1, a->w, K, buf->cols, ld, 0, buf->outs, ld);
    columns_to_planes(buf->outs, g, s->out_c, out_pixels(s), (size_t)ld, out_item(s), a->b, false,
                      a->y + first * out_item(s));
}

/* The group's dy side by side, then its weight gradient into the thread's, its data gradient into dx. */
static void backward_group(const Batched *a, const GroupBuffers *buf, size_t first, int g, int ld)
{
    const ConvShape *s = a->s;
    const int K = (int)col_rows(s);
    planes_to_columns(a->dy + first * out_item(s), g, s->out_c, out_pixels(s), out_item(s), (size_t)ld, buf->outs);
    gemm(CblasNoTrans, CblasTrans, s->out_c, K, ld, 1, buf->outs, ld, buf->cols, ld, 1, buf->dw, K);
    if (!a->dx) return;
    gemm(CblasTrans, CblasNoTrans, K, ld, s->out_c, 1, a->w, K, buf->outs, ld, 0, buf->dcols, ld);
    group_columns_back(s, buf->dcols, g, (size_t)ld, a->dx + first * in_item(s));
}

static void forward_share(void *ctx, int t, int T)
{
    const Batched *a = ctx;
    const GroupBuffers buf = group_buffers(a, t);
    each_group(a, t, T, &buf, forward_group);
}

static void backward_share(void *ctx, int t, int T)
{
    const Batched *a = ctx;
    const GroupBuffers buf = group_buffers(a, t);
    const size_t w_elems = layer_weights(a->s);
    memset(buf.dw, 0, sizeof(real) * w_elems);
    each_group(a, t, T, &buf, backward_group);
    cpu_sum_thread_copies(a->bk, t, T, (size_t)(buf.dw - cpu_workspace(a->bk, t)), w_elems, a->dw);
}

void conv_batched_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                          real *y)
{
    BK_GUARD(bk);
    Batched a = {bk, s, n, x, w, b, NULL, y, NULL, NULL};
    cpu_run(bk->threads, forward_share, &a);
}

/* dw += the weight gradient, dx (may be NULL) += the data gradient. */
void conv_batched_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                           real *dx, real *dw)
{
    BK_GUARD(bk);
    Batched a = {bk, s, n, x, w, NULL, dy, NULL, dx, dw};
    cpu_run(bk->threads, backward_share, &a);
}
