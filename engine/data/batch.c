/* Batch assembly runs every training step: it gathers the chosen images and crops them to
 * the network's input (the CIFAR papers' random crop of a zero-padded image, or Caffe's
 * random 227 crop of a 256 image) and flips them, as 8-bit pixels: the loader's thread does
 * this on the host, and the backend normalizes per channel on its device
 * (bk_normalize_pixels). batch_crop allocates nothing.
 *
 * Padding follows PyTorch's RandomCrop(padding=p) followed by Normalize: padded pixels
 * are raw zeros, so after normalization they are (0/255 - mean) / std, the same value
 * a black pixel gets. Random draws per image, in this fixed order: crop row offset,
 * crop column offset (each rng_below(h + 2*pad - out_h + 1), only when cropping at
 * random), then the flip (rng_below(2), only when flipping); the crop is taken first
 * and then mirrored. Without random cropping the crop is the centre one. */
#include "data.h"

#include <stdlib.h>
#include <string.h>

#include "pixel.h"

typedef struct {
    int out_h, out_w, pad;
    bool random_crop, may_flip;
} View;

static View view_of(const ImageSet *set, const Augment *aug)
{
    View v = {set->h, set->w, 0, false, false};
    if (!aug) return v;
    if (aug->out_h > 0) v.out_h = aug->out_h;
    if (aug->out_w > 0) v.out_w = aug->out_w;
    v.pad = aug->random_crop && aug->crop_pad > 0 ? aug->crop_pad : 0;
    /* random only where there is a choice (no draws for a crop of the whole image) */
    v.random_crop = aug->random_crop && (set->h + 2 * v.pad > v.out_h || set->w + 2 * v.pad > v.out_w);
    v.may_flip = aug->flip;
    return v;
}

/* Bytes of one cropped image. */
static size_t image_bytes(const ImageSet *set, const Augment *aug)
{
    const View v = view_of(set, aug);
    return (size_t)set->c * (size_t)v.out_h * (size_t)v.out_w;
}

/* One image's random draws: where its crop starts in the image (negative: in the padding)
 * and whether it is mirrored. batch_crop draws a chunk of images, then crops them. */
typedef struct {
    int oy, ox;
    bool flip;
} CropDraw;

/* The draws of n images, in the order the header comment gives. */
static void batch_crop_draw(const ImageSet *set, int n, const Augment *aug, Rng *rng, CropDraw *draws)
{
    const View v = view_of(set, aug);
    for (int i = 0; i < n; i++) {
        /* Output (y, x) shows padded-image pixel (y + dy, x' + dx), x' = x or ow-1-x,
         * i.e. original pixel (y + oy, x' + ox) with o = d - pad. */
        CropDraw d = {(set->h - v.out_h) / 2, (set->w - v.out_w) / 2, false};
        if (v.random_crop) {
            d.oy = (int)rng_below(rng, (uint32_t)(set->h + 2 * v.pad - v.out_h + 1)) - v.pad;
            d.ox = (int)rng_below(rng, (uint32_t)(set->w + 2 * v.pad - v.out_w + 1)) - v.pad;
        }
        d.flip = v.may_flip && rng_below(rng, 2) == 1;
        draws[i] = d;
    }
}

/* One output row of ow pixels from a source row of w (NULL: above or below the image): the
 * pixels x of the output that show source pixel sx = x' + ox, x' = x or ow-1-x, and zeros
 * where sx falls outside. */
static void crop_row(const uint8_t *row, int w, int ow, int ox, bool flip, uint8_t *out)
{
    if (!row) {
        memset(out, 0, (size_t)ow);
        return;
    }
    /* the outputs in [lo, hi) have sx in [0, w) */
    int lo = flip ? ow - w + ox : -ox, hi = flip ? ow + ox : w - ox;
    lo = lo < 0 ? 0 : lo > ow ? ow : lo;
    hi = hi < lo ? lo : hi > ow ? ow : hi;
    memset(out, 0, (size_t)lo);
    if (flip)
        for (int x = lo; x < hi; x++) out[x] = row[ow - 1 - x + ox];
    else
        memcpy(out + lo, row + lo + ox, (size_t)(hi - lo));
    memset(out + hi, 0, (size_t)(ow - hi));
}

/* n images of idx cropped with their draws, row by row in runs, on `threads` threads. */
static void batch_crop_drawn(const ImageSet *set, const uint32_t *idx, int n, const Augment *aug,
                             const CropDraw *draws, uint8_t *out, int32_t *labels, int threads)
{
    const int c = set->c, h = set->h, w = set->w;
    const View v = view_of(set, aug);
    const int oh = v.out_h, ow = v.out_w;
    const size_t hw = (size_t)h * (size_t)w, chw = (size_t)c * hw;
    const size_t out_hw = (size_t)oh * (size_t)ow, out_chw = (size_t)c * out_hw;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int i = 0; i < n; i++) {
        const uint8_t *img = set->pixels + (size_t)idx[i] * chw;
        uint8_t *dst = out + (size_t)i * out_chw;
        const CropDraw d = draws[i];
        if (labels) labels[i] = set->labels[idx[i]];
        if (oh == h && ow == w && d.oy == 0 && d.ox == 0 && !d.flip) {
            memcpy(dst, img, chw);
            continue;
        }
        for (int ch = 0; ch < c; ch++)
            for (int y = 0; y < oh; y++) {
                const int sy = y + d.oy;
                const uint8_t *row = sy >= 0 && sy < h ? img + (size_t)ch * hw + (size_t)sy * w : NULL;
                crop_row(row, w, ow, d.ox, d.flip, dst + (size_t)ch * out_hw + (size_t)y * ow);
            }
    }
}

void batch_crop(const ImageSet *set, const uint32_t *idx, int n, const Augment *aug, Rng *rng, uint64_t epoch,
                uint8_t *out, int32_t *labels, int threads)
{
    if (set->store) {
        batch_store_crop(set, idx, n, aug, epoch, out, labels, threads);
        return;
    }
    enum { CHUNK = 256 };
    CropDraw draws[CHUNK]; /* a chunk of images at a time: nothing allocated */
    for (int from = 0; from < n; from += CHUNK) {
        const int count = n - from < CHUNK ? n - from : CHUNK;
        batch_crop_draw(set, count, aug, rng, draws);
        batch_crop_drawn(set, idx + from, count, aug, draws, out + (size_t)from * image_bytes(set, aug),
                         labels ? labels + from : NULL, threads);
    }
}

void batch_normalize(const uint8_t *pixels, int n, int c, size_t hw, const float *mean, const float *std,
                     real *out)
{
    for (size_t p = 0; p < (size_t)n * (size_t)c; p++) {
        const real m = (real)mean[p % (size_t)c], s = (real)std[p % (size_t)c];
        for (size_t i = p * hw; i < (p + 1) * hw; i++) out[i] = pixel_normalize(pixels[i], m, s);
    }
}

void batch_assemble(const ImageSet *set, const uint32_t *idx, int n, const float *mean, const float *std,
                    const Augment *aug, Rng *rng, uint64_t epoch, real *out, int32_t *labels)
{
    const View v = view_of(set, aug);
    const size_t hw = (size_t)v.out_h * (size_t)v.out_w, bytes = (size_t)n * (size_t)set->c * hw;
    uint8_t *pixels = xmalloc(bytes ? bytes : 1, "batch pixels");
    batch_crop(set, idx, n, aug, rng, epoch, pixels, labels, 1);
    batch_normalize(pixels, n, set->c, hw, mean, std, out);
    free(pixels);
}

void augment_skip(const ImageSet *set, const Augment *aug, Rng *rng, int n)
{
    /* Exactly the draws batch_assemble makes for n images, in the same order (a store's
     * draws are Philox's, none from rng). */
    if (set->store) return;
    const View v = view_of(set, aug);
    for (int i = 0; i < n; i++) {
        if (v.random_crop) {
            rng_below(rng, (uint32_t)(set->h + 2 * v.pad - v.out_h + 1));
            rng_below(rng, (uint32_t)(set->w + 2 * v.pad - v.out_w + 1));
        }
        if (v.may_flip) rng_below(rng, 2);
    }
}
