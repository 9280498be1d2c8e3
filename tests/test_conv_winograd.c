/* The Winograd F(2x2, 3x3) convolution (engine/cpu/conv_winograd.c) against the im2col
 * reference (engine/cpu/conv.c) at the shapes that matter: even and odd sizes (partial
 * tiles), padding 0, 1 and 2, channel counts that are not multiples of anything, one image
 * and a batch that does not fill the last chunk, one and two threads. Forward output, data
 * gradient, weight gradient, each as max |winograd - im2col| / max |im2col|. The same inputs
 * go through both paths; dx and dw start from the same nonzero values, since both paths
 * accumulate into them. Every tensor is read and written across the backend boundary. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../engine/cpu/cpu.h"

/* F(2x2, 3x3)'s transforms only add, subtract and halve: the error is that of a
 * reordered sum, a few units in the last place of single precision. */
#define TOL 2e-5

typedef struct {
    Backend *bk;
    BkBuffer *buf;
    real *dev;
    size_t count;
} DevArray;

static DevArray dev_array(Backend *bk, size_t count, const real *host)
{
    DevArray a = {bk, bk_buffer_alloc(bk, count * sizeof(real)), NULL, count};
    a.dev = bk_buffer_address(a.buf);
    if (host) bk_upload(bk, a.dev, host, count * sizeof(real));
    return a;
}

static real *download(const DevArray *a)
{
    real *h = malloc(a->count * sizeof(real));
    cr_assert(h);
    bk_download(a->bk, h, a->dev, a->count * sizeof(real));
    return h;
}

static real *random_values(size_t count, unsigned *state)
{
    real *v = malloc(count * sizeof(real));
    cr_assert(v);
    for (size_t i = 0; i < count; i++) {
        *state = *state * 1664525u + 1013904223u;
        v[i] = (real)((*state >> 8) * (1.0 / 16777216.0) * 2 - 1);
    }
    return v;
}

static double relative_difference(const real *want, const real *got, size_t n)
{
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs((double)got[i] - (double)want[i]));
        scale = fmax(scale, fabs((double)want[i]));
        if (isnan((double)got[i])) return INFINITY;
    }
    return scale > 0 ? diff / scale : diff;
}

typedef struct {
    int n, in_c, out_c, h, w, pad;
} Case;

/* Runs both paths on one shape; returns the largest of the three differences. */
static double compare_paths(Case c, int threads)
{
    ConvShape s = {c.in_c, c.h, c.w, c.out_c, c.h + 2 * c.pad - 2, c.w + 2 * c.pad - 2, 3, 3, 1, c.pad, 1};
    cr_assert(winograd_applies(&s), "shape %dx%d c%d->%d pad %d should take Winograd", c.h, c.w,
              c.in_c, c.out_c, c.pad);
    const size_t nx = (size_t)c.n * c.in_c * c.h * c.w, ny = (size_t)c.n * c.out_c * s.out_h * s.out_w;
    const size_t nw = (size_t)c.out_c * c.in_c * 9;
    unsigned seed = 12345u + (unsigned)(c.in_c * 7 + c.h);
    real *x = random_values(nx, &seed), *w = random_values(nw, &seed), *b = random_values(c.out_c, &seed);
    real *dy = random_values(ny, &seed), *dx0 = random_values(nx, &seed), *dw0 = random_values(nw, &seed);

    Backend *bk = backend_create(threads);
    backend_reserve(bk, conv_im2col_workspace(&s, nw)); /* a reservation only grows */
    backend_reserve(bk, winograd_workspace(&s));
    DevArray dx_, dw_, dy_ = dev_array(bk, ny, dy), x_ = dev_array(bk, nx, x), w_ = dev_array(bk, nw, w);
    DevArray b_ = dev_array(bk, (size_t)c.out_c, b);
    double worst = 0;
    real *out[2][3];
    for (int path = 0; path < 2; path++) {
        DevArray y_ = dev_array(bk, ny, NULL);
        dx_ = dev_array(bk, nx, dx0);
        dw_ = dev_array(bk, nw, dw0);
        if (path == 0) {
            conv_im2col_forward(bk, &s, c.n, x_.dev, w_.dev, b_.dev, y_.dev);
            conv_im2col_backward(bk, &s, c.n, x_.dev, w_.dev, dy_.dev, dx_.dev, dw_.dev);
        } else {
            winograd_conv_forward(bk, &s, c.n, x_.dev, w_.dev, b_.dev, y_.dev);
            winograd_conv_backward(bk, &s, c.n, x_.dev, w_.dev, dy_.dev, dx_.dev, dw_.dev);
        }
        out[path][0] = download(&y_);
        out[path][1] = download(&dx_);
        out[path][2] = download(&dw_);
        bk_buffer_free(y_.buf);
        bk_buffer_free(dx_.buf);
        bk_buffer_free(dw_.buf);
    }
    const size_t counts[3] = {ny, nx, nw};
    const char *names[3] = {"y", "dx", "dw"};
    for (int k = 0; k < 3; k++) {
        double d = relative_difference(out[0][k], out[1][k], counts[k]);
        printf("winograd n=%d c%d->%d %dx%d pad=%d threads=%d %s difference %.2e (tolerance %.0e)\n", c.n,
               c.in_c, c.out_c, c.h, c.w, c.pad, threads, names[k], d, TOL);
        worst = fmax(worst, d);
        free(out[0][k]);
        free(out[1][k]);
    }
    bk_buffer_free(x_.buf);
    bk_buffer_free(w_.buf);
    bk_buffer_free(b_.buf);
    bk_buffer_free(dy_.buf);
    backend_destroy(bk);
    free(x); free(w); free(b); free(dy); free(dx0); free(dw0);
    return worst;
}

static const Case CASES[] = {
    {4, 16, 16, 8, 8, 1},     /* resnet20's layer3 shape, small */
    {3, 16, 24, 9, 7, 1},     /* odd sizes: partial tiles in both directions */
    {2, 17, 19, 8, 7, 0},     /* no padding, odd channel counts */
    {1, 20, 16, 5, 6, 2},     /* padding 2 */
    {37, 16, 32, 10, 10, 1},  /* a last chunk that is not full */
};

Test(winograd, matches_im2col_one_thread)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        cr_expect_leq(compare_paths(CASES[i], 1), TOL, "case %zu", i);
}

Test(winograd, matches_im2col_two_threads)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        cr_expect_leq(compare_paths(CASES[i], 2), TOL, "case %zu", i);
}

/* The layers the models have: which take Winograd and which keep im2col. */
Test(winograd, applies_to_stride1_3x3_with_channels_only)
{
    ConvShape r20 = {16, 32, 32, 16, 32, 32, 3, 3, 1, 1, 1};
    ConvShape first = {3, 32, 32, 16, 32, 32, 3, 3, 1, 1, 1};
    ConvShape strided = {16, 32, 32, 32, 16, 16, 3, 3, 2, 1, 1};
    ConvShape grouped = {96, 13, 13, 128, 13, 13, 3, 3, 1, 1, 2};
    ConvShape pointwise = {64, 56, 56, 256, 56, 56, 1, 1, 1, 0, 1};
    cr_expect(winograd_applies(&r20));
    cr_expect(!winograd_applies(&first));
    cr_expect(!winograd_applies(&strided));
    cr_expect(!winograd_applies(&grouped));
    cr_expect(!winograd_applies(&pointwise));
}
