/* Where an element of an N x C x H x W tensor sits in NCHW (the backend's layout everywhere)
 * and in NHWC (channels-last, which the bf16/fp16 convolutions hand cuDNN: conv.cu, lowp.cu).
 * A filter [out_c, in_c/groups, k_h, k_w] (KCRS) is the same mapping with N = out_c and
 * C = in_c/groups: its NHWC is KRSC, cuDNN's CUDNN_TENSOR_NHWC filter format, grouped or not.
 * Header-only and plain C so the host tests (tests/test_layout.c) check the very arithmetic the
 * kernels run. */
#ifndef BB_LAYOUT_H
#define BB_LAYOUT_H
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

#endif
