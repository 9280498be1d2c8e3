/* Pillow's resampling (libImaging/Resample.c) for the bilinear filter, restated: for output
 * pixel xx the centre is in0 + (xx + 0.5) * scale, the filter's support is 1 * max(scale, 1)
 * source pixels, the taps [int(centre - support + 0.5), int(centre + support + 0.5)) clipped to
 * the image, each weighted triangle((x - centre + 0.5) / max(scale, 1)), normalized to sum to
 * 1 and then rounded to 22-bit fixed point; sums start at half a unit and are clipped to 8
 * bits. The horizontal pass runs over only the rows the vertical pass reads. */
#include "resample.h"

#include <math.h>
#include <stdlib.h>

#include "../base/util.h"

#define PRECISION_BITS (32 - 8 - 2)

void resampler_free(Resampler *r)
{
    free(r->bounds_x);
    free(r->bounds_y);
    free(r->kk_x);
    free(r->kk_y);
    free(r->tmp);
    *r = (Resampler){0};
}

static double scale_of(const ResampleAxis *a) { return (double)(a->in1 - a->in0) / a->out_full; }

static double support_of(double scale) { return scale < 1.0 ? 1.0 : scale; }

static int ksize_of(const ResampleAxis *a) { return (int)ceil(support_of(scale_of(a))) * 2 + 1; }

/* Output xx's first tap and the end of its taps, clipped to the image. */
static void taps_of(const ResampleAxis *a, int xx, int *xmin, int *xmax)
{
    const double scale = scale_of(a), support = support_of(scale);
    const double centre = a->in0 + (xx + 0.5) * scale;
    *xmin = (int)(centre - support + 0.5);
    if (*xmin < 0) *xmin = 0;
    *xmax = (int)(centre + support + 0.5);
    if (*xmax > a->in_size) *xmax = a->in_size;
}

void resample_span(const ResampleAxis *a, int *lo, int *hi)
{
    int unused;
    taps_of(a, a->out_first, lo, &unused);
    taps_of(a, a->out_first + a->out_count - 1, &unused, hi);
    if (*hi < *lo) *hi = *lo;
}

static double triangle(double x)
{
    if (x < 0.0) x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

static void grow(void *p, size_t *cap, size_t need)
{
    void **q = p;
    if (need <= *cap) return;
    *q = xrealloc(*q, need, "resampling coefficients");
    *cap = need;
}

/* Per output: bounds[2o] the first tap, bounds[2o + 1] the number of taps; kk[o * ksize + k]
 * the fixed-point weights. */
static void coefficients(const ResampleAxis *a, int **bounds, size_t *cap_b, int **kk, size_t *cap_k)
{
    const int ksize = ksize_of(a);
    const double scale = scale_of(a), ss = 1.0 / support_of(scale);
    grow(bounds, cap_b, 2 * sizeof(int) * (size_t)a->out_count);
    grow(kk, cap_k, sizeof(int) * (size_t)ksize * (size_t)a->out_count);
    double *w = xmalloc(sizeof *w * (size_t)ksize, "resampling weights");
    for (int o = 0; o < a->out_count; o++) {
        const int xx = a->out_first + o;
        int xmin, xmax;
        taps_of(a, xx, &xmin, &xmax);
        const double centre = a->in0 + (xx + 0.5) * scale;
        double ww = 0.0;
        int n = xmax - xmin;
        if (n < 0) n = 0;
        for (int x = 0; x < n; x++) ww += w[x] = triangle((x + xmin - centre + 0.5) * ss);
        int *k = *kk + (size_t)o * ksize;
        for (int x = 0; x < ksize; x++) {
            const double v = x < n && ww != 0.0 ? w[x] / ww : 0.0;
            k[x] = (int)(v < 0 ? -0.5 + v * (1 << PRECISION_BITS) : 0.5 + v * (1 << PRECISION_BITS));
        }
        (*bounds)[2 * o] = xmin;
        (*bounds)[2 * o + 1] = n;
    }
    free(w);
}

static uint8_t clip8(int v)
{
    v >>= PRECISION_BITS;
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* Rows [y0, y1) of src, each to ax.out_count pixels of tmp (HWC). */
static void horizontal(const Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, int ay_origin,
                       int y0, int y1)
{
    const int ksize = ksize_of(ax), ow = ax->out_count;
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = src + (size_t)(y - ay_origin) * stride;
        uint8_t *dst = r->tmp + (size_t)(y - y0) * ow * 3;
        for (int o = 0; o < ow; o++) {
            const int xmin = r->bounds_x[2 * o], n = r->bounds_x[2 * o + 1];
            const int *k = r->kk_x + (size_t)o * ksize;
            int s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
            for (int x = 0; x < n; x++) {
                const uint8_t *p = row + 3 * (size_t)(xmin - ax->origin + x);
                s0 += p[0] * k[x], s1 += p[1] * k[x], s2 += p[2] * k[x];
            }
            dst[3 * o] = clip8(s0), dst[3 * o + 1] = clip8(s1), dst[3 * o + 2] = clip8(s2);
        }
    }
}

/* tmp (rows from y0) to the output, mirrored when flip. */
static void vertical(const Resampler *r, const ResampleAxis *ax, const ResampleAxis *ay, int y0, bool flip, bool chw,
                     uint8_t *out)
{
    const int ksize = ksize_of(ay), ow = ax->out_count, oh = ay->out_count;
    const size_t plane = (size_t)ow * oh, row_bytes = (size_t)ow * 3;
    for (int o = 0; o < oh; o++) {
        const int ymin = r->bounds_y[2 * o] - y0, n = r->bounds_y[2 * o + 1];
        const int *k = r->kk_y + (size_t)o * ksize;
        for (int x = 0; x < ow; x++) {
            const uint8_t *col = r->tmp + (size_t)ymin * row_bytes + 3 * (size_t)x;
            int s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
            for (int y = 0; y < n; y++) {
                const uint8_t *p = col + (size_t)y * row_bytes;
                s0 += p[0] * k[y], s1 += p[1] * k[y], s2 += p[2] * k[y];
            }
            const int xo = flip ? ow - 1 - x : x;
            const uint8_t v[3] = {clip8(s0), clip8(s1), clip8(s2)};
            for (int c = 0; c < 3; c++) {
                if (chw)
                    out[c * plane + (size_t)o * ow + xo] = v[c];
                else
                    out[((size_t)o * ow + xo) * 3 + c] = v[c];
            }
        }
    }
}

void resample_rgb(Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, const ResampleAxis *ay,
                  bool flip, bool chw, uint8_t *out)
{
    coefficients(ax, &r->bounds_x, &r->cap_bx, &r->kk_x, &r->cap_kx);
    coefficients(ay, &r->bounds_y, &r->cap_by, &r->kk_y, &r->cap_ky);
    int y0, y1;
    resample_span(ay, &y0, &y1);
    grow(&r->tmp, &r->tmp_cap, (size_t)(y1 - y0 > 0 ? y1 - y0 : 1) * (size_t)ax->out_count * 3);
    horizontal(r, src, stride, ax, ay->origin, y0, y1);
    vertical(r, ax, ay, y0, flip, chw, out);
}
