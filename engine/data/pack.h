/* Packing an image folder into JPEG stores (pack.c): `bigbatch data pack`. */
#ifndef BB_PACK_H
#define BB_PACK_H
#include <stdbool.h>

#include "../base/util.h"

/* 256: evaluation at 224 resizes the shorter side to 224 / 0.875 = 256, so the validation set
 * loses nothing, and a random-resized crop of a 256-pixel image is what torchvision's recipe
 * crops from ImageNet's median 500x375 photo scaled by 0.68 (docs/formats.md). */
#define PACK_DEFAULT_MAX_SIDE 256
#define PACK_DEFAULT_QUALITY 90 /* FFCV's default */

typedef struct {
    int max_side; /* the stored shorter side is at most this */
    int quality;  /* of the re-encoded JPEGs */
    int threads;
    bool quiet;   /* no progress line */
} PackOptions;

/* Packs root/train and root/val (or root/test) into out_dir/<split>.bbjpeg each (out_dir is
 * created if missing). A store already there that opens cleanly with the same max_side and
 * quality is kept. Each is written to a temporary name and renamed when complete. Unreadable
 * images (a PNG named .JPEG, a corrupt file) are named on stderr, left out and counted. */
int pack_folder(const char *root, const char *out_dir, const PackOptions *opt, Error *err);

#endif
