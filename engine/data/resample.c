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
    free(r->acc);
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

/* Every output of the axis reads ksize taps: one with fewer starts earlier (at the image's right
 * edge) or keeps its start, its weights moved to match and the others zero, so its sum is
 * unchanged and the horizontal pass runs a loop of fixed length. Not for an axis narrower
 * than ksize. */
static void widen_taps(const ResampleAxis *a, int *bounds, int *kk)
{
    const int ksize = ksize_of(a);
    if (a->in_size < ksize) return;
    for (int o = 0; o < a->out_count; o++) {
        const int xmin = bounds[2 * o], n = bounds[2 * o + 1];
        if (n == ksize) continue;
        const int start = xmin + ksize > a->in_size ? a->in_size - ksize : xmin, shift = xmin - start;
        int *k = kk + (size_t)o * ksize;
        for (int x = ksize - 1; x >= 0; x--) k[x] = x - shift >= 0 && x - shift < n ? k[x - shift] : 0;
        bounds[2 * o] = start;
        bounds[2 * o + 1] = ksize;
    }
}

/* One row of src to ow pixels of dst: ksize taps an output (widen_taps). Inlined with a constant
 * ksize, the taps' loop unrolls. */
static inline void horizontal_row(const uint8_t *row, const int *bounds, const int *kk, int ksize, int ow,
                                  uint8_t *dst)
{
    for (int o = 0; o < ow; o++) {
        const uint8_t *p = row + 3 * (size_t)bounds[2 * o];
        const int *k = kk + (size_t)o * ksize;
        int s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
        for (int x = 0; x < ksize; x++) s0 += p[3 * x] * k[x], s1 += p[3 * x + 1] * k[x], s2 += p[3 * x + 2] * k[x];
        dst[3 * o] = clip8(s0), dst[3 * o + 1] = clip8(s1), dst[3 * o + 2] = clip8(s2);
    }
}

/* Rows [y0, y1) of src, each to ax.out_count pixels of tmp (HWC). */
static void horizontal(const Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, int ay_origin,
                       int y0, int y1)
{
    const int ksize = ksize_of(ax), ow = ax->out_count;
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = src + (size_t)(y - ay_origin) * stride - 3 * (ptrdiff_t)ax->origin;
        uint8_t *dst = r->tmp + (size_t)(y - y0) * ow * 3;
        if (ax->in_size < ksize) { /* taps not widened: each output its own count */
            for (int o = 0; o < ow; o++) {
                const int xmin = r->bounds_x[2 * o], n = r->bounds_x[2 * o + 1];
                const int *k = r->kk_x + (size_t)o * ksize;
                int s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
                for (int x = 0; x < n; x++) {
                    const uint8_t *p = row + 3 * (size_t)(xmin + x);
                    s0 += p[0] * k[x], s1 += p[1] * k[x], s2 += p[2] * k[x];
                }
                dst[3 * o] = clip8(s0), dst[3 * o + 1] = clip8(s1), dst[3 * o + 2] = clip8(s2);
            }
            continue;
        }
        switch (ksize) { /* the filter's common widths: shrinking by under 1, 2 and 3 */
        case 3: horizontal_row(row, r->bounds_x, r->kk_x, 3, ow, dst); break;
        case 5: horizontal_row(row, r->bounds_x, r->kk_x, 5, ow, dst); break;
        case 7: horizontal_row(row, r->bounds_x, r->kk_x, 7, ow, dst); break;
        default: horizontal_row(row, r->bounds_x, r->kk_x, ksize, ow, dst);
        }
    }
}

/* One output row from its sums (clipped in place first, a loop the compiler vectorizes),
 * mirrored when flip, as CHW planes or HWC. */
static void put_row(int32_t *restrict acc, int ow, size_t plane, bool flip, bool chw, uint8_t *restrict row_out)
{
    for (int i = 0; i < 3 * ow; i++) {
        const int v = acc[i] >> PRECISION_BITS;
        acc[i] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
    if (!chw) {
        for (int x = 0; x < ow; x++)
            for (int c = 0; c < 3; c++) row_out[(size_t)(flip ? ow - 1 - x : x) * 3 + c] = (uint8_t)acc[3 * x + c];
        return;
    }
    for (int c = 0; c < 3; c++) {
        uint8_t *restrict plane_row = row_out + (size_t)c * plane;
        if (flip)
            for (int x = 0; x < ow; x++) plane_row[ow - 1 - x] = (uint8_t)acc[3 * x + c];
        else
            for (int x = 0; x < ow; x++) plane_row[x] = (uint8_t)acc[3 * x + c];
    }
}

/* tmp (rows from y0) to the output, mirrored when flip. A whole output row at a time, tap by
 * tap over contiguous rows of tmp: the sums are Pillow's (integers, any order), and the inner
 * loop is one multiply-add a byte that the compiler vectorizes. */
static void vertical(Resampler *r, const ResampleAxis *ax, const ResampleAxis *ay, int y0, bool flip, bool chw,
                     uint8_t *out)
{
    const int ksize = ksize_of(ay), ow = ax->out_count, oh = ay->out_count, len = ow * 3;
    const size_t plane = (size_t)ow * oh;
    grow(&r->acc, &r->acc_cap, sizeof *r->acc * (size_t)len);
    int32_t *restrict acc = r->acc;
    for (int o = 0; o < oh; o++) {
        const int ymin = r->bounds_y[2 * o] - y0, n = r->bounds_y[2 * o + 1];
        const int *k = r->kk_y + (size_t)o * ksize;
        for (int i = 0; i < len; i++) acc[i] = 1 << (PRECISION_BITS - 1);
        for (int y = 0; y < n; y++) {
            const uint8_t *restrict p = r->tmp + (size_t)(ymin + y) * (size_t)len;
            const int32_t w = k[y];
            for (int i = 0; i < len; i++) acc[i] += p[i] * w;
        }
        put_row(acc, ow, plane, flip, chw, out + (chw ? (size_t)o * ow : (size_t)o * len));
    }
}

void resample_rgb(Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, const ResampleAxis *ay,
                  bool flip, bool chw, uint8_t *out)
{
    coefficients(ax, &r->bounds_x, &r->cap_bx, &r->kk_x, &r->cap_kx);
    widen_taps(ax, r->bounds_x, r->kk_x);
    coefficients(ay, &r->bounds_y, &r->cap_by, &r->kk_y, &r->cap_ky);
    int y0, y1;
    resample_span(ay, &y0, &y1);
    grow(&r->tmp, &r->tmp_cap, (size_t)(y1 - y0 > 0 ? y1 - y0 : 1) * (size_t)ax->out_count * 3);
    horizontal(r, src, stride, ax, ay->origin, y0, y1);
    vertical(r, ax, ay, y0, flip, chw, out);
}
