/* A set of images held as raw 8-bit pixels (CHW order per image) with their labels, and
 * the operations on sets and pixels that every reader shares: freeing, subsetting, the
 * per-channel statistics, resampling. The readers (idx.c, imagefolder.c, synthetic.c)
 * build on this file and dataset.c on them: the dependencies run one way,
 * dataset -> readers -> imageset. */
#ifndef BB_IMAGESET_H
#define BB_IMAGESET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int count, c, h, w;
    uint8_t *pixels;   /* count * c*h*w, CHW per image */
    uint16_t *labels;  /* count */
    void *map;         /* non-NULL: pixels lie in this read-only mapping of a cache file */
    size_t map_len;
    bool has_stats;    /* mean/std below are the set's (a cache stores them) */
    float mean[3], std[3];
    /* A packed JPEG store's images instead of pixels (jpeg_store.h): pixels is NULL, h x w the
     * nominal size (max_side square), map/map_len the store's mapping; image i is record
     * records[i] (records NULL: record i). Freed with the set. */
    struct JpegStore *store;
    uint32_t *records;
} ImageSet;

void imageset_free(ImageSet *set);
/* Keeps `keep` images spread evenly over the set (image k*count/keep for k < keep).
 * Not the first `keep`: image folders are sorted by class, so the first images of
 * CIFAR-10 are all airplanes. A mapped set is copied into memory. No-op when keep <= 0
 * or keep >= count. */
void imageset_keep_spread(ImageSet *set, int keep);

/* Per-channel mean and std of set's pixels on the 0..1 scale (what dataset_load puts
 * in Dataset.mean/std from the training set); channels beyond set->c get 0 and 1.
 * imageset_stats_from_sums does the arithmetic from exact integer sums over n pixels
 * per channel (the cache stores those sums, so a mapped set is not read twice). */
void imageset_stats(const ImageSet *set, float mean[3], float std[3]);
/* Adds the sum and the sum of squares of the n pixel values p to *sum and *sumsq. */
void pixel_sums_add(const uint8_t *p, size_t n, uint64_t *sum, uint64_t *sumsq);
void imageset_stats_from_sums(int c, const uint64_t sum[3], const uint64_t sumsq[3], double n, float mean[3],
                              float std[3]);

/* The shorter side of a w x h RGB image (HWC) scaled to `size` and the centre
 * size x size written to chw (CHW), each pixel the mean of the area it covers
 * (resize.c). */
void image_resize_square(const uint8_t *hwc, int h, int w, int size, uint8_t *chw);

#endif
