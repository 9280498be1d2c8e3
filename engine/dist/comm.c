/* MPI behind the Comm interface (comm.h); without MPI (BB_NO_MPI) every rank count is 1. */
#include "comm.h"

#include "reduce_thread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BB_NO_MPI
#include <mpi.h>
#define MPI_REAL_T (sizeof(real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT)
#endif

/* Started by a launcher: Open MPI's mpirun, PMIx or a PMI-1/2 launcher (srun, hydra). */
static bool launched_by_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

int comm_init(Comm *c, int *argc, char ***argv, Error *err)
{
    memset(c, 0, sizeof *c);
    c->size = 1;
    if (!launched_by_mpirun()) return 0;
#ifdef BB_NO_MPI
    (void)argc;
    (void)argv;
    error_set(err, "started by mpirun, but this bigbatch was built without MPI (make MPI=0)");
    return -1;
#else
    int provided;
    /* MULTIPLE: gradient buckets are summed by a thread of their own (reduce_thread.h) while
     * the main thread may call MPI too; with less, they are polled nonblocking requests. */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        error_set(err, "MPI_Init_thread failed");
        return -1;
    }
    /* Errors abort the job (the default handler): a rank never waits for a dead peer. */
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->mpi = true;
    return 0;
#endif
}

void comm_finalize(Comm *c)
{
#ifndef BB_NO_MPI
    if (c->mpi) MPI_Finalize();
#endif
    c->mpi = false;
}

void comm_abort(const Comm *c, int status)
{
    fflush(stdout);
    fflush(stderr);
#ifndef BB_NO_MPI
    if (c && c->mpi && c->size > 1) MPI_Abort(MPI_COMM_WORLD, status);
#else
    (void)c;
#endif
    exit(status);
}

void comm_bcast_real(const Comm *c, real *buf, size_t n, int root)
{
#ifndef BB_NO_MPI
    if (!c || c->size == 1) return;
    for (size_t done = 0; done < n;) { /* MPI counts are int */
        int part = n - done > (size_t)1 << 30 ? 1 << 30 : (int)(n - done);
        MPI_Bcast(buf + done, part, MPI_REAL_T, root, MPI_COMM_WORLD);
        done += (size_t)part;
    }
#else
    (void)c, (void)buf, (void)n, (void)root;
#endif
}

void comm_allreduce_sum_real(const Comm *c, real *buf, size_t n)
{
#ifndef BB_NO_MPI
    if (!c || c->size == 1) return;
    for (size_t done = 0; done < n;) {
        int part = n - done > (size_t)1 << 30 ? 1 << 30 : (int)(n - done);
        MPI_Allreduce(MPI_IN_PLACE, buf + done, part, MPI_REAL_T, MPI_SUM, MPI_COMM_WORLD);
        done += (size_t)part;
    }
#else
    (void)c, (void)buf, (void)n;
#endif
}

void comm_allreduce_sum_double(const Comm *c, double *buf, int n)
{
#ifndef BB_NO_MPI
    if (c && c->size > 1) MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
#else
    (void)c, (void)buf, (void)n;
#endif
}

void comm_bcast_bytes(const Comm *c, void *buf, size_t n, int root)
{
#ifndef BB_NO_MPI
    if (c && c->size > 1) MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
#else
    (void)c, (void)buf, (void)n, (void)root;
#endif
}

static void bcast_from_root(void *ctx, void *bytes, size_t n) { comm_bcast_bytes(ctx, bytes, n, 0); }

/* "host|device key": what two ranks share when they compute on one GPU (backend_device_key). */
#define DEVICE_KEY 192

bool comm_ranks_share_gpu(const Comm *c, Backend *bk)
{
    if (!c || c->size < 2) return false;
    const bool on_gpu = backend_on_gpu(bk);
    int shared = 0;
#ifndef BB_NO_MPI
    char key[DEVICE_KEY], host[64];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = 0;
    snprintf(key, sizeof key, "%s|%.120s", host, backend_device_key(bk));
    char *all = xcalloc((size_t)c->size, DEVICE_KEY, "device keys");
    MPI_Allgather(key, DEVICE_KEY, MPI_CHAR, all, DEVICE_KEY, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < c->size && on_gpu; r++)
        if (r != c->rank && !strncmp(all + (size_t)r * DEVICE_KEY, key, DEVICE_KEY)) shared = 1;
    free(all);
    MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* all ranks take one path */
#endif
    return on_gpu && shared;
}

BkCollective *comm_device_collective(const Comm *c, Backend *bk, Error *err)
{
    err->msg[0] = 0;
    if (!c || c->size < 2) return NULL;
    BkCollectiveSpec spec = {c->rank, c->size, bcast_from_root, (void *)c};
    return bk_collective_open(bk, &spec, err);
}

void comm_barrier(const Comm *c)
{
#ifndef BB_NO_MPI
    if (c && c->size > 1) MPI_Barrier(MPI_COMM_WORLD);
#else
    (void)c;
#endif
}

void grad_reducer_init(GradReducer *g, const Comm *c, Backend *bk, size_t bucket_bytes, bool plain)
{
    memset(g, 0, sizeof *g);
    g->comm = c;
    g->bk = bk;
    g->plain = plain;
    g->bucket = bucket_bytes / sizeof(real);
    if (g->bucket < 1024) g->bucket = 1024;
#ifndef BB_NO_MPI
    if (c && c->size > 1) g->req = xcalloc(GRAD_MAX_BUCKETS, sizeof(MPI_Request), "allreduce requests");
#endif
    /* the same on every rank (the same flags and library): the thread's start is collective */
    if (c && c->size > 1 && !plain) g->thread = reduce_thread_start();
    if (c && c->size > 1) g->written = bk_event_create(bk);
}

void grad_reducer_free(GradReducer *g)
{
    reduce_thread_stop(g->thread);
    g->thread = NULL;
    free(g->req);
    g->req = NULL;
    bk_host_free(g->bk, g->staging);
    g->staging = NULL;
    g->buf = NULL;
    if (g->written) bk_event_destroy(g->written);
    g->written = NULL;
}

void grad_reducer_use(GradReducer *g, BkCollective *device) { g->device = device; }

void grad_reducer_begin(GradReducer *g, real *dev, size_t n)
{
    g->dev = dev;
    g->n = n;
    g->sent_from = n;
    g->n_req = 0;
    if (g->device) return; /* summed in place on the devices: no host buffer */
    g->buf = bk_host_address(g->bk, dev);
    g->staged = g->buf == NULL;
    if (g->staged && n > g->cap) { /* page-locked on a GPU: the copies out run at full speed */
        bk_host_free(g->bk, g->staging);
        g->staging = bk_host_alloc(g->bk, n * sizeof *g->staging);
        g->cap = n;
    }
    if (g->staged) g->buf = g->staging;
    /* Buckets are few enough for the request array: a bucket grows when the buffer is huge. */
    while (g->n / g->bucket + 2 > GRAD_MAX_BUCKETS) g->bucket *= 2;
}

#ifndef BB_NO_MPI
/* [from, to) is final in backend memory: once its backward has finished, stage it on the
 * host if the backend's memory is not host memory, and start its allreduce. */
static void send_bucket(GradReducer *g, size_t from, size_t to)
{
    if (g->device) { /* in stream order after the backward that wrote it */
        bk_collective_sum_async(g->device, g->dev + from, to - from);
        return;
    }
    MPI_Request *req = g->req;
    bk_event_wait(g->written);
    if (g->staged) bk_download(g->bk, g->buf + from, g->dev + from, (to - from) * sizeof(real));
    if (g->thread) {
        reduce_thread_submit(g->thread, g->buf + from, to - from);
        return;
    }
    MPI_Iallreduce(MPI_IN_PLACE, g->buf + from, (int)(to - from), MPI_REAL_T, MPI_SUM, MPI_COMM_WORLD,
                   &req[g->n_req++]);
}
#endif

void grad_reducer_ready(GradReducer *g, size_t from)
{
#ifndef BB_NO_MPI
    if (!g->comm || g->comm->size == 1 || g->plain) return;
    if (!g->device) bk_event_record(g->bk, g->written);
    /* Send whole buckets from the end; the remainder waits for more layers. */
    while (g->sent_from >= from + g->bucket) {
        send_bucket(g, g->sent_from - g->bucket, g->sent_from);
        g->sent_from -= g->bucket;
    }
    /* Let MPI progress the buckets in flight (no progress thread in Open MPI by default). */
    int done;
    if (!g->device && !g->thread && g->n_req) MPI_Testall(g->n_req, g->req, &done, MPI_STATUSES_IGNORE);
#else
    (void)g, (void)from;
#endif
}

#ifndef BB_NO_MPI
/* Sums [0, n) here, on the calling thread, with the blocking call (timed: inline_s). */
static void sum_here(GradReducer *g, size_t n)
{
    if (g->staged) bk_download(g->bk, g->buf, g->dev, n * sizeof(real));
    double t0 = now_seconds();
    comm_allreduce_sum_real(g->comm, g->buf, n);
    g->inline_s += now_seconds() - t0;
}
#endif

static void finish(GradReducer *g)
{
#ifndef BB_NO_MPI
    if (!g->comm || g->comm->size == 1) return;
    if (g->device) { /* the rest (all of it when plain), then the update waits for the sums */
        if (g->sent_from > 0) send_bucket(g, 0, g->sent_from);
        g->sent_from = 0;
        bk_collective_join(g->device);
        return;
    }
    if (g->plain) {
        sum_here(g, g->n);
    } else if (g->thread) {
        /* The rest: after the thread's buckets when it has any (two allreduces at once spin
         * on the same cores), else here, which spares a gradient smaller than one bucket the
         * hand-over: it costs what the plain call does. */
        bk_event_record(g->bk, g->written);
        if (g->sent_from > 0 && g->sent_from < g->n) {
            send_bucket(g, 0, g->sent_from);
        } else if (g->sent_from > 0) {
            bk_event_wait(g->written);
            sum_here(g, g->n);
        }
        g->sent_from = 0;
        reduce_thread_wait(g->thread);
    } else {
        bk_event_record(g->bk, g->written);
        MPI_Waitall(g->n_req, g->req, MPI_STATUSES_IGNORE);
        g->n_req = 0;
        /* Nothing is left to overlap the remainder with: the blocking call's tuned algorithms
         * beat a nonblocking one (Open MPI's libnbc), which made a gradient smaller than one
         * bucket 1.5x slower than plain. */
        if (g->sent_from > 0) {
            bk_event_wait(g->written);
            sum_here(g, g->sent_from);
        }
        g->sent_from = 0;
    }
    if (g->staged) bk_upload(g->bk, g->dev, g->buf, g->n * sizeof(real));
#else
    (void)g;
#endif
}

void grad_reducer_finish(GradReducer *g)
{
    double t0 = now_seconds();
    finish(g);
    g->exposed_s += now_seconds() - t0;
}

void grad_reducer_times(const GradReducer *g, double *total_s, double *exposed_s)
{
    bool measured = !g->device && (g->plain || g->thread);
    *total_s = measured ? g->inline_s + (g->thread ? reduce_thread_busy_seconds(g->thread) : 0) : 0;
    *exposed_s = measured ? g->exposed_s : 0;
}
