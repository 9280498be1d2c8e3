/* Where an element of an N x C x H x W tensor sits in NCHW (the backend's layout everywhere)
 * and in NHWC (channels-last, which the bf16/fp16 convolutions hand cuDNN: conv.cu, lowp.cu).
 * A filter [out_c, in_c/groups, k_h, k_w] (KCRS) is the same mapping with N = out_c and
 * C = in_c/groups: its NHWC is KRSC, cuDNN's CUDNN_TENSOR_NHWC filter format, grouped or not.
 * Header-only and plain C so the host tests (tests/test_layout.c) check the very arithmetic the
 * kernels run. */
#ifndef BB_LAYOUT_H
#define BB_LAYOUT_H
#include <stdbool.h>
#include <stddef.h>

#include "../host_device.h"

typedef struct {
    int n, c, h, w;
} Dims4;

static inline BB_HD size_t dims_count(Dims4 d) { return (size_t)d.n * d.c * d.h * d.w; }
static inline BB_HD size_t dims_plane(Dims4 d) { return (size_t)d.h * d.w; }

/* A convolution's filter as an N x C x H x W tensor: one "image" per output channel. */
static inline BB_HD Dims4 filter_dims(int out_c, int in_c, int groups, int k_h, int k_w)
{
    Dims4 d = {out_c, in_c / groups, k_h, k_w};
    return d;
}

/* Image n, channel c, position p (= y * w + x) in each layout. */
static inline BB_HD size_t nchw_at(Dims4 d, size_t n, size_t c, size_t p)
{
    return (n * (size_t)d.c + c) * dims_plane(d) + p;
}
static inline BB_HD size_t nhwc_at(Dims4 d, size_t n, size_t c, size_t p)
{
    return (n * dims_plane(d) + p) * (size_t)d.c + c;
}

/* The NHWC index of NCHW index i, and back. */
static inline BB_HD size_t nhwc_of_nchw(Dims4 d, size_t i)
{
    const size_t plane = dims_plane(d), p = i % plane, image = i / plane;
    return nhwc_at(d, image / (size_t)d.c, image % (size_t)d.c, p);
}
static inline BB_HD size_t nchw_of_nhwc(Dims4 d, size_t j)
{
    const size_t c = j % (size_t)d.c, at = j / (size_t)d.c, plane = dims_plane(d);
    return nchw_at(d, at / plane, c, at % plane);
}

/* The index of (n, c, p) in NHWC when nhwc, else NCHW. */
static inline BB_HD size_t layout_at(Dims4 d, bool nhwc, size_t n, size_t c, size_t p)
{
    return nhwc ? nhwc_at(d, n, c, p) : nchw_at(d, n, c, p);
}

/* lowp.cu's relayout kernel moves one image's channels c0.. and positions p0.. through a
 * LAYOUT_TILE-square shared tile with LAYOUT_TILE x LAYOUT_TILE_ROWS threads; lane `lane` of
 * tile row k reads (reading), then writes, the element at channel *c, position *p: lanes run
 * along the source's contiguous axis when reading and the destination's when writing, so
 * both passes are coalesced. to_nhwc: the source is NCHW. False past the tensor's edge. */
enum { LAYOUT_TILE = 32, LAYOUT_TILE_ROWS = 8 };

static inline BB_HD bool tile_element(Dims4 d, bool to_nhwc, bool reading, size_t p0, int c0, int k, int lane,
                                      int *c, size_t *p)
{
    const bool lanes_along_p = to_nhwc == reading; /* the NCHW side's contiguous axis */
    *c = c0 + (lanes_along_p ? k : lane);
    *p = p0 + (size_t)(lanes_along_p ? lane : k);
    return *c < d.c && *p < dims_plane(d);
}

#endif
