/* The packed JPEG store (jpeg_store.c reads it, pack.c writes it): one file per split of an
 * image folder, every image re-encoded once as a JPEG whose shorter side is at most max_side,
 * behind an index of label, offset, size, stored and original size and CRC-32 per record.
 * Read by memory map; a store that does not check out is an error naming the file and the
 * record, never a crash. Layout (little-endian) in docs/formats.md. */
#ifndef BB_JPEG_STORE_H
#define BB_JPEG_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/util.h"
#include "imageset.h"

#define JSTORE_MAGIC "BBJPEG1"     /* 8 bytes with its NUL */
#define JSTORE_HEADER 96           /* bytes before the class names */
#define JSTORE_RECORD 32           /* bytes of one index record */
#define JSTORE_SUFFIX ".bbjpeg"    /* <split>.bbjpeg: what pack writes and dataset.c looks for */
#define JSTORE_MAX_CLASSES 65535   /* labels are uint16 */

typedef struct {
    uint64_t offset;
    uint32_t size, crc;
    uint16_t label, w, h, orig_w, orig_h;
} JStoreRecord;

/* An open store. Owns nothing but the mapping (map/len; NULL for a caller's buffer), so a
 * copy of the struct may be freed with free() once the mapping is unmapped (imageset.c). */
typedef struct JpegStore {
    char path[512];
    const uint8_t *map;
    size_t len;
    bool mapped;
    uint32_t count, classes, max_side, quality;
    uint64_t index_offset;
    uint64_t sum[3], sumsq[3], pixels; /* per channel over the stored pixels: normalization */
} JpegStore;

/* Maps path and checks it: header, its CRC, the index's CRC, every record inside the data and
 * its label below the class count. -1 with err "PATH: ..." (the record's number where one is
 * at fault). */
int jstore_open(const char *path, JpegStore *s, Error *err);
/* The same checks on a store held in memory (the fuzzer); name stands for its path. */
int jstore_open_buffer(const uint8_t *data, size_t len, const char *name, JpegStore *s, Error *err);
void jstore_close(JpegStore *s);
/* Record i (< count) of a checked store. */
void jstore_record(const JpegStore *s, uint32_t i, JStoreRecord *r);
/* Class k's name (NUL-padded, 32 bytes, not always NUL-terminated). */
const char *jstore_class_name(const JpegStore *s, uint32_t k);
/* Record i's JPEG bytes, checked against its CRC: NULL with err "PATH: record I: ..." */
const uint8_t *jstore_bytes(const JpegStore *s, uint32_t i, JStoreRecord *r, Error *err);

/* A store as an ImageSet (imageset.h: set->store) with its labels, class names (may be NULL)
 * and per-channel statistics. */
int jstore_read_set(const char *path, ImageSet *set, char (*class_names)[32], int *classes, Error *err);

/* Little-endian fields, shared with the writer. */
uint64_t jstore_get(const uint8_t *p, int bytes);
void jstore_put(uint8_t *p, uint64_t v, int bytes);

#endif
