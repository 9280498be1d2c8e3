/* OpenBLAS's packing buffers, each thread its own (engine/cpu/blas_buffers.c). libopenblas
 * allocates them through blas_memory_alloc/blas_memory_free, which the engine defines and every
 * binary exports (the Makefile's BLAS_BUFFERS_EXPORT), so libopenblas binds to ours. These
 * counters let a test see that binding and the reuse; nothing else needs them. */
#ifndef BB_CPU_BLAS_BUFFERS_H
#define BB_CPU_BLAS_BUFFERS_H
#include <stddef.h>

/* The buffers handed out on the calling thread so far. */
size_t blas_buffers_served_here(void);
/* The regions mapped in the process so far: one per buffer held at once, not one per call. */
size_t blas_buffers_mapped(void);

/* The pair libopenblas calls (its own definitions, kept for its internal pool, lose to ours). */
void *blas_memory_alloc(int procpos);
void blas_memory_free(void *area);

#endif
