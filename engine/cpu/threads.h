/* How the CPU backend's operations share their work out over a backend's threads, with no
 * OpenMP region where there is one thread. libgomp builds a team for every region, even of one
 * thread: 2.2-2.7 us a region at the top level and 2.8-3.2 nested in a net replica's thread
 * (engine/replicas.h; bench/region_cost.c, bench/results/2026-12-05-region-cost.txt), and a
 * replica's LeNet pass opened 31 of them. On one thread an operation runs its loop plainly on the
 * calling thread: a one-thread backend (--threads 1, or a replica's) then opens no region at all. */
#ifndef BB_CPU_THREADS_H
#define BB_CPU_THREADS_H
#include <omp.h>
#include <stddef.h>

/* Thread t's share [*from, *to) of n items among T threads: OpenMP's schedule(static), so a
 * loop shared out either way gives every thread the same items. */
static inline void cpu_share(size_t n, int t, int T, size_t *from, size_t *to)
{
    size_t q = n / (size_t)T, r = n % (size_t)T;
    if ((size_t)t < r) {
        q++;
        r = 0;
    }
    *from = q * (size_t)t + r;
    *to = *from + q;
}

/* fn(ctx, t, T) on each of `threads` threads in one parallel region; a plain call on one. */
static inline void cpu_run(int threads, void (*fn)(void *ctx, int t, int T), void *ctx)
{
    if (threads <= 1) {
        fn(ctx, 0, 1);
        return;
    }
#pragma omp parallel num_threads(threads)
    fn(ctx, omp_get_thread_num(), omp_get_num_threads());
}

/* Inside cpu_run's fn: every one of its T threads waits here (one has nothing to wait for). */
static inline void cpu_barrier(int T)
{
    if (T > 1) {
#pragma omp barrier
    }
}

/* for (type i = 0; i < n; i++) body, the iterations shared out as cpu_share does over bk's
 * threads when `worth` holds (a pass over a small tensor costs less than waking the threads),
 * else a plain loop. The body sees i. */
#define CPU_FOR_IF(bk, worth, type, i, n, ...)                                                \
    do {                                                                                      \
        const type cpu_for_n_ = (n);                                                          \
        const int cpu_for_threads_ = (worth) ? (bk)->threads : 1;                             \
        if (cpu_for_threads_ > 1) {                                                           \
            _Pragma("omp parallel for schedule(static) num_threads(cpu_for_threads_)")        \
            for (type i = 0; i < cpu_for_n_; i++) __VA_ARGS__                                 \
        } else {                                                                              \
            for (type i = 0; i < cpu_for_n_; i++) __VA_ARGS__                                 \
        }                                                                                     \
    } while (0)
#define CPU_FOR(bk, type, i, n, ...) CPU_FOR_IF(bk, 1, type, i, n, __VA_ARGS__)

/* CPU_FOR whose body also sees t, its thread's index in the backend's workspace table. */
#define CPU_FOR_T(bk, t, type, i, n, ...)                                                     \
    do {                                                                                      \
        const type cpu_for_n_ = (n);                                                          \
        const int cpu_for_threads_ = (bk)->threads;                                           \
        if (cpu_for_threads_ > 1) {                                                           \
            _Pragma("omp parallel for schedule(static) num_threads(cpu_for_threads_)")        \
            for (type i = 0; i < cpu_for_n_; i++) {                                           \
                const int t = omp_get_thread_num();                                           \
                __VA_ARGS__                                                                   \
            }                                                                                 \
        } else {                                                                              \
            for (type i = 0; i < cpu_for_n_; i++) {                                           \
                const int t = 0;                                                              \
                __VA_ARGS__                                                                   \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#endif
