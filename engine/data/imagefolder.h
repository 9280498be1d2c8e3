/* The image-folder reader (imagefolder.c): dir/<class>/<name>.jpg decoded once into a
 * memory-mapped cache. It builds on imageset.h only; dataset.c calls it, never the
 * other way. */
#ifndef BB_IMAGEFOLDER_H
#define BB_IMAGEFOLDER_H
#include <stdbool.h>

#include "../base/util.h"
#include "imageset.h"

typedef struct {
    const char *cache_path; /* NULL: decode into memory, no cache */
    int image_size;         /* > 0: shorter side scaled to this, centre cropped square;
                               0: all images must already have one size */
    int max_classes;        /* at most 65535 (labels are uint16_t) */
} FolderOptions;
/* Reads dir/<class>/<name>.jpg (or .jpeg, any case) with classes sorted by name. If
 * opt->cache_path is set, a valid cache there (same image_size) is mapped instead of
 * decoding, and a fresh decode is written there first (atomically: temp file +
 * rename, space reserved up front so a full disk is an error, not a crash) and then
 * mapped. Decoding runs on all OpenMP threads. class_names and classes may be NULL. */
int imagefolder_read(const char *dir, const FolderOptions *opt, ImageSet *set, char (*class_names)[32],
                     int *classes, Error *err);
/* True when opt->cache_path holds a cache imagefolder_read would use (header and size
 * check only), so a caller can announce a slow first decode. */
bool imagefolder_cache_valid(const FolderOptions *opt);

#endif
