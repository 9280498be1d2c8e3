/* How the CPU backend's operations share their work out over a backend's threads, with no
 * OpenMP region where there is one thread. libgomp builds a team for every region, even of one
 * thread: 2.2-2.7 us a region at the top level and 2.8-3.2 nested in a net replica's thread
 * (engine/dist/replicas.h; bench/region_cost.c, bench/results/2026-12-05-region-cost.txt), and a
 * replica's LeNet pass opened 31 of them. On one thread an operation runs its loop plainly on the
 * calling thread: a one-thread backend (--threads 1, or a replica's) then opens no region at all.
 *
 * Loops whose iterations are independent (each writes only its own outputs) are shared out in
 * balance (CpuClaims): every thread starts on its even share, front to back, and a thread that
 * finishes first takes what is left of the others' shares from their far ends. Cores do not
 * always run at one speed (a laptop's efficiency cores, a busy hyperthread sibling), and an
 * even split waits for the slower. Which thread computes an iteration cannot change its result,
 * so a run repeats bit for bit; where the cores are alike little moves, and each thread keeps
 * its own images in its own caches from layer to layer. What no split can win back is a core
 * its host pauses: the iterations it holds wait, and so does the region's end (a virtual
 * machine's CPU here lost half its time in pauses of 4-5 ms, and two threads ran slower than
 * one: bench/results/2026-12-05-core-stalls.txt). Loops that add into per-thread copies keep
 * the even split (CPU_FOR_STATIC_T, cpu_share): what a thread adds must not depend on timing. */
#ifndef BB_CPU_THREADS_H
#define BB_CPU_THREADS_H
#include <omp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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

/* One thread's share in grains, [front, back) packed as front << 32 | back, alone on its cache
 * line: its owner takes from the front, other threads from the back. */
typedef struct {
    _Atomic uint64_t span;
    char pad[64 - sizeof(uint64_t)];
} CpuSpan;

/* A share is cut into this many grains (a grain is at least one item): the finer, the closer
 * two cores of different speeds finish, for an atomic operation a grain. */
enum { CPU_GRAINS_PER_SHARE = 16 };

typedef struct {
    size_t n, grain;
    int T;
    CpuSpan *spans; /* T of them */
} CpuClaims;

/* Claims over n items for T threads, each thread's span its even share of the grains. */
static inline CpuClaims cpu_claims_begin(CpuSpan *spans, size_t n, int T)
{
    const size_t per = (n + (size_t)T - 1) / (size_t)T;
    size_t grain = (per + CPU_GRAINS_PER_SHARE - 1) / CPU_GRAINS_PER_SHARE;
    if (grain < 1) grain = 1;
    const CpuClaims c = {n, grain, T, spans};
    const size_t grains = (n + grain - 1) / grain;
    for (int t = 0; t < T; t++) {
        size_t from, to;
        cpu_share(grains, t, T, &from, &to);
        atomic_store_explicit(&spans[t].span, (uint64_t)from << 32 | (uint64_t)to, memory_order_relaxed);
    }
    return c;
}

/* Items [*from, *to) of the next grain for thread t: its own share's front, else the back of
 * the next thread's share that has any left. 0 when every grain is taken. The spans only hand
 * out indices (no data passes through them); the region's end orders the results. */
static inline int cpu_claim(const CpuClaims *c, int t, size_t *from, size_t *to)
{
    for (int k = 0; k < c->T; k++) {
        _Atomic uint64_t *span = &c->spans[(t + k) % c->T].span;
        uint64_t v = atomic_load_explicit(span, memory_order_relaxed);
        while ((uint32_t)(v >> 32) < (uint32_t)v) {
            const int own = k == 0;
            const uint64_t taken = own ? v + ((uint64_t)1 << 32) : v - 1;
            if (atomic_compare_exchange_weak_explicit(span, &v, taken, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                const size_t g = own ? (size_t)(v >> 32) : (size_t)(uint32_t)v - 1;
                *from = g * c->grain;
                *to = *from + c->grain < c->n ? *from + c->grain : c->n;
                return 1;
            }
        }
    }
    return 0;
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

/* for (type i = 0; i < n; i++) body, the iterations shared out in balance (CpuClaims) over
 * bk's threads when `worth` holds (a pass over a small tensor costs less than waking the
 * threads), else a plain loop. The body sees i and t, its thread's index in the backend's
 * workspace table; its iterations must be independent (see the top of this file). */
#define CPU_FOR_T_IF(bk, worth, t, type, i, n, ...)                                           \
    do {                                                                                      \
        const size_t cpu_for_n_ = (size_t)(n);                                                \
        const int cpu_for_threads_ = (worth) ? (bk)->threads : 1;                             \
        if (cpu_for_threads_ > 1) {                                                           \
            const CpuClaims cpu_for_claims_ =                                                 \
                cpu_claims_begin(cpu_spans(bk), cpu_for_n_, cpu_for_threads_);                \
            _Pragma("omp parallel num_threads(cpu_for_threads_)")                             \
            {                                                                                 \
                const int t = omp_get_thread_num();                                           \
                size_t cpu_for_from_, cpu_for_to_;                                            \
                while (cpu_claim(&cpu_for_claims_, t, &cpu_for_from_, &cpu_for_to_))          \
                    for (type i = (type)cpu_for_from_; i < (type)cpu_for_to_; i++) {          \
                        __VA_ARGS__                                                           \
                    }                                                                         \
            }                                                                                 \
        } else {                                                                              \
            const int t = 0;                                                                  \
            for (type i = 0; i < (type)cpu_for_n_; i++) {                                     \
                __VA_ARGS__                                                                   \
            }                                                                                 \
        }                                                                                     \
    } while (0)
#define CPU_FOR_IF(bk, worth, type, i, n, ...)                                                \
    CPU_FOR_T_IF(bk, worth, cpu_for_thread_, type, i, n, (void)cpu_for_thread_; __VA_ARGS__)
#define CPU_FOR(bk, type, i, n, ...) CPU_FOR_IF(bk, 1, type, i, n, __VA_ARGS__)
#define CPU_FOR_T(bk, t, type, i, n, ...) CPU_FOR_T_IF(bk, 1, t, type, i, n, __VA_ARGS__)

/* CPU_FOR_T with the even split, OpenMP's schedule(static): for bodies that add into their
 * thread's private copies, whose sums must not depend on which thread was faster. */
#define CPU_FOR_STATIC_T(bk, t, type, i, n, ...)                                              \
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
