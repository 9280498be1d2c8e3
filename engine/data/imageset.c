/* The operations on image sets that every reader shares (imageset.h): freeing, keeping an
 * evenly spread subset, and the per-channel statistics from exact integer sums. */
#include "imageset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../base/util.h"

void imageset_free(ImageSet *set)
{
    if (!set) return;
    if (set->map)
        munmap(set->map, set->map_len);
    else
        free(set->pixels);
    free(set->labels);
    free(set->store); /* owns nothing but the mapping, unmapped above */
    free(set->records);
    *set = (ImageSet){0};
}

/* A store's subset: the records kept, no pixels to move. */
static void keep_spread_records(ImageSet *set, int keep)
{
    uint32_t *rec = xmalloc(sizeof *rec * (size_t)keep, "record subset");
    for (int k = 0; k < keep; k++) {
        size_t src = (size_t)k * (size_t)set->count / (size_t)keep;
        rec[k] = set->records ? set->records[src] : (uint32_t)src;
        set->labels[k] = set->labels[src];
    }
    free(set->records);
    set->records = rec;
    set->count = keep;
}

void imageset_keep_spread(ImageSet *set, int keep)
{
    if (keep <= 0 || keep >= set->count) return;
    if (set->store) { /* the stored statistics stay: the subset is spread over the whole set */
        keep_spread_records(set, keep);
        return;
    }
    size_t item = (size_t)set->c * set->h * set->w;
    /* a mapped set is read-only: the kept images move to memory */
    uint8_t *dst = set->map ? xmalloc((size_t)keep * item, "image subset") : set->pixels;
    for (int k = 0; k < keep; k++) {
        size_t src = (size_t)k * (size_t)set->count / (size_t)keep; /* >= k: safe in place */
        if (src != (size_t)k || dst != set->pixels) memmove(dst + (size_t)k * item, set->pixels + src * item, item);
        set->labels[k] = set->labels[src];
    }
    if (set->map) {
        munmap(set->map, set->map_len);
        set->map = NULL, set->map_len = 0;
    }
    set->pixels = dst;
    set->count = keep;
    set->has_stats = false; /* the stored statistics were the whole set's */
}

void pixel_sums_add(const uint8_t *p, size_t n, uint64_t *sum, uint64_t *sumsq)
{
    uint64_t s = 0, sq = 0;
    for (size_t k = 0; k < n; k++) s += p[k], sq += (uint32_t)p[k] * p[k];
    *sum += s, *sumsq += sq;
}

/* Per-channel mean and standard deviation of the pixels on the 0..1 scale, from exact
 * integer sums (so the result does not depend on summation order). Channels beyond
 * set->c get mean 0, std 1; a constant channel gets std 1 rather than a division by 0. */
void imageset_stats_from_sums(int c, const uint64_t sum[3], const uint64_t sumsq[3], double n, float mean[3],
                              float std[3])
{
    for (int ch = 0; ch < 3; ch++) {
        mean[ch] = 0.0f, std[ch] = 1.0f;
        if (ch >= c || n <= 0) continue;
        double m = (double)sum[ch] / n, var = (double)sumsq[ch] / n - m * m;
        mean[ch] = (float)(m / 255.0);
        double sd = var > 0 ? sqrt(var) / 255.0 : 0.0;
        std[ch] = sd > 1e-6 ? (float)sd : 1.0f;
    }
}

void imageset_stats(const ImageSet *set, float mean[3], float std[3])
{
    if (set->has_stats) {
        memcpy(mean, set->mean, sizeof set->mean);
        memcpy(std, set->std, sizeof set->std);
        return;
    }
    size_t hw = (size_t)set->h * (size_t)set->w, chw = (size_t)set->c * hw;
    uint64_t sum[3] = {0, 0, 0}, sumsq[3] = {0, 0, 0};
    for (int ch = 0; ch < 3 && ch < set->c; ch++)
        for (int i = 0; i < set->count; i++)
            pixel_sums_add(set->pixels + (size_t)i * chw + (size_t)ch * hw, hw, &sum[ch], &sumsq[ch]);
    imageset_stats_from_sums(set->c, sum, sumsq, (double)set->count * (double)hw, mean, std);
}
