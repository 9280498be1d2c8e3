/* JPEG decoding and encoding (jpeg_io.h). One libjpeg decompressor per JpegDecoder, reused
 * across images (jpeg_abort_decompress resets it, also after an error), with its output
 * buffers: the batch cropper decodes thousands of images a second per thread and should not
 * allocate for each. */
#include "jpeg_io.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "../base/input_limits.h"

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} JpegErr;

/* Everything modified between setjmp and longjmp lives here, not in a local variable (whose
 * value longjmp would leave indeterminate). */
struct JpegDecoder {
    struct jpeg_decompress_struct cinfo;
    JpegErr jerr;
    uint8_t *rgb;
    size_t rgb_cap;
    uint8_t *row; /* one CMYK row */
    size_t row_cap;
};

static void jpeg_fail(j_common_ptr cinfo)
{
    JpegErr *e = (JpegErr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

/* libjpeg reports corrupt data (a truncated file, which it would pad with grey) as a warning
 * (level -1): an image that is not what was stored must not be trained on silently, so
 * warnings fail like errors. Trace messages (level >= 0) are ignored. */
static void jpeg_note(j_common_ptr cinfo, int level)
{
    if (level < 0) jpeg_fail(cinfo);
}

JpegDecoder *jpeg_decoder_new(void)
{
    JpegDecoder *dec = xcalloc(1, sizeof *dec, "JPEG decoder");
    dec->cinfo.err = jpeg_std_error(&dec->jerr.pub);
    dec->jerr.pub.error_exit = jpeg_fail;
    dec->jerr.pub.emit_message = jpeg_note;
    if (setjmp(dec->jerr.jump)) { /* jpeg_create_decompress fails only out of memory */
        fprintf(stderr, "bigbatch: out of memory creating a JPEG decoder: %s\n", dec->jerr.msg);
        exit(3);
    }
    jpeg_create_decompress(&dec->cinfo);
    return dec;
}

void jpeg_decoder_free(JpegDecoder *dec)
{
    if (!dec) return;
    jpeg_destroy_decompress(&dec->cinfo);
    free(dec->rgb);
    free(dec->row);
    free(dec);
}

/* Starts reading data's header; the caller has set the longjmp target. */
static int read_header(JpegDecoder *dec, const uint8_t *data, size_t len, const char *name, Error *err)
{
    if (len == 0 || len > ULONG_MAX) {
        error_set(err, "%s: bad JPEG: %s", name, len ? "too large" : "empty");
        return -1;
    }
    if (len >= 8 && memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) {
        error_set(err, "%s: not a JPEG but a PNG image (refused: convert it to JPEG)", name);
        return -1;
    }
    jpeg_mem_src(&dec->cinfo, data, (unsigned long)len);
    jpeg_read_header(&dec->cinfo, TRUE);
    /* before anything is allocated for it: a header may claim 65500 x 65500 (12 GB of RGB) */
    if (dec->cinfo.image_width > BB_MAX_IMAGE_SIDE || dec->cinfo.image_height > BB_MAX_IMAGE_SIDE) {
        error_set(err, "%s: bad JPEG: %u x %u pixels, beyond the %d-pixel side bigbatch reads", name,
                  (unsigned)dec->cinfo.image_width, (unsigned)dec->cinfo.image_height, BB_MAX_IMAGE_SIDE);
        return -1;
    }
    return 0;
}

int jpeg_size(JpegDecoder *dec, const uint8_t *data, size_t len, const char *name, int *w, int *h, Error *err)
{
    if (setjmp(dec->jerr.jump)) {
        jpeg_abort_decompress(&dec->cinfo);
        error_set(err, "%s: bad JPEG: %s", name, dec->jerr.msg);
        return -1;
    }
    int rc = read_header(dec, data, len, name, err);
    *w = (int)dec->cinfo.image_width;
    *h = (int)dec->cinfo.image_height;
    jpeg_abort_decompress(&dec->cinfo);
    return rc;
}

int jpeg_scale_for(int w, int h, double need_w, double need_h)
{
    int m = 1;
    /* libjpeg's scaled size is ceil(side * m / 8) */
    while (m < 8 && (((long)w * m + 7) / 8 < need_w || ((long)h * m + 7) / 8 < need_h)) m *= 2;
    return m;
}

static void grow(uint8_t **buf, size_t *cap, size_t need, const char *what)
{
    if (need <= *cap) return;
    *buf = xrealloc(*buf, need, what);
    *cap = need;
}

/* Adobe's CMYK JPEGs (the common kind) store inverted values: R = C * K / 255. */
static void cmyk_to_rgb(const uint8_t *cmyk, size_t n, bool inverted, uint8_t *rgb)
{
    for (size_t x = 0; x < n; x++) {
        const uint8_t *p = cmyk + 4 * x;
        unsigned k = inverted ? p[3] : 255u - p[3];
        for (int c = 0; c < 3; c++) {
            unsigned v = inverted ? p[c] : 255u - p[c];
            rgb[3 * x + c] = (uint8_t)((v * k + 127) / 255);
        }
    }
}

/* Sets the scale and output colour space; returns whether the output is CMYK. */
static bool set_output(JpegDecoder *dec, const JpegRegion *want)
{
    /* Grayscale is expanded to 3 equal channels. libjpeg converts CMYK to nothing else, so it
     * is decoded as CMYK and converted here (ImageNet's training set has 22 such files). */
    const bool cmyk = dec->cinfo.jpeg_color_space == JCS_CMYK || dec->cinfo.jpeg_color_space == JCS_YCCK;
    dec->cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    dec->cinfo.scale_num = want && want->eighths > 0 && want->eighths < 8 ? (unsigned)want->eighths : 8;
    dec->cinfo.scale_denom = 8;
    return cmyk;
}

/* The rows and columns to decode, within the scaled image; libjpeg widens the columns to
 * block edges. */
static int select_region(JpegDecoder *dec, const JpegRegion *want, const char *name, JpegImage *out, Error *err)
{
    const int fw = (int)dec->cinfo.output_width, fh = (int)dec->cinfo.output_height;
    out->full_w = fw, out->full_h = fh;
    out->x0 = 0, out->y0 = 0, out->w = fw, out->h = fh;
    if (!want || want->w == 0) return 0;
    if (want->x0 < 0 || want->y0 < 0 || want->w < 1 || want->h < 1 || want->x0 + want->w > fw ||
        want->y0 + want->h > fh) {
        error_set(err, "%s: region %dx%d at (%d, %d) outside the %dx%d image", name, want->w, want->h, want->x0,
                  want->y0, fw, fh);
        return -1;
    }
    JDIMENSION x0 = (JDIMENSION)want->x0, w = (JDIMENSION)want->w;
    if (w < (JDIMENSION)fw) jpeg_crop_scanline(&dec->cinfo, &x0, &w);
    if (want->y0 > 0) jpeg_skip_scanlines(&dec->cinfo, (JDIMENSION)want->y0);
    out->x0 = (int)x0, out->w = (int)w, out->y0 = want->y0, out->h = want->h;
    return 0;
}

int jpeg_decode(JpegDecoder *dec, const uint8_t *data, size_t len, const char *name, const JpegRegion *want,
                JpegImage *out, Error *err)
{
    if (setjmp(dec->jerr.jump)) {
        jpeg_abort_decompress(&dec->cinfo);
        error_set(err, "%s: bad JPEG: %s", name, dec->jerr.msg);
        return -1;
    }
    if (read_header(dec, data, len, name, err) != 0) {
        jpeg_abort_decompress(&dec->cinfo);
        return -1;
    }
    const bool cmyk = set_output(dec, want);
    jpeg_start_decompress(&dec->cinfo);
    if (dec->cinfo.output_components != (cmyk ? 4 : 3) || dec->cinfo.output_width == 0 ||
        dec->cinfo.output_height == 0) {
        error_set(err, "%s: bad JPEG: unsupported image (%d components)", name, dec->cinfo.output_components);
        jpeg_abort_decompress(&dec->cinfo);
        return -1;
    }
    if (select_region(dec, want, name, out, err) != 0) {
        jpeg_abort_decompress(&dec->cinfo);
        return -1;
    }
    const size_t iw = (size_t)out->w, stride = iw * 3;
    grow(&dec->rgb, &dec->rgb_cap, stride * (size_t)out->h, "decoded JPEG");
    if (cmyk) grow(&dec->row, &dec->row_cap, iw * 4, "CMYK row");
    for (int y = 0; y < out->h; y++) {
        uint8_t *rgb = dec->rgb + (size_t)y * stride;
        JSAMPROW row = cmyk ? dec->row : rgb;
        jpeg_read_scanlines(&dec->cinfo, &row, 1);
        if (cmyk) cmyk_to_rgb(dec->row, iw, dec->cinfo.saw_Adobe_marker, rgb);
    }
    /* a region leaves scanlines unread, which jpeg_finish_decompress would call an error */
    if (dec->cinfo.output_scanline == dec->cinfo.output_height)
        jpeg_finish_decompress(&dec->cinfo);
    else
        jpeg_abort_decompress(&dec->cinfo);
    out->rgb = dec->rgb;
    out->stride = stride;
    return 0;
}

typedef struct {
    struct jpeg_compress_struct cinfo;
    JpegErr jerr;
    unsigned char *buf;
    unsigned long len;
} Encoder;

static int encode(Encoder *e, const uint8_t *rgb, int w, int h, int quality, Error *err)
{
    e->cinfo.err = jpeg_std_error(&e->jerr.pub);
    e->jerr.pub.error_exit = jpeg_fail;
    if (setjmp(e->jerr.jump)) {
        jpeg_destroy_compress(&e->cinfo);
        free(e->buf);
        e->buf = NULL;
        error_set(err, "JPEG encoder: %s", e->jerr.msg);
        return -1;
    }
    jpeg_create_compress(&e->cinfo);
    jpeg_mem_dest(&e->cinfo, &e->buf, &e->len);
    e->cinfo.image_width = (JDIMENSION)w;
    e->cinfo.image_height = (JDIMENSION)h;
    e->cinfo.input_components = 3;
    e->cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality, TRUE);
    jpeg_start_compress(&e->cinfo, TRUE);
    while (e->cinfo.next_scanline < e->cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)e->cinfo.next_scanline * (size_t)w * 3);
        jpeg_write_scanlines(&e->cinfo, &row, 1);
    }
    jpeg_finish_compress(&e->cinfo);
    jpeg_destroy_compress(&e->cinfo);
    return 0;
}

int jpeg_encode_rgb(const uint8_t *rgb, int w, int h, int quality, uint8_t **out, size_t *len, Error *err)
{
    Encoder *e = xcalloc(1, sizeof *e, "JPEG encoder");
    int rc = encode(e, rgb, w, h, quality, err);
    *out = rc == 0 ? e->buf : NULL;
    *len = rc == 0 ? (size_t)e->len : 0;
    free(e);
    return rc;
}

int read_whole_file(const char *path, uint8_t **buf, size_t *cap, size_t *len, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    *len = 0;
    for (;;) {
        if (*len == *cap) grow(buf, cap, *cap ? 2 * *cap : 65536, "file contents");
        size_t got = fread(*buf + *len, 1, *cap - *len, f);
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
