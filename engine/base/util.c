#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die_oom(size_t bytes, const char *what)
{
    fprintf(stderr, "bigbatch: out of memory allocating %zu bytes for %s\n", bytes, what);
    exit(3);
}

void *xmalloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) die_oom(bytes, what);
    return p;
}

void *xcalloc(size_t count, size_t size, const char *what)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) die_oom(count * size, what);
    return p;
}

void *xrealloc(void *p, size_t bytes, const char *what)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) die_oom(bytes, what);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n, "string");
    memcpy(p, s, n);
    return p;
}

int self_exe_path(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0 || (size_t)n >= len - 1) {
        if (n > 0) errno = ENAMETOOLONG;
        return -1;
    }
    out[n] = 0;
    return 0;
}

char *path_beside_binary(const char *rel)
{
    char exe[4096];
    if (self_exe_path(exe, sizeof exe) != 0) return NULL;
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = 0;
    char *up = path_join(exe, ".."), *path = path_join(up, rel);
    free(up);
    return path;
}

char *find_project_file(const char *rel)
{
    if (access(rel, F_OK) == 0) return xstrdup(rel);
    char *path = path_beside_binary(rel);
    if (path && access(path, F_OK) == 0) return path;
    free(path);
    return NULL;
}

uint64_t fnv1a64_bytes(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

char *path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = xmalloc(a + b + 2, "path");
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

void error_set(Error *err, const char *fmt, ...)
{
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

void error_prefix(Error *err, const char *prefix)
{
    if (!err) return;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    error_set(err, "%s: %s", prefix, why);
}

static double clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double now_seconds(void)
{
    return clock_seconds(CLOCK_MONOTONIC);
}

double unix_time_seconds(void)
{
    return clock_seconds(CLOCK_REALTIME);
}
