/* Pillow's resampling (libImaging/Resample.c) for the bilinear filter, restated: for output
 * pixel xx the centre is in0 + (xx + 0.5) * scale, the filter's support is 1 * max(scale, 1)
 * source pixels, the taps [int(centre - support + 0.5), int(centre + support + 0.5)) clipped to
 * the image, each weighted triangle((x - centre + 0.5) / max(scale, 1)), normalized to sum to
 * 1 and then rounded to 22-bit fixed point; sums start at half a unit and are clipped to 8
 * bits. The horizontal pass runs over only the rows the vertical pass reads, and on the
 * transposed source, so that both passes are sums of contiguous rows (weighted_rows). */
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
    free(r->cols);
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

/* out = the n rows of len bytes at base, base + step, ... weighted by k (Pillow's sums, from
 * half a unit, in acc), clipped to 8 bits. Each pass of both directions is this: one
 * multiply-add a byte over contiguous rows, which the compiler vectorizes; integer sums in any
 * order are Pillow's. */
static void weighted_rows(int32_t *restrict acc, const uint8_t *base, size_t step, const int *k, int n, int len,
                          uint8_t *restrict out)
{
    for (int i = 0; i < len; i++) acc[i] = 1 << (PRECISION_BITS - 1);
    for (int t = 0; t < n; t++) {
        const uint8_t *restrict p = base + (size_t)t * step;
        const int32_t w = k[t];
        for (int i = 0; i < len; i++) acc[i] += p[i] * w;
    }
    for (int i = 0; i < len; i++) {
        const int v = acc[i] >> PRECISION_BITS;
        out[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* Pixels (3 bytes) of rows x cols at src (row stride src_stride) to cols x rows at dst, in
 * bands of 16 rows: 16 source rows' cache lines in use, 48 bytes written in a run. */
static void transpose(const uint8_t *restrict src, size_t src_stride, int rows, int cols, uint8_t *restrict dst)
{
    const size_t dst_stride = 3 * (size_t)rows;
    for (int y0 = 0; y0 < rows; y0 += 16) {
        const int y1 = y0 + 16 < rows ? y0 + 16 : rows;
        for (int x = 0; x < cols; x++) {
            uint8_t *d = dst + (size_t)x * dst_stride;
            for (int y = y0; y < y1; y++) {
                const uint8_t *p = src + (size_t)y * src_stride + 3 * (size_t)x;
                d[3 * y] = p[0], d[3 * y + 1] = p[1], d[3 * y + 2] = p[2];
            }
        }
    }
}

/* The horizontal pass over rows [y0, y1) of src into tmp (HWC, ax.out_count wide): on the
 * transposed source (a column of pixels is then a contiguous row), and back. */
static void horizontal(Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, int ay_origin, int y0,
                       int y1)
{
    const int ksize = ksize_of(ax), ow = ax->out_count, h = y1 - y0, len = 3 * h;
    int xlo, xhi;
    resample_span(ax, &xlo, &xhi);
    const int w = xhi - xlo;
    grow(&r->cols, &r->cols_cap, (size_t)(w > 0 ? w : 1) * (size_t)len + (size_t)ow * (size_t)len);
    uint8_t *src_t = r->cols, *out_t = r->cols + (size_t)w * (size_t)len;
    transpose(src + (size_t)(y0 - ay_origin) * stride + 3 * (ptrdiff_t)(xlo - ax->origin), stride, h, w, src_t);
    for (int o = 0; o < ow; o++)
        weighted_rows(r->acc, src_t + (size_t)(r->bounds_x[2 * o] - xlo) * (size_t)len, (size_t)len,
                      r->kk_x + (size_t)o * ksize, r->bounds_x[2 * o + 1], len, out_t + (size_t)o * (size_t)len);
    transpose(out_t, (size_t)len, ow, h, r->tmp);
}

/* One output row (HWC pixels), mirrored when flip, as CHW planes or HWC. */
static void put_row(const uint8_t *restrict acc, int ow, size_t plane, bool flip, bool chw, uint8_t *restrict row_out)
{
    if (!chw) {
        for (int x = 0; x < ow; x++)
            for (int c = 0; c < 3; c++) row_out[(size_t)(flip ? ow - 1 - x : x) * 3 + c] = acc[3 * x + c];
        return;
    }
    for (int c = 0; c < 3; c++) {
        uint8_t *restrict plane_row = row_out + (size_t)c * plane;
        if (flip)
            for (int x = 0; x < ow; x++) plane_row[ow - 1 - x] = acc[3 * x + c];
        else
            for (int x = 0; x < ow; x++) plane_row[x] = acc[3 * x + c];
    }
}

/* tmp (rows from y0) to the output, a whole output row at a time, mirrored when flip. */
static void vertical(Resampler *r, const ResampleAxis *ax, const ResampleAxis *ay, int y0, bool flip, bool chw,
                     uint8_t *out)
{
    const int ksize = ksize_of(ay), ow = ax->out_count, oh = ay->out_count, len = ow * 3;
    const size_t plane = (size_t)ow * oh;
    uint8_t *row = r->cols; /* free once the horizontal pass is done; at least ow pixels */
    for (int o = 0; o < oh; o++) {
        weighted_rows(r->acc, r->tmp + (size_t)(r->bounds_y[2 * o] - y0) * (size_t)len, (size_t)len,
                      r->kk_y + (size_t)o * ksize, r->bounds_y[2 * o + 1], len, row);
        put_row(row, ow, plane, flip, chw, out + (chw ? (size_t)o * ow : (size_t)o * len));
    }
}

void resample_rgb(Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, const ResampleAxis *ay,
                  bool flip, bool chw, uint8_t *out)
{
    coefficients(ax, &r->bounds_x, &r->cap_bx, &r->kk_x, &r->cap_kx);
    coefficients(ay, &r->bounds_y, &r->cap_by, &r->kk_y, &r->cap_ky);
    int y0, y1;
    resample_span(ay, &y0, &y1);
    const size_t h = (size_t)(y1 - y0 > 0 ? y1 - y0 : 1), ow = (size_t)ax->out_count;
    const size_t len = 3 * (h > ow ? h : ow);
    grow(&r->tmp, &r->tmp_cap, h * ow * 3);
    grow(&r->cols, &r->cols_cap, ow * 3); /* the vertical pass's row (horizontal grows it more) */
    grow(&r->acc, &r->acc_cap, sizeof *r->acc * len);
    horizontal(r, src, stride, ax, ay->origin, y0, y1);
    vertical(r, ax, ay, y0, flip, chw, out);
}
