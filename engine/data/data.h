/* Datasets held as raw 8-bit pixels (CHW order per image) and labels; batches are
 * assembled from them with augmentation and per-channel normalization. Sources:
 * Fashion-MNIST IDX files (gzip, read with zlib), an image folder of JPEG files
 * (libjpeg-turbo, decoded once into a cache file that is then memory-mapped, so
 * ImageNet need not fit in memory), and synthetic data.
 *
 * Layers, each using only those below it: dataset.c (names -> readers, checks,
 * normalization) -> the readers idx.c, imagefolder.c (imagefolder.h), synthetic.c,
 * unpack.c -> imageset.c and resize.c (imageset.h: ImageSet and its statistics). */
#ifndef BB_DATA_H
#define BB_DATA_H
#include <stdbool.h>
#include <stdint.h>

#include "../real.h"
#include "../base/rng.h"
#include "../base/util.h"
#include "imagefolder.h"
#include "imageset.h"

typedef struct {
    char name[64];
    int classes;
    char class_names[1000][32]; /* from the folder names where there are any */
    ImageSet train, test;
    float mean[3], std[3];      /* per-channel, on the 0..1 pixel scale */
    char root[1024];            /* where the files were read ("" for synthetic data): errors name it */
} Dataset;

/* Options for loading. `root` overrides the default location of the named dataset:
 *  fashion-mnist: /usr/share/datasets/fashion-mnist (the Debian package)
 *  cifar10:       data/cifar-10-batches-bin (the official binary batches), else
 *                 data/cifar10-jpeg (JPEG folders, unpacked from $BIGBATCH_CIFAR10_TAR); a
 *                 root holds either
 *  imagefolder:   root/train/<class>/<name>.jpg and root/test/<class>/<name>.jpg
 *  synthetic:     random images of shape synth_c x synth_h x synth_w, synth_classes classes
 */
typedef struct {
    const char *name; /* a name of dataset_list() */
    const char *root; /* NULL: the default for the name */
    int image_size;   /* imagefolder/cifar10: > 0 stores images resized to this square */
    bool partial_batches; /* cifar10 binary: batch files of fewer than 10,000 records allowed */
    int synth_c, synth_h, synth_w, synth_classes, synth_train, synth_test;
    uint64_t seed;
    bool quiet;
} DataOptions;

/* The data sets dataset_load knows, one table: --data, its help, train_config_check
 * and every error for an unknown name read it. */
typedef struct {
    const char *name;
    bool image_folder; /* JPEG folders: --image-size applies, augmented by default */
    int judged_classes; /* > 0: its class count, when a run can be judged at chance by name alone
                           (collapse.h; 0: the count depends on the folder, or labels are random) */
    int (*load)(const DataOptions *opt, Dataset *ds, Error *err); /* behind dataset_load */
} DatasetInfo;
/* All data sets, in the order help texts list them; *count receives their number. */
const DatasetInfo *dataset_list(int *count);
/* The data set of that name, or NULL (also for a NULL name). */
const DatasetInfo *dataset_find(const char *name);
/* The names, `sep` between them and `last_sep` before the last; returns buf. */
char *dataset_names(char *buf, size_t len, const char *sep, const char *last_sep);
/* 0 for a known name; else -1 with err "unknown dataset 'x' (expected a, b or c)". */
int dataset_check_name(const char *name, Error *err);

/* Returns 0 on success; on failure fills err with a message naming the file and
 * what is wrong (missing, wrong magic, truncated, bad JPEG) and returns -1, leaving
 * ds empty (zeroed; dataset_free on it is harmless). */
int dataset_load(const DataOptions *opt, Dataset *ds, Error *err);
void dataset_free(Dataset *ds);

/* Readers behind dataset_load, usable on their own (tests use small fixtures). */
int idx_read_images(const char *path, ImageSet *set, Error *err); /* gzip or raw IDX3 */
int idx_read_labels(const char *path, ImageSet *set, Error *err); /* gzip or raw IDX1 */
/* Synthetic images (see synthetic.c for the rule): count images of c x h x w with
 * label = the brightness band of channel 0's mean, synthetic_label(image, h, w, classes).
 * Deterministic in (seed, stream); dataset_load uses stream 1 for train, 2 for test. */
int synthetic_make(ImageSet *set, int count, int c, int h, int w, int classes, uint64_t seed,
                   uint64_t stream, Error *err);
int synthetic_label(const uint8_t *image, int h, int w, int classes);

/* Unpacks a .tar.gz holding <top>/train/... (or train/... at its top) so that its
 * dataset folder becomes `root`, via a temporary folder beside root and a rename. */
int unpack_tarball(const char *tarball, const char *root, bool quiet, Error *err);

/* How a stored image becomes a network input of out_h x out_w (at most the stored
 * size plus twice the padding; 0 means the stored size). */
typedef struct {
    int out_h, out_w;
    bool random_crop; /* pad by crop_pad with zeros, then crop out_h x out_w at random;
                         otherwise the centre crop */
    int crop_pad;
    bool flip;        /* horizontal flip with probability 1/2 */
    /* Sets of a packed store (batch_store.c) are decoded and resized instead: rrc, torchvision's
     * RandomResizedCrop; otherwise the shorter side resized to out/0.875 and a crop of out at
     * random (random_crop) or in the centre. Their draws are Philox's at (seed, epoch, image),
     * none from the Rng. */
    bool rrc;
    uint64_t seed;
} Augment;

/* The augmentation training applies to `set` for a network input of c x h x w, flipped and
 * cropped at random: a packed store decoded and resized (rrc: torchvision's RandomResizedCrop);
 * larger stored images cropped within; images of the input's size padded first (4 pixels for
 * inputs of 32 to 63, an eighth of the side otherwise). model and source name the two in errors.
 * 0, or -1 with err: the images' channels or size do not fit the input, or rrc without a store. */
int augment_for_training(const ImageSet *set, const char *model, const char *source, int c, int h, int w,
                         bool rrc, uint64_t seed, Augment *aug, Error *err);

/* Writes n images (indices idx) as 8-bit NCHW crops of the network's input size into out
 * (padding as raw zeros) and their labels (labels may be NULL). Augmentation draws from rng
 * (deterministic for a seed); NULL aug: the whole image. The crops are split over `threads`
 * (the draws stay in order, so the result does not depend on it). Allocates nothing: the
 * batch loader's thread runs it. */
void batch_crop(const ImageSet *set, const uint32_t *idx, int n, const Augment *aug, Rng *rng, uint64_t epoch,
                uint8_t *out, int32_t *labels, int threads);
/* batch_crop for a packed store's set: decodes each image (only the rows and columns its crop
 * reads, DCT-scaled when the crop shrinks 2x or more) and resizes it (resample.h). A record that
 * fails its checksum or does not decode ends the process with a message naming the store and
 * the record (the loader's thread has no one to return an error to). */
void batch_store_crop(const ImageSet *set, const uint32_t *idx, int n, const Augment *aug, uint64_t epoch,
                      uint8_t *out, int32_t *labels, int threads);
/* One store image's crop into out (CHW, out_h x out_w): 0, or -1 with err naming the record. */
int store_crop_one(const ImageSet *set, uint32_t i, const Augment *aug, uint64_t epoch, uint8_t *out, Error *err);
/* The host's normalization of n cropped images of c planes of hw pixels (pixel_normalize,
 * as bk_normalize_pixels does on a device). */
void batch_normalize(const uint8_t *pixels, int n, int c, size_t hw, const float *mean, const float *std,
                     real *out);
/* batch_crop then batch_normalize: the batch as the network sees it, computed on the host
 * (tests, tools). */
void batch_assemble(const ImageSet *set, const uint32_t *idx, int n, const float *mean,
                    const float *std, const Augment *aug, Rng *rng, uint64_t epoch, real *out, int32_t *labels);
/* Advances rng past the augmentation draws of n images of set (a rank's place in the
 * batch). */
void augment_skip(const ImageSet *set, const Augment *aug, Rng *rng, int n);

#endif
