/* OpenBLAS's packing buffers, each thread its own (engine/cpu/blas_buffers.c): libopenblas
 * binds to the engine's allocator, a thread gets the same buffer call after call and never
 * another thread's, a buffer freed on any thread is free again, an exited thread's regions serve
 * the next thread, and sgemm's answers are right on one thread, in OpenBLAS's own threads and in
 * an OpenMP team whose threads all call it at once. */
#include <cblas.h>
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "../engine/cpu/blas_buffers.h"

static void *run_on_thread(void *(*fn)(void *), void *arg)
{
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, fn, arg), 0);
    void *result;
    cr_assert_eq(pthread_join(thread, &result), 0);
    return result;
}

static void *alloc_and_hold(void *unused)
{
    (void)unused;
    return blas_memory_alloc(0);
}

static void *free_it(void *area)
{
    blas_memory_free(area);
    return NULL;
}

static void *alloc_and_free(void *unused)
{
    (void)unused;
    void *area = blas_memory_alloc(0);
    blas_memory_free(area);
    return area;
}

/* An n x n product through cblas_sgemm, and its largest difference from the plain triple loop. */
static double sgemm_error(int n, unsigned seed)
{
    float *a = malloc(sizeof(float) * (size_t)n * n), *b = malloc(sizeof(float) * (size_t)n * n);
    float *c = malloc(sizeof(float) * (size_t)n * n);
    cr_assert(a && b && c);
    for (int i = 0; i < n * n; i++) {
        seed = seed * 1103515245u + 12345u;
        a[i] = (float)(seed >> 16 & 0xff) / 256.0f - 0.5f;
        b[i] = (float)(seed >> 8 & 0xff) / 256.0f - 0.5f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double worst = 0;
    for (int i = 0; i < n; i += 7)
        for (int j = 0; j < n; j += 5) {
            double want = 0;
            for (int k = 0; k < n; k++) want += (double)a[i * n + k] * b[k * n + j];
            worst = fmax(worst, fabs(want - c[i * n + j]));
        }
    free(a);
    free(b);
    free(c);
    return worst;
}

Test(blas_buffers, libopenblas_takes_its_buffers_from_the_engine)
{
    openblas_set_num_threads(1);
    const size_t before = blas_buffers_served_here();
    cr_assert_lt(sgemm_error(256, 1), 1e-3);
    cr_assert_gt(blas_buffers_served_here(), before,
                 "sgemm did not call the engine's blas_memory_alloc: is it exported from the binary?");
}

Test(blas_buffers, a_thread_gets_the_same_buffer_call_after_call)
{
    void *first = blas_memory_alloc(0);
    blas_memory_free(first);
    void *again = blas_memory_alloc(0);
    cr_assert_eq(again, first);
    void *nested = blas_memory_alloc(0);
    cr_assert_neq(nested, again, "a buffer in use was handed out again");
    blas_memory_free(nested);
    blas_memory_free(again);
    cr_assert_eq((size_t)first % 4096, 0, "a buffer is not page-aligned");
}

Test(blas_buffers, a_thread_never_gets_a_buffer_another_thread_holds)
{
    void *held = run_on_thread(alloc_and_hold, NULL);
    void *mine = blas_memory_alloc(0);
    cr_assert_neq(mine, held);
    blas_memory_free(mine);
    blas_memory_free(held);
}

Test(blas_buffers, a_buffer_freed_on_another_thread_is_free_again)
{
    void *area = blas_memory_alloc(0);
    run_on_thread(free_it, area);
    void *again = blas_memory_alloc(0);
    cr_assert_eq(again, area);
    blas_memory_free(again);
}

Test(blas_buffers, an_exited_threads_region_serves_the_next_thread)
{
    void *first = run_on_thread(alloc_and_free, NULL);
    const size_t mapped = blas_buffers_mapped();
    void *second = run_on_thread(alloc_and_free, NULL);
    cr_assert_eq(second, first);
    cr_assert_eq(blas_buffers_mapped(), mapped, "a new region was mapped for the second thread");
}

Test(blas_buffers, freeing_a_free_buffer_aborts, .signal = SIGABRT)
{
    void *area = blas_memory_alloc(0);
    blas_memory_free(area);
    blas_memory_free(area);
}

Test(blas_buffers, sgemm_is_right_in_openblas_threads_and_in_an_openmp_team)
{
    openblas_set_num_threads(2);
    cr_assert_lt(sgemm_error(384, 2), 1e-3);
    double worst[4] = {0};
#pragma omp parallel for num_threads(4)
    for (int t = 0; t < 4; t++) worst[t] = sgemm_error(160 + 32 * t, 3 + (unsigned)t);
    for (int t = 0; t < 4; t++) cr_assert_lt(worst[t], 1e-3, "thread %d: off by %g", t, worst[t]);
}
