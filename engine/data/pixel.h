/* How a stored 8-bit pixel becomes a network input: the 0..1 scale, then the data set's
 * per-channel mean and standard deviation (torchvision's ToTensor + Normalize). One formula,
 * in this order and in `real`, for the host (engine/data/batch.c) and every backend's
 * bk_normalize_pixels: the CUDA kernel writes the same expression, so inputs are equal bit
 * for bit whichever device normalizes them. */
#ifndef BB_PIXEL_H
#define BB_PIXEL_H
#include <stdint.h>

#include "../real.h"

static inline real pixel_normalize(uint8_t p, real mean, real std)
{
    return ((real)p / (real)255 - mean) / std;
}

#endif
