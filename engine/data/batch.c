/* Batch assembly runs every training step: it gathers the chosen images, applies the
 * CIFAR papers' augmentation (random crop of a zero-padded image, horizontal flip),
 * and normalizes per channel into the network's real NCHW input. It allocates nothing.
 *
 * Padding follows PyTorch's RandomCrop(padding=p) followed by Normalize: padded pixels
 * are raw zeros, so after normalization they are (0/255 - mean) / std, the same value
 * a black pixel gets. Random draws per image, in this fixed order: crop row offset,
 * crop column offset (each rng_below(2*pad+1), only when cropping), then the flip
 * (rng_below(2), only when flipping); the crop is taken first and then mirrored. */
#include "data.h"

static inline real normalize(uint8_t p, real m, real s)
{
    return ((real)p / (real)255 - m) / s;
}

void batch_assemble(const ImageSet *set, const uint32_t *idx, int n, const float *mean,
                    const float *std, const Augment *aug, Rng *rng, real *out, int32_t *labels)
{
    const int c = set->c, h = set->h, w = set->w;
    const size_t hw = (size_t)h * (size_t)w, chw = (size_t)c * hw;
    const bool crop = aug && aug->random_crop && aug->crop_pad > 0;
    const int pad = crop ? aug->crop_pad : 0;
    const bool may_flip = aug && aug->flip;
    for (int i = 0; i < n; i++) {
        const uint8_t *img = set->pixels + (size_t)idx[i] * chw;
        real *dst = out + (size_t)i * chw;
        /* Output (y, x) shows padded-image pixel (y + dy, x' + dx), x' = x or w-1-x,
         * i.e. original pixel (y + oy, x' + ox) with o = d - pad in [-pad, pad]. */
        int oy = 0, ox = 0;
        if (crop) {
            oy = (int)rng_below(rng, (uint32_t)(2 * pad + 1)) - pad;
            ox = (int)rng_below(rng, (uint32_t)(2 * pad + 1)) - pad;
        }
        const bool flip = may_flip && rng_below(rng, 2) == 1;
        for (int ch = 0; ch < c; ch++) {
            const real m = (real)mean[ch], s = (real)std[ch];
            const real padv = normalize(0, m, s);
            const uint8_t *src = img + (size_t)ch * hw;
            real *d = dst + (size_t)ch * hw;
            if (!crop && !flip) {
                for (size_t p = 0; p < hw; p++) d[p] = normalize(src[p], m, s);
                continue;
            }
            for (int y = 0; y < h; y++) {
                real *row_out = d + (size_t)y * w;
                const int sy = y + oy;
                if (sy < 0 || sy >= h) {
                    for (int x = 0; x < w; x++) row_out[x] = padv;
                    continue;
                }
                const uint8_t *row = src + (size_t)sy * w;
                for (int x = 0; x < w; x++) {
                    const int sx = (flip ? w - 1 - x : x) + ox;
                    row_out[x] = sx >= 0 && sx < w ? normalize(row[sx], m, s) : padv;
                }
            }
        }
        if (labels) labels[i] = set->labels[idx[i]];
    }
}

void augment_skip(const Augment *aug, Rng *rng, int n)
{
    /* Exactly the draws batch_assemble makes for n images, in the same order. */
    const bool crop = aug && aug->random_crop && aug->crop_pad > 0;
    const uint32_t span = crop ? (uint32_t)(2 * aug->crop_pad + 1) : 1;
    for (int i = 0; i < n; i++) {
        if (crop) {
            rng_below(rng, span);
            rng_below(rng, span);
        }
        if (aug && aug->flip) rng_below(rng, 2);
    }
}
