/* Tests of the data layer: IDX and JPEG-folder readers on small fixtures generated at
 * test time in a temporary folder (gzip IDX files written with zlib, JPEGs with
 * libjpeg), the decode cache, batch assembly (normalization, crop, flip), synthetic
 * data, the CIFAR-10 tarball path, and the real Fashion-MNIST when it is installed. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <ftw.h>
#include <jpeglib.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../engine/data/data.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"

/* ---- fixture helpers ---- */

static char tmp[64];

static void make_tmp(void)
{
    strcpy(tmp, "/tmp/bb_test_data_XXXXXX");
    cr_assert_not_null(mkdtemp(tmp), "mkdtemp failed");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tmp(void)
{
    if (tmp[0]) nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(data, .init = make_tmp, .fini = remove_tmp);

/* tmp-relative path in a static buffer, rotated among 8 so that a few can coexist in
 * one call; copy it to keep it longer. */
static const char *P(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *P(const char *fmt, ...)
{
    static char bufs[8][512];
    static int next;
    char *b = bufs[next++ % 8];
    int n = snprintf(b, 512, "%s/", tmp);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, 512 - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

static void mkdirs(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        mkdir(buf, 0755);
        *s = '/';
    }
    cr_assert(mkdir(buf, 0755) == 0 || access(buf, F_OK) == 0, "mkdir %s", buf);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* An IDX file: magic, dims, then data; gzip-compressed when gz. */
static void write_idx(const char *path, bool gz, uint32_t magic, const uint32_t *dims, int ndims,
                      const uint8_t *data, size_t len)
{
    uint8_t hdr[16];
    put_be32(hdr, magic);
    for (int i = 0; i < ndims; i++) put_be32(hdr + 4 + 4 * i, dims[i]);
    size_t hlen = 4 + 4 * (size_t)ndims;
    if (gz) {
        gzFile f = gzopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(gzwrite(f, hdr, (unsigned)hlen), (int)hlen);
        if (len) cr_assert_eq(gzwrite(f, data, (unsigned)len), (int)len);
        cr_assert_eq(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(hdr, 1, hlen, f), hlen);
        cr_assert_eq(fwrite(data, 1, len, f), len);
        cr_assert_eq(fclose(f), 0);
    }
}

static void write_images(const char *path, bool gz, uint32_t n, uint32_t rows, uint32_t cols,
                         const uint8_t *pixels, size_t len)
{
    uint32_t dims[3] = {n, rows, cols};
    write_idx(path, gz, 0x803, dims, 3, pixels, len);
}

static void write_labels(const char *path, bool gz, uint32_t n, const uint8_t *labels, size_t len)
{
    write_idx(path, gz, 0x801, &n, 1, labels, len);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "open %s", path);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static uint8_t *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "open %s", path);
    uint8_t *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* Entries of dir whose names start with prefix ("" for all), . and .. excepted. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "opendir %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    closedir(d);
    return n;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A JPEG of w x h pixels (HWC, comps 1 or 3) at the given quality, without chroma
 * subsampling so colours survive exactly enough to compare. */
static void write_jpeg(const char *path, const uint8_t *hwc, int w, int h, int comps, int quality)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "open %s", path);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = comps;
    c.in_color_space = comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, quality, TRUE);
    for (int i = 0; i < comps; i++) c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(hwc + (size_t)c.next_scanline * (size_t)w * (size_t)comps);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    cr_assert_eq(fclose(f), 0);
}

/* A flat-coloured RGB JPEG: decodes back to (r, g, b) within a level or two. */
static void write_flat_jpeg(const char *path, int w, int h, uint8_t r, uint8_t g, uint8_t b)
{
    uint8_t *px = malloc((size_t)w * h * 3);
    for (int i = 0; i < w * h; i++) px[3 * i] = r, px[3 * i + 1] = g, px[3 * i + 2] = b;
    write_jpeg(path, px, w, h, 3, 95);
    free(px);
}

#define assert_contains(hay, needle) \
    cr_assert(strstr((hay), (needle)) != NULL, "expected \"%s\" in: %s", (needle), (hay))

static int absdiff(int a, int b)
{
    return a > b ? a - b : b - a;
}

/* ---- IDX ---- */

static uint8_t PIX24[24] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 250, 251, 252, 253, 254, 255, 128, 64, 32, 16};

Test(data, idx_images_gzip_exact)
{
    write_images(P("img.gz"), true, 3, 2, 4, PIX24, 24);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("img.gz"), &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(s.c, 1);
    cr_assert_eq(s.h, 2);
    cr_assert_eq(s.w, 4);
    cr_assert_arr_eq(s.pixels, PIX24, 24);
    imageset_free(&s);
}

Test(data, idx_images_uncompressed_exact)
{
    write_images(P("img"), false, 2, 3, 4, PIX24, 24);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("img"), &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.count, 2);
    cr_assert_eq(s.h, 3);
    cr_assert_eq(s.w, 4);
    cr_assert_arr_eq(s.pixels, PIX24, 24);
    imageset_free(&s);
}

Test(data, idx_labels_exact)
{
    uint8_t lab[5] = {3, 1, 4, 1, 5};
    write_labels(P("lab.gz"), true, 5, lab, 5);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_labels(P("lab.gz"), &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.count, 5, "count %d", s.count);
    for (int i = 0; i < 5; i++) cr_assert_eq(s.labels[i], lab[i], "label %d", i);
    imageset_free(&s);
}

Test(data, idx_wrong_magic)
{
    uint8_t lab[2] = {0, 1};
    write_labels(P("train-images-idx3-ubyte.gz"), true, 2, lab, 2);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("train-images-idx3-ubyte.gz"), &s, &err), -1);
    assert_contains(err.msg, P("train-images-idx3-ubyte.gz: wrong magic 0x00000801 (expected 0x00000803, an IDX3 image file)"));
    cr_assert_null(s.pixels);
    write_images(P("x.gz"), true, 1, 2, 2, PIX24, 4);
    cr_assert_eq(idx_read_labels(P("x.gz"), &s, &err), -1);
    assert_contains(err.msg, P("x.gz: wrong magic 0x00000803 (expected 0x00000801"));
}

Test(data, idx_truncated_pixels)
{
    write_images(P("t.gz"), true, 10, 2, 2, PIX24, 17);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("t.gz"), &s, &err), -1);
    assert_contains(err.msg, P("t.gz: truncated: expected 40 bytes of pixels, got 17"));
    cr_assert_null(s.pixels);
    uint8_t lab[3] = {1, 2, 3};
    write_labels(P("l"), false, 7, lab, 3);
    cr_assert_eq(idx_read_labels(P("l"), &s, &err), -1);
    assert_contains(err.msg, P("l: truncated: expected 7 bytes of labels, got 3"));
}

Test(data, idx_truncated_header_and_bad_dims)
{
    write_bytes(P("short"), "\0\0\x08\x03\0\0", 6);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("short"), &s, &err), -1);
    assert_contains(err.msg, P("short: truncated: expected a 16-byte IDX3 image header, got 6 bytes"));
    write_images(P("zero"), false, 3, 0, 4, PIX24, 0);
    cr_assert_eq(idx_read_images(P("zero"), &s, &err), -1);
    assert_contains(err.msg, P("zero: bad dimensions"));
}

Test(data, idx_truncated_gzip_stream)
{
    /* Incompressible pixels, then cut the compressed file in half. */
    enum { N = 20000 };
    uint8_t *px = malloc(N);
    Rng r;
    rng_seed(&r, 7, 0);
    for (int i = 0; i < N; i++) px[i] = (uint8_t)rng_u32(&r);
    write_images(P("cut.gz"), true, 20, 25, 40, px, N);
    size_t len;
    uint8_t *bytes = read_bytes(P("cut.gz"), &len);
    write_bytes(P("cut.gz"), bytes, len / 2);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("cut.gz"), &s, &err), -1);
    assert_contains(err.msg, P("cut.gz: truncated: expected 20000 bytes of pixels, got"));
    free(bytes);
    free(px);
}

/* Stored (uncompressed) gzip of an IDX file of n 1x1 images; its size in bytes. */
static size_t write_stored_idx(const char *path, int n)
{
    uint8_t *px = malloc((size_t)n);
    for (int i = 0; i < n; i++) px[i] = (uint8_t)(i * 7);
    uint8_t hdr[16] = {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1};
    put_be32(hdr + 4, (uint32_t)n);
    gzFile g = gzopen(path, "wb0");
    cr_assert_not_null(g);
    cr_assert_eq(gzwrite(g, hdr, sizeof hdr), (int)sizeof hdr);
    cr_assert_eq(gzwrite(g, px, (unsigned)n), n);
    cr_assert_eq(gzclose(g), Z_OK);
    free(px);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return (size_t)st.st_size;
}

/* A byte changed inside the stream (stored blocks, so the stream itself stays valid), or in
 * the trailer's CRC-32 or length, is caught by the gzip check. The file is sized so that its
 * 8-byte trailer starts a new 8 KiB input chunk of zlib's: a reader that stops at the last
 * pixel then never looks at the trailer, which is how a corrupt file used to be read. */
Test(data, idx_gzip_trailer_is_checked)
{
    int n = 1 << 19;
    size_t len = write_stored_idx(P("stored.gz"), n);
    for (int tries = 0; (len - 8) % 8192 != 0 && tries < 8; tries++)
        len = write_stored_idx(P("stored.gz"), n += (int)(8192 - (len - 8) % 8192));
    cr_assert_eq((len - 8) % 8192, 0, "could not place the trailer at a chunk boundary");
    uint8_t *good = read_bytes(P("stored.gz"), &len);
    const uint8_t pattern[8] = {0x00, 0x07, 0x0e, 0x15, 0x1c, 0x23, 0x2a, 0x31}; /* pixels 0, 7, 14, ... */
    const uint8_t *pixel = memmem(good + len / 2, len / 2, pattern, sizeof pattern);
    cr_assert_not_null(pixel);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("stored.gz"), &s, &err), 0, "%s", err.msg);
    imageset_free(&s);
    const struct { size_t at; const char *says; } cases[] = {
        {(size_t)(pixel - good) + 3, "incorrect data check"}, /* a pixel, mid-stream */
        {len - 8, "incorrect data check"},                    /* the CRC-32 */
        {len - 3, "incorrect length check"},                  /* the length */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t *bad = malloc(len);
        memcpy(bad, good, len);
        bad[cases[k].at] ^= 0x40;
        write_bytes(P("bad.gz"), bad, len);
        free(bad);
        err = (Error){{0}};
        cr_assert_eq(idx_read_images(P("bad.gz"), &s, &err), -1, "byte %zu changed was not noticed", cases[k].at);
        assert_contains(err.msg, P("bad.gz: corrupt gzip data: %s", cases[k].says));
    }
    free(good);
}

Test(data, idx_data_beyond_the_header_is_an_error)
{
    uint8_t px[41] = {0};
    write_images(P("long"), false, 1, 5, 8, px, sizeof px); /* 40 pixels announced, 41 there */
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("long"), &s, &err), -1);
    assert_contains(err.msg, P("long: more data after the pixels the header announces"));
}

Test(data, idx_missing_file)
{
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(idx_read_images(P("nope.gz"), &s, &err), -1);
    assert_contains(err.msg, P("nope.gz: No such file or directory"));
}

/* ---- Fashion-MNIST layout from fixtures ---- */

static void write_fashion(const char *root, int ntrain, int ntrain_labels, uint8_t bad_label)
{
    mkdirs(root);
    char path[600];
    uint8_t px[6 * 9], lab[6];
    for (int i = 0; i < 6 * 9; i++) px[i] = (uint8_t)(i * 4);
    for (int i = 0; i < 6; i++) lab[i] = (uint8_t)(i % 10);
    lab[1] = bad_label ? bad_label : lab[1];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", root);
    write_images(path, true, (uint32_t)ntrain, 3, 3, px, (size_t)ntrain * 9);
    snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte.gz", root);
    write_labels(path, true, (uint32_t)ntrain_labels, lab, (size_t)ntrain_labels);
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte.gz", root);
    write_images(path, true, 2, 3, 3, px + 9, 18);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte", root); /* uncompressed copy */
    write_labels(path, false, 2, lab + 2, 2);
}

Test(data, fashion_layout_from_fixtures)
{
    write_fashion(P("fm"), 6, 6, 0);
    DataOptions opt = {.name = "fashion-mnist", .root = P("fm"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_str_eq(ds->name, "fashion-mnist");
    cr_assert_eq(ds->classes, 10);
    cr_assert_str_eq(ds->class_names[0], "T-shirt/top");
    cr_assert_str_eq(ds->class_names[9], "Ankle boot");
    cr_assert_eq(ds->train.count, 6);
    cr_assert_eq(ds->test.count, 2);
    cr_assert_eq(ds->train.h, 3);
    cr_assert_eq(ds->train.labels[5], 5);
    cr_assert_eq(ds->test.labels[0], 2);
    cr_assert_eq(ds->test.pixels[0], 36);
    /* mean/std of the 54 training pixels 0, 4, ..., 212 on the 0..1 scale */
    double m = 0, v = 0;
    for (int i = 0; i < 54; i++) m += i * 4 / 255.0;
    m /= 54;
    for (int i = 0; i < 54; i++) v += (i * 4 / 255.0 - m) * (i * 4 / 255.0 - m);
    v /= 54;
    cr_assert_float_eq(ds->mean[0], m, 1e-6);
    cr_assert_float_eq(ds->std[0], sqrt(v), 1e-6);
    dataset_free(ds);
    free(ds);
}

Test(data, fashion_label_count_mismatch)
{
    write_fashion(P("fm"), 6, 5, 0);
    DataOptions opt = {.name = "fashion-mnist", .root = P("fm"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, "fashion-mnist: ");
    assert_contains(err.msg, P("fm/train-labels-idx1-ubyte.gz has 5 labels"));
    assert_contains(err.msg, P("fm/train-images-idx3-ubyte.gz has 6 images"));
    cr_assert_null(ds->train.pixels);
    free(ds);
}

Test(data, fashion_label_out_of_range)
{
    write_fashion(P("fm"), 6, 6, 10);
    DataOptions opt = {.name = "fashion-mnist", .root = P("fm"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, P("fm/train-labels-idx1-ubyte.gz: label 10 of item 1 is out of range (10 classes)"));
    free(ds);
}

Test(data, fashion_missing_files)
{
    mkdirs(P("empty"));
    DataOptions opt = {.name = "fashion-mnist", .root = P("empty"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    char want[600];
    snprintf(want, sizeof want, "fashion-mnist: %s/empty/train-images-idx3-ubyte.gz: No such file or directory", tmp);
    cr_assert_str_eq(err.msg, want);
    free(ds);
}

Test(data, fashion_real, .timeout = 60)
{
    if (access(FASHION_DIR "/train-images-idx3-ubyte.gz", R_OK) != 0)
        cr_skip_test("Fashion-MNIST not installed (make deps)");
    DataOptions opt = {.name = "fashion-mnist", .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_eq(ds->train.count, 60000);
    cr_assert_eq(ds->test.count, 10000);
    cr_assert_eq(ds->train.c, 1);
    cr_assert_eq(ds->train.h, 28);
    cr_assert_eq(ds->train.w, 28);
    cr_assert_eq(ds->test.h, 28);
    for (int i = 0; i < ds->train.count; i++) cr_assert_lt(ds->train.labels[i], 10);
    for (int i = 0; i < ds->test.count; i++) cr_assert_lt(ds->test.labels[i], 10);
    /* Checked against the files: zcat ...labels... | od -An -tu1 -j8 -N4 gives 9 0 0 3 (train), 9 2 1 1 (test). */
    cr_assert_eq(ds->train.labels[0], 9);
    cr_assert_eq(ds->train.labels[3], 3);
    cr_assert_eq(ds->test.labels[1], 2);
    cr_assert_float_eq(ds->mean[0], 0.2860f, 5e-4); /* the well-known Fashion-MNIST statistics */
    cr_assert_float_eq(ds->std[0], 0.3530f, 5e-4);
    dataset_free(ds);
    free(ds);
}

/* ---- image folders ---- */

static int read_folder(const char *dir, const char *cache, int max_classes, ImageSet *s, char (*names)[32],
                       int *classes, Error *err)
{
    FolderOptions o = {.cache_path = cache, .max_classes = max_classes};
    return imagefolder_read(dir, &o, s, names, classes, err);
}

static bool cache_valid(const char *cache, int max_classes)
{
    FolderOptions o = {.cache_path = cache, .max_classes = max_classes};
    return imagefolder_cache_valid(&o);
}

Test(data, imagefolder_class_and_file_order)
{
    /* strcmp order: "C" < "a" < "b"; "10.jpeg" < "2.jpg"; "a.jpg" < "y.JPG" */
    mkdirs(P("f/C"));
    mkdirs(P("f/a"));
    mkdirs(P("f/b"));
    mkdirs(P("f/.hidden"));
    write_flat_jpeg(P("f/C/2.jpg"), 4, 3, 30, 31, 32);
    write_flat_jpeg(P("f/C/10.jpeg"), 4, 3, 40, 41, 42);
    write_flat_jpeg(P("f/a/x.JPEG"), 4, 3, 50, 51, 52);
    write_flat_jpeg(P("f/b/y.JPG"), 4, 3, 60, 61, 62);
    write_flat_jpeg(P("f/b/a.jpg"), 4, 3, 70, 71, 72);
    write_flat_jpeg(P("f/.hidden/z.jpg"), 4, 3, 99, 99, 99);
    write_bytes(P("f/b/notes.txt"), "x", 1);
    write_bytes(P("f/readme.txt"), "x", 1);
    ImageSet s = {0};
    char names[8][32];
    int classes = 0;
    Error err = {{0}};
    cr_assert_eq(read_folder(P("f"), NULL, 8, &s, names, &classes, &err), 0, "%s", err.msg);
    cr_assert_eq(classes, 3);
    cr_assert_str_eq(names[0], "C");
    cr_assert_str_eq(names[1], "a");
    cr_assert_str_eq(names[2], "b");
    cr_assert_eq(s.count, 5, "count %d", s.count);
    cr_assert_eq(s.c, 3);
    cr_assert_eq(s.h, 3);
    cr_assert_eq(s.w, 4);
    int want_label[5] = {0, 0, 1, 2, 2}, want_value[5] = {40, 30, 50, 70, 60};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(s.labels[i], want_label[i], "label %d", i);
        for (int ch = 0; ch < 3; ch++)
            for (int p = 0; p < 12; p++)
                cr_assert_leq(absdiff(s.pixels[(size_t)i * 36 + ch * 12 + p], want_value[i] + ch), 2,
                              "image %d channel %d pixel %d: %d", i, ch, p, s.pixels[(size_t)i * 36 + ch * 12 + p]);
    }
    imageset_free(&s);
    /* more class folders than max_classes */
    cr_assert_eq(read_folder(P("f"), NULL, 2, &s, names, &classes, &err), -1);
    assert_contains(err.msg, "3 class folders, at most 2");
}

/* A smooth RGB pattern, 16 wide and 12 high, so a transposed decode would show. */
static void gradient(uint8_t *hwc, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = hwc + 3 * (y * w + x);
            p[0] = (uint8_t)(20 + 12 * x), p[1] = (uint8_t)(30 + 15 * y), p[2] = (uint8_t)(200 - 5 * x - 4 * y);
        }
}

Test(data, jpeg_decode_matches_encoded_pixels)
{
    enum { W = 16, H = 12 };
    uint8_t hwc[W * H * 3];
    gradient(hwc, W, H);
    mkdirs(P("g/only"));
    write_jpeg(P("g/only/img.jpg"), hwc, W, H, 3, 100);
    ImageSet s = {0};
    char names[4][32];
    int classes = 0;
    Error err = {{0}};
    cr_assert_eq(read_folder(P("g"), NULL, 4, &s, names, &classes, &err), 0, "%s", err.msg);
    cr_assert_eq(s.h, H);
    cr_assert_eq(s.w, W);
    int worst = 0;
    double total = 0;
    for (int ch = 0; ch < 3; ch++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int d = absdiff(s.pixels[ch * W * H + y * W + x], hwc[3 * (y * W + x) + ch]);
                worst = d > worst ? d : worst;
                total += d;
            }
    cr_assert_leq(worst, 4, "max abs error %d", worst);
    cr_assert_lt(total / (W * H * 3), 1.0, "mean abs error %f", total / (W * H * 3));
    imageset_free(&s);
}

Test(data, jpeg_grayscale_becomes_three_equal_channels)
{
    enum { W = 8, H = 8 };
    uint8_t g[W * H];
    for (int i = 0; i < W * H; i++) g[i] = (uint8_t)(60 + 2 * i);
    mkdirs(P("g/k"));
    write_jpeg(P("g/k/gray.jpg"), g, W, H, 1, 100);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("g"), NULL, 4, &s, NULL, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(s.c, 3);
    for (int p = 0; p < W * H; p++) {
        cr_assert_eq(s.pixels[p], s.pixels[W * H + p]);
        cr_assert_eq(s.pixels[p], s.pixels[2 * W * H + p]);
        cr_assert_leq(absdiff(s.pixels[p], g[p]), 3, "pixel %d: %d vs %d", p, s.pixels[p], g[p]);
    }
    imageset_free(&s);
}

Test(data, jpeg_truncated_is_an_error)
{
    /* Big enough that the cut falls in the compressed pixels, past the headers, where
     * libjpeg only warns (and would fill the rest with grey). */
    enum { W = 64, H = 64 };
    uint8_t hwc[W * H * 3];
    for (int i = 0; i < W * H * 3; i++) hwc[i] = (uint8_t)(i * 7 + (i / 3) % 13 * 19);
    mkdirs(P("c/k"));
    write_jpeg(P("c/k/a.jpg"), hwc, W, H, 3, 95);
    write_jpeg(P("c/k/b.jpg"), hwc, W, H, 3, 95);
    size_t len;
    uint8_t *bytes = read_bytes(P("c/k/b.jpg"), &len);
    write_bytes(P("c/k/b.jpg"), bytes, len * 2 / 3);
    free(bytes);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("c"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("c/k/b.jpg: bad JPEG: Premature end of JPEG file"));
    cr_assert_null(s.pixels);
}

Test(data, jpeg_garbage_is_an_error)
{
    mkdirs(P("c/k"));
    write_flat_jpeg(P("c/k/a.jpg"), 4, 4, 1, 2, 3);
    write_bytes(P("c/k/z.jpeg"), "this is not a JPEG file at all", 30);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("c"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("c/k/z.jpeg: bad JPEG: "));
    write_bytes(P("c/k/z.jpeg"), "", 0);
    cr_assert_eq(read_folder(P("c"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("c/k/z.jpeg: bad JPEG: "));
}

/* A header claiming 65500 x 65500 pixels is refused before anything is allocated for it. */
Test(data, jpeg_huge_header_is_refused_before_decoding)
{
    mkdirs(P("h/k"));
    write_flat_jpeg(P("h/k/a.jpg"), 8, 8, 1, 2, 3);
    size_t len;
    uint8_t *b = read_bytes(P("h/k/a.jpg"), &len);
    size_t sof = 0;
    for (size_t i = 2; i + 9 < len && !sof; i++)
        if (b[i] == 0xFF && b[i + 1] == 0xC0) sof = i; /* baseline frame: FF C0, length, precision, H, W */
    cr_assert(sof, "no SOF0 marker");
    b[sof + 5] = 0xFF, b[sof + 6] = 0xDC, b[sof + 7] = 0xFF, b[sof + 8] = 0xDC;
    write_bytes(P("h/k/a.jpg"), b, len);
    free(b);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("h"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("h/k/a.jpg: bad JPEG: 65500 x 65500 pixels, beyond the 16384-pixel side"));
}

Test(data, imagefolder_sizes_must_agree)
{
    mkdirs(P("s/a"));
    mkdirs(P("s/b"));
    write_flat_jpeg(P("s/a/1.jpg"), 8, 8, 1, 2, 3);
    write_flat_jpeg(P("s/b/1.jpg"), 8, 6, 1, 2, 3);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("s"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("s/b/1.jpg: image is 8x6"));
}

Test(data, imagefolder_empty_is_an_error)
{
    mkdirs(P("e"));
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("e"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("e: no class folders"));
    mkdirs(P("e/k"));
    cr_assert_eq(read_folder(P("e"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("e: no .jpg/.jpeg files"));
    cr_assert_eq(read_folder(P("missing"), NULL, 4, &s, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("missing: No such file or directory"));
}

static void read_ok(const char *dir, const char *cache, ImageSet *s, char (*names)[32], int *classes)
{
    Error err = {{0}};
    cr_assert_eq(read_folder(dir, cache, 8, s, names, classes, &err), 0, "%s", err.msg);
}

Test(data, cache_is_used_and_rebuilt)
{
    enum { W = 16, H = 12 };
    uint8_t hwc[W * H * 3];
    gradient(hwc, W, H);
    mkdirs(P("d/cats"));
    mkdirs(P("d/dogs"));
    write_jpeg(P("d/cats/1.jpg"), hwc, W, H, 3, 90);
    write_flat_jpeg(P("d/cats/2.jpg"), W, H, 10, 20, 30);
    write_jpeg(P("d/dogs/1.jpg"), hwc, W, H, 3, 50);
    char cache[512];
    snprintf(cache, sizeof cache, "%s", P("d.cache"));
    cr_assert(!cache_valid(cache, 8));

    ImageSet first = {0}, again = {0};
    char names[8][32], names2[8][32];
    int classes = 0, classes2 = 0;
    read_ok(P("d"), cache, &first, names, &classes);
    cr_assert_not_null(first.map, "a cached set is mapped from the cache file");
    /* kept apart: the test truncates the file the mapping shows */
    uint8_t *want_px = malloc(3 * 3 * W * H);
    memcpy(want_px, first.pixels, 3 * 3 * W * H);
    long want = 8 + 24 + 48 + 2 * 32 + 3 * 2 + 3 * (3 * W * H);
    cr_assert_eq(file_size(cache), want);
    cr_assert(cache_valid(cache, 8));
    cr_assert(!cache_valid(cache, 1), "a cache with more classes than allowed is not valid");

    /* Corrupt a JPEG: the read must come from the cache, identical. */
    write_bytes(P("d/dogs/1.jpg"), "garbage", 7);
    memset(names2, 0, sizeof names2);
    read_ok(P("d"), cache, &again, names2, &classes2);
    cr_assert_eq(classes2, 2);
    cr_assert_str_eq(names2[0], "cats");
    cr_assert_str_eq(names2[1], "dogs");
    cr_assert_eq(again.count, 3);
    cr_assert_eq(again.c, 3);
    cr_assert_eq(again.h, H);
    cr_assert_eq(again.w, W);
    cr_assert_arr_eq(again.pixels, want_px, 3 * 3 * W * H);
    cr_assert_arr_eq(again.labels, first.labels, 3 * sizeof *first.labels);
    cr_assert(again.has_stats && first.has_stats);
    cr_assert_arr_eq(again.mean, first.mean, sizeof first.mean, "statistics stored in the cache");
    imageset_free(&again);

    /* Truncated cache: ignored, so the corrupt JPEG is decoded and reported. */
    cr_assert_eq(truncate(cache, want - 1), 0);
    cr_assert(!cache_valid(cache, 8));
    Error err = {{0}};
    cr_assert_eq(read_folder(P("d"), cache, 8, &again, NULL, NULL, &err), -1);
    assert_contains(err.msg, P("d/dogs/1.jpg: bad JPEG"));

    /* Repaired JPEG: decoded again and the cache rewritten whole. */
    write_jpeg(P("d/dogs/1.jpg"), hwc, W, H, 3, 50);
    read_ok(P("d"), cache, &again, NULL, NULL);
    cr_assert_eq(file_size(cache), want);
    cr_assert_arr_eq(again.pixels, want_px, 3 * 3 * W * H);
    imageset_free(&again);

    /* A cache with a wrong magic is ignored and replaced as well. */
    FILE *f = fopen(cache, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fputc('X', f), 'X');
    cr_assert_eq(fclose(f), 0);
    cr_assert(!cache_valid(cache, 8));
    read_ok(P("d"), cache, &again, NULL, NULL);
    cr_assert(cache_valid(cache, 8));
    cr_assert_arr_eq(again.pixels, want_px, 3 * 3 * W * H);
    imageset_free(&again);

    /* No temporary files left beside the cache. */
    cr_assert_eq(count_entries(tmp, "d.cache"), 1);
    imageset_free(&first);
    free(want_px);
}

Test(data, imagefolder_dataset_train_test)
{
    mkdirs(P("r/train/x"));
    mkdirs(P("r/train/y"));
    mkdirs(P("r/test/x"));
    mkdirs(P("r/test/y"));
    write_flat_jpeg(P("r/train/x/1.jpg"), 4, 4, 0, 0, 0);
    write_flat_jpeg(P("r/train/y/1.jpg"), 4, 4, 255, 255, 255);
    write_flat_jpeg(P("r/test/x/1.jpg"), 4, 4, 0, 0, 0);
    write_flat_jpeg(P("r/test/y/1.jpg"), 4, 4, 255, 255, 255);
    DataOptions opt = {.name = "imagefolder", .root = P("r"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_eq(ds->classes, 2);
    cr_assert_str_eq(ds->class_names[1], "y");
    cr_assert_eq(ds->test.count, 2);
    cr_assert_float_eq(ds->mean[1], 0.5, 0.01);
    cr_assert_float_eq(ds->std[2], 0.5, 0.01);
    cr_assert_gt(file_size(P("r/train.bbimg")), 0);
    cr_assert_gt(file_size(P("r/test.bbimg")), 0);
    dataset_free(ds);

    mkdirs(P("r/test/z"));
    write_flat_jpeg(P("r/test/z/1.jpg"), 4, 4, 9, 9, 9);
    remove(P("r/test.bbimg"));
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, "different class folders");
    opt.root = NULL;
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, "imagefolder: needs a root");
    free(ds);
}

/* A symbolic link in the cache's place is not read as the cache (it is rebuilt and renamed over
 * the link, which is left pointing nowhere it could write). */
Test(data, cache_behind_a_symlink_is_not_read)
{
    mkdirs(P("n/x"));
    write_flat_jpeg(P("n/x/1.jpg"), 4, 4, 1, 2, 3);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_folder(P("n"), P("real.bbimg"), 4, &s, NULL, NULL, &err), 0, "%s", err.msg);
    imageset_free(&s);
    cr_assert(cache_valid(P("real.bbimg"), 4));
    cr_assert_eq(symlink(P("real.bbimg"), P("link.bbimg")), 0);
    cr_assert(!cache_valid(P("link.bbimg"), 4), "a cache was read through a symbolic link");
    cr_assert_eq(read_folder(P("n"), P("link.bbimg"), 4, &s, NULL, NULL, &err), 0, "%s", err.msg);
    imageset_free(&s);
    struct stat st;
    cr_assert_eq(lstat(P("link.bbimg"), &st), 0);
    cr_assert(S_ISREG(st.st_mode), "the rebuilt cache did not replace the link");
}

/* Splits of different image sizes: the error names the data's folder. */
Test(data, imagefolder_split_sizes_must_agree)
{
    mkdirs(P("q/train/x"));
    mkdirs(P("q/test/x"));
    write_flat_jpeg(P("q/train/x/1.jpg"), 8, 8, 0, 0, 0);
    write_flat_jpeg(P("q/test/x/1.jpg"), 6, 6, 0, 0, 0);
    DataOptions opt = {.name = "imagefolder", .root = P("q"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, P("q: train images are 3x8x8 but test images are 3x6x6"));
    cr_assert_eq(strncmp(err.msg, "imagefolder: ", 13), 0, "%s", err.msg);
    free(ds);
}

/* ---- image folders of any size (ImageNet): --image-size ---- */

static int read_sized(const char *dir, const char *cache, int size, int max_classes, ImageSet *s, Error *err)
{
    FolderOptions o = {.cache_path = cache, .image_size = size, .max_classes = max_classes};
    return imagefolder_read(dir, &o, s, NULL, NULL, err);
}

Test(data, imagefolder_scales_mixed_sizes)
{
    mkdirs(P("m/a"));
    mkdirs(P("m/b"));
    write_flat_jpeg(P("m/a/1.jpg"), 40, 30, 200, 100, 50);
    write_flat_jpeg(P("m/a/2.jpg"), 64, 64, 10, 20, 30);
    write_flat_jpeg(P("m/b/1.jpg"), 20, 50, 90, 180, 250);
    write_flat_jpeg(P("m/b/2.jpg"), 9, 11, 60, 60, 60); /* enlarged */
    const int want[4][3] = {{200, 100, 50}, {10, 20, 30}, {90, 180, 250}, {60, 60, 60}};
    Error err = {{0}};
    ImageSet s = {0}, again = {0};
    cr_assert_eq(read_sized(P("m"), NULL, 0, 8, &s, &err), -1, "native size needs one size");
    assert_contains(err.msg, "all images must have one size; or give --image-size");
    const char *cache = strdup(P("m.16.bbimg"));
    cr_assert_eq(read_sized(P("m"), cache, 16, 8, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.count, 4);
    cr_assert_eq(s.h, 16);
    cr_assert_eq(s.w, 16);
    cr_assert_not_null(s.map);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(s.labels[i], i / 2);
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < 256; p++)
                cr_assert_leq(absdiff(s.pixels[(size_t)i * 768 + c * 256 + p], want[i][c]), 3, "image %d ch %d px %d: %d",
                              i, c, p, s.pixels[(size_t)i * 768 + c * 256 + p]);
    }
    /* the stored statistics are those of the stored pixels */
    float mean[3], sd[3];
    ImageSet plain = s;
    plain.has_stats = false;
    imageset_stats(&plain, mean, sd);
    cr_assert(s.has_stats);
    cr_assert_arr_eq(mean, s.mean, sizeof mean);
    cr_assert_arr_eq(sd, s.std, sizeof sd);
    /* a cache is valid only for its own size */
    FolderOptions o = {.cache_path = cache, .image_size = 16, .max_classes = 8};
    cr_assert(imagefolder_cache_valid(&o));
    o.image_size = 24;
    cr_assert(!imagefolder_cache_valid(&o));
    o.image_size = 0;
    cr_assert(!imagefolder_cache_valid(&o));
    /* read back from the cache, identical, after the folder is gone */
    write_bytes(P("m/a/1.jpg"), "gone", 4);
    cr_assert_eq(read_sized(P("m"), cache, 16, 8, &again, &err), 0, "%s", err.msg);
    cr_assert_arr_eq(again.pixels, s.pixels, 4 * 768);
    /* a subset of a mapped set moves to memory */
    imageset_keep_spread(&again, 2);
    cr_assert_null(again.map);
    cr_assert_eq(again.count, 2);
    cr_assert_arr_eq(again.pixels + 768, s.pixels + 2 * 768, 768);
    cr_assert_eq(again.labels[1], 1);
    imageset_free(&again);
    imageset_free(&s);
    free((void *)cache);
}

/* A flat CMYK JPEG as Photoshop writes them (Adobe marker, inverted values): stored
 * (c, m, y, k) = (R, G, B, 255) means the colour (R, G, B) with no black. */
static void write_cmyk_jpeg(const char *path, int w, int h, uint8_t r, uint8_t g, uint8_t b)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "open %s", path);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 4;
    c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 100, TRUE);
    cr_assert(c.write_Adobe_marker, "libjpeg marks CMYK files as Adobe's");
    jpeg_start_compress(&c, TRUE);
    uint8_t *row = malloc((size_t)w * 4);
    for (int x = 0; x < w; x++) row[4 * x] = r, row[4 * x + 1] = g, row[4 * x + 2] = b, row[4 * x + 3] = 255;
    while (c.next_scanline < c.image_height) jpeg_write_scanlines(&c, &row, 1);
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    cr_assert_eq(fclose(f), 0);
}

Test(data, imagefolder_reads_cmyk)
{
    mkdirs(P("cm/k"));
    write_cmyk_jpeg(P("cm/k/a.jpg"), 24, 16, 200, 100, 50);
    write_flat_jpeg(P("cm/k/b.jpg"), 24, 16, 200, 100, 50);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_sized(P("cm"), NULL, 0, 4, &s, &err), 0, "%s", err.msg);
    const int want[3] = {200, 100, 50};
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < 24 * 16; p++)
                cr_assert_leq(absdiff(s.pixels[(size_t)i * 3 * 384 + c * 384 + p], want[c]), 3, "image %d ch %d: %d", i,
                              c, s.pixels[(size_t)i * 3 * 384 + c * 384 + p]);
    imageset_free(&s);
}

Test(data, imagefolder_reports_the_first_bad_file_in_order)
{
    /* Decoding runs on several threads; the error must not depend on which is faster. */
    mkdirs(P("o/k"));
    for (int i = 0; i < 64; i++) write_flat_jpeg(P("o/k/%02d.jpg", i), 8, 8, 1, 2, 3);
    write_bytes(P("o/k/25.jpg"), "bad", 3);
    write_bytes(P("o/k/50.jpg"), "bad", 3);
    for (int run = 0; run < 5; run++) {
        ImageSet s = {0};
        Error err = {{0}};
        cr_assert_eq(read_sized(P("o"), NULL, 0, 4, &s, &err), -1);
        assert_contains(err.msg, P("o/k/25.jpg: bad JPEG"));
    }
}

Test(data, imagefolder_more_than_256_classes)
{
    for (int k = 0; k < 300; k++) {
        mkdirs(P("many/n%04d", k));
        write_flat_jpeg(P("many/n%04d/x.jpg", k), 2, 2, (uint8_t)k, 0, 0);
    }
    ImageSet s = {0};
    Error err = {{0}};
    char (*names)[32] = calloc(1000, 32);
    int classes = 0;
    FolderOptions o = {.cache_path = P("many.bbimg"), .max_classes = 1000};
    cr_assert_eq(imagefolder_read(P("many"), &o, &s, names, &classes, &err), 0, "%s", err.msg);
    cr_assert_eq(classes, 300);
    cr_assert_eq(s.labels[299], 299);
    cr_assert_str_eq(names[299], "n0299");
    imageset_free(&s);
    memset(names, 0, 1000 * 32);
    cr_assert_eq(imagefolder_read(P("many"), &o, &s, names, &classes, &err), 0, "%s", err.msg);
    cr_assert_eq(s.labels[299], 299, "labels survive the cache");
    cr_assert_str_eq(names[256], "n0256");
    imageset_free(&s);
    free(names);
}

Test(data, cache_on_a_full_disk_is_an_error)
{
    /* A file-size limit stands in for a full disk: the cache's space is reserved before
     * any pixel is written, so the decode fails with a message, not SIGBUS/SIGXFSZ. */
    mkdirs(P("full/k"));
    for (int i = 0; i < 4; i++) write_flat_jpeg(P("full/k/%d.jpg", i), 32, 32, 5, 5, 5);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {4096, 4096};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    ImageSet s = {0};
    Error err = {{0}};
    cr_assert_eq(read_sized(P("full"), P("full.bbimg"), 0, 4, &s, &err), -1);
    assert_contains(err.msg, P("full.bbimg: cannot write cache"));
    cr_assert_eq(count_entries(tmp, "full.bbimg"), 0, "no cache and no temporary file left");
    cr_assert_null(s.pixels);
}

Test(data, imagefolder_val_is_the_test_split)
{
    mkdirs(P("inet/train/n01"));
    mkdirs(P("inet/train/n02"));
    mkdirs(P("inet/val/n01"));
    mkdirs(P("inet/val/n02"));
    write_flat_jpeg(P("inet/train/n01/a.JPEG"), 50, 40, 0, 0, 0);
    write_flat_jpeg(P("inet/train/n02/a.JPEG"), 30, 60, 255, 255, 255);
    write_flat_jpeg(P("inet/val/n01/a.JPEG"), 20, 20, 0, 0, 0);
    write_flat_jpeg(P("inet/val/n02/a.JPEG"), 80, 30, 255, 255, 255);
    DataOptions opt = {.name = "imagefolder", .root = P("inet"), .image_size = 12, .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_eq(ds->test.count, 2);
    cr_assert_eq(ds->test.h, 12);
    cr_assert_eq(ds->test.labels[1], 1);
    cr_assert_gt(file_size(P("inet/train.12.bbimg")), 0);
    cr_assert_gt(file_size(P("inet/val.12.bbimg")), 0);
    dataset_free(ds);
    free(ds);
}

/* ---- CIFAR-10 from a tarball ---- */

/* A tarball whose dataset folder is a symbolic link (to a folder with train/ elsewhere) is
 * refused: unpacked, it would send the dataset and its caches there. */
Test(data, cifar10_tarball_with_a_symlinked_folder_is_refused, .timeout = 60)
{
    mkdirs(P("elsewhere/train/cat"));
    mkdirs(P("src"));
    cr_assert_eq(symlink(P("elsewhere"), P("src/cifar10-jpeg")), 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "tar czf '%s' -C '%s' cifar10-jpeg", P("l.tar.gz"), P("src"));
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(setenv("BIGBATCH_CIFAR10_TAR", P("l.tar.gz"), 1), 0);
    DataOptions opt = {.name = "cifar10", .root = P("data/cifar10-jpeg"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, "does not contain a dataset folder with train/ in it");
    struct stat st;
    cr_assert_neq(lstat(P("data/cifar10-jpeg"), &st), 0, "the link was put in the dataset's place");
    free(ds);
}

Test(data, cifar10_unpacks_tarball_then_caches, .timeout = 60)
{
    mkdirs(P("src/cifar10-jpeg/train/cat"));
    mkdirs(P("src/cifar10-jpeg/train/dog"));
    mkdirs(P("src/cifar10-jpeg/test/cat"));
    mkdirs(P("src/cifar10-jpeg/test/dog"));
    write_flat_jpeg(P("src/cifar10-jpeg/train/cat/0000.jpg"), 32, 32, 10, 10, 10);
    write_flat_jpeg(P("src/cifar10-jpeg/train/cat/0001.jpg"), 32, 32, 20, 20, 20);
    write_flat_jpeg(P("src/cifar10-jpeg/train/dog/0000.jpg"), 32, 32, 30, 30, 30);
    write_flat_jpeg(P("src/cifar10-jpeg/test/cat/0000.jpg"), 32, 32, 40, 40, 40);
    write_flat_jpeg(P("src/cifar10-jpeg/test/dog/0000.jpg"), 32, 32, 50, 50, 50);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "tar czf '%s' -C '%s' cifar10-jpeg", P("c.tar.gz"), P("src"));
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(setenv("BIGBATCH_CIFAR10_TAR", P("c.tar.gz"), 1), 0);

    DataOptions opt = {.name = "cifar10", .root = P("data/cifar10-jpeg"), .quiet = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_eq(ds->classes, 2);
    cr_assert_str_eq(ds->class_names[0], "cat");
    cr_assert_eq(ds->train.count, 3);
    cr_assert_eq(ds->test.count, 2);
    cr_assert_eq(ds->train.h, 32);
    cr_assert_eq(ds->train.labels[2], 1);
    cr_assert_leq(absdiff(ds->train.pixels[2 * 3 * 32 * 32], 30), 2);
    cr_assert(cache_valid(P("data/cifar10-jpeg/train.bbimg"), 1000));
    cr_assert(cache_valid(P("data/cifar10-jpeg/test.bbimg"), 1000));
    dataset_free(ds);
    /* Only the dataset folder is left in data/ (the temporary unpack folder is gone). */
    cr_assert_eq(count_entries(P("data"), ""), 1);

    /* Second load: no tarball needed any more. */
    cr_assert_eq(setenv("BIGBATCH_CIFAR10_TAR", P("gone.tar.gz"), 1), 0);
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_eq(ds->train.count, 3);
    dataset_free(ds);

    /* A fresh root with no tarball: the error names both. */
    opt.root = P("other/cifar10-jpeg");
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, P("other/cifar10-jpeg/train: No such file or directory"));
    assert_contains(err.msg, P("gone.tar.gz"));
    assert_contains(err.msg, "BIGBATCH_CIFAR10_TAR");
    free(ds);
}

/* ---- batch assembly ---- */

static ImageSet small_set(int count, int c, int h, int w)
{
    ImageSet s = {.count = count, .c = c, .h = h, .w = w};
    s.pixels = malloc((size_t)count * c * h * w);
    s.labels = malloc((size_t)count * sizeof *s.labels);
    for (int i = 0; i < count * c * h * w; i++) s.pixels[i] = (uint8_t)(i * 37 + 11);
    for (int i = 0; i < count; i++) s.labels[i] = (uint16_t)(count - 1 - i);
    return s;
}

Test(data, batch_normalization_exact)
{
    ImageSet s = small_set(3, 3, 2, 2);
    const float mean[3] = {0.25f, 0.5f, 0.75f}, std[3] = {0.5f, 0.25f, 2.0f};
    uint32_t idx[2] = {2, 0};
    real out[2 * 12];
    int32_t labels[2];
    batch_assemble(&s, idx, 2, mean, std, NULL, NULL, 0, out, labels);
    cr_assert_eq(labels[0], 0);
    cr_assert_eq(labels[1], 2);
    for (int i = 0; i < 2; i++)
        for (int ch = 0; ch < 3; ch++)
            for (int p = 0; p < 4; p++) {
                uint8_t px = s.pixels[idx[i] * 12 + ch * 4 + p];
                real want = ((real)px / (real)255 - (real)mean[ch]) / (real)std[ch];
                cr_assert_float_eq(out[i * 12 + ch * 4 + p], want, 1e-6, "image %d ch %d p %d", i, ch, p);
            }
    /* one value by hand: image 2's first pixel is (24*37+11) mod 256 = 131, and
     * (131/255 - 0.25) / 0.5 = 0.527451 */
    cr_assert_eq(s.pixels[24], 131);
    cr_assert_float_eq(out[0], 0.527451, 1e-6);
    imageset_free(&s);
}

/* Expected output for one image under crop offset (oy, ox) in [-pad, pad] and flip. */
static real expect_px(const ImageSet *s, int img, int ch, int y, int x, int oy, int ox, bool flip,
                      float m, float sd)
{
    int sy = y + oy, sx = (flip ? s->w - 1 - x : x) + ox;
    int v = sy >= 0 && sy < s->h && sx >= 0 && sx < s->w ? s->pixels[(size_t)img * s->c * s->h * s->w +
                                                                      (size_t)ch * s->h * s->w + sy * s->w + sx]
                                                       : 0;
    return ((real)v / (real)255 - (real)m) / (real)sd;
}

static bool matches(const ImageSet *s, int img, const real *out, int oy, int ox, bool flip, const float *m,
                    const float *sd)
{
    for (int ch = 0; ch < s->c; ch++)
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++)
                if (fabs(out[(ch * s->h + y) * s->w + x] - expect_px(s, img, ch, y, x, oy, ox, flip, m[ch], sd[ch])) >
                    1e-6)
                    return false;
    return true;
}

Test(data, batch_crop_and_flip_semantics)
{
    enum { N = 300, C = 2, H = 5, W = 6, PAD = 2 };
    ImageSet s = small_set(4, C, H, W);
    const float mean[2] = {0.3f, 0.6f}, std[2] = {0.2f, 0.4f};
    uint32_t idx[N];
    for (int i = 0; i < N; i++) idx[i] = (uint32_t)(i % 4);
    real *out = malloc(sizeof(real) * N * C * H * W);
    int32_t labels[N];
    Augment aug = {.random_crop = true, .crop_pad = PAD, .flip = true};
    Rng r;
    rng_seed(&r, 42, 3);
    batch_assemble(&s, idx, N, mean, std, &aug, &r, 0, out, labels);
    bool seen[2 * PAD + 1][2 * PAD + 1][2] = {{{false}}};
    for (int i = 0; i < N; i++) {
        cr_assert_eq(labels[i], 3 - (int)idx[i]);
        int found = 0;
        for (int oy = -PAD; oy <= PAD; oy++)
            for (int ox = -PAD; ox <= PAD; ox++)
                for (int f = 0; f < 2; f++)
                    if (matches(&s, (int)idx[i], out + (size_t)i * C * H * W, oy, ox, f, mean, std)) {
                        seen[oy + PAD][ox + PAD][f] = true;
                        found++;
                    }
        cr_assert_eq(found, 1, "image %d matches %d crop/flip combinations", i, found);
    }
    int combos = 0;
    for (int a = 0; a < 2 * PAD + 1; a++)
        for (int b = 0; b < 2 * PAD + 1; b++) combos += seen[a][b][0] + seen[a][b][1];
    cr_assert_geq(combos, 40, "only %d of 50 crop/flip combinations seen in %d draws", combos, N);
    /* The replayed rng draws give the same offsets: first image's crop and flip. */
    Rng r2;
    rng_seed(&r2, 42, 3);
    int oy = (int)rng_below(&r2, 2 * PAD + 1) - PAD, ox = (int)rng_below(&r2, 2 * PAD + 1) - PAD;
    bool flip = rng_below(&r2, 2) == 1;
    cr_assert(matches(&s, (int)idx[0], out, oy, ox, flip, mean, std), "documented draw order");
    free(out);
    imageset_free(&s);
}

Test(data, batch_crops_a_larger_stored_image)
{
    /* Stored 6x8, input 4x4: the centre crop at (1, 2); random crops at every offset
     * in 0..2 x 0..4, drawn as documented, and augment_skip skips exactly those draws. */
    enum { H = 6, W = 8, OH = 4, OW = 4, N = 200 };
    ImageSet s = small_set(1, 1, H, W);
    const float mean[1] = {0}, std[1] = {1};
    uint32_t idx[N] = {0};
    real *out = malloc(sizeof(real) * N * OH * OW);
    Augment centre = {.out_h = OH, .out_w = OW};
    batch_assemble(&s, idx, 1, mean, std, &centre, NULL, 0, out, NULL);
    for (int y = 0; y < OH; y++)
        for (int x = 0; x < OW; x++)
            cr_assert_eq(out[y * OW + x], (real)s.pixels[(y + 1) * W + x + 2] / (real)255, "centre (%d, %d)", y, x);
    Augment aug = {.out_h = OH, .out_w = OW, .random_crop = true, .crop_pad = 0};
    Rng r;
    rng_seed(&r, 9, 9);
    batch_assemble(&s, idx, N, mean, std, &aug, &r, 0, out, NULL);
    bool seen[H - OH + 1][W - OW + 1];
    memset(seen, 0, sizeof seen);
    Rng replay;
    rng_seed(&replay, 9, 9);
    for (int i = 0; i < N; i++) {
        int oy = (int)rng_below(&replay, H - OH + 1), ox = (int)rng_below(&replay, W - OW + 1);
        seen[oy][ox] = true;
        for (int y = 0; y < OH; y++)
            for (int x = 0; x < OW; x++)
                cr_assert_eq(out[(size_t)i * OH * OW + y * OW + x], (real)s.pixels[(y + oy) * W + x + ox] / (real)255,
                             "image %d at (%d, %d)", i, oy, ox);
    }
    for (int a = 0; a <= H - OH; a++)
        for (int b = 0; b <= W - OW; b++) cr_assert(seen[a][b], "offset (%d, %d) never drawn", a, b);
    /* skipping 7 images then assembling 1 gives the 8th image of the full batch */
    rng_seed(&r, 9, 9);
    augment_skip(&s, &aug, &r, 7);
    real one[OH * OW];
    batch_assemble(&s, idx, 1, mean, std, &aug, &r, 0, one, NULL);
    cr_assert_arr_eq(one, out + 7 * OH * OW, sizeof one);
    free(out);
    imageset_free(&s);
}

Test(data, batch_crop_is_the_same_on_any_thread_count)
{
    /* more images than one chunk of draws (256), so the chunks' order is in it too */
    enum { N = 600, C = 3, H = 9, W = 7, OH = 6, OW = 5 };
    ImageSet s = small_set(5, C, H, W);
    uint32_t idx[N];
    for (int i = 0; i < N; i++) idx[i] = (uint32_t)((i * 7) % 5);
    const size_t bytes = (size_t)N * C * OH * OW;
    uint8_t *one = malloc(bytes), *three = malloc(bytes);
    int32_t labels_one[N], labels_three[N];
    cr_assert(one && three);
    Augment aug = {.out_h = OH, .out_w = OW, .random_crop = true, .crop_pad = 2, .flip = true};
    Rng r1, r3;
    rng_seed(&r1, 5, 1);
    rng_seed(&r3, 5, 1);
    batch_crop(&s, idx, N, &aug, &r1, 0, one, labels_one, 1);
    batch_crop(&s, idx, N, &aug, &r3, 0, three, labels_three, 3);
    cr_assert_arr_eq(one, three, bytes, "the crops differ between 1 and 3 threads");
    cr_assert_arr_eq(labels_one, labels_three, sizeof labels_one);
    cr_assert_eq(r1.state, r3.state, "the draws left the generator in another state");
    free(one);
    free(three);
    imageset_free(&s);
}

Test(data, batch_augmentation_is_deterministic_per_seed)
{
    enum { N = 16, C = 3, H = 8, W = 8 };
    ImageSet s = small_set(N, C, H, W);
    const float mean[3] = {0.5f, 0.5f, 0.5f}, std[3] = {0.25f, 0.25f, 0.25f};
    uint32_t idx[N];
    for (int i = 0; i < N; i++) idx[i] = (uint32_t)i;
    Augment aug = {.random_crop = true, .crop_pad = 4, .flip = true};
    real a[N * C * H * W], b[N * C * H * W], c[N * C * H * W];
    Rng r;
    rng_seed(&r, 5, 0);
    batch_assemble(&s, idx, N, mean, std, &aug, &r, 0, a, NULL);
    rng_seed(&r, 5, 0);
    batch_assemble(&s, idx, N, mean, std, &aug, &r, 0, b, NULL);
    rng_seed(&r, 6, 0);
    batch_assemble(&s, idx, N, mean, std, &aug, &r, 0, c, NULL);
    cr_assert_arr_eq(a, b, sizeof a, "same seed, same batch");
    cr_assert(memcmp(a, c, sizeof a) != 0, "another seed, another batch");
    /* Padding shows as (0 - mean) / std somewhere in a pad-4 crop of 16 images. */
    int padded = 0;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) padded += a[i] == (real)((0.0f - 0.5f) / 0.25f);
    cr_assert_gt(padded, 100, "%d padded values", padded); /* about 12 black pixels exist */
    imageset_free(&s);
}

Test(data, batch_flip_mirrors)
{
    enum { N = 64, H = 3, W = 5 };
    ImageSet s = small_set(1, 1, H, W);
    const float mean[1] = {0}, std[1] = {1};
    uint32_t idx[N] = {0};
    real out[N * H * W];
    Augment aug = {.flip = true};
    Rng r;
    rng_seed(&r, 1, 1);
    batch_assemble(&s, idx, N, mean, std, &aug, &r, 0, out, NULL);
    int mirrored = 0, same = 0;
    for (int i = 0; i < N; i++) {
        bool is_same = true, is_mirror = true;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                real v = out[i * H * W + y * W + x];
                is_same &= v == (real)s.pixels[y * W + x] / (real)255;
                is_mirror &= v == (real)s.pixels[y * W + (W - 1 - x)] / (real)255;
            }
        cr_assert(is_same || is_mirror, "image %d is neither the original nor its mirror", i);
        same += is_same, mirrored += is_mirror;
    }
    cr_assert_gt(mirrored, 10);
    cr_assert_gt(same, 10);
    imageset_free(&s);
}

/* ---- synthetic ---- */

Test(data, synthetic_deterministic_and_learnable)
{
    DataOptions opt = {.name = "synthetic", .seed = 11, .quiet = true};
    Dataset *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, a, &err), 0, "%s", err.msg);
    cr_assert_eq(dataset_load(&opt, b, &err), 0, "%s", err.msg);
    cr_assert_eq(a->train.count, 1024);
    cr_assert_eq(a->test.count, 256);
    cr_assert_eq(a->train.c, 3);
    cr_assert_eq(a->train.h, 32);
    cr_assert_eq(a->train.w, 32);
    cr_assert_eq(a->classes, 10);
    cr_assert_arr_eq(a->train.pixels, b->train.pixels, 1024 * 3072);
    cr_assert_arr_eq(a->train.labels, b->train.labels, 1024);
    cr_assert(memcmp(a->train.pixels, a->test.pixels, 256 * 3072) != 0, "train and test differ");
    int per_class[10] = {0};
    for (int i = 0; i < a->train.count; i++) {
        const uint8_t *img = a->train.pixels + (size_t)i * 3072;
        unsigned long sum = 0;
        for (int p = 0; p < 1024; p++) sum += img[p];
        cr_assert_eq(a->train.labels[i], (int)(sum * 10 / (1024 * 256)), "image %d label follows the rule", i);
        per_class[a->train.labels[i]]++;
    }
    for (int k = 0; k < 10; k++) cr_assert_gt(per_class[k], 60, "class %d has %d images", k, per_class[k]);
    dataset_free(b);
    opt.seed = 12;
    cr_assert_eq(dataset_load(&opt, b, &err), 0, "%s", err.msg);
    cr_assert(memcmp(a->train.pixels, b->train.pixels, 1024 * 3072) != 0, "seed changes the data");
    dataset_free(a);
    dataset_free(b);
    DataOptions small = {.name = "synthetic", .synth_c = 1, .synth_h = 5, .synth_w = 7, .synth_classes = 3,
                         .synth_train = 9, .synth_test = 4, .quiet = true};
    cr_assert_eq(dataset_load(&small, a, &err), 0, "%s", err.msg);
    cr_assert_eq(a->train.c, 1);
    cr_assert_eq(a->train.h, 5);
    cr_assert_eq(a->train.w, 7);
    cr_assert_eq(a->test.count, 4);
    cr_assert_eq(a->classes, 3);
    dataset_free(a);
    small.synth_c = 4;
    cr_assert_eq(dataset_load(&small, a, &err), -1);
    assert_contains(err.msg, "synthetic: bad shape");
    free(a);
    free(b);
}

Test(data, unknown_dataset_name)
{
    DataOptions opt = {.name = "mnist2"};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), -1);
    assert_contains(err.msg, "unknown dataset 'mnist2'");
    free(ds);
}

/* ---- CIFAR-10's binary distribution ---- */

/* Writes `records` records to path: record r has label labels[r] and pixel p = (r * 7 + p) %
 * 251, so every byte's place in the CHW image can be checked. */
static void write_cifar_batch(const char *dir, const char *name, int records, const uint8_t *labels)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    for (int r = 0; r < records; r++) {
        fputc(labels[r], f);
        for (int p = 0; p < 3072; p++) fputc((r * 7 + p) % 251, f);
    }
    cr_assert_eq(fclose(f), 0);
}

/* cifar-10-batches-bin with two records per training batch and three test records (read
 * with partial_batches: official files hold 10,000); the training labels run 0..9 across the
 * five files. */
static void write_cifar_bin(const char *dir)
{
    mkdirs(dir);
    for (int k = 1; k <= 5; k++) {
        uint8_t labels[2] = {(uint8_t)(2 * k - 2), (uint8_t)(2 * k - 1)};
        char name[32];
        snprintf(name, sizeof name, "data_batch_%d.bin", k);
        write_cifar_batch(dir, name, 2, labels);
    }
    uint8_t test_labels[3] = {9, 0, 4};
    write_cifar_batch(dir, "test_batch.bin", 3, test_labels);
}

Test(data, cifar10_binary_batches_read_in_chw_order)
{
    write_cifar_bin(P("cifar/cifar-10-batches-bin"));
    /* --data-root may name the batches' folder or the one its tarball unpacked into */
    const char *roots[2] = {P("cifar/cifar-10-batches-bin"), P("cifar")};
    for (int k = 0; k < 2; k++) {
        DataOptions opt = {.name = "cifar10", .root = roots[k], .quiet = true, .partial_batches = true};
        Dataset *ds = malloc(sizeof *ds);
        Error err = {{0}};
        cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
        cr_assert_eq(ds->classes, 10);
        cr_assert_str_eq(ds->class_names[0], "airplane");
        cr_assert_str_eq(ds->class_names[9], "truck");
        cr_assert_eq(ds->train.count, 10);
        cr_assert_eq(ds->test.count, 3);
        cr_assert_eq(ds->train.c, 3);
        cr_assert_eq(ds->train.h, 32);
        cr_assert_eq(ds->train.w, 32);
        for (int i = 0; i < 10; i++) cr_assert_eq(ds->train.labels[i], i);
        cr_assert_eq(ds->test.labels[0], 9);
        cr_assert_eq(ds->test.labels[2], 4);
        /* training image 3 is record 1 of data_batch_2; green (plane 1) row 2, column 5 */
        int r = 1, p = 1024 + 2 * 32 + 5;
        cr_assert_eq(ds->train.pixels[3 * 3072 + p], (r * 7 + p) % 251);
        cr_assert_eq(ds->test.pixels[2 * 3072 + 3071], (2 * 7 + 3071) % 251);
        dataset_free(ds);
        free(ds);
    }
}

Test(data, cifar10_binary_meta_names_the_classes)
{
    write_cifar_bin(P("bin"));
    FILE *f = fopen(P("bin/batches.meta.txt"), "w");
    cr_assert(f);
    for (int k = 0; k < 10; k++) fprintf(f, "class-%d\n", k);
    fprintf(f, "\n");
    cr_assert_eq(fclose(f), 0);
    DataOptions opt = {.name = "cifar10", .root = P("bin"), .quiet = true, .partial_batches = true};
    Dataset *ds = malloc(sizeof *ds);
    Error err = {{0}};
    cr_assert_eq(dataset_load(&opt, ds, &err), 0, "%s", err.msg);
    cr_assert_str_eq(ds->class_names[7], "class-7");
    dataset_free(ds);
    free(ds);
}

/* A truncated batch, a label past 9, a missing test batch, --image-size, and batches of fewer
 * than 10,000 records without partial_batches: each refused with the file (or flag) named. */
Test(data, cifar10_binary_errors_name_the_file)
{
    struct {
        const char *what, *expect;
    } cases[] = {
        {"truncated", "data_batch_3.bin: 6145 bytes, not a whole number of 3073-byte records"},
        {"label", "data_batch_4.bin: record 1 has label 10"},
        {"no-test", "test_batch.bin: No such file"},
        {"image-size", "--image-size 64 applies to JPEG folders"},
        {"partial", "data_batch_1.bin: 2 records, not the 10000 of an official CIFAR-10 batch file"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *dir = P("bad-%s", cases[k].what);
        char batch[600];
        write_cifar_bin(dir);
        int image_size = 0;
        if (k == 0) {
            snprintf(batch, sizeof batch, "%s/data_batch_3.bin", dir);
            cr_assert_eq(truncate(batch, 6145), 0);
        } else if (k == 1) {
            uint8_t labels[2] = {1, 10};
            write_cifar_batch(dir, "data_batch_4.bin", 2, labels);
        } else if (k == 2) {
            snprintf(batch, sizeof batch, "%s/test_batch.bin", dir);
            cr_assert_eq(unlink(batch), 0);
        } else if (k == 3) {
            image_size = 64;
        }
        DataOptions opt = {.name = "cifar10", .root = dir, .quiet = true, .image_size = image_size,
                           .partial_batches = k != 4};
        Dataset *ds = malloc(sizeof *ds);
        Error err = {{0}};
        cr_assert_eq(dataset_load(&opt, ds, &err), -1, "%s: loaded", cases[k].what);
        cr_expect(strstr(err.msg, cases[k].expect), "%s: got \"%s\"", cases[k].what, err.msg);
        cr_expect(strstr(err.msg, "cifar10: "), "%s: got \"%s\"", cases[k].what, err.msg);
        dataset_free(ds);
        free(ds);
    }
}
