/* Data-parallel communication: the ranks of an `mpirun` job, or a single process.
 *
 * MPI is initialized only when the process was started by a launcher (mpirun sets
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE); a plain `bigbatch train` is rank 0 of 1
 * and touches no MPI. `make MPI=0` builds without MPI at all (BB_NO_MPI), with the same
 * behaviour at one rank.
 *
 * Gradients are averaged in buckets: as backward finishes layers (from the last to the
 * first), the finished tail of the gradient block is handed in buckets of `bucket_bytes` to a
 * thread that sums each with MPI_Allreduce (reduce_thread.h; polled MPI_Iallreduce requests
 * where MPI lacks MPI_THREAD_MULTIPLE), so communication overlaps the backward pass of
 * earlier layers, as in PyTorch DDP and Horovod. The gradients live in backend memory: where the host may use it
 * in place (bk_host_address: the CPU backend) MPI reduces it there; otherwise each bucket is
 * downloaded into a host staging buffer once the backward that wrote it has finished (an
 * event), reduced there, and the sums are uploaded back in one copy at the end. Where the
 * backend has a device collective (a GPU job with NCCL: grad_reducer_use), the buckets are
 * summed on the devices instead, in the backend's streams, and the host waits for nothing. */
#ifndef BB_COMM_H
#define BB_COMM_H
#include <stdbool.h>
#include <stddef.h>

#include "../backend.h"
#include "../real.h"
#include "../base/util.h"

typedef struct {
    int rank, size;
    bool mpi;               /* MPI_Init was called (launched under mpirun) */
} Comm;

/* 0, or -1 with err (a launcher was found but MPI is not built in or did not start). */
int comm_init(Comm *c, int *argc, char ***argv, Error *err);
void comm_finalize(Comm *c);
/* Ends every rank of the job now, with this exit status (exit() at one rank). */
void comm_abort(const Comm *c, int status) __attribute__((noreturn));

/* Collective operations; no-ops at one rank. */
void comm_bcast_real(const Comm *c, real *buf, size_t n, int root);
void comm_allreduce_sum_real(const Comm *c, real *buf, size_t n);
void comm_allreduce_sum_double(const Comm *c, double *buf, int n);
void comm_bcast_bytes(const Comm *c, void *buf, size_t n, int root);
/* The backend's collective among this job's ranks (bk_collective_open with an MPI broadcast):
 * NULL with err->msg empty at one rank or where the backend has none; NULL with err set when
 * it failed. */
BkCollective *comm_device_collective(const Comm *c, Backend *bk, Error *err);
/* True on every rank when two ranks of the job compute on one GPU (the same host and device):
 * NCCL refuses that, so their gradient sums go through MPI from page-locked host memory, as on
 * the CPU. False at one rank and on the CPU backend. Collective: every rank calls it. */
bool comm_ranks_share_gpu(const Comm *c, Backend *bk);
void comm_barrier(const Comm *c);

/* Bucketed, overlapped allreduce (sum) of one buffer whose tail becomes final first. */
#define GRAD_MAX_BUCKETS 4096
/* The default bucket (train --bucket-mb, bench --allreduce), PyTorch DDP's bucket_cap_mb. With
 * 8 MB buckets a 10-25 MB gradient took 2-4 collective calls where the plain allreduce takes one,
 * which cost up to 22% with 4 ranks on 2 cores (bench/results/2026-12-05-mpi.txt); a proxy's
 * training throughput was the same with either (simple-cnn, 2 ranks). Above 25 MB the buckets
 * still beat one call (100 MB: 0.07-0.10 of its time). */
#define GRAD_BUCKET_MB_DEFAULT 25.0
typedef struct {
    const Comm *comm;
    Backend *bk;
    real *dev;              /* the gradients, backend memory */
    real *buf;              /* what MPI reduces: the gradients in place, or host staging */
    bool staged;            /* buf is staging (the backend's memory is not host memory) */
    real *staging;
    size_t cap;             /* elements allocated in staging */
    BkEvent *written;       /* recorded after each layer's backward */
    size_t n;               /* elements in buf */
    size_t bucket;          /* elements per bucket */
    size_t sent_from;       /* [sent_from, n) has been handed to MPI */
    int n_req;
    void *req;              /* MPI_Request[GRAD_MAX_BUCKETS] (opaque here) */
    bool plain;             /* one blocking MPI_Allreduce of the whole buffer instead */
    struct ReduceThread *thread; /* sums the buckets (reduce_thread.h), or NULL: requests */
    double exposed_s;       /* seconds the step waited in grad_reducer_finish, all steps */
    double inline_s;        /* of which spent summing on the calling thread */
    BkCollective *device;   /* sums on the devices instead of MPI (not owned), or NULL */
} GradReducer;

void grad_reducer_init(GradReducer *g, const Comm *c, Backend *bk, size_t bucket_bytes, bool plain);
void grad_reducer_free(GradReducer *g);
/* From now on the buckets are summed by the backend's collective (NULL: MPI on the host). */
void grad_reducer_use(GradReducer *g, BkCollective *device);
/* dev: n gradients in backend memory, reduced in place. */
void grad_reducer_begin(GradReducer *g, real *dev, size_t n);
/* [from, n) is final: start the buckets that are complete. */
void grad_reducer_ready(GradReducer *g, size_t from);
/* Everything is final: send the rest and wait for all buckets. */
void grad_reducer_finish(GradReducer *g);
/* Seconds spent summing gradients over all steps so far, and how many of them the steps waited
 * for (the rest was hidden behind backward); both 0 where not measured (a device collective,
 * polled requests). */
void grad_reducer_times(const GradReducer *g, double *total_s, double *exposed_s);

#endif
