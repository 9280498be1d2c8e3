/* Image-folder reader: dir/<class>/<image>.jpg, the ImageNet layout (CIFAR-10 ships
 * in it too). JPEG decoding is slow next to a training step's data needs, so the
 * decoded pixels are written once to a cache file that later runs map into memory
 * (ImageNet at 256x256 is about 250 GB: the page cache holds what fits). Images of
 * different sizes are scaled to one square size on the way (resize.c). Decoding is
 * jpeg_io.c's: a corrupt file is an Error naming it, never an exit. */
#include "imagefolder.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "folder_list.h"
#include "jpeg_io.h"

#define MAX_LABELS 65535 /* labels are uint16_t */

/* ---- JPEG decoding ---- */

/* One per decoding thread: the file's bytes and the decoder, reused across files. */
typedef struct {
    JpegDecoder *jpeg;
    uint8_t *file;
    size_t file_cap;
    JpegImage img;
} Decoder;

static Decoder *decoder_new(void)
{
    Decoder *dec = xcalloc(1, sizeof *dec, "JPEG decoder");
    dec->jpeg = jpeg_decoder_new();
    return dec;
}

static void decoder_free(Decoder *dec)
{
    if (!dec) return;
    jpeg_decoder_free(dec->jpeg);
    free(dec->file);
    free(dec);
}

/* Decodes path into dec->img (HWC, RGB); *h, *w receive the size. With min_side > 0
 * libjpeg scales in the DCT by the smallest M/8 that keeps the shorter side at least
 * min_side (several times faster than a full decode of a large photo, and the area
 * filter then shrinks by less than 2x). */
static int decode_jpeg(const char *path, Decoder *dec, int min_side, int *h, int *w, Error *err)
{
    size_t len;
    if (read_whole_file(path, &dec->file, &dec->file_cap, &len, err) != 0) return -1;
    JpegRegion want = {.eighths = 8};
    if (min_side > 0) {
        int fw, fh;
        if (jpeg_size(dec->jpeg, dec->file, len, path, &fw, &fh, err) != 0) return -1;
        const long shorter = fw < fh ? fw : fh;
        int m = 1;
        while (m < 8 && (shorter * m + 7) / 8 < min_side) m++;
        want.eighths = m;
    }
    if (jpeg_decode(dec->jpeg, dec->file, len, path, &want, &dec->img, err) != 0) return -1;
    if (dec->img.w > 65535 || dec->img.h > 65535) {
        error_set(err, "%s: bad JPEG: unsupported image (%dx%d)", path, dec->img.w, dec->img.h);
        return -1;
    }
    *h = dec->img.h;
    *w = dec->img.w;
    return 0;
}

/* Stores the image in dec->img (ih x iw) into dst (CHW, h x w: the image_size square,
 * or the native size, which must then be h x w) and adds its pixels to the per-channel
 * sums. first names the file whose size a native-size mismatch is reported against. */
static int store_image(const Decoder *dec, int ih, int iw, const char *path, int image_size, int h, int w,
                       const char *first, uint8_t *dst, uint64_t sum[3], uint64_t sumsq[3], Error *err)
{
    const size_t hw = (size_t)h * w;
    if (image_size > 0) {
        image_resize_square(dec->img.rgb, ih, iw, image_size, dst);
    } else if (ih != h || iw != w) {
        error_set(err, "%s: image is %dx%d, but %s is %dx%d (all images must have one size; "
                       "or give --image-size)",
                  path, iw, ih, first, w, h);
        return -1;
    } else {
        for (size_t p = 0; p < hw; p++) {
            dst[p] = dec->img.rgb[3 * p];
            dst[hw + p] = dec->img.rgb[3 * p + 1];
            dst[2 * hw + p] = dec->img.rgb[3 * p + 2];
        }
    }
    for (int c = 0; c < 3; c++) pixel_sums_add(dst + c * hw, hw, &sum[c], &sumsq[c]);
    return 0;
}

/* ---- cache file ----
 * Layout (integers little-endian):
 *   "BBIMGv2\0", uint32 count, c, h, w, classes, image_size (0: native size),
 *   uint64 per-channel pixel sum[3] and sum of squares[3],
 *   classes x 32-byte class names (NUL-padded), count uint16 labels,
 *   count*c*h*w pixels (CHW per image), to the end of the file.
 * A cache is trusted when its header is sane, its image_size is the one asked for and
 * the file has exactly the size the header implies; it is not compared with the
 * folder (delete it after changing the images). Anything else is treated as absent
 * and rewritten. */

static const char CACHE_MAGIC[8] = "BBIMGv2";
#define CACHE_HEADER (8 + 6 * 4 + 6 * 8)

typedef struct {
    uint32_t count, c, h, w, classes, image_size;
    uint64_t sum[3], sumsq[3];
} CacheHeader;

static uint64_t le_get(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static void le_put(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static size_t cache_pixel_offset(const CacheHeader *h)
{
    return CACHE_HEADER + 32 * (size_t)h->classes + 2 * (size_t)h->count;
}

static int max_labels(const FolderOptions *opt)
{
    return opt->max_classes < MAX_LABELS ? opt->max_classes : MAX_LABELS;
}

/* Opens the cache and checks header and size; -1 when it is absent or invalid. */
static int cache_open(const FolderOptions *opt, CacheHeader *h, size_t *file_len)
{
    /* a symbolic link in the cache's place is not our cache: rebuilt (renamed over) */
    int fd = open(opt->cache_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    uint8_t buf[CACHE_HEADER];
    struct stat st;
    if (pread(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf || fstat(fd, &st) != 0) goto bad;
    if (memcmp(buf, CACHE_MAGIC, 8) != 0) goto bad;
    uint32_t *fields[6] = {&h->count, &h->c, &h->h, &h->w, &h->classes, &h->image_size};
    for (int k = 0; k < 6; k++) *fields[k] = (uint32_t)le_get(buf + 8 + 4 * k, 4);
    for (int k = 0; k < 3; k++) {
        h->sum[k] = le_get(buf + 32 + 8 * k, 8);
        h->sumsq[k] = le_get(buf + 56 + 8 * k, 8);
    }
    if (h->count == 0 || h->count > INT_MAX || h->c != 3 || h->h == 0 || h->h > 65535 || h->w == 0 ||
        h->w > 65535 || h->classes == 0 || h->classes > (uint32_t)max_labels(opt) ||
        h->image_size != (uint32_t)(opt->image_size > 0 ? opt->image_size : 0))
        goto bad;
    /* count < 2^31, c*h*w < 2^34: the product fits in 64 bits */
    uint64_t size = cache_pixel_offset(h) + (uint64_t)h->count * h->c * h->h * h->w;
    if (st.st_size < 0 || (uint64_t)st.st_size != size || size > SIZE_MAX) goto bad;
    *file_len = (size_t)size;
    return fd;
bad:
    close(fd);
    return -1;
}

bool imagefolder_cache_valid(const FolderOptions *opt)
{
    CacheHeader h;
    size_t len;
    int fd = opt->cache_path ? cache_open(opt, &h, &len) : -1;
    if (fd < 0) return false;
    close(fd);
    return true;
}

/* 1: mapped into set; 0: absent or invalid (nothing allocated). */
static int cache_map(const FolderOptions *opt, ImageSet *set, char (*class_names)[32], int *classes)
{
    CacheHeader h;
    size_t len;
    int fd = cache_open(opt, &h, &len);
    if (fd < 0) return 0;
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd); /* the mapping stays valid */
    if (map == MAP_FAILED) return 0;
    const uint8_t *base = map;
    uint16_t *labels = xmalloc((size_t)h.count * sizeof *labels, "cached labels");
    const uint8_t *lab = base + CACHE_HEADER + 32 * (size_t)h.classes;
    bool ok = true;
    for (uint32_t i = 0; i < h.count; i++) {
        labels[i] = (uint16_t)le_get(lab + 2 * (size_t)i, 2);
        if (labels[i] >= h.classes) ok = false;
    }
    if (!ok) {
        free(labels);
        munmap(map, len);
        return 0;
    }
    for (uint32_t k = 0; class_names && k < h.classes; k++) {
        memcpy(class_names[k], base + CACHE_HEADER + 32 * (size_t)k, 32);
        class_names[k][31] = '\0';
    }
    if (classes) *classes = (int)h.classes;
    *set = (ImageSet){.count = (int)h.count, .c = (int)h.c, .h = (int)h.h, .w = (int)h.w,
                      .pixels = (uint8_t *)base + cache_pixel_offset(&h), .labels = labels,
                      .map = map, .map_len = len, .has_stats = true};
    imageset_stats_from_sums(3, h.sum, h.sumsq, (double)h.count * h.h * h.w, set->mean, set->std);
    return 1;
}

static void cache_fill_header(uint8_t *base, const CacheHeader *h, const Names *classes, const uint16_t *labels)
{
    memcpy(base, CACHE_MAGIC, 8);
    const uint32_t fields[6] = {h->count, h->c, h->h, h->w, h->classes, h->image_size};
    for (int k = 0; k < 6; k++) le_put(base + 8 + 4 * k, fields[k], 4);
    for (int k = 0; k < 3; k++) {
        le_put(base + 32 + 8 * k, h->sum[k], 8);
        le_put(base + 56 + 8 * k, h->sumsq[k], 8);
    }
    for (size_t k = 0; k < classes->n; k++) {
        uint8_t *name = base + CACHE_HEADER + 32 * k;
        memset(name, 0, 32);
        memcpy(name, classes->items[k], strnlen(classes->items[k], 31));
    }
    uint8_t *lab = base + CACHE_HEADER + 32 * classes->n;
    for (uint32_t i = 0; i < h->count; i++) le_put(lab + 2 * (size_t)i, labels[i], 2);
}

/* Where decoded pixels go: a memory buffer, or a temporary cache file mapped in full
 * (its space reserved with posix_fallocate, so a full disk fails here rather than
 * with SIGBUS on a write to the mapping). */
typedef struct {
    uint8_t *base; /* the whole file, or NULL for memory */
    size_t len;
    uint8_t *pixels;
    int fd;
    char *tmp;
} Dest;

static int dest_open(Dest *d, const FolderOptions *opt, const CacheHeader *h, Error *err)
{
    size_t npix = (size_t)h->count * h->c * h->h * h->w;
    *d = (Dest){.fd = -1};
    if (!opt->cache_path) {
        d->pixels = xmalloc(npix, "decoded images");
        return 0;
    }
    d->len = cache_pixel_offset(h) + npix;
    if (asprintf(&d->tmp, "%s.tmp.XXXXXX", opt->cache_path) < 0) {
        fprintf(stderr, "bigbatch: out of memory naming a cache file\n");
        exit(3);
    }
    int e = 0;
    d->fd = mkstemp(d->tmp);
    if (d->fd < 0) {
        e = errno;
    } else if (fchmod(d->fd, 0644) != 0) {
        e = errno;
    } else if ((e = posix_fallocate(d->fd, 0, (off_t)d->len)) == 0) {
        void *m = mmap(NULL, d->len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
        if (m == MAP_FAILED)
            e = errno;
        else
            d->base = m, d->pixels = d->base + cache_pixel_offset(h);
    }
    if (e) {
        error_set(err, "%s: cannot write cache (%.1f GB): %s", opt->cache_path, d->len / 1e9, strerror(e));
        if (d->fd >= 0) close(d->fd), unlink(d->tmp);
        free(d->tmp);
        *d = (Dest){.fd = -1};
        return -1;
    }
    return 0;
}

static void dest_abandon(Dest *d)
{
    if (d->base) {
        munmap(d->base, d->len);
        close(d->fd);
        unlink(d->tmp);
        free(d->tmp);
    } else {
        free(d->pixels);
    }
    *d = (Dest){.fd = -1};
}

/* Writes the header, flushes and renames the file over the cache, so a reader never
 * sees a half-written cache and concurrent writers do not clash. */
static int dest_commit(Dest *d, const FolderOptions *opt, const CacheHeader *h, const Names *classes,
                       const uint16_t *labels, Error *err)
{
    cache_fill_header(d->base, h, classes, labels);
    int e = 0;
    if (msync(d->base, d->len, MS_SYNC) != 0) e = errno;
    munmap(d->base, d->len);
    d->base = NULL;
    if (!e && fsync(d->fd) != 0) e = errno;
    if (close(d->fd) != 0 && !e) e = errno;
    if (!e && rename(d->tmp, opt->cache_path) != 0) e = errno;
    if (e) {
        error_set(err, "%s: cannot write cache: %s", opt->cache_path, strerror(e));
        unlink(d->tmp);
    }
    free(d->tmp);
    *d = (Dest){.fd = -1};
    return e ? -1 : 0;
}

/* ---- the reader ---- */

/* Decodes files 1..n-1 on all threads into pixels (file 0 is done). On failure err
 * gets the error of the first failing file in folder order, whichever thread met it:
 * a thread skips only files after the earliest failure known so far. */
static int decode_rest(const Names *files, const FolderOptions *opt, int h, int w, uint8_t *pixels,
                       uint64_t sum[3], uint64_t sumsq[3], Error *err)
{
    const size_t chw = 3 * (size_t)h * w;
    long fail_at = LONG_MAX;
#pragma omp parallel
    {
        Decoder *dec = decoder_new();
        uint64_t s[3] = {0, 0, 0}, sq[3] = {0, 0, 0};
        Error e;
#pragma omp for schedule(dynamic, 16)
        for (long i = 1; i < (long)files->n; i++) {
            long stop;
#pragma omp atomic read
            stop = fail_at;
            if (i > stop) continue;
            const char *path = files->items[i];
            int ih, iw;
            if (decode_jpeg(path, dec, opt->image_size, &ih, &iw, &e) != 0 ||
                store_image(dec, ih, iw, path, opt->image_size, h, w, files->items[0], pixels + (size_t)i * chw, s,
                            sq, &e) != 0) {
#pragma omp critical(imagefolder_failure)
                if (i < fail_at) {
                    fail_at = i;
                    *err = e;
                }
            }
        }
#pragma omp critical(imagefolder_sums)
        for (int c = 0; c < 3; c++) sum[c] += s[c], sumsq[c] += sq[c];
        decoder_free(dec);
    }
    return fail_at == LONG_MAX ? 0 : -1;
}

static int decode_folder(const char *dir, const Names *classes, const FolderOptions *opt, ImageSet *set,
                         Error *err)
{
    Names files = {0};
    uint16_t *labels = NULL;
    if (list_images(dir, classes, &files, &labels, err) != 0) {
        folder_names_free(&files);
        free(labels);
        return -1;
    }
    /* The first image fixes the size (native) and is decoded before anything is
     * allocated for the rest. */
    Decoder *dec = decoder_new();
    int ih = 0, iw = 0, rc = decode_jpeg(files.items[0], dec, opt->image_size, &ih, &iw, err);
    const int h = opt->image_size > 0 ? opt->image_size : ih, w = opt->image_size > 0 ? opt->image_size : iw;
    CacheHeader hdr = {.count = (uint32_t)files.n, .c = 3, .h = (uint32_t)h, .w = (uint32_t)w,
                       .classes = (uint32_t)classes->n,
                       .image_size = (uint32_t)(opt->image_size > 0 ? opt->image_size : 0)};
    Dest d = {.fd = -1};
    if (rc == 0) rc = dest_open(&d, opt, &hdr, err);
    if (rc == 0)
        rc = store_image(dec, ih, iw, files.items[0], opt->image_size, h, w, files.items[0], d.pixels, hdr.sum,
                         hdr.sumsq, err);
    decoder_free(dec);
    if (rc == 0) rc = decode_rest(&files, opt, h, w, d.pixels, hdr.sum, hdr.sumsq, err);
    folder_names_free(&files);
    if (rc != 0) {
        if (d.pixels) dest_abandon(&d);
        free(labels);
        return -1;
    }
    if (opt->cache_path) {
        rc = dest_commit(&d, opt, &hdr, classes, labels, err);
        free(labels);
        if (rc != 0) return -1;
        if (!cache_map(opt, set, NULL, NULL)) {
            error_set(err, "%s: the cache just written does not read back", opt->cache_path);
            return -1;
        }
        return 0;
    }
    *set = (ImageSet){.count = (int)hdr.count, .c = 3, .h = h, .w = w, .pixels = d.pixels, .labels = labels,
                      .has_stats = true};
    imageset_stats_from_sums(3, hdr.sum, hdr.sumsq, (double)hdr.count * h * w, set->mean, set->std);
    return 0;
}

int imagefolder_read(const char *dir, const FolderOptions *opt, ImageSet *set, char (*class_names)[32],
                     int *classes, Error *err)
{
    if (opt->cache_path && cache_map(opt, set, class_names, classes)) return 0;
    Names cls = {0};
    if (list_dir(dir, true, &cls, err) != 0) return -1;
    int limit = max_labels(opt);
    if (cls.n == 0 || cls.n > (size_t)limit) {
        if (cls.n == 0)
            error_set(err, "%s: no class folders", dir);
        else
            error_set(err, "%s: %zu class folders, at most %d supported", dir, cls.n, limit);
        folder_names_free(&cls);
        return -1;
    }
    if (decode_folder(dir, &cls, opt, set, err) != 0) {
        folder_names_free(&cls);
        return -1;
    }
    for (size_t k = 0; class_names && k < cls.n; k++) {
        memset(class_names[k], 0, 32);
        memcpy(class_names[k], cls.items[k], strnlen(cls.items[k], 31));
    }
    if (classes) *classes = (int)cls.n;
    folder_names_free(&cls);
    return 0;
}
