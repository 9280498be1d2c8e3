/* Area resampling for the image-folder reader: ImageNet's JPEGs come in every size and
 * are stored at one square size, the shorter side scaled to `size` and the centre
 * cropped (torchvision's Resize(size) + CenterCrop(size)).
 *
 * Each output pixel is the mean of the source area it covers, fractional pixels at the
 * edges weighted by their overlap: the exact box filter, which neither aliases when
 * shrinking (bilinear would, beyond 2x) nor blurs a 2x shrink of 2x2 blocks. The
 * filter is separable: rows first, then columns. */
#include "imageset.h"

#include <math.h>
#include <stdlib.h>

#include "../base/util.h"

/* The taps of one axis: output o averages source [start + o*s, start + (o+1)*s). */
typedef struct {
    int *first, *count; /* per output: first source index and number of taps */
    float *weight;      /* per output: max_taps weights, summing to 1 */
    int max_taps;
} Taps;

static void taps_make(Taps *t, int src_len, int out_len, double s, double start)
{
    t->max_taps = (int)ceil(s) + 2;
    t->first = xmalloc((size_t)out_len * sizeof *t->first, "resize taps");
    t->count = xmalloc((size_t)out_len * sizeof *t->count, "resize taps");
    t->weight = xcalloc((size_t)out_len * (size_t)t->max_taps, sizeof *t->weight, "resize taps");
    for (int o = 0; o < out_len; o++) {
        double a = start + o * s, b = a + s;
        int lo = (int)floor(a), hi = (int)ceil(b); /* source pixels [lo, hi) overlap */
        if (lo < 0) lo = 0;
        if (hi > src_len) hi = src_len;
        if (hi - lo > t->max_taps) hi = lo + t->max_taps; /* rounding only; never in practice */
        t->first[o] = lo;
        t->count[o] = hi - lo;
        double total = 0;
        float *wt = t->weight + (size_t)o * t->max_taps;
        for (int k = 0; k < hi - lo; k++) {
            double p0 = lo + k, p1 = p0 + 1;
            double cover = fmin(p1, b) - fmax(p0, a);
            wt[k] = cover > 0 ? (float)cover : 0.0f;
            total += wt[k];
        }
        for (int k = 0; k < hi - lo; k++) wt[k] = (float)(wt[k] / total);
    }
}

static void taps_free(Taps *t)
{
    free(t->first);
    free(t->count);
    free(t->weight);
}

static uint8_t to_byte(float v)
{
    v = roundf(v);
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

void image_resize_square(const uint8_t *hwc, int h, int w, int size, uint8_t *chw)
{
    const int shorter = h < w ? h : w;
    const double s = (double)shorter / size; /* source pixels per output pixel */
    Taps ty, tx;
    taps_make(&ty, h, size, s, (h - size * s) / 2);
    taps_make(&tx, w, size, s, (w - size * s) / 2);
    float *row = xmalloc((size_t)w * 3 * sizeof *row, "resize row");
    const size_t plane = (size_t)size * size;
    for (int y = 0; y < size; y++) {
        /* the output row's source rows, blended */
        for (int x = 0; x < w * 3; x++) row[x] = 0;
        const float *wy = ty.weight + (size_t)y * ty.max_taps;
        for (int k = 0; k < ty.count[y]; k++) {
            const uint8_t *src = hwc + (size_t)(ty.first[y] + k) * w * 3;
            for (int x = 0; x < w * 3; x++) row[x] += wy[k] * src[x];
        }
        for (int x = 0; x < size; x++) {
            const float *wx = tx.weight + (size_t)x * tx.max_taps;
            const float *src = row + (size_t)tx.first[x] * 3;
            float v[3] = {0, 0, 0};
            for (int k = 0; k < tx.count[x]; k++)
                for (int c = 0; c < 3; c++) v[c] += wx[k] * src[3 * k + c];
            for (int c = 0; c < 3; c++) chw[c * plane + (size_t)y * size + x] = to_byte(v[c]);
        }
    }
    free(row);
    taps_free(&ty);
    taps_free(&tx);
}
