/* Image-folder reader: dir/<class>/<image>.jpg, the ImageNet layout (CIFAR-10 ships
 * in it too). JPEG decoding is slow next to a training step's data needs, so the
 * decoded pixels are kept in a cache file that later runs load in about a second.
 * libjpeg's default error handling exits the process; a custom error manager turns
 * corrupt files (and libjpeg's "corrupt data" warnings) into an Error naming the file. */
#include "data.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>

#define MAX_LABELS 256 /* labels are uint8_t */

/* ---- listing ---- */

typedef struct {
    char **items;
    size_t n, cap;
} Names;

static void names_add(Names *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->items = xrealloc(l->items, l->cap * sizeof *l->items, "file name list");
    }
    l->items[l->n++] = xstrdup(s);
}

static void names_free(Names *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    *l = (Names){0};
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *path_join(const char *a, const char *b)
{
    char *p;
    if (asprintf(&p, "%s/%s", a, b) < 0) {
        fprintf(stderr, "bigbatch: out of memory joining %s and %s\n", a, b);
        exit(3);
    }
    return p;
}

static bool is_jpeg_name(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

/* Lists the subdirectories (want_dirs) or JPEG files of dir, sorted in strcmp order
 * so that labels do not depend on the locale or the file system. Hidden entries are
 * skipped. */
static int list_dir(const char *dir, bool want_dirs, Names *out, Error *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        error_set(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno) {
                error_set(err, "%s: %s", dir, strerror(errno));
                closedir(d);
                return -1;
            }
            break;
        }
        if (e->d_name[0] == '.') continue;
        if (!want_dirs && !is_jpeg_name(e->d_name)) continue;
        bool is_dir = e->d_type == DT_DIR, is_reg = e->d_type == DT_REG;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
            char *p = path_join(dir, e->d_name);
            struct stat st;
            int rc = stat(p, &st);
            if (rc != 0) error_set(err, "%s: %s", p, strerror(errno));
            free(p);
            if (rc != 0) {
                closedir(d);
                return -1;
            }
            is_dir = S_ISDIR(st.st_mode), is_reg = S_ISREG(st.st_mode);
        }
        if (want_dirs ? is_dir : is_reg) names_add(out, e->d_name);
    }
    closedir(d);
    if (out->n) qsort(out->items, out->n, sizeof *out->items, cmp_name);
    return 0;
}

/* ---- JPEG decoding ---- */

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} JpegErr;

/* Kept off the decoding function's stack so nothing it modifies between setjmp and
 * longjmp is a local variable (whose value longjmp would leave indeterminate). */
typedef struct {
    struct jpeg_decompress_struct cinfo;
    JpegErr jerr;
    uint8_t *file;     /* the compressed bytes, reused across files */
    size_t file_cap;
    uint8_t *rgb;      /* one decoded image, HWC */
    size_t rgb_cap;
} Decoder;

static void jpeg_fail(j_common_ptr cinfo)
{
    JpegErr *e = (JpegErr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

/* libjpeg reports corrupt data (e.g. a truncated file, which it would pad with grey)
 * as a warning (level -1); an image that is not what was stored must not be trained
 * on silently, so warnings fail like errors. Trace messages (level >= 0) are ignored. */
static void jpeg_note(j_common_ptr cinfo, int level)
{
    if (level < 0) jpeg_fail(cinfo);
}

static int read_file(const char *path, Decoder *dec, size_t *len, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    *len = 0;
    for (;;) {
        if (*len == dec->file_cap) {
            dec->file_cap = dec->file_cap ? 2 * dec->file_cap : 65536;
            dec->file = xrealloc(dec->file, dec->file_cap, "JPEG file");
        }
        size_t got = fread(dec->file + *len, 1, dec->file_cap - *len, f);
        *len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        error_set(err, "%s: read error", path);
        return -1;
    }
    return 0;
}

/* Decodes path into dec->rgb (HWC, RGB); *h, *w receive the size. */
static int decode_jpeg(const char *path, Decoder *dec, int *h, int *w, Error *err)
{
    size_t len;
    if (read_file(path, dec, &len, err) != 0) return -1;
    if (len > ULONG_MAX) {
        error_set(err, "%s: file too large", path);
        return -1;
    }
    dec->cinfo.err = jpeg_std_error(&dec->jerr.pub);
    dec->jerr.pub.error_exit = jpeg_fail;
    dec->jerr.pub.emit_message = jpeg_note;
    if (setjmp(dec->jerr.jump)) {
        jpeg_destroy_decompress(&dec->cinfo);
        error_set(err, "%s: bad JPEG: %s", path, dec->jerr.msg);
        return -1;
    }
    jpeg_create_decompress(&dec->cinfo);
    jpeg_mem_src(&dec->cinfo, dec->file, (unsigned long)len);
    jpeg_read_header(&dec->cinfo, TRUE);
    dec->cinfo.out_color_space = JCS_RGB; /* grayscale is expanded to 3 equal channels */
    jpeg_start_decompress(&dec->cinfo);
    size_t ih = dec->cinfo.output_height, iw = dec->cinfo.output_width;
    if (dec->cinfo.output_components != 3 || ih == 0 || iw == 0 || ih > 65535 || iw > 65535) {
        error_set(err, "%s: bad JPEG: unsupported image (%zux%zu, %d components)", path, ih, iw,
                  dec->cinfo.output_components);
        jpeg_destroy_decompress(&dec->cinfo);
        return -1;
    }
    if (ih * iw * 3 > dec->rgb_cap) {
        dec->rgb_cap = ih * iw * 3;
        dec->rgb = xrealloc(dec->rgb, dec->rgb_cap, "decoded JPEG");
    }
    while (dec->cinfo.output_scanline < ih) {
        JSAMPROW row = dec->rgb + (size_t)dec->cinfo.output_scanline * iw * 3;
        jpeg_read_scanlines(&dec->cinfo, &row, 1);
    }
    jpeg_finish_decompress(&dec->cinfo);
    jpeg_destroy_decompress(&dec->cinfo);
    *h = (int)ih;
    *w = (int)iw;
    return 0;
}

/* ---- cache file ----
 * Layout (integers little-endian uint32):
 *   "BBIMGv1\0", count, c, h, w, classes, classes x 32-byte class names (NUL-padded),
 *   count*c*h*w pixels (CHW per image), count labels.
 * A cache is trusted when its header is sane and the file has exactly the size the
 * header implies; it is not compared with the folder (delete it after changing the
 * images). Anything else is treated as absent and rewritten. */

static const char CACHE_MAGIC[8] = "BBIMGv1";
#define CACHE_HEADER (8 + 5 * 4)

typedef struct {
    uint32_t count, c, h, w, classes;
} CacheHeader;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* Opens the cache and checks header and size; NULL when it is absent or invalid. */
static FILE *cache_open(const char *path, int max_classes, CacheHeader *h)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t buf[CACHE_HEADER];
    struct stat st;
    if (fread(buf, 1, sizeof buf, f) != sizeof buf || fstat(fileno(f), &st) != 0) goto bad;
    if (memcmp(buf, CACHE_MAGIC, 8) != 0) goto bad;
    h->count = le32(buf + 8), h->c = le32(buf + 12), h->h = le32(buf + 16), h->w = le32(buf + 20);
    h->classes = le32(buf + 24);
    int limit = max_classes < MAX_LABELS ? max_classes : MAX_LABELS;
    if (h->count == 0 || h->count > INT_MAX || h->c != 3 || h->h == 0 || h->h > 65535 || h->w == 0 ||
        h->w > 65535 || h->classes == 0 || h->classes > (uint32_t)limit)
        goto bad;
    /* count < 2^31, c*h*w < 2^34: the product fits in 64 bits */
    uint64_t size = CACHE_HEADER + 32ull * h->classes + (uint64_t)h->count * h->c * h->h * h->w +
                    h->count;
    if (st.st_size < 0 || (uint64_t)st.st_size != size) goto bad;
    return f;
bad:
    fclose(f);
    return NULL;
}

bool imagefolder_cache_valid(const char *cache_path, int max_classes)
{
    CacheHeader h;
    FILE *f = cache_open(cache_path, max_classes, &h);
    if (!f) return false;
    fclose(f);
    return true;
}

/* 1: loaded into set; 0: absent or invalid (nothing allocated). */
static int cache_load(const char *path, ImageSet *set, char (*class_names)[32], int max_classes,
                      int *classes)
{
    CacheHeader h;
    FILE *f = cache_open(path, max_classes, &h);
    if (!f) return 0;
    char (*names)[32] = xcalloc(h.classes, 32, "class names");
    size_t npix = (size_t)h.count * h.c * h.h * h.w;
    uint8_t *pixels = xmalloc(npix, "cached pixels");
    uint8_t *labels = xmalloc(h.count, "cached labels");
    bool ok = fread(names, 32, h.classes, f) == h.classes && fread(pixels, 1, npix, f) == npix &&
              fread(labels, 1, h.count, f) == h.count;
    fclose(f);
    for (uint32_t i = 0; ok && i < h.count; i++)
        if (labels[i] >= h.classes) ok = false;
    if (!ok) {
        free(names), free(pixels), free(labels);
        return 0;
    }
    for (uint32_t k = 0; k < h.classes; k++) {
        names[k][31] = '\0';
        if (class_names) memcpy(class_names[k], names[k], 32);
    }
    free(names);
    if (classes) *classes = (int)h.classes;
    set->count = (int)h.count;
    set->c = (int)h.c;
    set->h = (int)h.h;
    set->w = (int)h.w;
    set->pixels = pixels;
    set->labels = labels;
    return 1;
}

/* Written to a temporary file in the same folder, then renamed over the cache, so a
 * reader never sees a half-written cache and concurrent writers do not clash. */
static int cache_write(const char *path, const ImageSet *set, const Names *classes, Error *err)
{
    char *tmp;
    if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
        fprintf(stderr, "bigbatch: out of memory naming a cache file\n");
        exit(3);
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        error_set(err, "%s: cannot write cache: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        error_set(err, "%s: cannot write cache: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    uint8_t hdr[CACHE_HEADER];
    memcpy(hdr, CACHE_MAGIC, 8);
    put_le32(hdr + 8, (uint32_t)set->count);
    put_le32(hdr + 12, (uint32_t)set->c);
    put_le32(hdr + 16, (uint32_t)set->h);
    put_le32(hdr + 20, (uint32_t)set->w);
    put_le32(hdr + 24, (uint32_t)classes->n);
    bool ok = fchmod(fd, 0644) == 0 && fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr;
    for (size_t k = 0; ok && k < classes->n; k++) {
        char name[32] = {0};
        size_t len = strnlen(classes->items[k], 31);
        memcpy(name, classes->items[k], len);
        ok = fwrite(name, 1, 32, f) == 32;
    }
    size_t npix = (size_t)set->count * set->c * set->h * set->w;
    ok = ok && fwrite(set->pixels, 1, npix, f) == npix &&
         fwrite(set->labels, 1, (size_t)set->count, f) == (size_t)set->count && fflush(f) == 0 &&
         fsync(fd) == 0;
    int saved = errno;
    if (fclose(f) != 0 && ok) ok = false, saved = errno;
    if (ok && rename(tmp, path) != 0) ok = false, saved = errno;
    if (!ok) {
        error_set(err, "%s: cannot write cache: %s", path, strerror(saved));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

/* ---- the reader ---- */

static int decode_folder(const char *dir, const Names *classes, ImageSet *set, Error *err)
{
    /* All files first, so the pixel buffer is allocated once. */
    Names files = {0};
    size_t *first = xcalloc(classes->n + 1, sizeof *first, "class offsets");
    for (size_t k = 0; k < classes->n; k++) {
        first[k] = files.n;
        char *cdir = path_join(dir, classes->items[k]);
        Names in = {0};
        int rc = list_dir(cdir, false, &in, err);
        for (size_t i = 0; rc == 0 && i < in.n; i++) {
            char *p = path_join(cdir, in.items[i]);
            names_add(&files, p);
            free(p);
        }
        names_free(&in);
        free(cdir);
        if (rc != 0) {
            names_free(&files);
            free(first);
            return -1;
        }
    }
    first[classes->n] = files.n;
    if (files.n == 0 || files.n > INT_MAX) {
        error_set(err, "%s: %s", dir, files.n ? "too many images" : "no .jpg/.jpeg files in any class folder");
        names_free(&files);
        free(first);
        return -1;
    }
    Decoder *dec = xcalloc(1, sizeof *dec, "JPEG decoder");
    uint8_t *pixels = NULL, *labels = xmalloc(files.n, "labels");
    int h0 = 0, w0 = 0, rc = 0;
    size_t k = 0;
    for (size_t i = 0; i < files.n && rc == 0; i++) {
        while (i >= first[k + 1]) k++;
        labels[i] = (uint8_t)k;
        int h, w;
        rc = decode_jpeg(files.items[i], dec, &h, &w, err);
        if (rc != 0) break;
        if (i == 0) {
            h0 = h, w0 = w;
            pixels = xmalloc(files.n * 3 * (size_t)h * (size_t)w, "decoded images");
        } else if (h != h0 || w != w0) {
            error_set(err, "%s: image is %dx%d, but %s is %dx%d (all images must have one size)",
                      files.items[i], w, h, files.items[0], w0, h0);
            rc = -1;
            break;
        }
        size_t hw = (size_t)h * w;
        uint8_t *dst = pixels + i * 3 * hw;
        for (size_t p = 0; p < hw; p++) {
            dst[p] = dec->rgb[3 * p];
            dst[hw + p] = dec->rgb[3 * p + 1];
            dst[2 * hw + p] = dec->rgb[3 * p + 2];
        }
    }
    free(dec->file);
    free(dec->rgb);
    free(dec);
    const size_t count = files.n;
    names_free(&files);
    free(first);
    if (rc != 0) {
        free(pixels);
        free(labels);
        return -1;
    }
    *set = (ImageSet){.count = (int)count, .c = 3, .h = h0, .w = w0, .pixels = pixels, .labels = labels};
    return 0;
}

int imagefolder_read(const char *dir, const char *cache_path, ImageSet *set,
                     char (*class_names)[32], int max_classes, int *classes, Error *err)
{
    if (cache_path && cache_load(cache_path, set, class_names, max_classes, classes)) return 0;
    Names cls = {0};
    if (list_dir(dir, true, &cls, err) != 0) return -1;
    int limit = max_classes < MAX_LABELS ? max_classes : MAX_LABELS;
    if (cls.n == 0 || cls.n > (size_t)limit) {
        if (cls.n == 0)
            error_set(err, "%s: no class folders", dir);
        else
            error_set(err, "%s: %zu class folders, at most %d supported", dir, cls.n, limit);
        names_free(&cls);
        return -1;
    }
    ImageSet got = {0};
    if (decode_folder(dir, &cls, &got, err) != 0 ||
        (cache_path && cache_write(cache_path, &got, &cls, err) != 0)) {
        if (got.pixels) imageset_free(&got);
        names_free(&cls);
        return -1;
    }
    for (size_t k = 0; class_names && k < cls.n; k++) {
        memset(class_names[k], 0, 32);
        memcpy(class_names[k], cls.items[k], strnlen(cls.items[k], 31));
    }
    if (classes) *classes = (int)cls.n;
    names_free(&cls);
    *set = got;
    return 0;
}
