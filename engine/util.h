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

/* Writes the n names name_at(0..n-1) into buf as one line, `sep` between them and
 * `last_sep` before the last ("a, b or c"): the name tables (models, data sets,
 * optimizers, figures) say their names in errors and help texts with it. Cut short
 * (still terminated) when buf is too small. Returns buf. */
char *names_join(char *buf, size_t len, int n, const char *(*name_at)(int i), const char *sep,
                 const char *last_sep);

double now_seconds(void);
/* Seconds since 1970 (the wall clock): for times stored where another process, or a later
 * boot, reads them; now_seconds() is for intervals within one process. */
double unix_time_seconds(void);

#endif
