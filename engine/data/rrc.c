/* torchvision's get_params (transforms.RandomResizedCrop), line for line: Python's round
 * (half to even) is nearbyint's default rounding. Attempt a (0..9) uses Philox block
 * (image low, image high, a, epoch low) under key (seed low, seed high ^ epoch high ^ TAG):
 * its words are the area, the log aspect, the row and the column; block 10's first word is the
 * flip; blocks from 16 are rrc_below's. */
#include "rrc.h"

#include <math.h>

#include "../base/philox.h"

#define RRC_TAG 0x52524321u /* "RRC!": apart from the dropout streams' keys */

static Philox4x32 block(uint64_t seed, uint64_t epoch, uint64_t image, uint32_t k)
{
    Philox4x32 ctr = {{(uint32_t)image, (uint32_t)(image >> 32), k, (uint32_t)epoch}};
    return philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32) ^ (uint32_t)(epoch >> 32) ^ RRC_TAG);
}

/* [0, 1) with 32 bits. */
static double unit(uint32_t word) { return word * (1.0 / 4294967296.0); }

/* torch.randint(0, n): [0, n). */
static int below(uint32_t word, int n) { return (int)(((uint64_t)word * (uint64_t)n) >> 32); }

CropBox rrc_draw(int width, int height, uint64_t seed, uint64_t epoch, uint64_t image)
{
    const double area = (double)width * height, lo = log(3.0 / 4.0), hi = log(4.0 / 3.0);
    CropBox b = {0, 0, height, width, block(seed, epoch, image, 10).v[0] >> 31};
    for (uint32_t a = 0; a < 10; a++) {
        const Philox4x32 r = block(seed, epoch, image, a);
        const double target = area * (0.08 + (1.0 - 0.08) * unit(r.v[0]));
        const double ratio = exp(lo + (hi - lo) * unit(r.v[1]));
        const int w = (int)nearbyint(sqrt(target * ratio)), h = (int)nearbyint(sqrt(target / ratio));
        if (w > 0 && w <= width && h > 0 && h <= height) {
            b.top = below(r.v[2], height - h + 1);
            b.left = below(r.v[3], width - w + 1);
            b.h = h, b.w = w;
            return b;
        }
    }
    const double in_ratio = (double)width / height;
    if (in_ratio < 3.0 / 4.0) {
        b.w = width, b.h = (int)nearbyint(width / (3.0 / 4.0));
    } else if (in_ratio > 4.0 / 3.0) {
        b.h = height, b.w = (int)nearbyint(height * (4.0 / 3.0));
    }
    b.top = (height - b.h) / 2, b.left = (width - b.w) / 2;
    return b;
}

int rrc_below(uint64_t seed, uint64_t epoch, uint64_t image, uint32_t k, int n)
{
    return n <= 1 ? 0 : below(block(seed, epoch, image, 16 + k / 4).v[k % 4], n);
}
