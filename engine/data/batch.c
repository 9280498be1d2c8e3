/* Batch assembly runs every training step: it gathers the chosen images, crops them to
 * the network's input (the CIFAR papers' random crop of a zero-padded image, or
 * Caffe's random 227 crop of a 256 image), flips, and normalizes per channel into the
 * network's real NCHW input. It allocates nothing.
 *
 * Padding follows PyTorch's RandomCrop(padding=p) followed by Normalize: padded pixels
 * are raw zeros, so after normalization they are (0/255 - mean) / std, the same value
 * a black pixel gets. Random draws per image, in this fixed order: crop row offset,
 * crop column offset (each rng_below(h + 2*pad - out_h + 1), only when cropping at
 * random), then the flip (rng_below(2), only when flipping); the crop is taken first
 * and then mirrored. Without random cropping the crop is the centre one. */
#include "data.h"

static inline real normalize(uint8_t p, real m, real s)
{
    return ((real)p / (real)255 - m) / s;
}

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

void batch_assemble(const ImageSet *set, const uint32_t *idx, int n, const float *mean,
                    const float *std, const Augment *aug, Rng *rng, real *out, int32_t *labels)
{
    const int c = set->c, h = set->h, w = set->w;
    const View v = view_of(set, aug);
    const int oh = v.out_h, ow = v.out_w, pad = v.pad;
    const size_t hw = (size_t)h * (size_t)w, chw = (size_t)c * hw;
    const size_t out_hw = (size_t)oh * (size_t)ow, out_chw = (size_t)c * out_hw;
    const bool whole = oh == h && ow == w && !v.random_crop;
    for (int i = 0; i < n; i++) {
        const uint8_t *img = set->pixels + (size_t)idx[i] * chw;
        real *dst = out + (size_t)i * out_chw;
        /* Output (y, x) shows padded-image pixel (y + dy, x' + dx), x' = x or ow-1-x,
         * i.e. original pixel (y + oy, x' + ox) with o = d - pad. */
        int oy = (h - oh) / 2, ox = (w - ow) / 2;
        if (v.random_crop) {
            oy = (int)rng_below(rng, (uint32_t)(h + 2 * pad - oh + 1)) - pad;
            ox = (int)rng_below(rng, (uint32_t)(w + 2 * pad - ow + 1)) - pad;
        }
        const bool flip = v.may_flip && rng_below(rng, 2) == 1;
        for (int ch = 0; ch < c; ch++) {
            const real m = (real)mean[ch], s = (real)std[ch];
            const real padv = normalize(0, m, s);
            const uint8_t *src = img + (size_t)ch * hw;
            real *d = dst + (size_t)ch * out_hw;
            if (whole && !flip) {
                for (size_t p = 0; p < hw; p++) d[p] = normalize(src[p], m, s);
                continue;
            }
            for (int y = 0; y < oh; y++) {
                real *row_out = d + (size_t)y * ow;
                const int sy = y + oy;
                if (sy < 0 || sy >= h) {
                    for (int x = 0; x < ow; x++) row_out[x] = padv;
                    continue;
                }
                const uint8_t *row = src + (size_t)sy * w;
                for (int x = 0; x < ow; x++) {
                    const int sx = (flip ? ow - 1 - x : x) + ox;
                    row_out[x] = sx >= 0 && sx < w ? normalize(row[sx], m, s) : padv;
                }
            }
        }
        if (labels) labels[i] = set->labels[idx[i]];
    }
}

void augment_skip(const ImageSet *set, const Augment *aug, Rng *rng, int n)
{
    /* Exactly the draws batch_assemble makes for n images, in the same order. */
    const View v = view_of(set, aug);
    for (int i = 0; i < n; i++) {
        if (v.random_crop) {
            rng_below(rng, (uint32_t)(set->h + 2 * v.pad - v.out_h + 1));
            rng_below(rng, (uint32_t)(set->w + 2 * v.pad - v.out_w + 1));
        }
        if (v.may_flip) rng_below(rng, 2);
    }
}
