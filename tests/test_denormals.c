/* The CPU backend flushes subnormal floats to zero (engine/cpu/denormals.c) in every thread
 * that computes for it: the thread that opened it, each thread of its parallel regions, and a
 * thread created afterwards (the gradient reduction's, the data loader's). Each thread checks
 * both halves of the mode: a subnormal operand reads as zero, and a product below FLT_MIN
 * comes out as zero. Where the mode cannot be set (not x86) the tests say they were skipped. */
#include <criterion/criterion.h>
#include <float.h>
#include <pthread.h>

#include "../engine/cpu/cpu.h"

enum { THREADS = 3 };

/* 1 where this thread reads a subnormal as 0 and flushes a subnormal result to 0. */
static int thread_flushes(void)
{
    volatile float subnormal = 0x1p-130f, quarter = 0.25f, normal_min = FLT_MIN;
    const float read = subnormal * 1.0f;     /* a subnormal operand */
    const float made = normal_min * quarter; /* a subnormal result */
    return read == 0.0f && made == 0.0f;
}

static void skip_unless_supported(void)
{
#if !defined(__SSE__)
    cr_skip_test("subnormals are flushed only on x86 (SSE's MXCSR): nothing to check here");
#endif
}

Test(denormals, a_fresh_thread_keeps_them)
{
    skip_unless_supported();
    cr_assert_eq(thread_flushes(), 0, "the check cannot tell: this thread flushed before any backend");
}

typedef struct {
    int flushes[THREADS];
    int team;
} RegionCheck;

static void check_in_region(void *ctx, int t, int T)
{
    RegionCheck *c = ctx;
    c->flushes[t] = thread_flushes();
    if (t == 0) c->team = T;
}

Test(denormals, every_thread_of_a_region_flushes)
{
    skip_unless_supported();
    Backend *bk = backend_create(THREADS);
    cr_assert(thread_flushes(), "the thread that opened the backend keeps subnormals");
    RegionCheck c = {{0}, 0};
    cpu_run(THREADS, check_in_region, &c);
    cr_assert_eq(c.team, THREADS, "the region ran %d threads, not %d", c.team, THREADS);
    for (int t = 0; t < THREADS; t++) cr_assert(c.flushes[t], "thread %d of the region keeps subnormals", t);
    backend_destroy(bk);
}

/* OpenMP's threads made before the backend was opened (by a region of the caller's own) are
 * flushed too, not only those created after. */
Test(denormals, threads_made_before_the_backend_flush)
{
    skip_unless_supported();
    RegionCheck before = {{0}, 0}, after = {{0}, 0};
    cpu_run(THREADS, check_in_region, &before);
    for (int t = 0; t < THREADS; t++) cr_assert_not(before.flushes[t], "thread %d flushed before any backend", t);
    Backend *bk = backend_create(THREADS);
    cpu_run(THREADS, check_in_region, &after);
    for (int t = 0; t < THREADS; t++) cr_assert(after.flushes[t], "thread %d of the region keeps subnormals", t);
    backend_destroy(bk);
}

static void *check_in_thread(void *result)
{
    *(int *)result = thread_flushes();
    return NULL;
}

Test(denormals, a_thread_created_afterwards_flushes)
{
    skip_unless_supported();
    Backend *bk = backend_create(1);
    int flushes = 0;
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, check_in_thread, &flushes), 0);
    cr_assert_eq(pthread_join(thread, NULL), 0);
    cr_assert(flushes, "a thread created after the backend keeps subnormals");
    backend_destroy(bk);
}
