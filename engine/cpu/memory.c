/* The CPU backend's memory contract: buffers in host memory (64-byte aligned for the BLAS
 * kernels; in the guarded build, pages of the guarded arena), copies in and out, and a
 * stream that is synchronous, so synchronization and events have nothing to wait for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"
#include "cpu.h"
#include "guard.h"

void *cpu_buffer_alloc(Backend *bk, size_t bytes, size_t *block)
{
    (void)bk;
#ifdef BB_GUARDED
    return guard_alloc(bytes, block);
#else
    *block = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, *block ? *block : 64);
    if (p) memset(p, 0, *block);
    return p;
#endif
}

void cpu_buffer_free(Backend *bk, void *address, size_t block)
{
    (void)bk;
#ifdef BB_GUARDED
    guard_free(address, block);
#else
    (void)block;
    free(address);
#endif
}

void cpu_upload(Backend *bk, void *dev, const void *host, size_t bytes)
{
    BK_GUARD(bk);
    if (bytes) memcpy(dev, host, bytes);
}

void cpu_download(Backend *bk, void *host, const void *dev, size_t bytes)
{
    BK_GUARD(bk);
    if (bytes) memcpy(host, dev, bytes);
}

void *cpu_host_address(Backend *bk, void *dev)
{
    (void)bk;
#ifdef BB_GUARDED
    (void)dev;
    return NULL; /* closed outside backend calls: communication goes through staging */
#else
    return dev;
#endif
}

/* Host staging is ordinary memory, outside the guarded arena even in the guarded build (the
 * loader's thread writes it while the main thread runs backend calls). */
void *cpu_host_alloc(Backend *bk, size_t bytes)
{
    (void)bk;
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

void cpu_host_free(Backend *bk, void *host)
{
    (void)bk;
    free(host);
}

void cpu_synchronize(Backend *bk) { (void)bk; }

/* The stream is synchronous: an event is complete when recorded, so it needs no state;
 * the backend itself serves as the (non-NULL) handle. */
void *cpu_event_create(Backend *bk) { return bk; }

void cpu_event_destroy(Backend *bk, void *event) { (void)bk, (void)event; }

void cpu_event_record(Backend *bk, void *event) { (void)bk, (void)event; }

void cpu_event_wait(Backend *bk, void *event) { (void)bk, (void)event; }

/* ---- the backend's own blocks: its state, thread spans and workspaces ---- */

void *cpu_aligned_or_exit(size_t bytes, const char *what)
{
    void *p = aligned_alloc(64, bytes);
    if (!p) {
        fprintf(stderr, "bigbatch: out of memory reserving %zu bytes of %s\n", bytes, what);
        exit(3);
    }
    return p;
}

void cpu_workspace_grow(real **area, size_t elems)
{
    free(*area);
    size_t bytes = (elems * sizeof(real) + 63) & ~(size_t)63;
    *area = cpu_aligned_or_exit(bytes, "workspace");
    memset(*area, 0, bytes);
}
