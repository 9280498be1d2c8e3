/* OpenBLAS's packing buffers, each thread its own.
 *
 * Why: libopenblas keeps one pool of buffers for all the threads of a process, and each sgemm
 * takes the pool's first free slot behind a lock. Two threads calling at once (the replicas'
 * convolutions) then wait on the lock and swap buffers from call to call, so the packed
 * matrices' cache lines move between cores. A preload that gave each thread its own buffers ran
 * LeNet/32 and ResNet-8/32 on 2 threads 2-4 points nearer linear
 * (bench/results/2026-12-05-blas-buffers.txt).
 *
 * How: a thread's buffers are a chain of regions that it mapped. A call takes the first region
 * not in use, so the same one call after call, and maps another only when all are in use
 * (OpenBLAS nests a few deep, and the caller of a threaded call holds one for each worker). Any
 * thread may free a buffer: the region's first page says whether it is in use. A region is
 * never unmapped, as in OpenBLAS's own pool; a thread that exits leaves its chain to the next
 * thread that runs out.
 *
 * A region is 1 GiB of address space, mapped MAP_NORESERVE: only the pages OpenBLAS touches
 * become memory. Its buffers are BUFFER_SIZE, 128 MiB in Debian's x86-64 build, so builds with
 * up to 8 times that fit.
 *
 * The state is per thread and process-wide because libopenblas's interface has no handle. */
#include "blas_buffers.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The region's first page holds its header, so the buffer after it stays page-aligned. */
enum { HEADER_BYTES = 4096 };
#define BUFFER_BYTES ((size_t)1 << 30)

typedef struct Region {
    struct Region *next; /* in the owning thread's chain, or among the orphans */
    atomic_bool in_use;
} Region;

static _Thread_local Region *thread_chain;
static _Thread_local size_t thread_served;
static atomic_size_t regions_mapped;

/* Chains left by exited threads; the key's destructor puts them here. */
static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_hook;
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static Region *orphans;

/* OpenBLAS cannot take a failure back from its allocator, and its own pool exits too. */
static _Noreturn void fail(const char *what, int error)
{
    fprintf(stderr, "bigbatch: OpenBLAS buffers: %s: %s\n", what, strerror(error));
    abort();
}

static void lock_orphans(void)
{
    const int error = pthread_mutex_lock(&orphans_lock);
    if (error) fail("pthread_mutex_lock", error);
}

static void unlock_orphans(void)
{
    const int error = pthread_mutex_unlock(&orphans_lock);
    if (error) fail("pthread_mutex_unlock", error);
}

/* At a thread's exit: its chain goes to the orphans, its buffers held elsewhere staying held. */
static void orphan_chain(void *head)
{
    Region *tail = head;
    while (tail->next) tail = tail->next;
    thread_chain = NULL; /* a call from a later destructor starts a chain of its own */
    lock_orphans();
    tail->next = orphans;
    orphans = head;
    unlock_orphans();
}

static void create_exit_hook(void)
{
    const int error = pthread_key_create(&exit_hook, orphan_chain);
    if (error) fail("pthread_key_create", error);
}

static void append_to_chain(Region *r)
{
    r->next = NULL;
    if (!thread_chain) {
        thread_chain = r;
        int error = pthread_once(&exit_hook_once, create_exit_hook);
        if (!error) error = pthread_setspecific(exit_hook, r);
        if (error) fail("pthread_setspecific", error);
        return;
    }
    Region *tail = thread_chain;
    while (tail->next) tail = tail->next;
    tail->next = r;
}

static Region *adopt_orphan(void)
{
    lock_orphans();
    Region *r = orphans;
    if (r) orphans = r->next;
    unlock_orphans();
    return r;
}

/* A new region, held by its caller. */
static Region *map_region(void)
{
    void *p = mmap(NULL, HEADER_BYTES + BUFFER_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail("mmap of 1 GiB", errno);
    Region *r = p;
    atomic_init(&r->in_use, true);
    atomic_fetch_add_explicit(&regions_mapped, 1, memory_order_relaxed);
    return r;
}

/* Acquire: the previous holder's writes, on whatever thread, come before ours. */
static bool take(Region *r)
{
    return !atomic_exchange_explicit(&r->in_use, true, memory_order_acquire);
}

static Region *free_region(void)
{
    for (Region *r = thread_chain; r; r = r->next)
        if (take(r)) return r;
    for (Region *r; (r = adopt_orphan());) {
        append_to_chain(r);
        if (take(r)) return r;
    }
    Region *r = map_region();
    append_to_chain(r);
    return r;
}

void *blas_memory_alloc(int procpos)
{
    (void)procpos; /* which CPU the caller runs on: the thread says as much */
    Region *r = free_region();
    thread_served++;
    return (char *)r + HEADER_BYTES;
}

void blas_memory_free(void *area)
{
    if (!area) return;
    Region *r = (Region *)((char *)area - HEADER_BYTES);
    if (!atomic_exchange_explicit(&r->in_use, false, memory_order_release))
        fail("a buffer freed that was not in use", EINVAL);
}

size_t blas_buffers_served_here(void)
{
    return thread_served;
}

size_t blas_buffers_mapped(void)
{
    return atomic_load_explicit(&regions_mapped, memory_order_relaxed);
}
