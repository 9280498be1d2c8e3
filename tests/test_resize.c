/* Known-answer tests of the area resampler behind --image-size (engine/data/resize.c):
 * exact block means, the centre crop of a non-square image, and every pixel of
 * several shrinks and an enlargement against an independent double-precision
 * integral of the source over each output pixel's area. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>

#include "../engine/data/data.h"

/* The exact area mean of channel c over output pixel (oy, ox): the overlap of every
 * source pixel with the output pixel's square, in source coordinates. */
static double area_mean(const uint8_t *hwc, int h, int w, int size, int c, int oy, int ox)
{
    double s = (double)(h < w ? h : w) / size;
    double y0 = (h - size * s) / 2 + oy * s, x0 = (w - size * s) / 2 + ox * s;
    double total = 0, area = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double cy = fmin(y + 1, y0 + s) - fmax(y, y0), cx = fmin(x + 1, x0 + s) - fmax(x, x0);
            if (cy <= 0 || cx <= 0) continue;
            total += cy * cx * hwc[3 * (y * w + x) + c];
            area += cy * cx;
        }
    return total / area;
}

static uint8_t *random_image(int h, int w, unsigned seed)
{
    uint8_t *p = malloc((size_t)h * w * 3);
    srand(seed);
    for (int i = 0; i < h * w * 3; i++) p[i] = (uint8_t)(rand() % 256);
    return p;
}

Test(resize, matches_the_area_integral)
{
    const int cases[][3] = {{37, 23, 16}, {100, 64, 24}, {9, 9, 4}, {5, 9, 7}, {64, 48, 48}, {3, 3, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int h = cases[k][0], w = cases[k][1], size = cases[k][2];
        uint8_t *src = random_image(h, w, (unsigned)k + 1);
        uint8_t *out = malloc((size_t)size * size * 3);
        image_resize_square(src, h, w, size, out);
        int worst = 0;
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < size; y++)
                for (int x = 0; x < size; x++) {
                    double want = area_mean(src, h, w, size, c, y, x);
                    int got = out[(size_t)c * size * size + (size_t)y * size + x];
                    cr_assert_leq(fabs(got - want), 0.5 + 1e-3, "%dx%d -> %d: channel %d (%d, %d) is %d, want %.3f", h, w,
                                  size, c, y, x, got, want);
                    worst = abs(got - (int)lround(want)) > worst ? abs(got - (int)lround(want)) : worst;
                }
        cr_assert_leq(worst, 1);
        free(src);
        free(out);
    }
}

Test(resize, halving_2x2_blocks_is_exact)
{
    enum { N = 8 };
    uint8_t src[N * N * 3], out[(N / 2) * (N / 2) * 3];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++)
            for (int c = 0; c < 3; c++) src[3 * (y * N + x) + c] = (uint8_t)(10 * (y / 2) + 50 * (x / 2) + c);
    image_resize_square(src, N, N, N / 2, out);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < N / 2; y++)
            for (int x = 0; x < N / 2; x++)
                cr_assert_eq(out[c * 16 + y * 4 + x], 10 * y + 50 * x + c, "(%d, %d, %d)", c, y, x);
}

Test(resize, keeps_the_centre_of_a_wide_image)
{
    /* 10 high, 30 wide: thirds of 0, 100, 200; at size 10 only the middle third shows */
    enum { H = 10, W = 30 };
    uint8_t src[H * W * 3], out[10 * 10 * 3];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++) src[3 * (y * W + x) + c] = (uint8_t)(100 * (x / 10));
    image_resize_square(src, H, W, 10, out);
    for (int i = 0; i < 300; i++) cr_assert_eq(out[i], 100, "value %d is %d", i, out[i]);
    /* a tall image the same way: rows instead of columns */
    uint8_t tall[W * H * 3];
    for (int y = 0; y < W; y++)
        for (int x = 0; x < H; x++)
            for (int c = 0; c < 3; c++) tall[3 * (y * H + x) + c] = (uint8_t)(100 * (y / 10));
    image_resize_square(tall, W, H, 5, out);
    for (int i = 0; i < 75; i++) cr_assert_eq(out[i], 100, "value %d is %d", i, out[i]);
}

Test(resize, constant_stays_constant)
{
    enum { H = 41, W = 67 };
    uint8_t *src = malloc(H * W * 3), out[13 * 13 * 3];
    for (int i = 0; i < H * W; i++) src[3 * i] = 255, src[3 * i + 1] = 0, src[3 * i + 2] = 77;
    image_resize_square(src, H, W, 13, out);
    for (int i = 0; i < 169; i++) {
        cr_assert_eq(out[i], 255);
        cr_assert_eq(out[169 + i], 0);
        cr_assert_eq(out[338 + i], 77);
    }
    free(src);
}
