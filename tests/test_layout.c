/* The NCHW <-> NHWC index mappings of the bf16/fp16 convolutions (engine/cuda/layout.h), run
 * here on the host with the arithmetic the kernels run: each mapping a bijection whose inverse
 * is the other, and tensors and grouped filters transposed with them equal to the same
 * transposition written as plain nested loops. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../engine/cuda/layout.h"

/* Activations of the models' kinds, odd and single-element sizes, and filters (KCRS -> KRSC):
 * AlexNet's grouped conv2 (96 -> 256, 5x5, groups 2), a grouped 3x3 and an odd grouped 3x1. */
static Dims4 shapes(size_t k)
{
    const Dims4 fixed[] = {{1, 1, 1, 1}, {2, 3, 5, 7}, {3, 16, 6, 6}, {4, 48, 3, 3}, {2, 8, 1, 1}, {7, 9, 13, 11}};
    const size_t count = sizeof fixed / sizeof fixed[0];
    if (k < count) return fixed[k];
    if (k == count) return filter_dims(256, 96, 2, 5, 5);
    if (k == count + 1) return filter_dims(48, 16, 2, 3, 3);
    return filter_dims(5, 6, 2, 3, 1);
}
enum { SHAPES = 9 };

Test(layout, filter_dims_is_per_group)
{
    const Dims4 d = filter_dims(256, 96, 2, 5, 7);
    cr_assert(d.n == 256 && d.c == 48 && d.h == 5 && d.w == 7, "got %dx%dx%dx%d", d.n, d.c, d.h, d.w);
}

Test(layout, mappings_are_inverse_bijections)
{
    for (size_t s = 0; s < SHAPES; s++) {
        const Dims4 d = shapes(s);
        const size_t count = dims_count(d);
        char *seen = calloc(count, 1);
        cr_assert(seen);
        for (size_t i = 0; i < count; i++) {
            const size_t j = nhwc_of_nchw(d, i);
            cr_assert_lt(j, count, "shape %zu: NCHW %zu -> NHWC %zu, past %zu", s, i, j, count);
            cr_assert(!seen[j], "shape %zu: NHWC %zu reached twice", s, j);
            seen[j] = 1;
            cr_assert_eq(nchw_of_nhwc(d, j), i, "shape %zu: NCHW %zu -> NHWC %zu -> %zu", s, i, j,
                         nchw_of_nhwc(d, j));
        }
        free(seen);
    }
}

/* The element positions of both layouts, from the four coordinates by hand. */
Test(layout, positions_match_plain_loops)
{
    for (size_t s = 0; s < SHAPES; s++) {
        const Dims4 d = shapes(s);
        for (int n = 0; n < d.n; n++)
            for (int c = 0; c < d.c; c++)
                for (int y = 0; y < d.h; y++)
                    for (int x = 0; x < d.w; x++) {
                        const size_t p = (size_t)y * d.w + x;
                        const size_t nchw = (((size_t)n * d.c + c) * d.h + y) * d.w + x;
                        const size_t nhwc = (((size_t)n * d.h + y) * d.w + x) * d.c + c;
                        cr_assert_eq(nchw_at(d, n, c, p), nchw, "shape %zu (%d,%d,%d,%d)", s, n, c, y, x);
                        cr_assert_eq(nhwc_at(d, n, c, p), nhwc, "shape %zu (%d,%d,%d,%d)", s, n, c, y, x);
                    }
    }
}

/* A host transposition through the mappings, both ways, against a naive one. */
Test(layout, transpositions_match_a_naive_one)
{
    for (size_t s = 0; s < SHAPES; s++) {
        const Dims4 d = shapes(s);
        const size_t count = dims_count(d);
        float *src = malloc(count * sizeof *src), *mapped = malloc(count * sizeof *mapped),
              *naive = malloc(count * sizeof *naive), *back = malloc(count * sizeof *back);
        cr_assert(src && mapped && naive && back);
        for (size_t i = 0; i < count; i++) src[i] = (float)i + 0.5f;
        for (size_t i = 0; i < count; i++) mapped[nhwc_of_nchw(d, i)] = src[i];
        size_t at = 0; /* walks the NHWC output in its order */
        for (int n = 0; n < d.n; n++)
            for (int y = 0; y < d.h; y++)
                for (int x = 0; x < d.w; x++)
                    for (int c = 0; c < d.c; c++) naive[at++] = src[(((size_t)n * d.c + c) * d.h + y) * d.w + x];
        for (size_t j = 0; j < count; j++) {
            cr_assert_eq(mapped[j], naive[j], "shape %zu, NHWC %zu: %g, want %g", s, j, mapped[j], naive[j]);
            back[nchw_of_nhwc(d, j)] = mapped[j];
        }
        for (size_t i = 0; i < count; i++) cr_assert_eq(back[i], src[i], "shape %zu, NCHW %zu not restored", s, i);
        free(src);
        free(mapped);
        free(naive);
        free(back);
    }
}

/* lowp.cu's relayout kernel run here thread by thread, tile by tile (tile_element and
 * layout_at, as the kernel calls them): both directions write every destination value once,
 * and where the mappings put it; within a tile row, neighbouring lanes read (first pass) and
 * write (second) neighbouring addresses, the coalescing the kernel is for. */
static void emulate_relayout(Dims4 d, bool to_nhwc, const float *src, float *dst, int *writes)
{
    float tile[LAYOUT_TILE][LAYOUT_TILE + 1];
    for (size_t p0 = 0; p0 < dims_plane(d); p0 += LAYOUT_TILE)
        for (int c0 = 0; c0 < d.c; c0 += LAYOUT_TILE)
            for (int n = 0; n < d.n; n++)
                for (int pass = 0; pass < 2; pass++)
                    for (int ty = 0; ty < LAYOUT_TILE_ROWS; ty++)
                        for (int k = ty; k < LAYOUT_TILE; k += LAYOUT_TILE_ROWS)
                            for (int lane = 0, last = -1; lane < LAYOUT_TILE; lane++) {
                                int c;
                                size_t p;
                                if (!tile_element(d, to_nhwc, pass == 0, p0, c0, k, lane, &c, &p)) continue;
                                const size_t at = layout_at(d, pass == 0 ? !to_nhwc : to_nhwc, n, c, p);
                                cr_assert(last < 0 || at == (size_t)last + 1, "pass %d, lane %d: %zu after %d", pass,
                                          lane, at, last);
                                last = (int)at;
                                if (pass == 0) {
                                    tile[c - c0][p - p0] = src[at];
                                } else {
                                    dst[at] = tile[c - c0][p - p0];
                                    writes[at]++;
                                }
                            }
}

Test(layout, the_kernels_tiles_move_every_value_once)
{
    const Dims4 extra[] = {{2, 70, 9, 7}, {1, 33, 33, 1}}; /* several tiles of channels and of positions */
    for (size_t s = 0; s < SHAPES + 2; s++) {
        const Dims4 d = s < SHAPES ? shapes(s) : extra[s - SHAPES];
        const size_t count = dims_count(d);
        float *src = malloc(count * sizeof *src), *nhwc = malloc(count * sizeof *nhwc),
              *back = malloc(count * sizeof *back);
        int *writes = calloc(count, sizeof *writes), *back_writes = calloc(count, sizeof *back_writes);
        cr_assert(src && nhwc && back && writes && back_writes);
        for (size_t i = 0; i < count; i++) src[i] = (float)i + 0.25f;
        emulate_relayout(d, true, src, nhwc, writes);
        emulate_relayout(d, false, nhwc, back, back_writes);
        for (size_t i = 0; i < count; i++) {
            cr_assert_eq(writes[i], 1, "shape %zu: NHWC %zu written %d times", s, i, writes[i]);
            cr_assert_eq(back_writes[i], 1, "shape %zu: NCHW %zu written %d times", s, i, back_writes[i]);
            cr_assert_eq(nhwc[nhwc_of_nchw(d, i)], src[i], "shape %zu: NCHW %zu misplaced", s, i);
            cr_assert_eq(back[i], src[i], "shape %zu: NCHW %zu not restored", s, i);
        }
        free(src);
        free(nhwc);
        free(back);
        free(writes);
        free(back_writes);
    }
}
