/* Reading a packed JPEG store (jpeg_store.h). Everything the index says is checked when the
 * store is opened (cheap: 32 bytes a record), the JPEG bytes when a record is read (its CRC-32
 * costs a few percent of decoding it), so a truncated or bit-flipped store is an error naming
 * the file and the record, at open or at the first read of the damaged record. */
#include "jpeg_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

uint64_t jstore_get(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

void jstore_put(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t crc_more(uLong c, const uint8_t *p, size_t n)
{
    while (n > 0) { /* zlib's length is a uInt */
        uInt part = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, part);
        p += part, n -= part;
    }
    return (uint32_t)c;
}

static uint32_t crc_of(const uint8_t *p, size_t n) { return crc_more(crc32(0L, Z_NULL, 0), p, n); }

static uint64_t data_start(const JpegStore *s) { return JSTORE_HEADER + 32 * (uint64_t)s->classes; }

static int check_header(JpegStore *s, Error *err)
{
    const uint8_t *b = s->map;
    if (s->len < JSTORE_HEADER || memcmp(b, JSTORE_MAGIC, 8) != 0) {
        error_set(err, "%s: not a bigbatch JPEG store (%s)", s->path,
                  s->len < JSTORE_HEADER ? "shorter than its header" : "no BBJPEG1 magic");
        return -1;
    }
    if (jstore_get(b + 92, 4) != crc_of(b, 92)) {
        error_set(err, "%s: header checksum mismatch (damaged file)", s->path);
        return -1;
    }
    s->count = (uint32_t)jstore_get(b + 8, 4);
    s->classes = (uint32_t)jstore_get(b + 12, 4);
    s->max_side = (uint32_t)jstore_get(b + 16, 4);
    s->quality = (uint32_t)jstore_get(b + 20, 4);
    s->index_offset = jstore_get(b + 24, 8);
    for (int c = 0; c < 3; c++) s->sum[c] = jstore_get(b + 32 + 8 * c, 8), s->sumsq[c] = jstore_get(b + 56 + 8 * c, 8);
    s->pixels = jstore_get(b + 80, 8);
    /* index_offset <= len first: the sum below cannot wrap */
    const bool fits = s->index_offset <= s->len;
    const uint64_t end = fits ? s->index_offset + (uint64_t)JSTORE_RECORD * s->count : 0;
    if (s->count == 0 || s->count > INT32_MAX || s->classes == 0 || s->classes > JSTORE_MAX_CLASSES ||
        s->max_side == 0 || s->max_side > 65535 || s->index_offset < data_start(s) || !fits || end != s->len) {
        error_set(err, "%s: header inconsistent with the file (%u records, %u classes, index at %llu, %zu bytes%s)",
                  s->path, s->count, s->classes, (unsigned long long)s->index_offset, s->len,
                  end > s->len ? ": truncated" : "");
        return -1;
    }
    const uint8_t *index = b + s->index_offset;
    uint32_t c = crc_of(b + JSTORE_HEADER, 32 * (size_t)s->classes);
    c = crc_more(c, index, JSTORE_RECORD * (size_t)s->count);
    if (jstore_get(b + 88, 4) != c) {
        error_set(err, "%s: index checksum mismatch (damaged file)", s->path);
        return -1;
    }
    return 0;
}

void jstore_record(const JpegStore *s, uint32_t i, JStoreRecord *r)
{
    const uint8_t *p = s->map + s->index_offset + (uint64_t)JSTORE_RECORD * i;
    r->offset = jstore_get(p, 8);
    r->size = (uint32_t)jstore_get(p + 8, 4);
    r->crc = (uint32_t)jstore_get(p + 12, 4);
    r->label = (uint16_t)jstore_get(p + 16, 2);
    r->w = (uint16_t)jstore_get(p + 18, 2);
    r->h = (uint16_t)jstore_get(p + 20, 2);
    r->orig_w = (uint16_t)jstore_get(p + 22, 2);
    r->orig_h = (uint16_t)jstore_get(p + 24, 2);
}

static int check_records(const JpegStore *s, Error *err)
{
    for (uint32_t i = 0; i < s->count; i++) {
        JStoreRecord r;
        jstore_record(s, i, &r);
        const int shorter = r.w < r.h ? r.w : r.h;
        if (r.offset < data_start(s) || r.size < 4 || r.offset + r.size > s->index_offset || r.label >= s->classes ||
            shorter == 0 || shorter > (int)s->max_side) {
            error_set(err, "%s: record %u: bad index entry (offset %llu, %u bytes, label %u, %ux%u)", s->path, i,
                      (unsigned long long)r.offset, r.size, r.label, r.w, r.h);
            return -1;
        }
    }
    return 0;
}

int jstore_open_buffer(const uint8_t *data, size_t len, const char *name, JpegStore *s, Error *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", name);
    s->map = data;
    s->len = len;
    if (check_header(s, err) != 0 || check_records(s, err) != 0) {
        memset(s, 0, sizeof *s);
        return -1;
    }
    return 0;
}

int jstore_open(const char *path, JpegStore *s, Error *err)
{
    memset(s, 0, sizeof *s);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        error_set(err, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (st.st_size < JSTORE_HEADER) {
        close(fd);
        error_set(err, "%s: not a bigbatch JPEG store (%lld bytes, shorter than its header)", path,
                  (long long)st.st_size);
        return -1;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd); /* the mapping stays valid */
    if (map == MAP_FAILED) {
        error_set(err, "%s: cannot map: %s", path, strerror(e));
        return -1;
    }
    if (jstore_open_buffer(map, (size_t)st.st_size, path, s, err) != 0) {
        munmap(map, (size_t)st.st_size);
        return -1;
    }
    s->mapped = true;
    return 0;
}

void jstore_close(JpegStore *s)
{
    if (s->mapped) munmap((void *)s->map, s->len);
    memset(s, 0, sizeof *s);
}

const char *jstore_class_name(const JpegStore *s, uint32_t k) { return (const char *)s->map + JSTORE_HEADER + 32 * (size_t)k; }

const uint8_t *jstore_bytes(const JpegStore *s, uint32_t i, JStoreRecord *r, Error *err)
{
    jstore_record(s, i, r);
    const uint8_t *p = s->map + r->offset;
    if (crc_of(p, r->size) != r->crc) {
        error_set(err, "%s: record %u: checksum mismatch (damaged file)", s->path, i);
        return NULL;
    }
    return p;
}

int jstore_read_set(const char *path, ImageSet *set, char (*class_names)[32], int *classes, Error *err)
{
    JpegStore *st = xmalloc(sizeof *st, "JPEG store");
    if (jstore_open(path, st, err) != 0) {
        free(st);
        return -1;
    }
    uint16_t *labels = xmalloc(sizeof *labels * st->count, "store labels");
    for (uint32_t i = 0; i < st->count; i++) {
        JStoreRecord r;
        jstore_record(st, i, &r);
        labels[i] = r.label;
    }
    for (uint32_t k = 0; class_names && k < st->classes && k < 1000; k++) {
        memcpy(class_names[k], jstore_class_name(st, k), 32);
        class_names[k][31] = '\0';
    }
    if (classes) *classes = (int)st->classes;
    *set = (ImageSet){.count = (int)st->count, .c = 3, .h = (int)st->max_side, .w = (int)st->max_side,
                      .labels = labels, .map = (void *)st->map, .map_len = st->len, .has_stats = true, .store = st};
    imageset_stats_from_sums(3, st->sum, st->sumsq, (double)st->pixels, set->mean, set->std);
    return 0;
}
