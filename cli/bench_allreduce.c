/* `mpirun -np K bigbatch bench --allreduce MB`: the gradient allreduce alone, the bucketed
 * overlapped path (as training uses it) against one plain MPI_Allreduce of the whole buffer.
 * Bandwidth is reported as NCCL's "bus bandwidth": 2(K-1)/K x bytes / time, the rate each
 * link of a ring must sustain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sweeps/flags/cli_args.h"
#include "../engine/dist/comm.h"
#include "cli.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Seconds of one allreduce of n values, the slowest rank's view averaged; bucketed: 16
 * "layers" of the gradients in backend memory (dev) become ready in turn, as in training;
 * plain: one MPI_Allreduce of buf. */
static double time_allreduce(const Comm *c, GradReducer *g, real *dev, real *buf, size_t n, bool bucketed)
{
    comm_barrier(c);
    double t0 = now_seconds();
    if (bucketed) {
        grad_reducer_begin(g, dev, n);
        for (int layer = 15; layer >= 0; layer--) grad_reducer_ready(g, n / 16 * (size_t)layer);
        grad_reducer_finish(g);
    } else {
        comm_allreduce_sum_real(c, buf, n);
    }
    double dt = now_seconds() - t0;
    comm_allreduce_sum_double(c, &dt, 1);
    return dt / c->size;
}

static double median(double *t, int count)
{
    qsort(t, (size_t)count, sizeof *t, cmp_double);
    return t[count / 2];
}

/* Unless --repeats says: at least 20 pairs, as many as fill about half a second (a pair of
 * 0.1 MB calls lasts 0.06-0.4 ms here, and 20 of them were one scheduling hiccup long), at most
 * 2000. */
enum { AUTO_REPEATS_MIN = 20, AUTO_REPEATS_MAX = 2000 };
static const double AUTO_REPEATS_SECONDS = 0.5;

/* Medians of plain and bucketed allreduces taken in turn, which goes first swapped each time,
 * so that the machine's drift falls on both alike (timed one after the other, the two medians
 * of the same single call differed by 9% with 4 ranks on 2 cores). *repeats: the pairs timed,
 * or 0 to choose from the second of two untimed pairs (rank 0's choice, broadcast). */
static void time_both(const Comm *c, GradReducer *g, real *dev, real *buf, size_t n, long *repeats, double *plain,
                      double *bucketed)
{
    double pair = 0;
    for (int warm = 0; warm < 2; warm++) /* the first pair is slow (a 10 MB one 10x) */
        pair = time_allreduce(c, g, dev, buf, n, false) + time_allreduce(c, g, dev, buf, n, true);
    if (*repeats == 0) {
        double fill = pair > 0 ? AUTO_REPEATS_SECONDS / pair : AUTO_REPEATS_MAX;
        *repeats = fill < AUTO_REPEATS_MIN ? AUTO_REPEATS_MIN : fill > AUTO_REPEATS_MAX ? AUTO_REPEATS_MAX : (long)fill;
        comm_bcast_bytes(c, repeats, sizeof *repeats, 0);
    }
    const int count = (int)*repeats;
    double *tp = xmalloc(sizeof *tp * (size_t)count, "timings");
    double *tb = xmalloc(sizeof *tb * (size_t)count, "timings");
    for (int r = 0; r < count; r++) {
        const bool bucketed_first = r % 2 != 0;
        double first = time_allreduce(c, g, dev, buf, n, bucketed_first);
        double second = time_allreduce(c, g, dev, buf, n, !bucketed_first);
        tp[r] = bucketed_first ? second : first;
        tb[r] = bucketed_first ? first : second;
    }
    *plain = median(tp, count);
    *bucketed = median(tb, count);
    free(tp);
    free(tb);
}

int bench_allreduce(int argc, char **argv)
{
    double mb = 0, bucket_mb = GRAD_BUCKET_MB_DEFAULT;
    long repeats = 0; /* auto */
    Error err = {{0}};
    for (int i = 1; i < argc; i++) {
        bool value = i + 1 < argc;
        int rc = 0;
        if (!strcmp(argv[i], "--allreduce") && value) rc = cli_parse_double("--allreduce", argv[++i], &mb, &err);
        else if (!strcmp(argv[i], "--bucket-mb") && value) rc = cli_parse_double("--bucket-mb", argv[++i], &bucket_mb, &err);
        else if (!strcmp(argv[i], "--repeats") && value) rc = cli_parse_long("--repeats", argv[++i], 1, 1000000, &repeats, &err);
        else {
            error_set(&err, "unexpected '%s' with --allreduce (--allreduce MB [--bucket-mb X] [--repeats N])", argv[i]);
            rc = -1;
        }
        if (rc) {
            fprintf(stderr, "bigbatch bench: %s\n", err.msg);
            return 2;
        }
    }
    if (!(mb > 0) || !(bucket_mb > 0) || mb > 65536 || bucket_mb > 65536) {
        fprintf(stderr, "bigbatch bench: --allreduce and --bucket-mb take a size in MB above 0 and at most 65536\n");
        return 2;
    }
    Comm c;
    if (comm_init(&c, &argc, &argv, &err) != 0) {
        fprintf(stderr, "bigbatch bench: %s\n", err.msg);
        return 2;
    }
    size_t n = (size_t)(mb * 1e6 / sizeof(real));
    real *buf = xcalloc(n, sizeof *buf, "allreduce buffer");
    for (size_t i = 0; i < n; i++) buf[i] = (real)(i % 7) * (real)1e-3;
    Backend *bk = backend_create(1);
    Tensor grads;
    tensor_alloc(&grads, bk, 1, 1, 1, (int)n);
    tensor_upload(&grads, buf);
    GradReducer g;
    grad_reducer_init(&g, &c, bk, (size_t)(bucket_mb * 1e6), false);
    /* the plain call sums the same memory where the host may use it (the CPU backend), as
     * training's --plain-allreduce does */
    real *host = bk_host_address(bk, grads.data);
    double plain, bucketed;
    time_both(&c, &g, grads.data, host ? host : buf, n, &repeats, &plain, &bucketed);
    double bus = c.size > 1 ? 2.0 * (c.size - 1) / c.size * (double)n * sizeof(real) / 1e9 : 0;
    if (c.rank == 0)
        printf("allreduce_mb=%.3g ranks=%d bucket_mb=%.3g plain_ms=%.3f plain_busbw_GBps=%.3f bucketed_ms=%.3f "
               "bucketed_busbw_GBps=%.3f repeats=%ld\n",
               mb, c.size, bucket_mb, plain * 1e3, plain > 0 ? bus / plain : 0, bucketed * 1e3,
               bucketed > 0 ? bus / bucketed : 0, repeats);
    grad_reducer_free(&g);
    tensor_free(&grads);
    backend_destroy(bk);
    free(buf);
    comm_finalize(&c);
    return 0;
}
