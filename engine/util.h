/* Small helpers shared by the whole engine: checked allocation and error text. */
#ifndef BB_UTIL_H
#define BB_UTIL_H
#include <stddef.h>
#include <stdio.h>

/* Allocate or die: an allocation failure in the engine is not recoverable, and
 * the message names what was being allocated. */
void *xmalloc(size_t bytes, const char *what);
void *xcalloc(size_t count, size_t size, const char *what);
void *xrealloc(void *p, size_t bytes, const char *what);
char *xstrdup(const char *s);

/* Errors are reported through a caller-owned buffer so that library code never
 * prints or exits on its own; the CLI decides what to do with them. */
typedef struct {
    char msg[512];
} Error;
void error_set(Error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

double now_seconds(void);
/* Seconds since 1970 (the wall clock): for times stored where another process, or a later
 * boot, reads them; now_seconds() is for intervals within one process. */
double unix_time_seconds(void);

#endif
