/* Small helpers shared by the whole engine: checked allocation and error text. */
#ifndef BB_UTIL_H
#define BB_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Allocate or die: an allocation failure in the engine is not recoverable, and
 * the message names what was being allocated. */
void *xmalloc(size_t bytes, const char *what);
void *xcalloc(size_t count, size_t size, const char *what);
void *xrealloc(void *p, size_t bytes, const char *what);
char *xstrdup(const char *s);
/* "dir/name", allocated (or die, as xmalloc). */
char *path_join(const char *dir, const char *name);
/* The running binary's path (/proc/self/exe) into out: 0, or -1 with errno. */
int self_exe_path(char *out, size_t len);
/* <directory of the running binary>/../rel (bin/bigbatch -> the checkout's rel), allocated;
 * NULL when the binary's path is unknown. */
char *path_beside_binary(const char *rel);
/* `rel` (e.g. "results/published-runs.ini") as found for this program: ./rel when it exists,
 * else path_beside_binary(rel) when that exists, else NULL. Allocated. */
char *find_project_file(const char *rel);

/* FNV-1a 64: h (FNV1A64_START to begin) continued over n bytes. Run ids, the numerics
 * fingerprint and graph captures' arguments hash with it. */
#define FNV1A64_START 0xcbf29ce484222325ULL
uint64_t fnv1a64_bytes(uint64_t h, const void *bytes, size_t n);

/* Errors are reported through a caller-owned buffer so that library code never
 * prints or exits on its own; the CLI decides what to do with them. */
typedef struct {
    char msg[512];
} Error;
void error_set(Error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "prefix: " before the message already in err (the flag or file a lower layer's error is about). */
void error_prefix(Error *err, const char *prefix);

double now_seconds(void);
/* Seconds since 1970 (the wall clock): for times stored where another process, or a later
 * boot, reads them; now_seconds() is for intervals within one process. */
double unix_time_seconds(void);

#endif
