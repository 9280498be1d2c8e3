/* Writing packed JPEG stores (pack.h; the layout is jpeg_store.h's). Images are decoded,
 * shrunk (DCT scaling to within 2x, then Pillow's antialiased bilinear filter) and re-encoded
 * in chunks on all threads; the main thread appends each chunk's JPEGs to the temporary file
 * in folder order, so the store does not depend on the thread count. The index and the header
 * go last, then fsync and rename: a store under its final name is always complete. */
#include "pack.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "folder_list.h"
#include "jpeg_io.h"
#include "jpeg_store.h"
#include "resample.h"

typedef enum { ITEM_OK, ITEM_PNG, ITEM_BAD } ItemStatus;

/* One image's result. */
typedef struct {
    ItemStatus status;
    uint8_t *jpeg;
    size_t len;
    int w, h, orig_w, orig_h;
    uint64_t sum[3], sumsq[3];
    Error err;
} Item;

/* A thread's reusable state. */
typedef struct {
    JpegDecoder *dec;
    Resampler rs;
    uint8_t *file, *rgb;
    size_t file_cap, rgb_cap;
} Worker;

static void sums_hwc(const uint8_t *rgb, size_t n, uint64_t sum[3], uint64_t sumsq[3])
{
    for (size_t p = 0; p < n; p++)
        for (int c = 0; c < 3; c++) sum[c] += rgb[3 * p + c], sumsq[c] += (uint32_t)rgb[3 * p + c] * rgb[3 * p + c];
}

/* The stored size: the shorter side max_side (when larger), the longer in proportion. */
static void stored_size(int w, int h, int max_side, int *sw, int *sh)
{
    const int shorter = w < h ? w : h;
    *sw = w, *sh = h;
    if (shorter <= max_side) return;
    const double f = (double)max_side / shorter;
    *sw = w == shorter ? max_side : (int)lround(w * f);
    *sh = h == shorter ? max_side : (int)lround(h * f);
}

static void pack_one(Worker *wk, const char *path, const PackOptions *opt, Item *it)
{
    size_t len;
    int w, h;
    Error *err = &it->err;
    it->status = ITEM_BAD;
    if (read_whole_file(path, &wk->file, &wk->file_cap, &len, err) != 0) return;
    if (len >= 8 && memcmp(wk->file, "\x89PNG\r\n\x1a\n", 8) == 0) {
        error_set(err, "%s: not a JPEG but a PNG image (refused: convert it to JPEG)", path);
        it->status = ITEM_PNG;
        return;
    }
    if (jpeg_size(wk->dec, wk->file, len, path, &w, &h, err) != 0) return;
    int sw, sh;
    stored_size(w, h, opt->max_side, &sw, &sh);
    JpegRegion want = {.eighths = jpeg_scale_for(w, h, sw, sh)};
    JpegImage img;
    if (jpeg_decode(wk->dec, wk->file, len, path, &want, &img, err) != 0) return;
    const uint8_t *rgb = img.rgb;
    if (img.w != sw || img.h != sh) {
        const ResampleAxis ax = {img.w, 0.0f, (float)img.w, 0, sw, 0, sw}, ay = {img.h, 0.0f, (float)img.h, 0, sh, 0, sh};
        if ((size_t)sw * sh * 3 > wk->rgb_cap) {
            wk->rgb_cap = (size_t)sw * sh * 3;
            wk->rgb = xrealloc(wk->rgb, wk->rgb_cap, "resized image");
        }
        resample_rgb(&wk->rs, img.rgb, img.stride, &ax, &ay, false, false, wk->rgb);
        rgb = wk->rgb;
    }
    sums_hwc(rgb, (size_t)sw * sh, it->sum, it->sumsq);
    if (jpeg_encode_rgb(rgb, sw, sh, opt->quality, &it->jpeg, &it->len, err) != 0) {
        error_prefix(err, path);
        return;
    }
    *it = (Item){ITEM_OK, it->jpeg, it->len, sw, sh, w, h, {it->sum[0], it->sum[1], it->sum[2]},
                 {it->sumsq[0], it->sumsq[1], it->sumsq[2]}, {{0}}};
}

/* The store being written. */
typedef struct {
    FILE *f;
    char *tmp;
    const char *path;
    uint64_t offset;
    uint8_t *index;
    uint32_t count;
    uint64_t sum[3], sumsq[3], pixels;
    long png, bad;
} Out;

static int out_append(Out *o, const Item *it, uint16_t label, Error *err)
{
    if (fwrite(it->jpeg, 1, it->len, o->f) != it->len) {
        error_set(err, "%s: write failed: %s", o->tmp, strerror(errno));
        return -1;
    }
    uint8_t *r = o->index + (size_t)JSTORE_RECORD * o->count++;
    memset(r, 0, JSTORE_RECORD);
    jstore_put(r, o->offset, 8);
    jstore_put(r + 8, it->len, 4);
    jstore_put(r + 12, crc32(crc32(0L, Z_NULL, 0), it->jpeg, (uInt)it->len), 4);
    const uint64_t fields[5] = {label, (uint64_t)it->w, (uint64_t)it->h, (uint64_t)it->orig_w, (uint64_t)it->orig_h};
    for (int k = 0; k < 5; k++) jstore_put(r + 16 + 2 * k, fields[k], 2);
    o->offset += it->len;
    for (int c = 0; c < 3; c++) o->sum[c] += it->sum[c], o->sumsq[c] += it->sumsq[c];
    o->pixels += (uint64_t)it->w * (uint64_t)it->h;
    return 0;
}

static void print_progress(const char *split, size_t done, size_t total, double t0)
{
    const double dt = now_seconds() - t0, rate = dt > 0 ? done / dt : 0;
    const double eta = rate > 0 ? (total - done) / rate : 0;
    fprintf(stderr, "\rpacking %s: %zu/%zu images (%.0f%%), %.0f img/s, ETA %dm%02ds   ", split, done, total,
            100.0 * done / total, rate, (int)eta / 60, (int)eta % 60);
}

/* Decodes and re-encodes files [from, to) into items, on all threads. */
static void pack_chunk(Worker *workers, const Names *files, size_t from, size_t to, const PackOptions *opt,
                       Item *items)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(opt->threads)
    for (long i = (long)from; i < (long)to; i++) {
        Item *it = &items[i - (long)from];
        memset(it, 0, sizeof *it);
        pack_one(&workers[omp_get_thread_num()], files->items[i], opt, it);
    }
}

static int write_chunk(Out *o, Item *items, size_t n, const uint16_t *labels, Error *err)
{
    int rc = 0;
    for (size_t k = 0; k < n; k++) {
        Item *it = &items[k];
        if (it->status == ITEM_OK && rc == 0) rc = out_append(o, it, labels[k], err);
        if (it->status != ITEM_OK) {
            fprintf(stderr, "\nskipped %s\n", it->err.msg);
            *(it->status == ITEM_PNG ? &o->png : &o->bad) += 1;
        }
        free(it->jpeg);
        it->jpeg = NULL;
    }
    return rc;
}

static void header_fill(uint8_t *b, const Out *o, const Names *classes, const PackOptions *opt, uint32_t index_crc)
{
    memset(b, 0, JSTORE_HEADER);
    memcpy(b, JSTORE_MAGIC, 8);
    jstore_put(b + 8, o->count, 4);
    jstore_put(b + 12, classes->n, 4);
    jstore_put(b + 16, (uint64_t)opt->max_side, 4);
    jstore_put(b + 20, (uint64_t)opt->quality, 4);
    jstore_put(b + 24, o->offset, 8);
    for (int c = 0; c < 3; c++) jstore_put(b + 32 + 8 * c, o->sum[c], 8), jstore_put(b + 56 + 8 * c, o->sumsq[c], 8);
    jstore_put(b + 80, o->pixels, 8);
    jstore_put(b + 88, index_crc, 4);
    jstore_put(b + 92, crc32(crc32(0L, Z_NULL, 0), b, 92), 4);
}

/* Class names, the index and the header; then fsync and the rename. */
static int out_finish(Out *o, const Names *classes, const PackOptions *opt, Error *err)
{
    uint8_t *names = xcalloc(classes->n, 32, "class names");
    for (size_t k = 0; k < classes->n; k++) memcpy(names + 32 * k, classes->items[k], strnlen(classes->items[k], 32));
    uLong c = crc32(crc32(0L, Z_NULL, 0), names, (uInt)(32 * classes->n));
    for (size_t done = 0, total = (size_t)JSTORE_RECORD * o->count; done < total;) {
        const size_t part = total - done > (1u << 30) ? (1u << 30) : total - done;
        c = crc32(c, o->index + done, (uInt)part);
        done += part;
    }
    uint8_t header[JSTORE_HEADER];
    header_fill(header, o, classes, opt, (uint32_t)c);
    int e = 0;
    if (fwrite(o->index, JSTORE_RECORD, o->count, o->f) != o->count || fseek(o->f, 0, SEEK_SET) != 0 ||
        fwrite(header, 1, JSTORE_HEADER, o->f) != JSTORE_HEADER || fwrite(names, 32, classes->n, o->f) != classes->n ||
        fflush(o->f) != 0 || fsync(fileno(o->f)) != 0)
        e = errno ? errno : EIO;
    free(names);
    if (fclose(o->f) != 0 && !e) e = errno;
    o->f = NULL;
    if (!e && rename(o->tmp, o->path) != 0) e = errno;
    if (e) error_set(err, "%s: cannot write: %s", o->path, strerror(e));
    return e ? -1 : 0;
}

static void out_abandon(Out *o)
{
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
}

static int out_open(Out *o, const char *path, size_t count, size_t classes, Error *err)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
        fprintf(stderr, "bigbatch: out of memory naming a file\n");
        exit(3);
    }
    int fd = mkstemp(o->tmp);
    if (fd < 0 || fchmod(fd, 0644) != 0 || !(o->f = fdopen(fd, "wb"))) {
        error_set(err, "%s: cannot create: %s", o->tmp, strerror(errno));
        if (fd >= 0) close(fd), unlink(o->tmp);
        free(o->tmp);
        return -1;
    }
    o->offset = JSTORE_HEADER + 32 * (uint64_t)classes; /* the header and names go in last */
    o->index = xmalloc((size_t)JSTORE_RECORD * (count ? count : 1), "store index");
    if (fseek(o->f, (long)o->offset, SEEK_SET) != 0) {
        error_set(err, "%s: %s", o->tmp, strerror(errno));
        out_abandon(o);
        return -1;
    }
    return 0;
}

/* Packs the listed files in chunks; the progress line after each. */
static int pack_files(Out *o, const char *split, const Names *files, const uint16_t *labels, const PackOptions *opt,
                      Error *err)
{
    const size_t chunk = 32 * (size_t)opt->threads;
    Worker *workers = xcalloc((size_t)opt->threads, sizeof *workers, "pack workers");
    for (int t = 0; t < opt->threads; t++) workers[t].dec = jpeg_decoder_new();
    Item *items = xcalloc(chunk, sizeof *items, "pack chunk");
    const double t0 = now_seconds();
    int rc = 0;
    for (size_t from = 0; from < files->n && rc == 0; from += chunk) {
        const size_t to = from + chunk < files->n ? from + chunk : files->n;
        pack_chunk(workers, files, from, to, opt, items);
        rc = write_chunk(o, items, to - from, labels + from, err);
        if (!opt->quiet) print_progress(split, to, files->n, t0);
    }
    if (!opt->quiet) fprintf(stderr, "\n");
    for (int t = 0; t < opt->threads; t++) {
        jpeg_decoder_free(workers[t].dec);
        resampler_free(&workers[t].rs);
        free(workers[t].file);
        free(workers[t].rgb);
    }
    free(workers);
    free(items);
    return rc;
}

/* A store already at path with these options is kept (a restarted pack skips finished splits). */
static bool already_packed(const char *path, const PackOptions *opt)
{
    JpegStore s;
    Error e;
    if (jstore_open(path, &s, &e) != 0) return false;
    const bool same = s.max_side == (uint32_t)opt->max_side && s.quality == (uint32_t)opt->quality;
    jstore_close(&s);
    return same;
}

static int pack_split(const char *root, const char *split, const char *out_dir, const PackOptions *opt, Error *err)
{
    char *dir = path_join(root, split), *path = NULL;
    if (asprintf(&path, "%s/%s%s", out_dir, split, JSTORE_SUFFIX) < 0) {
        fprintf(stderr, "bigbatch: out of memory naming a file\n");
        exit(3);
    }
    Names classes = {0}, files = {0};
    uint16_t *labels = NULL;
    Out o = {0};
    int rc = 0;
    if (already_packed(path, opt)) {
        if (!opt->quiet) fprintf(stderr, "%s: already packed (delete it to pack again)\n", path);
    } else if ((rc = list_dir(dir, true, &classes, err)) == 0 &&
               (classes.n == 0 || classes.n > JSTORE_MAX_CLASSES)) {
        error_set(err, "%s: %zu class folders (1..%d supported)", dir, classes.n, JSTORE_MAX_CLASSES);
        rc = -1;
    } else if (rc == 0 && (rc = list_images(dir, &classes, &files, &labels, err)) == 0 &&
               (rc = out_open(&o, path, files.n, classes.n, err)) == 0) {
        const double t0 = now_seconds();
        rc = pack_files(&o, split, &files, labels, opt, err);
        if (rc == 0 && o.count == 0) {
            error_set(err, "%s: no image could be read", dir);
            rc = -1;
        }
        if (rc == 0) rc = out_finish(&o, &classes, opt, err);
        if (rc != 0) out_abandon(&o);
        else if (!opt->quiet)
            fprintf(stderr, "%s: %u images of %zu classes, %.1f MB, %.0f s; left out: %ld PNG, %ld unreadable\n", path,
                    o.count, classes.n, (o.offset + (double)JSTORE_RECORD * o.count) / 1e6, now_seconds() - t0, o.png,
                    o.bad);
    }
    free(o.index);
    free(o.tmp);
    free(labels);
    folder_names_free(&files);
    folder_names_free(&classes);
    free(dir);
    free(path);
    return rc;
}

int pack_folder(const char *root, const char *out_dir, const PackOptions *opt, Error *err)
{
    if (opt->max_side < 16 || opt->max_side > 4096 || opt->quality < 1 || opt->quality > 100 || opt->threads < 1) {
        error_set(err, "--max-side %d (16..4096), quality %d (1..100) or threads %d out of range", opt->max_side,
                  opt->quality, opt->threads);
        return -1;
    }
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
        error_set(err, "%s: %s", out_dir, strerror(errno));
        return -1;
    }
    char *test = path_join(root, "test");
    struct stat st;
    const char *eval = stat(test, &st) == 0 ? "test" : "val";
    free(test);
    if (pack_split(root, "train", out_dir, opt, err) != 0) return -1;
    return pack_split(root, eval, out_dir, opt, err);
}
