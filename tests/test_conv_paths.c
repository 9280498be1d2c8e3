/* The fast convolutions against the im2col reference (engine/cpu/conv_im2col.c): Winograd F(2x2, 3x3)
 * and F(2x2, 5x5) (conv_winograd.c) at even and odd sizes (partial tiles), paddings 0-4, channel counts
 * that are not multiples of anything, a batch that does not fill the last chunk; the direct
 * path (conv_direct.c) at every row width its vector chunks cut differently (8, 16, 24, 32,
 * 40), channels from 8 to 128, bias and no bias, 3x3 and 5x5 filters; the channels-last Winograd
 * (conv_winograd_cl.c) on the plane and channel counts it takes. One to three threads.
 * Forward output, data gradient, weight gradient, each as max |fast - im2col| / max |im2col|. The same inputs go
 * through both paths; dx and dw start from the same nonzero values, since both paths
 * accumulate into them. Every tensor is read and written across the backend boundary. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../engine/cpu/conv_im2col.h"
#include "../engine/cpu/cpu.h"
#include "dev_array.h"

/* F(2x2, 3x3)'s transforms only add, subtract and halve, and the direct path sums the same
 * products in another order: the error is that of a reordered sum, a few units in the last
 * place of single precision. F(2x2, 5x5)'s multiply by up to 5 and 1/24 (its differences were
 * 1.5e-6 to 1.1e-5, the largest in the weight gradient of the AlexNets' conv2 shape). */
#define TOL 2e-5

/* A backward that adds into dx (Winograd's, the batched gemms'), or one that writes dx or adds
 * to it (the direct path's, the channels-last and row Winograds'): the comparison adds. */
typedef void (*AddingBackward)(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                               real *dx, real *dw);
typedef void (*WritingBackward)(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                                real *dx, bool accumulate, real *dw);

typedef struct {
    const char *name;
    int (*applies)(const ConvShape *s);
    Workspace (*workspace)(const ConvShape *s, size_t weight_elems, int batch);
    void (*forward)(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b, real *y);
    AddingBackward adds;
    WritingBackward writes;
} FastPath;

static void fast_backward(const FastPath *fast, Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *dy, real *dx, real *dw)
{
    if (fast->writes)
        fast->writes(bk, s, n, x, w, dy, dx, true, dw);
    else
        fast->adds(bk, s, n, x, w, dy, dx, dw);
}

static Workspace winograd_workspace_of(const ConvShape *s, size_t weight_elems, int batch)
{
    (void)weight_elems;
    (void)batch;
    return winograd_workspace(s);
}

static const FastPath WINOGRAD = {"winograd", winograd_applies, winograd_workspace_of, winograd_conv_forward,
                                  winograd_conv_backward, NULL};
static const FastPath DIRECT = {"direct", direct_applies, direct_workspace, direct_conv_forward, NULL,
                                direct_conv_backward};
static const FastPath WINOGRAD_CL = {"winograd_cl", winograd_cl_applies, winograd_cl_workspace, winograd_cl_forward,
                                     NULL, winograd_cl_backward};
static const FastPath WINOGRAD_ROWS = {"winograd_rows", winograd_rows_applies, winograd_rows_workspace,
                                       winograd_rows_forward, NULL, winograd_rows_backward};
static const FastPath PHASED = {"phased", phased_applies, phased_workspace, phased_forward, phased_backward, NULL};
static const FastPath BATCHED = {"batched", conv_batched_applies, conv_batched_workspace, conv_batched_forward,
                                 conv_batched_backward, NULL};

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
    bool bias;
    int k;      /* the filter: k x k */
    int stride; /* 1 where left out */
} Case;

static ConvShape grouped_shape(Case c, int groups)
{
    const int k = c.k, st = c.stride ? c.stride : 1;
    return (ConvShape){c.in_c, c.h, c.w, c.out_c, (c.h + 2 * c.pad - k) / st + 1, (c.w + 2 * c.pad - k) / st + 1,
                       k, k, st, c.pad, groups};
}

static ConvShape case_shape(Case c) { return grouped_shape(c, 1); }

/* Runs both paths on one shape, in groups; returns the largest of the three differences. */
static double compare_grouped_paths(const FastPath *fast, Case c, int groups, int threads)
{
    const int k = c.k;
    const ConvShape s = grouped_shape(c, groups);
    cr_assert(fast->applies(&s), "shape %dx%d c%d->%d %dx%d pad %d should take the %s path", c.h, c.w, c.in_c,
              c.out_c, k, k, c.pad, fast->name);
    const size_t nx = (size_t)c.n * c.in_c * c.h * c.w, ny = (size_t)c.n * c.out_c * s.out_h * s.out_w;
    const size_t nw = (size_t)c.out_c * (c.in_c / s.groups) * k * k;
    unsigned seed = 12345u + (unsigned)(c.in_c * 7 + c.h);
    real *x = random_values(nx, &seed), *w = random_values(nw, &seed), *b = random_values(c.out_c, &seed);
    real *dy = random_values(ny, &seed), *dx0 = random_values(nx, &seed), *dw0 = random_values(nw, &seed);

    Backend *bk = backend_create(threads);
    backend_reserve(bk, conv_im2col_workspace(&s, nw, c.n)); /* a reservation only grows */
    backend_reserve(bk, fast->workspace(&s, nw, c.n));
    DevArray dx_, dw_, dy_ = dev_array(bk, ny, dy), x_ = dev_array(bk, nx, x), w_ = dev_array(bk, nw, w);
    DevArray b_ = dev_array(bk, (size_t)c.out_c, b);
    double worst = 0;
    real *out[2][3];
    for (int path = 0; path < 2; path++) {
        DevArray y_ = dev_array(bk, ny, NULL);
        dx_ = dev_array(bk, nx, dx0);
        dw_ = dev_array(bk, nw, dw0);
        const real *bias = c.bias ? b_.dev : NULL;
        if (path == 0) {
            conv_im2col_forward(bk, &s, c.n, x_.dev, w_.dev, bias, y_.dev);
            conv_im2col_backward(bk, &s, c.n, x_.dev, w_.dev, dy_.dev, dx_.dev, dw_.dev);
        } else {
            fast->forward(bk, &s, c.n, x_.dev, w_.dev, bias, y_.dev);
            fast_backward(fast, bk, &s, c.n, x_.dev, w_.dev, dy_.dev, dx_.dev, dw_.dev);
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
    for (int t = 0; t < 3; t++) {
        double d = relative_difference(out[0][t], out[1][t], counts[t]);
        printf("%s n=%d c%d->%d %dx%d filter %dx%d pad=%d groups=%d threads=%d %s difference %.2e (tolerance %.0e)\n",
               fast->name, c.n, c.in_c, c.out_c, c.h, c.w, s.k_h, s.k_w, c.pad, groups, threads, names[t], d, TOL);
        worst = fmax(worst, d);
        free(out[0][t]);
        free(out[1][t]);
    }
    bk_buffer_free(x_.buf);
    bk_buffer_free(w_.buf);
    bk_buffer_free(b_.buf);
    bk_buffer_free(dy_.buf);
    backend_destroy(bk);
    free(x); free(w); free(b); free(dy); free(dx0); free(dw0);
    return worst;
}

static const Case WINOGRAD_CASES[] = {
    {4, 16, 16, 8, 8, 1, true, 3, 1},     /* resnet20's layer3 shape, small */
    {3, 16, 24, 9, 7, 1, true, 3, 1},     /* odd sizes: partial tiles in both directions */
    {2, 17, 19, 8, 7, 0, true, 3, 1},     /* no padding, odd channel counts */
    {1, 20, 16, 5, 6, 2, true, 3, 1},     /* padding 2 */
    {37, 16, 32, 10, 10, 1, true, 3, 1},  /* a last chunk that is not full */
    {2, 72, 80, 8, 8, 1, true, 3, 1},     /* more channels */
};

/* Winograd a group at a time: groups of 2 (the AlexNets' conv4 and conv5, small), of 3 on odd
 * sizes; F(2x2, 5x5) on the AlexNets' conv2 (27x27, groups of 2) and on odd sizes in groups of 3. */
static const Case WINOGRAD_GROUPED_CASES[] = {
    {3, 64, 96, 13, 13, 1, true, 3, 1},
    {2, 48, 48, 7, 9, 1, false, 3, 1},
    {3, 96, 256, 27, 27, 2, true, 5, 1},
    {2, 48, 54, 11, 9, 2, false, 5, 1},
};
static const int WINOGRAD_GROUPS[] = {2, 3, 2, 3};

/* F(2x2, 5x5): odd sizes (partial tiles), paddings 0-4, a last chunk that is not full. */
static const Case WINOGRAD_5X5_CASES[] = {
    {3, 16, 24, 9, 7, 2, true, 5, 1},
    {2, 17, 19, 8, 8, 0, true, 5, 1},  /* no padding: 4x4 outputs, odd channel counts */
    {1, 20, 16, 6, 5, 4, false, 5, 1}, /* padding 4: outputs from the padding alone */
    {2, 16, 16, 12, 10, 1, true, 5, 1},
    {37, 16, 32, 10, 10, 2, true, 5, 1},
};

/* Channels in 16s, 16 to 128 of them, planes of 4 x 16 to 56 x 56 pixels: a tile's row of one
 * and of several vectors, weight gradient passes of 2-8 images or of bands of one, over 8 image
 * chunks of uneven size, a batch smaller than the chunks, bias and none. */
static const Case WINOGRAD_CL_CASES[] = {
    {37, 64, 64, 8, 8, 1, true, 3, 1},    /* resnet20's layer3 */
    {19, 32, 32, 16, 16, 1, false, 3, 1}, /* its layer2, 8 image chunks of 2-3 images */
    {3, 32, 64, 16, 16, 1, true, 3, 1},   /* more outputs than inputs: fewer chunks than 8 */
    {5, 128, 32, 8, 8, 1, true, 3, 1},    /* fewer outputs than inputs, the most it takes */
    {2, 48, 80, 4, 16, 1, false, 3, 1},   /* rows of 16 on 4 rows; 80 outputs: a block of 4
                                             vectors and one of 1 */
    {9, 96, 128, 16, 4, 1, true, 3, 1},   /* rows of 4: a vector runs over 4 rows */
    {5, 16, 16, 32, 32, 1, false, 3, 1},  /* resnet20's layer1: one vector of channels */
    {3, 16, 32, 24, 8, 1, true, 3, 1},    /* rows of 24: a vector's pixels across a row end */
    {3, 32, 64, 28, 28, 1, true, 3, 1},   /* 196 tiles an image: bands of 128 and 68, their last
                                             rows one at a time; ResNet-50's stage 2, small */
    {2, 16, 16, 56, 56, 1, false, 3, 1},  /* 784 tiles: ResNet-50's stage 1 plane */
};

/* Planes 32 pixels wide (AVX-512: a row of 16 tiles a vector), 2 to 32 rows, 16 to 64
 * channels in eights, image chunks of one image and of several. */
static const Case WINOGRAD_ROWS_CASES[] = {
    {19, 16, 16, 32, 32, 1, true, 3, 1},  /* resnet20's layer1, 8 image chunks of 2-3 images */
    {3, 16, 24, 6, 32, 1, false, 3, 1},   /* 6 rows: three tile rows; 24 outputs */
    {2, 40, 16, 2, 32, 1, true, 3, 1},    /* one tile row, its window's last row below the plane */
    {5, 64, 48, 8, 32, 1, true, 3, 1},    /* the most channels it takes */
};

/* Planes of 15 to 1,024 pixels: whole and partial chunks of one and two vectors, rows that
 * are not multiples of 8, sizes that are not multiples of anything. */
static const Case DIRECT_CASES[] = {
    {3, 16, 16, 8, 8, 1, true, 3, 1},      /* resnet20's layer3 width, few channels */
    {2, 16, 32, 5, 16, 1, false, 3, 1},    /* more outputs than inputs, no bias */
    {2, 32, 8, 7, 24, 1, true, 3, 1},      /* fewer outputs than inputs */
    {5, 8, 16, 3, 32, 1, true, 3, 1},      /* resnet20's layer1 width */
    {1, 64, 64, 4, 40, 1, true, 3, 1},     /* the widest channels it takes */
    {3, 24, 40, 6, 8, 1, false, 3, 1},
    {37, 16, 16, 8, 8, 1, true, 3, 1},     /* weight gradient in 8 image chunks of 4-5 images */
    {37, 64, 64, 8, 8, 1, true, 3, 1},     /* resnet20's layer3: weight gradient by outer products
                                              over 8 image chunks of 4-5 images */
    {37, 64, 56, 8, 8, 1, true, 3, 1},     /* 56 outputs (not in 32s): the lane kernel, too many
                                              weights for image chunks, groups of 16 images, the last short */
    {5, 16, 16, 32, 32, 1, false, 3, 1},   /* groups of 2 images of resnet20's layer1 size */
    {2, 16, 8, 4, 6, 1, true, 3, 1},       /* rows of 6: vectors run across row ends */
    {3, 64, 96, 7, 7, 1, true, 3, 1},      /* the CIFAR AlexNets' conv3: 49 pixels, a partial last chunk */
    {2, 32, 64, 15, 15, 1, false, 3, 1},   /* their conv2: 225 pixels */
    {12, 32, 16, 15, 15, 1, true, 3, 1},   /* 225 pixels, groups evened out: 4 of 3 images on two threads */
    {2, 8, 16, 3, 5, 1, true, 3, 1},       /* fewer pixels than one vector */
    {2, 16, 8, 5, 5, 1, true, 3, 1},       /* a partial second vector */
    {1, 128, 128, 6, 6, 1, false, 3, 1},   /* the most channels it takes */
    {3, 32, 64, 14, 14, 2, true, 5, 1}, /* 5x5: simple-cnn's conv2 (196 pixels, a partial last chunk) */
    {2, 8, 16, 4, 6, 2, false, 5, 1},   /* 5x5 on rows of 6: shifts of two columns wrap round */
    {37, 16, 8, 8, 8, 2, true, 5, 1},   /* 5x5, weight gradient in groups, the last short */
    {2, 16, 24, 3, 3, 2, true, 5, 1},   /* 5x5 bigger than the plane: most taps fall outside */
    {5, 3, 16, 32, 32, 1, true, 3, 1},  /* a first layer (ResNet's): 3 input channels, a partial block of dx */
    {3, 3, 32, 12, 12, 2, true, 5, 1},  /* the CIFAR AlexNets' conv1 on a smaller plane */
    {2, 1, 8, 14, 14, 2, false, 5, 1},  /* simple-cnn's conv1 shape: one input channel */
    {19, 5, 24, 9, 9, 1, true, 3, 1},   /* 5 input channels: output channels split among the tasks */
    {37, 16, 64, 7, 7, 1, false, 3, 1}, /* outer products on 49 pixels, 8 image chunks */
    {19, 16, 32, 8, 8, 1, true, 3, 2},   /* stride 2, outer products over 8 image chunks of 2-3 images */
    {3, 16, 32, 32, 32, 1, true, 3, 2},  /* stride 2: ResNet-20's first downsampling 3x3 */
    {5, 8, 16, 6, 10, 1, true, 3, 2},    /* stride 2 on a 3x5 output: rows of 5, a partial vector */
    {37, 8, 8, 4, 4, 1, true, 3, 2},     /* stride 2 on 2x2 outputs: weight gradient in groups */
    {2, 3, 16, 12, 8, 1, false, 3, 2},   /* a first layer with stride 2 */
    {3, 16, 32, 32, 32, 0, true, 1, 2},  /* 1x1 stride 2: ResNet-20's first shortcut */
    {19, 32, 64, 16, 16, 0, false, 1, 2}, /* its second, over 8 image chunks */
    {5, 8, 32, 7, 9, 0, true, 1, 2},     /* odd input sizes: a 4x5 output, a partial vector */
    {2, 64, 96, 6, 6, 0, false, 1, 2},   /* 3x3 outputs, 8 input channels at a time x 8 */
};

/* Wide layers with small output planes, one gemm over a group of images: 1x1 and 3x3, stride 1
 * and 2, groups of 1-11 images (a group aims at 512 columns), shares of an odd batch. */
static const Case BATCHED_CASES[] = {
    {3, 128, 512, 7, 7, 0, true, 1, 1},     /* ResNet-50's layer4 1x1, small: one group a thread */
    {5, 64, 128, 7, 7, 1, false, 3, 1},     /* its 3x3 on 7x7 planes (taken from Winograd) */
    {4, 64, 128, 14, 14, 1, true, 3, 2},    /* stride 2 onto 7x7 */
    {3, 128, 512, 14, 14, 0, false, 1, 2},  /* a 1x1 stride-2 shortcut */
    {11, 256, 256, 14, 14, 0, true, 1, 1},  /* 14x14: groups of 3 images, the last of 2 or 3 */
    {23, 64, 128, 5, 5, 0, false, 3, 1},    /* 3x3 output planes, groups of 11-12 images, no padding */
    {2, 64, 128, 13, 13, 1, true, 3, 1},    /* 169 pixels: one group of both images */
};

/* Strided layers whose filter spans three strides, as 3x3 over their input's phases: BVLC
 * AlexNet's conv1 (11x11, stride 4, 227x227), stride 3 with padding on odd sizes, and a batch of
 * more images than a pass takes (8), the last pass short. */
static const Case PHASED_CASES[] = {
    {2, 3, 96, 227, 227, 0, true, 11, 4},
    {3, 2, 16, 20, 17, 2, false, 7, 3},
    {11, 3, 16, 31, 29, 1, true, 9, 4},
};

/* A data gradient with accumulate false, over a dx full of other values, equals the one added
 * to zeros (the net then skips zeroing dx first); returns how many values differ. */
static size_t written_differs_from_added(const FastPath *path, Case c, int threads)
{
    const ConvShape s = case_shape(c);
    const size_t nx = (size_t)c.n * c.in_c * c.h * c.w, ny = (size_t)c.n * c.out_c * s.out_h * s.out_w;
    const size_t nw = (size_t)c.out_c * c.in_c * c.k * c.k;
    unsigned seed = 777u + (unsigned)c.in_c;
    real *x = random_values(nx, &seed), *w = random_values(nw, &seed), *dy = random_values(ny, &seed);
    real *stale = random_values(nx, &seed), *zeros = calloc(nx, sizeof *zeros), *dw0 = calloc(nw, sizeof *dw0);
    cr_assert_not_null(zeros);
    cr_assert_not_null(dw0);
    Backend *bk = backend_create(threads);
    backend_reserve(bk, path->workspace(&s, nw, c.n));
    DevArray x_ = dev_array(bk, nx, x), w_ = dev_array(bk, nw, w), dy_ = dev_array(bk, ny, dy);
    real *dx[2];
    for (int writes = 0; writes < 2; writes++) {
        DevArray dx_ = dev_array(bk, nx, writes ? stale : zeros), dw_ = dev_array(bk, nw, dw0);
        path->writes(bk, &s, c.n, x_.dev, w_.dev, dy_.dev, dx_.dev, !writes, dw_.dev);
        dx[writes] = download(&dx_);
        bk_buffer_free(dx_.buf);
        bk_buffer_free(dw_.buf);
    }
    size_t differ = 0;
    for (size_t i = 0; i < nx; i++) differ += dx[0][i] != dx[1][i];
    bk_buffer_free(x_.buf);
    bk_buffer_free(w_.buf);
    bk_buffer_free(dy_.buf);
    backend_destroy(bk);
    free(x); free(w); free(dy); free(stale); free(zeros); free(dw0); free(dx[0]); free(dx[1]);
    return differ;
}

static double compare_paths(const FastPath *fast, Case c, int threads)
{
    return compare_grouped_paths(fast, c, 1, threads);
}

static void expect_path_matches(const FastPath *fast, const Case *cases, size_t count, int threads)
{
    for (size_t i = 0; i < count; i++)
        cr_expect_leq(compare_paths(fast, cases[i], threads), TOL, "%s case %zu", fast->name, i);
}

#define CASE_COUNT(a) (sizeof(a) / sizeof((a)[0]))

Test(winograd, matches_im2col_one_thread) { expect_path_matches(&WINOGRAD, WINOGRAD_CASES, CASE_COUNT(WINOGRAD_CASES), 1); }

Test(winograd, matches_im2col_two_threads) { expect_path_matches(&WINOGRAD, WINOGRAD_CASES, CASE_COUNT(WINOGRAD_CASES), 2); }

Test(winograd, matches_im2col_5x5)
{
    for (int threads = 1; threads <= 3; threads++)
        expect_path_matches(&WINOGRAD, WINOGRAD_5X5_CASES, CASE_COUNT(WINOGRAD_5X5_CASES), threads);
}

Test(winograd, matches_im2col_in_groups)
{
    for (size_t i = 0; i < CASE_COUNT(WINOGRAD_GROUPED_CASES); i++)
        for (int threads = 1; threads <= 2; threads++)
            cr_expect_leq(compare_grouped_paths(&WINOGRAD, WINOGRAD_GROUPED_CASES[i], WINOGRAD_GROUPS[i], threads), TOL,
                          "grouped case %zu, %d threads", i, threads);
}

Test(winograd_cl, matches_im2col)
{
    for (int threads = 1; threads <= 3; threads++)
        expect_path_matches(&WINOGRAD_CL, WINOGRAD_CL_CASES, CASE_COUNT(WINOGRAD_CL_CASES), threads);
}

/* Where the path exists (AVX-512): elsewhere it takes no layer, which the path test checks. */
Test(winograd_rows, matches_im2col)
{
    const ConvShape r20 = {16, 32, 32, 16, 32, 32, 3, 3, 1, 1, 1};
    if (!winograd_rows_applies(&r20)) cr_skip_test("the row-of-tiles Winograd needs AVX-512");
    for (int threads = 1; threads <= 3; threads++)
        expect_path_matches(&WINOGRAD_ROWS, WINOGRAD_ROWS_CASES, CASE_COUNT(WINOGRAD_ROWS_CASES), threads);
    for (size_t i = 0; i < CASE_COUNT(WINOGRAD_ROWS_CASES); i++)
        for (int threads = 1; threads <= 2; threads++)
            cr_expect_eq(written_differs_from_added(&WINOGRAD_ROWS, WINOGRAD_ROWS_CASES[i], threads), 0,
                         "case %zu, %d threads", i, threads);
}

Test(phased, matches_im2col)
{
    for (int threads = 1; threads <= 2; threads++)
        expect_path_matches(&PHASED, PHASED_CASES, CASE_COUNT(PHASED_CASES), threads);
}

Test(batched, matches_im2col)
{
    for (int threads = 1; threads <= 3; threads++)
        expect_path_matches(&BATCHED, BATCHED_CASES, CASE_COUNT(BATCHED_CASES), threads);
}

Test(direct, matches_im2col_one_thread) { expect_path_matches(&DIRECT, DIRECT_CASES, CASE_COUNT(DIRECT_CASES), 1); }

Test(direct, matches_im2col_two_threads) { expect_path_matches(&DIRECT, DIRECT_CASES, CASE_COUNT(DIRECT_CASES), 2); }

Test(direct, data_gradient_written_as_added)
{
    for (size_t i = 0; i < CASE_COUNT(DIRECT_CASES); i++)
        for (int threads = 1; threads <= 2; threads++)
            cr_expect_eq(written_differs_from_added(&DIRECT, DIRECT_CASES[i], threads), 0, "case %zu, %d threads",
                         i, threads);
}

Test(winograd_cl, data_gradient_written_as_added)
{
    for (size_t i = 0; i < CASE_COUNT(WINOGRAD_CL_CASES); i++)
        for (int threads = 1; threads <= 2; threads++)
            cr_expect_eq(written_differs_from_added(&WINOGRAD_CL, WINOGRAD_CL_CASES[i], threads), 0,
                         "case %zu, %d threads", i, threads);
}

/* The layers the models have: which take the direct path, which Winograd (either form), which
 * keep im2col. */
Test(conv_paths, each_layer_shape_takes_its_path)
{
    ConvShape r20 = {16, 32, 32, 16, 32, 32, 3, 3, 1, 1, 1};
    ConvShape first = {3, 32, 32, 16, 32, 32, 3, 3, 1, 1, 1};
    ConvShape strided = {16, 32, 32, 32, 16, 16, 3, 3, 2, 1, 1}, shortcut = {16, 32, 32, 32, 16, 16, 1, 1, 2, 0, 1};
    ConvShape strided_odd = {16, 7, 7, 32, 4, 4, 3, 3, 2, 1, 1}, alexnet_conv1 = {3, 227, 227, 96, 55, 55, 11, 11, 4, 0, 1};
    cr_expect(direct_applies(&strided) && direct_applies(&shortcut) && !winograd_applies(&shortcut));
    cr_expect(!direct_applies(&strided_odd) && !direct_applies(&alexnet_conv1));
    /* BVLC AlexNet's conv1 over its input's phases, and stride-2 5x5 layers (3x3 over 4 phases);
     * not ResNet's 7x7 stride-2 stem (its phases would need a 4x4 filter), nor stride-2 3x3 */
    ConvShape resnet_stem = {3, 224, 224, 64, 112, 112, 7, 7, 2, 3, 1}, strided_5x5 = {16, 16, 16, 32, 8, 8, 5, 5, 2, 2, 1};
    cr_expect(phased_applies(&alexnet_conv1) && !phased_applies(&resnet_stem) && !phased_applies(&strided));
    cr_expect(phased_applies(&strided_5x5) && !direct_applies(&strided_5x5));
    ConvShape grouped = {96, 13, 13, 128, 13, 13, 3, 3, 1, 1, 2};
    ConvShape alexnet_conv4 = {384, 13, 13, 384, 13, 13, 3, 3, 1, 1, 2}, thin_groups = {32, 13, 13, 32, 13, 13, 3, 3, 1, 1, 4};
    ConvShape pointwise = {64, 56, 56, 256, 56, 56, 1, 1, 1, 0, 1};
    /* ResNet-50's last stages: one gemm over a group of images, but the 3x3 on 14x14 (Winograd) */
    ConvShape r50_layer4_1x1 = {512, 7, 7, 2048, 7, 7, 1, 1, 1, 0, 1}, r50_layer4_3x3 = {512, 7, 7, 512, 7, 7, 3, 3, 1, 1, 1};
    ConvShape r50_layer3_1x1 = {1024, 14, 14, 256, 14, 14, 1, 1, 1, 0, 1}, r50_layer3_3x3 = {256, 14, 14, 256, 14, 14, 3, 3, 1, 1, 1};
    cr_expect(conv_batched_applies(&r50_layer4_1x1) && conv_batched_applies(&r50_layer3_1x1));
    cr_expect(conv_batched_applies(&r50_layer4_3x3) && !winograd_applies(&r50_layer4_3x3));
    cr_expect(winograd_applies(&r50_layer3_3x3) && !conv_batched_applies(&pointwise));
    ConvShape r20_layer3 = {64, 8, 8, 64, 8, 8, 3, 3, 1, 1, 1};
    ConvShape r50_conv2 = {64, 56, 56, 64, 56, 56, 3, 3, 1, 1, 1};
    ConvShape r50_conv3 = {128, 28, 28, 128, 28, 28, 3, 3, 1, 1, 1};
    /* ResNet-50's first two stages: Winograd, and im2col for the stride-2 3x3 onto 28x28 */
    ConvShape r50_strided = {128, 56, 56, 128, 28, 28, 3, 3, 2, 1, 1};
    cr_expect(direct_applies(&r20) && direct_applies(&r20_layer3) && !direct_applies(&r50_conv2));
    cr_expect(winograd_applies(&r50_conv2) && !direct_applies(&r50_conv3) && winograd_applies(&r50_conv3));
    cr_expect(!direct_applies(&r50_strided) && !winograd_applies(&r50_strided) && !conv_batched_applies(&r50_strided));
    ConvShape simple_conv2 = {32, 14, 14, 64, 14, 14, 5, 5, 1, 2, 1};
    ConvShape simple_conv1 = {1, 28, 28, 32, 28, 28, 5, 5, 1, 2, 1};
    ConvShape lenet_conv2 = {8, 14, 14, 16, 10, 10, 5, 5, 1, 0, 1}; /* unpadded: im2col */
    /* 5x5: simple-cnn's conv2 takes the direct path (which conv_path tries before Winograd's);
     * the ImageNet AlexNets' conv2 (groups of 2) F(2x2, 5x5) a group at a time */
    ConvShape imagenet_alexnet_conv2 = {96, 27, 27, 256, 27, 27, 5, 5, 1, 2, 2};
    cr_expect(direct_applies(&simple_conv2) && !winograd_applies(&lenet_conv2));
    cr_expect(winograd_applies(&imagenet_alexnet_conv2) && !direct_applies(&imagenet_alexnet_conv2));
    cr_expect(!winograd_cl_applies(&imagenet_alexnet_conv2) && !conv_batched_applies(&imagenet_alexnet_conv2));
    ConvShape alexnet_conv3 = {64, 7, 7, 96, 7, 7, 3, 3, 1, 1, 1}, alexnet_conv2 = {32, 15, 15, 64, 15, 15, 3, 3, 1, 1, 1};
    /* the weight gradient by outer products: output channels in 32s (16s without AVX-512), 3x3 */
    cr_expect(direct_applies(&alexnet_conv3) && direct_outer_gradient_applies(&alexnet_conv3));
    cr_expect(direct_outer_gradient_applies(&alexnet_conv2) && direct_outer_gradient_applies(&r20_layer3));
    cr_expect(direct_outer_gradient_applies(&strided) && !direct_outer_gradient_applies(&simple_conv2));
    cr_expect(direct_outer_gradient_applies(&shortcut));
    cr_expect(direct_applies(&simple_conv1) && !direct_applies(&lenet_conv2));
    cr_expect(direct_applies(&first) && !direct_applies(&grouped) && !direct_applies(&pointwise));
    cr_expect(winograd_applies(&r20));
    /* ResNet-20's and ResNet-8's stride-1 3x3 layers past the first and ResNet-50's first two
     * stages' 3x3: the channels-last Winograd, which conv_path tries before the others; not the
     * first layer, the strided ones, ResNet-50's 14x14 and 7x7 (196 and 49 pixels, not whole
     * vectors), nor the CIFAR AlexNets' (odd planes) */
    ConvShape r20_layer2 = {32, 16, 16, 32, 16, 16, 3, 3, 1, 1, 1};
    cr_expect(winograd_cl_applies(&r20) && winograd_cl_applies(&r20_layer2) && winograd_cl_applies(&r20_layer3));
    cr_expect(!winograd_cl_applies(&first) && !winograd_cl_applies(&strided) && !winograd_cl_applies(&shortcut));
    cr_expect(winograd_cl_applies(&r50_conv2) && winograd_cl_applies(&r50_conv3) && !winograd_cl_applies(&r50_layer3_3x3));
    cr_expect(!winograd_cl_applies(&r50_layer4_3x3));
    cr_expect(!winograd_cl_applies(&alexnet_conv2) && !winograd_cl_applies(&alexnet_conv3) && !winograd_cl_applies(&grouped));
    /* ResNet-20's 16-channel 32x32 layers: the row-of-tiles Winograd first, where there is
     * AVX-512 (a plane row of 32 is a row of 16 tiles); no other layer of the models */
#if defined(__AVX512F__) && !defined(BB_DOUBLE)
    cr_expect(winograd_rows_applies(&r20));
#endif
    cr_expect(!winograd_rows_applies(&first) && !winograd_rows_applies(&r20_layer2) && !winograd_rows_applies(&strided));
    cr_expect(!winograd_rows_applies(&r50_conv2) && !winograd_rows_applies(&alexnet_conv2) && !winograd_rows_applies(&grouped));
    cr_expect(!winograd_applies(&first));
    cr_expect(!winograd_applies(&strided));
    /* grouped 3x3 layers take Winograd a group at a time (AlexNet's conv4 and conv5), but not
     * with groups under 16 channels */
    cr_expect(winograd_applies(&grouped) && winograd_applies(&alexnet_conv4) && !winograd_applies(&thin_groups));
    cr_expect(!winograd_applies(&pointwise));
}
