/* Datasets held in memory as raw 8-bit pixels (CHW order per image) and labels;
 * batches are assembled from them with augmentation and per-channel normalization.
 * Sources: Fashion-MNIST IDX files (gzip, read with zlib), an image folder of JPEG
 * files (libjpeg-turbo, decoded once into a cache file), and synthetic data. */
#ifndef BB_DATA_H
#define BB_DATA_H
#include <stdbool.h>
#include <stdint.h>

#include "../real.h"
#include "../rng.h"
#include "../util.h"

typedef struct {
    int count, c, h, w;
    uint8_t *pixels; /* count * c*h*w, CHW per image */
    uint8_t *labels; /* count */
} ImageSet;

typedef struct {
    char name[64];
    int classes;
    char class_names[1000][32]; /* from the folder names where there are any */
    ImageSet train, test;
    float mean[3], std[3];      /* per-channel, on the 0..1 pixel scale */
} Dataset;

/* Options for loading. `root` overrides the default location of the named dataset:
 *  fashion-mnist: /usr/share/datasets/fashion-mnist (the Debian package)
 *  cifar10:       ../shared/data/cifar10-jpeg.tar.gz unpacked beside it, or a folder
 *  imagefolder:   root/train/<class>/*.jpg and root/test/<class>/*.jpg
 *  synthetic:     random images of shape synth_c x synth_h x synth_w, synth_classes classes
 */
typedef struct {
    const char *name; /* "fashion-mnist", "cifar10", "imagefolder", "synthetic" */
    const char *root; /* NULL: the default for the name */
    int synth_c, synth_h, synth_w, synth_classes, synth_train, synth_test;
    uint64_t seed;
    bool quiet;
} DataOptions;

/* Returns 0 on success; on failure fills err with a message naming the file and
 * what is wrong (missing, wrong magic, truncated, bad JPEG) and returns -1. */
int dataset_load(const DataOptions *opt, Dataset *ds, Error *err);
void dataset_free(Dataset *ds);

/* Readers behind dataset_load, usable on their own (tests use small fixtures). */
int idx_read_images(const char *path, ImageSet *set, Error *err); /* gzip or raw IDX3 */
int idx_read_labels(const char *path, ImageSet *set, Error *err); /* gzip or raw IDX1 */
/* Reads dir/<class>/*.jpg|*.jpeg|*.JPEG with classes sorted by name; all images must
 * have the same size. If cache_path is non-NULL, a valid cache there is used instead
 * of decoding, and a fresh decode writes it (atomically: temp file + rename). */
int imagefolder_read(const char *dir, const char *cache_path, ImageSet *set,
                     char (*class_names)[32], int max_classes, int *classes, Error *err);
void imageset_free(ImageSet *set);

typedef struct {
    bool random_crop; /* pad by crop_pad with zeros, then crop back to h x w at random */
    int crop_pad;
    bool flip;        /* horizontal flip with probability 1/2 */
} Augment;

/* Writes n images (indices idx) as normalized real NCHW into out and their labels.
 * Augmentation draws from rng (deterministic for a seed); pass NULL aug for none. */
void batch_assemble(const ImageSet *set, const uint32_t *idx, int n, const float *mean,
                    const float *std, const Augment *aug, Rng *rng, real *out, int32_t *labels);

#endif
