/* Arrays for tests that call a backend's operations directly: host values uploaded into the
 * backend's own buffers and downloaded back, so every tensor crosses the backend boundary (the
 * guarded backend checks that, tensor_access.h), and seeded pseudo-random values to fill them. */
#ifndef BB_TESTS_DEV_ARRAY_H
#define BB_TESTS_DEV_ARRAY_H
#include <criterion/criterion.h>
#include <stdlib.h>

#include "../engine/backend.h"

typedef struct {
    Backend *bk;
    BkBuffer *buf;
    real *dev;
    size_t count;
} DevArray;

/* count values in bk's memory: host's uploaded, or the buffer's zeros when host is NULL. */
static inline DevArray dev_array(Backend *bk, size_t count, const real *host)
{
    DevArray a = {bk, bk_buffer_alloc(bk, count * sizeof(real)), NULL, count};
    a.dev = bk_buffer_address(a.buf);
    if (host) bk_upload(bk, a.dev, host, count * sizeof(real));
    return a;
}

/* a's values in host memory (the caller frees them). */
static inline real *download(const DevArray *a)
{
    real *h = malloc(a->count * sizeof(real));
    cr_assert(h);
    bk_download(a->bk, h, a->dev, a->count * sizeof(real));
    return h;
}

/* count values in [-1, 1) from a linear congruential sequence at *state. */
static inline real *random_values(size_t count, unsigned *state)
{
    real *v = malloc(count * sizeof(real));
    cr_assert(v);
    for (size_t i = 0; i < count; i++) {
        *state = *state * 1664525u + 1013904223u;
        v[i] = (real)((*state >> 8) * (1.0 / 16777216.0) * 2 - 1);
    }
    return v;
}

#endif
