/* The CPU backend's memory contract: buffers in host memory (64-byte aligned for the BLAS
 * kernels; in the guarded build, pages of the guarded arena), copies in and out, and a
 * stream that is synchronous, so synchronization and events have nothing to wait for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "cpu.h"
#include "guard.h"

struct BkBuffer {
    Backend *bk;
    void *address;
    size_t block; /* bytes taken, what the guarded arena frees */
};

struct BkEvent {
    long recorded; /* times recorded: the stream is synchronous, there is nothing to wait for */
};

static void *host_alloc(size_t bytes, size_t *block)
{
#ifdef BB_GUARDED
    return guard_alloc(bytes, block);
#else
    *block = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, *block ? *block : 64);
    if (p) memset(p, 0, *block);
    return p;
#endif
}

BkBuffer *bk_buffer_alloc(Backend *bk, size_t bytes)
{
    BkBuffer *b = xcalloc(1, sizeof *b, "backend buffer");
    b->bk = bk;
    b->address = host_alloc(bytes, &b->block);
    if (!b->address) {
        fprintf(stderr, "bigbatch: out of memory allocating %zu bytes of backend memory\n", bytes);
        exit(3);
    }
    return b;
}

void bk_buffer_free(BkBuffer *b)
{
    if (!b) return;
#ifdef BB_GUARDED
    guard_free(b->address, b->block);
#else
    free(b->address);
#endif
    free(b);
}

void *bk_buffer_address(const BkBuffer *b) { return b->address; }

Backend *bk_buffer_backend(const BkBuffer *b) { return b->bk; }

void bk_upload(Backend *bk, void *dev, const void *host, size_t bytes)
{
    BK_GUARD(bk);
    if (bytes) memcpy(dev, host, bytes);
}

void bk_download(Backend *bk, void *host, const void *dev, size_t bytes)
{
    BK_GUARD(bk);
    if (bytes) memcpy(host, dev, bytes);
}

void *bk_host_address(Backend *bk, void *dev)
{
    (void)bk;
#ifdef BB_GUARDED
    (void)dev;
    return NULL; /* closed outside backend calls: communication goes through staging */
#else
    return dev;
#endif
}

void bk_synchronize(Backend *bk) { (void)bk; }

BkEvent *bk_event_create(Backend *bk)
{
    (void)bk;
    return xcalloc(1, sizeof(BkEvent), "backend event");
}

void bk_event_destroy(BkEvent *e) { free(e); }

void bk_event_record(Backend *bk, BkEvent *e)
{
    (void)bk;
    e->recorded++;
}

void bk_event_wait(BkEvent *e) { (void)e; }
