/* Synthetic images for tests and benchmarks that need no data files. The label must
 * be learnable (a loss that cannot fall hides training bugs), so it is a fixed
 * function of the pixels:
 *
 *   label = floor(mean0 * classes / 256), computed exactly as
 *           sum of channel 0's pixels * classes / (h * w * 256)   (integer division),
 *
 * i.e. the band of `classes` equal brightness bands that channel 0's mean falls in.
 * To cover every band evenly, each image first draws a band k uniformly and then
 * draws channel 0's pixels uniformly from band k's pixel values
 * [ceil(k*256/classes), ceil((k+1)*256/classes)), so its mean lies in band k; the
 * other channels are uniform noise in 0..255. Draw order per image: band, channel 0
 * pixels, then the other channels, so the data is a pure function of (seed, stream). */
#include "data.h"

#include <stdlib.h>

int synthetic_label(const uint8_t *image, int h, int w, int classes)
{
    uint64_t sum = 0, hw = (uint64_t)h * (uint64_t)w;
    for (uint64_t p = 0; p < hw; p++) sum += image[p];
    return (int)(sum * (uint64_t)classes / (hw * 256));
}

int synthetic_make(ImageSet *set, int count, int c, int h, int w, int classes, uint64_t seed,
                   uint64_t stream, Error *err)
{
    if (count < 1 || c < 1 || c > 3 || h < 1 || w < 1 || h > 4096 || w > 4096 || classes < 2 ||
        classes > 256 || (uint64_t)count * (uint64_t)(c * h * w) > ((uint64_t)1 << 36)) {
        error_set(err, "bad shape %d images of %dx%dx%d with %d classes (need 1-3 channels, "
                       "sides 1-4096, 2-256 classes)",
                  count, c, h, w, classes);
        return -1;
    }
    size_t hw = (size_t)h * (size_t)w, chw = (size_t)c * hw;
    uint8_t *pixels = xmalloc((size_t)count * chw, "synthetic images");
    uint16_t *labels = xmalloc((size_t)count * sizeof *labels, "synthetic labels");
    Rng rng;
    rng_seed(&rng, seed, stream);
    for (int i = 0; i < count; i++) {
        uint8_t *img = pixels + (size_t)i * chw;
        uint32_t k = rng_below(&rng, (uint32_t)classes);
        uint32_t lo = (k * 256 + (uint32_t)classes - 1) / (uint32_t)classes;
        uint32_t hi = ((k + 1) * 256 + (uint32_t)classes - 1) / (uint32_t)classes;
        for (size_t p = 0; p < hw; p++) img[p] = (uint8_t)(lo + rng_below(&rng, hi - lo));
        for (size_t p = hw; p < chw; p++) img[p] = (uint8_t)rng_below(&rng, 256);
        labels[i] = (uint16_t)synthetic_label(img, h, w, classes);
    }
    *set = (ImageSet){.count = count, .c = c, .h = h, .w = w, .pixels = pixels, .labels = labels};
    return 0;
}
