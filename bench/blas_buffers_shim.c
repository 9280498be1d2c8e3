/* A diagnostic, not part of the engine: gives every thread its own OpenBLAS packing buffers
 * in place of the pool that all threads of a process share (first free slot, behind a lock), to
 * measure what that sharing costs two threads calling sgemm at once. libopenblas calls
 * blas_memory_alloc and blas_memory_free through its PLT (Debian's 0.3.21 OpenMP build: 248 and
 * 264 call sites, no direct ones), so a preloaded definition replaces its own; its buffers are
 * 128 MB (BUFFER_SIZE, mapped lazily), and calls nest at most DEPTH deep in one thread.
 *   make build/release/bench/blas_buffers_shim.so
 *   python3 bench/ab_scaling.py --bin plain=bin/bigbatch --bin shim=WRAPPER --case lenet:32
 * where WRAPPER is a script that runs bin/bigbatch with LD_PRELOAD set to the .so
 * (bench/results/2026-12-05-blas-buffers.txt). */
#include <stdio.h>
#include <stdlib.h>

enum { DEPTH = 8 };
#define BUFFER_BYTES ((size_t)128 << 20)

static _Thread_local void *buffers[DEPTH];
static _Thread_local int depth;

void *blas_memory_alloc(int procpos);
void blas_memory_free(void *area);
void *blas_memory_alloc_nolock(int procpos);
void blas_memory_free_nolock(void *area);

void *blas_memory_alloc(int procpos)
{
    (void)procpos;
    if (depth >= DEPTH) {
        fprintf(stderr, "blas_buffers_shim: more than %d nested buffers in one thread\n", DEPTH);
        abort();
    }
    if (!buffers[depth] && !(buffers[depth] = aligned_alloc(4096, BUFFER_BYTES))) {
        fprintf(stderr, "blas_buffers_shim: out of memory\n");
        abort();
    }
    return buffers[depth++];
}

void blas_memory_free(void *area)
{
    (void)area;
    depth--;
}

void *blas_memory_alloc_nolock(int procpos) { return blas_memory_alloc(procpos); }
void blas_memory_free_nolock(void *area) { blas_memory_free(area); }
