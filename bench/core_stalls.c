/* How much of a CPU's time the machine under us takes away: a virtual machine's core can be
 * paused by its host for milliseconds at a time, and while one of them is, every thread of a
 * process that waits for all of its threads (a parallel region's end) waits for it too. No
 * split of the work helps then, which is what bench/run_bench.py's thread-scaling table needs
 * to tell apart from the engine's own losses.
 *
 * Runs equal units of arithmetic (about 50 us each) on the calling thread for `seconds`
 * (default 0.3; pin it with taskset or sched_setaffinity) and prints one line:
 *   cpu=N median_us=U stalled_pct=P stalls=S longest_ms=L
 * where a stall is a unit that took over 3 times the median, and stalled_pct is the time such
 * units took beyond the median, over the whole run. A core that runs slower throughout (a lower
 * clock, a busy sibling) shows as a longer median_us instead.
 * Build: make build/release/bench/core_stalls */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_UNITS = 200000, UNIT_ADDS = 20000 };

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One unit of work: a dependent chain of adds the compiler cannot drop. */
static double unit(double seed)
{
    volatile double acc = seed;
    for (int i = 0; i < UNIT_ADDS; i++) acc = acc + 0.5 * i;
    return acc;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const double seconds = argc > 1 ? atof(argv[1]) : 0.3;
    if (!(seconds > 0 && seconds <= 60)) {
        fprintf(stderr, "core_stalls: the run's length must be 0-60 seconds, not %s\n", argv[1]);
        return 2;
    }
    double *took = malloc(sizeof(double) * MAX_UNITS), *sorted = malloc(sizeof(double) * MAX_UNITS);
    if (!took || !sorted) {
        fprintf(stderr, "core_stalls: out of memory\n");
        return 1;
    }
    int n = 0;
    double sink = 0;
    const double start = seconds_now();
    for (double t = start; t - start < seconds && n < MAX_UNITS; n++) {
        sink += unit(sink * 1e-300);
        const double after = seconds_now();
        took[n] = after - t;
        t = after;
    }
    const double total = seconds_now() - start;
    for (int i = 0; i < n; i++) sorted[i] = took[i];
    qsort(sorted, (size_t)n, sizeof(double), by_value);
    const double median = sorted[n / 2];
    double lost = 0, longest = 0;
    int stalls = 0;
    for (int i = 0; i < n; i++) {
        if (took[i] <= 3 * median) continue;
        stalls++;
        lost += took[i] - median;
        if (took[i] > longest) longest = took[i];
    }
    printf("cpu=%d median_us=%.1f stalled_pct=%.1f stalls=%d longest_ms=%.2f%s\n", sched_getcpu(), median * 1e6,
           100 * lost / total, stalls, longest * 1e3, sink == 1.5 ? " " : "");
    free(took);
    free(sorted);
    return 0;
}
