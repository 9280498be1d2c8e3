/* JPEG decoding and encoding with libjpeg-turbo (jpeg_io.c), shared by the image-folder
 * cache, the packed store's writer and its batch cropper. libjpeg's default error handler
 * exits the process; here every error (and every "corrupt data" warning) longjmps back and
 * becomes an Error naming the file or record, never an exit or a crash. */
#ifndef BB_JPEG_IO_H
#define BB_JPEG_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/util.h"

typedef struct JpegDecoder JpegDecoder; /* one per thread: its buffers are reused */

JpegDecoder *jpeg_decoder_new(void);
void jpeg_decoder_free(JpegDecoder *dec);

/* What to decode: the image scaled by eighths/8 in the DCT (1..8; 0 means 8, unscaled), and
 * of the scaled image the columns [x0, x0 + w) and rows [y0, y0 + h) (w == 0: all of it). */
typedef struct {
    int eighths;
    int x0, y0, w, h;
} JpegRegion;

/* A decoded image: RGB, HWC, `stride` bytes a row, owned by the decoder (valid until its next
 * call). It holds the columns [x0, x0 + w) and rows [y0, y0 + h) of the scaled image of
 * full_w x full_h; x0 may lie left of the region asked for (libjpeg crops at block edges). */
typedef struct {
    const uint8_t *rgb;
    size_t stride;
    int x0, y0, w, h;
    int full_w, full_h;
} JpegImage;

/* The size of the JPEG in data (the header only). -1 with err "NAME: bad JPEG: ..." */
int jpeg_size(JpegDecoder *dec, const uint8_t *data, size_t len, const char *name, int *w, int *h, Error *err);
/* Decodes `want` of the JPEG in data (NULL: all of it, unscaled). Grayscale is expanded to
 * RGB and CMYK/YCCK converted (Adobe's inverted CMYK too). */
int jpeg_decode(JpegDecoder *dec, const uint8_t *data, size_t len, const char *name, const JpegRegion *want,
                JpegImage *out, Error *err);
/* The smallest DCT scale of 1/8, 2/8, 4/8 or 8/8 (libjpeg-turbo's fast ones; returned in
 * eighths) whose scaled w x h is still at least need_w x need_h. */
int jpeg_scale_for(int w, int h, double need_w, double need_h);

/* rgb (HWC, w x h) as a baseline JPEG of that quality (4:2:0) into *out (malloc'd, *len bytes). */
int jpeg_encode_rgb(const uint8_t *rgb, int w, int h, int quality, uint8_t **out, size_t *len, Error *err);

/* Reads a whole file into *buf (grown as needed, *cap its size); -1 with err naming it. */
int read_whole_file(const char *path, uint8_t **buf, size_t *cap, size_t *len, Error *err);

#endif
