/* `mpirun -np K bigbatch bench --allreduce MB`: the gradient allreduce alone, the bucketed
 * overlapped path (as training uses it) against one plain MPI_Allreduce of the whole buffer.
 * Bandwidth is reported as NCCL's "bus bandwidth": 2(K-1)/K x bytes / time, the rate each
 * link of a ring must sustain. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sweeps/flags/flag_table.h"
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

typedef struct {
    double mb, bucket_mb;
    long repeats; /* 0: auto */
} AllreduceFlags;

static void allreduce_defaults(void *target) { *(AllreduceFlags *)target = (AllreduceFlags){0, GRAD_BUCKET_MB_DEFAULT, 0}; }

#define AT(member) offsetof(AllreduceFlags, member)

static const Flag FLAGS[] = {
    {"allreduce", "MB", "the gradients' size in MB (10^6 bytes) summed across the ranks", NULL, F_DBL(AT(mb))},
    {"bucket-mb", "X", "the bucketed path's bucket size in MB", "%g", F_DBL(AT(bucket_mb))},
    {"repeats", "N", "pairs of calls timed [as many as fill about half a second,\n20 to 2000]", NULL,
     F_LONG(AT(repeats), 1, 1000000)},
    FLAG_HELP_ROW,
};

static const char HEAD[] =
    "usage: mpirun -np K bigbatch bench --allreduce MB [--bucket-mb X] [--repeats N]\n"
    "\n"
    "The gradient allreduce alone: the bucketed, overlapped path training uses against one\n"
    "plain MPI_Allreduce of the whole buffer, each the median of its calls; bandwidth as\n"
    "NCCL's bus bandwidth, 2(K-1)/K x bytes / time. Prints one line:\n"
    "  allreduce_mb=MB ranks=K bucket_mb=X plain_ms=.. plain_busbw_GBps=.. bucketed_ms=..\n"
    "  bucketed_busbw_GBps=.. repeats=N\n"
    "\n"
    "options:\n";

/* Any flag it does not know, a missing value or an argument: the one message of old. */
#define UNEXPECTED "unexpected '%s' with --allreduce (--allreduce MB [--bucket-mb X] [--repeats N])"

static const FlagTable TABLE = {"bench", FLAGS, FLAG_COUNT(FLAGS), sizeof(AllreduceFlags), allreduce_defaults, HEAD,
                                NULL, 0, UNEXPECTED, UNEXPECTED, NULL, 0, 0};

void allreduce_flags_usage(FILE *out) { flag_table_usage(&TABLE, out); }
void allreduce_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* 0, 1 for --help, -1 with err. */
static int parse_allreduce(int argc, char **argv, AllreduceFlags *a, Error *err)
{
    allreduce_defaults(a);
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, a, &rest, err);
    if (rc != 0) return rc;
    if (!(a->mb > 0) || !(a->bucket_mb > 0) || a->mb > 65536 || a->bucket_mb > 65536) {
        error_set(err, "--allreduce and --bucket-mb take a size in MB above 0 and at most 65536");
        return -1;
    }
    return 0;
}

int bench_allreduce(int argc, char **argv)
{
    AllreduceFlags a;
    Error err = {{0}};
    int parsed = parse_allreduce(argc, argv, &a, &err);
    if (parsed == 1) allreduce_flags_usage(stdout);
    if (parsed != 0) {
        if (parsed < 0) fprintf(stderr, "bigbatch bench: %s\n", err.msg);
        return parsed < 0 ? 2 : 0;
    }
    double mb = a.mb, bucket_mb = a.bucket_mb;
    long repeats = a.repeats;
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
