/* Max pooling (engine/cpu/pool.c) against a plain loop written here: the outputs and, for
 * every output, which input it came from. The 2x2 and 3x3 stride-2 windows that lie wholly
 * inside the plane take unrolled, vectorized kernels, the clipped ones the generic loop, so
 * the shapes mix both: even and odd sizes, padding 0 and 1, other strides, rows wider than a
 * vector. Values come from 5 levels, so most windows hold ties: the first maximum in row-major
 * order must win, on both paths. Backward adds each output's gradient at that input, onto
 * the old gradient or onto zero. One, two and three threads. Every tensor crosses the backend
 * boundary. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/backend.h"

/* The plain loop: every window clipped to the plane, the first strict maximum. */
static void reference_maxpool(const PoolShape *s, int n, const real *x, real *y, int32_t *argmax)
{
    for (int p = 0; p < n * s->c; p++)
        for (int oh = 0; oh < s->out_h; oh++)
            for (int ow = 0; ow < s->out_w; ow++) {
                int best_at = -1;
                for (int ih = oh * s->stride - s->pad; ih < oh * s->stride - s->pad + s->k; ih++)
                    for (int iw = ow * s->stride - s->pad; iw < ow * s->stride - s->pad + s->k; iw++) {
                        if (ih < 0 || ih >= s->in_h || iw < 0 || iw >= s->in_w) continue;
                        int at = ih * s->in_w + iw;
                        if (best_at < 0 || x[(size_t)p * s->in_h * s->in_w + at] >
                                               x[(size_t)p * s->in_h * s->in_w + best_at])
                            best_at = at;
                    }
                size_t o = ((size_t)p * s->out_h + oh) * s->out_w + ow;
                y[o] = x[(size_t)p * s->in_h * s->in_w + best_at];
                argmax[o] = best_at;
            }
}

typedef struct {
    int n, c, h, w, k, stride, pad;
} PoolCase;

/* Backward: each output's gradient added at its argmax, onto dx's old values (accumulate) or
 * onto zero (a fresh gradient, which must not read the old values: they are 1e30 here). */
static void expect_backward_matches(Backend *bk, const PoolShape *s, int n, BkBuffer *argmax, const int32_t *at,
                                    bool accumulate)
{
    const size_t plane = (size_t)s->in_h * s->in_w, ohw = (size_t)s->out_h * s->out_w;
    const size_t nx = (size_t)n * s->c * plane, ny = (size_t)n * s->c * ohw;
    real *dy = malloc(ny * sizeof *dy), *dx = malloc(nx * sizeof *dx), *want = malloc(nx * sizeof *want);
    cr_assert(dy && dx && want);
    for (size_t i = 0; i < ny; i++) dy[i] = (real)(i % 7) - 3;
    for (size_t i = 0; i < nx; i++) want[i] = dx[i] = accumulate ? (real)(i % 5) : (real)1e30;
    if (!accumulate) memset(want, 0, nx * sizeof *want);
    for (size_t o = 0; o < ny; o++) want[o / ohw * plane + (size_t)at[o]] += dy[o];

    BkBuffer *dyb = bk_buffer_alloc(bk, ny * sizeof *dy), *dxb = bk_buffer_alloc(bk, nx * sizeof *dx);
    cr_assert(dyb && dxb);
    bk_upload(bk, bk_buffer_address(dyb), dy, ny * sizeof *dy);
    bk_upload(bk, bk_buffer_address(dxb), dx, nx * sizeof *dx);
    bk_maxpool_backward(bk, s, n, bk_buffer_address(argmax), bk_buffer_address(dyb), bk_buffer_address(dxb),
                        accumulate);
    bk_download(bk, dx, bk_buffer_address(dxb), nx * sizeof *dx);
    size_t wrong = 0;
    for (size_t i = 0; i < nx; i++) wrong += dx[i] != want[i];
    cr_expect(wrong == 0, "backward (accumulate %d, k %d stride %d pad %d, %dx%d): %zu of %zu inputs differ",
              accumulate, s->k, s->stride, s->pad, s->in_h, s->in_w, wrong, nx);
    bk_buffer_free(dyb);
    bk_buffer_free(dxb);
    free(dy); free(dx); free(want);
}

static void expect_matches(PoolCase pc, int threads)
{
    PoolShape s = {pc.c, pc.h, pc.w, (pc.h + 2 * pc.pad - pc.k) / pc.stride + 1,
                   (pc.w + 2 * pc.pad - pc.k) / pc.stride + 1, pc.k, pc.stride, pc.pad};
    const size_t nx = (size_t)pc.n * pc.c * pc.h * pc.w, ny = (size_t)pc.n * pc.c * s.out_h * s.out_w;
    real *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y), *want = malloc(ny * sizeof *want);
    int32_t *at = malloc(ny * sizeof *at), *want_at = malloc(ny * sizeof *want_at);
    cr_assert(x && y && want && at && want_at);
    unsigned state = 7u + (unsigned)(pc.h * 31 + pc.w);
    for (size_t i = 0; i < nx; i++) {
        state = state * 1664525u + 1013904223u;
        x[i] = (real)((state >> 16) % 5) - 2; /* ties in most windows */
    }
    reference_maxpool(&s, pc.n, x, want, want_at);

    Backend *bk = backend_create(threads);
    BkBuffer *xb = bk_buffer_alloc(bk, nx * sizeof *x), *yb = bk_buffer_alloc(bk, ny * sizeof *y);
    BkBuffer *ab = bk_buffer_alloc(bk, ny * sizeof *at);
    cr_assert(xb && yb && ab);
    bk_upload(bk, bk_buffer_address(xb), x, nx * sizeof *x);
    bk_maxpool_forward(bk, &s, pc.n, bk_buffer_address(xb), bk_buffer_address(yb), bk_buffer_address(ab));
    bk_download(bk, y, bk_buffer_address(yb), ny * sizeof *y);
    bk_download(bk, at, bk_buffer_address(ab), ny * sizeof *at);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < ny; i++)
        if (y[i] != want[i] || at[i] != want_at[i]) {
            if (!wrong) first = i;
            wrong++;
        }
    cr_expect(wrong == 0,
              "%zu of %zu outputs differ (k %d stride %d pad %d, %dx%d, %d threads); first at %zu: %g from %d, want %g "
              "from %d",
              wrong, ny, pc.k, pc.stride, pc.pad, pc.h, pc.w, threads, first, (double)y[first], at[first],
              (double)want[first], want_at[first]);
    expect_backward_matches(bk, &s, pc.n, ab, want_at, true);
    expect_backward_matches(bk, &s, pc.n, ab, want_at, false);
    bk_buffer_free(xb);
    bk_buffer_free(yb);
    bk_buffer_free(ab);
    backend_destroy(bk);
    free(x); free(y); free(want); free(at); free(want_at);
}

static const PoolCase CASES[] = {
    {3, 6, 28, 28, 2, 2, 0},  /* lenet's and simple-cnn's first pool */
    {2, 5, 14, 14, 2, 2, 0},  /* their second */
    {2, 3, 9, 37, 2, 2, 0},   /* odd sizes: the last row and column left out; 18 a row */
    {2, 4, 32, 32, 3, 2, 0},  /* the CIFAR AlexNets' 3x3 stride 2: 15 a row, 8 then 8 overlapping */
    {2, 4, 15, 15, 3, 2, 0},  /* their second: 7 a row, below a vector */
    {2, 4, 17, 17, 3, 2, 0},  /* exactly one vector of 8 a row */
    {2, 4, 16, 16, 2, 2, 0},  /* 2x2: one vector of 8 */
    {2, 3, 7, 7, 3, 2, 0},    /* their third: 3 a row */
    {2, 3, 5, 4, 2, 2, 0},    /* 2 a row, 2x2 */
    {2, 3, 3, 5, 3, 2, 0},    /* 2 a row, 3x3, one row */
    {2, 3, 8, 3, 3, 2, 0},    /* 1 a row */
    {2, 3, 55, 55, 3, 2, 0},  /* AlexNet's, 27 outputs a row */
    {2, 4, 15, 17, 3, 2, 1},  /* padding: the edge windows clipped, the rest whole */
    {2, 3, 12, 12, 2, 2, 1},  /* 2x2 padded: clipped at both ends */
    {2, 3, 10, 11, 3, 1, 1},  /* stride 1: the generic loop throughout */
    {1, 2, 3, 3, 3, 2, 1},    /* every window clipped */
    {3, 3, 9, 9, 2, 2, 0},    /* 9 planes: no thread count above one splits them evenly */
};

Test(maxpool, matches_plain_loop)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        expect_matches(CASES[i], 1);
        expect_matches(CASES[i], 2);
        expect_matches(CASES[i], 3); /* the planes split unevenly (the zeroing once raced the adding) */
    }
}
