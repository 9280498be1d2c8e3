/* IDX readers (the MNIST family's format: a big-endian header of magic and
 * dimensions, then raw bytes). The files ship gzip-compressed; zlib's gzread reads
 * gzip and uncompressed files alike, so one reader covers both. Every way a file can
 * be wrong (missing, wrong magic, absurd dimensions, truncated) is reported with the
 * file's name, because a bad data file is the most likely cause of a failed run. */
#include "data.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define IDX3_MAGIC 0x00000803u /* unsigned bytes, 3 dimensions */
#define IDX1_MAGIC 0x00000801u /* unsigned bytes, 1 dimension */
#define IDX_MAX_SIDE 65536u

static gzFile idx_open(const char *path, Error *err)
{
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) error_set(err, "%s: %s", path, errno ? strerror(errno) : "cannot open (zlib out of memory)");
    return f;
}

/* Reads up to n bytes; *got says how many arrived. -1 on a read or decompression
 * error (message set), 0 otherwise: a short count means the file ended early. */
static int idx_read(gzFile f, const char *path, uint8_t *buf, size_t n, size_t *got, Error *err)
{
    *got = 0;
    while (*got < n) {
        size_t want = n - *got;
        if (want > (1u << 30)) want = 1u << 30;
        int r = gzread(f, buf + *got, (unsigned)want);
        if (r < 0) {
            int code;
            const char *msg = gzerror(f, &code);
            if (!msg || !*msg) msg = "unknown zlib error";
            size_t n = strlen(path); /* zlib's message starts with the path, which ours has */
            if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
            if (code == Z_DATA_ERROR) error_set(err, "%s: corrupt gzip data: %s", path, msg);
            else error_set(err, "%s: read error: %s", path, msg);
            return -1;
        }
        if (r == 0) break;
        *got += (size_t)r;
    }
    return 0;
}

/* After the payload, the file must end. Reading on to the end is what makes zlib check a
 * gzip member's trailer (CRC-32 and length): a file corrupted mid-stream fails here instead
 * of being read as other pixels. */
static int idx_expect_end(gzFile f, const char *path, const char *what, Error *err)
{
    uint8_t extra[256];
    size_t got;
    if (idx_read(f, path, extra, sizeof extra, &got, err) != 0) return -1;
    if (got > 0) {
        error_set(err, "%s: more data after the %s the header announces (a wrong header, or not an IDX file)",
                  path, what);
        return -1;
    }
    return 0;
}

/* Reads the payload of `expected` bytes, growing the buffer as data arrives so that
 * a corrupt header claiming terabytes fails as "truncated" instead of exhausting memory. */
static int idx_read_payload(gzFile f, const char *path, size_t expected, const char *what,
                            uint8_t **out, Error *err)
{
    size_t cap = expected < ((size_t)64 << 20) ? expected : ((size_t)64 << 20);
    uint8_t *buf = xmalloc(cap, "IDX payload");
    size_t have = 0;
    for (;;) {
        size_t got;
        if (idx_read(f, path, buf + have, cap - have, &got, err) != 0) {
            free(buf);
            return -1;
        }
        have += got;
        if (have < cap) break; /* end of file */
        if (cap == expected) break;
        cap = cap > expected / 2 ? expected : cap * 2;
        buf = xrealloc(buf, cap, "IDX payload");
    }
    if (have < expected) {
        error_set(err, "%s: truncated: expected %zu bytes of %s, got %zu", path, expected, what, have);
        free(buf);
        return -1;
    }
    if (idx_expect_end(f, path, what, err) != 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Reads the fixed-size header and checks the magic number. */
static int idx_header(gzFile f, const char *path, uint8_t *hdr, size_t size, uint32_t magic,
                      const char *kind, Error *err)
{
    size_t got;
    if (idx_read(f, path, hdr, size, &got, err) != 0) return -1;
    if (got >= 4 && be32(hdr) != magic) {
        error_set(err, "%s: wrong magic 0x%08x (expected 0x%08x, an %s file)", path, be32(hdr), magic,
                  kind);
        return -1;
    }
    if (got < size) {
        error_set(err, "%s: truncated: expected a %zu-byte %s header, got %zu bytes", path, size, kind,
                  got);
        return -1;
    }
    return 0;
}

/* gzclose reports a gzip stream that ended early or failed its check. */
static int idx_close(gzFile f, const char *path, int status, Error *err)
{
    int rc = gzclose(f);
    if (status == 0 && rc != Z_OK) {
        error_set(err, "%s: gzip stream is truncated or corrupt (zlib error %d)", path, rc);
        return -1;
    }
    return status;
}

int idx_read_images(const char *path, ImageSet *set, Error *err)
{
    gzFile f = idx_open(path, err);
    if (!f) return -1;
    uint8_t hdr[16];
    int status = idx_header(f, path, hdr, sizeof hdr, IDX3_MAGIC, "IDX3 image", err);
    uint32_t n = 0, rows = 0, cols = 0;
    uint8_t *pixels = NULL;
    if (status == 0) {
        n = be32(hdr + 4), rows = be32(hdr + 8), cols = be32(hdr + 12);
        if (n == 0 || n > INT_MAX || rows == 0 || rows > IDX_MAX_SIDE || cols == 0 ||
            cols > IDX_MAX_SIDE) {
            error_set(err, "%s: bad dimensions %u images of %ux%u pixels", path, n, rows, cols);
            status = -1;
        }
    }
    if (status == 0) {
        size_t bytes = (size_t)n * rows * cols; /* < 2^31 * 2^32: fits in 64 bits */
        status = idx_read_payload(f, path, bytes, "pixels", &pixels, err);
    }
    status = idx_close(f, path, status, err);
    if (status != 0) {
        free(pixels);
        return -1;
    }
    set->count = (int)n;
    set->c = 1;
    set->h = (int)rows;
    set->w = (int)cols;
    set->pixels = pixels;
    return 0;
}

int idx_read_labels(const char *path, ImageSet *set, Error *err)
{
    gzFile f = idx_open(path, err);
    if (!f) return -1;
    uint8_t hdr[8];
    int status = idx_header(f, path, hdr, sizeof hdr, IDX1_MAGIC, "IDX1 label", err);
    uint32_t n = 0;
    uint8_t *labels = NULL;
    if (status == 0) {
        n = be32(hdr + 4);
        if (n == 0 || n > INT_MAX) {
            error_set(err, "%s: bad label count %u", path, n);
            status = -1;
        } else if (set->pixels && n != (uint32_t)set->count) {
            error_set(err, "%s: %u labels, but there are %d images", path, n, set->count);
            status = -1;
        }
    }
    if (status == 0) status = idx_read_payload(f, path, n, "labels", &labels, err);
    status = idx_close(f, path, status, err);
    if (status != 0) {
        free(labels);
        return -1;
    }
    set->labels = xmalloc((size_t)n * sizeof *set->labels, "labels");
    for (uint32_t i = 0; i < n; i++) set->labels[i] = labels[i];
    free(labels);
    set->count = (int)n;
    return 0;
}
