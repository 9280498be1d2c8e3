/* The fuzz targets' one helper: the readers under test take file paths, so each input is
 * written to a file of this process's own (under $TMPDIR) and its path handed over. */
#ifndef BB_FUZZ_INPUT_H
#define BB_FUZZ_INPUT_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* path/name for this process, made once; the folder is created. */
static inline const char *fuzz_path(const char *name)
{
    static char dir[256];
    static char path[512];
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/bigbatch-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) abort();
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Writes data to path (replacing it); aborts when the file cannot be written. */
static inline void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
}
#endif
