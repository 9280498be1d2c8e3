/* What a parallel region and a small sgemm cost on this machine, the numbers behind
 * engine/cpu/threads.h and engine/dist/replicas.c (docs/performance.md, "Threads and cores"):
 *   - an empty OpenMP region of one thread, at the top level and nested in a 2-thread region
 *     (a net replica's thread), in microseconds;
 *   - LeNet's conv1 forward product (sgemm 6 x 784 x 25, single-threaded) in microseconds a call:
 *     one thread alone, two threads of one process calling at once, two processes at once.
 * Build and run: make build/release/bench/region_cost && build/release/bench/region_cost */
#include <cblas.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { REGIONS = 200000, CALLS = 40000, M = 6, N = 784, K = 25 };

static double region_us(int nested)
{
    volatile int sink = 0;
    const int outer = nested ? 2 : 1;
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(outer)
    {
        for (int r = 0; r < REGIONS; r++) {
#pragma omp parallel num_threads(1)
            sink = sink + 1;
        }
    }
    return (omp_get_wtime() - t0) / REGIONS * 1e6;
}

/* Microseconds a call of this thread's own sgemm, CALLS times. */
static double sgemm_us(void)
{
    float *a = calloc(M * K, sizeof *a), *b = calloc(K * N, sizeof *b), *c = calloc(M * N, sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "region_cost: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < K * N; i++) b[i] = 0.001f * (float)(i % 97);
    for (int i = 0; i < M * K; i++) a[i] = 0.01f * (float)(i % 13);
    double t0 = omp_get_wtime();
    for (int r = 0; r < CALLS; r++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, a, K, b, N, 0, c, N);
    double us = (omp_get_wtime() - t0) / CALLS * 1e6;
    free(a);
    free(b);
    free(c);
    return us;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Two processes, one pinned to each CPU, each timing its own calls; prints both. */
static void two_processes(void)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("region_cost: pipe");
        exit(1);
    }
    for (int p = 0; p < 2; p++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("region_cost: fork");
            exit(1);
        }
        if (pid == 0) {
            pin(p);
            double us = sgemm_us();
            if (write(fds[1], &us, sizeof us) != sizeof us) _exit(1);
            _exit(0);
        }
    }
    double us[2] = {0, 0};
    for (int p = 0; p < 2; p++)
        if (read(fds[0], &us[p], sizeof us[p]) != sizeof us[p]) fprintf(stderr, "region_cost: a child failed\n");
    while (wait(NULL) > 0) {}
    printf("sgemm %dx%dx%d, two processes at once: %.2f and %.2f us a call\n", M, N, K, us[0], us[1]);
}

int main(void)
{
    openblas_set_num_threads(1);
    printf("empty region of one thread: %.2f us at the top level, %.2f us nested in a 2-thread region\n",
           region_us(0), region_us(1));
    pin(0);
    printf("sgemm %dx%dx%d, one thread alone: %.2f us a call\n", M, N, K, sgemm_us());
    double us[2];
    cpu_set_t all;
    CPU_ZERO(&all);
    CPU_SET(0, &all);
    CPU_SET(1, &all);
    sched_setaffinity(0, sizeof all, &all);
#pragma omp parallel num_threads(2)
    {
        pin(omp_get_thread_num());
        us[omp_get_thread_num()] = sgemm_us();
    }
    printf("sgemm %dx%dx%d, two threads of one process at once: %.2f and %.2f us a call\n", M, N, K, us[0], us[1]);
    two_processes();
    return 0;
}
