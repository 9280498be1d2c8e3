/* Collectives among the ranks' GPUs with NCCL (backend.h, "collectives"). NCCL is loaded
 * with dlopen when a job of several ranks opens it, so the binary needs no NCCL to build, to
 * link or to run on one GPU; where rank 0 finds none the job goes on with MPI through host
 * memory, and says so.
 *
 * Gradient buckets are summed on a stream of their own: a bucket's sum waits (an event) for
 * the operations issued before it, the backward of its layers, and runs beside the backward
 * of earlier layers; bk_collective_join makes the compute stream wait for every sum before
 * the update, so the host never waits on a bucket. Synchronized BN's partial sums are summed
 * on the compute stream, in order. */
#include <dlfcn.h>
#include <nccl.h>
#include <string.h>

#include "cuda.h"

/* The entry points used, resolved from libnccl.so.2 (decltype: nothing is linked). */
typedef struct {
    void *lib;
    decltype(&ncclGetUniqueId) get_unique_id;
    decltype(&ncclCommInitRank) comm_init_rank;
    decltype(&ncclCommDestroy) comm_destroy;
    decltype(&ncclAllReduce) all_reduce;
    decltype(&ncclGetErrorString) error_string;
} Nccl;

typedef struct {
    Nccl nccl;
    ncclComm_t comm;
    cudaStream_t stream; /* the buckets' sums */
    cudaEvent_t issued;  /* on the compute stream: what a bucket's sum waits for */
    cudaEvent_t summed;  /* on the sums' stream: what the join waits for */
} CudaCollective;

/* rank 0's handshake: whether NCCL is there, and the communicator's id */
typedef struct {
    int available;
    ncclUniqueId id;
} Handshake;

#define NCCL_CHECK(nc, call)                                                                          \
    do {                                                                                              \
        ncclResult_t r_ = (call);                                                                     \
        if (r_ != ncclSuccess) cuda_die(__FILE__, __LINE__, #call, (nc)->error_string(r_));         \
    } while (0)

/* 0 with every entry point, else -1 with what is missing in err. */
static int nccl_load(Nccl *nc, Error *err)
{
    memset(nc, 0, sizeof *nc);
    nc->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!nc->lib) {
        error_set(err, "NCCL not found (%s)", dlerror());
        return -1;
    }
    struct {
        const char *name;
        void **slot;
    } syms[] = {
        {"ncclGetUniqueId", (void **)&nc->get_unique_id},   {"ncclCommInitRank", (void **)&nc->comm_init_rank},
        {"ncclCommDestroy", (void **)&nc->comm_destroy},    {"ncclAllReduce", (void **)&nc->all_reduce},
        {"ncclGetErrorString", (void **)&nc->error_string},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].slot = dlsym(nc->lib, syms[i].name);
        if (!*syms[i].slot) {
            error_set(err, "libnccl.so.2 lacks %s", syms[i].name);
            dlclose(nc->lib);
            nc->lib = NULL;
            return -1;
        }
    }
    return 0;
}

void *cuda_collective_open(Backend *bk, const BkCollectiveSpec *spec, Error *err)
{
    Handshake hs;
    memset(&hs, 0, sizeof hs);
    Nccl nc;
    Error why = {{0}};
    bool loaded = nccl_load(&nc, &why) == 0;
    if (spec->rank == 0 && loaded) {
        ncclResult_t r = nc.get_unique_id(&hs.id);
        hs.available = r == ncclSuccess;
        if (!hs.available) error_set(&why, "ncclGetUniqueId: %s", nc.error_string(r));
    }
    spec->bcast(spec->ctx, &hs, sizeof hs);
    if (!hs.available) { /* every rank takes the MPI path together */
        if (spec->rank == 0)
            fprintf(stderr, "bigbatch: %s: gradients go through host memory and MPI\n", why.msg);
        if (loaded) dlclose(nc.lib);
        return NULL;
    }
    if (!loaded) {
        error_set(err, "rank %d: %s, which rank 0 has", spec->rank, why.msg);
        return NULL;
    }
    CudaCollective *c = (CudaCollective *)xcalloc(1, sizeof *c, "NCCL communicator");
    c->nccl = nc;
    CUDA_CHECK(cudaSetDevice(cuda_state(bk)->device));
    NCCL_CHECK(&nc, nc.comm_init_rank(&c->comm, spec->size, hs.id, spec->rank));
    CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&c->issued, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&c->summed, cudaEventDisableTiming));
    return c;
}

void cuda_collective_close(Backend *bk, void *impl)
{
    CudaCollective *c = (CudaCollective *)impl;
    CUDA_CHECK(cudaStreamSynchronize(cuda_state(bk)->stream));
    CUDA_CHECK(cudaStreamSynchronize(c->stream));
    c->nccl.comm_destroy(c->comm);
    CUDA_CHECK(cudaEventDestroy(c->issued));
    CUDA_CHECK(cudaEventDestroy(c->summed));
    CUDA_CHECK(cudaStreamDestroy(c->stream));
    dlclose(c->nccl.lib);
    free(c);
}

static ncclDataType_t nccl_real(void) { return sizeof(real) == sizeof(double) ? ncclFloat64 : ncclFloat32; }

void cuda_collective_sum_async(Backend *bk, void *impl, real *dev, size_t count)
{
    CudaCollective *c = (CudaCollective *)impl;
    if (!count) return;
    CUDA_CHECK(cudaEventRecord(c->issued, cuda_state(bk)->stream));
    CUDA_CHECK(cudaStreamWaitEvent(c->stream, c->issued, 0));
    NCCL_CHECK(&c->nccl, c->nccl.all_reduce(dev, dev, count, nccl_real(), ncclSum, c->comm, c->stream));
}

void cuda_collective_join(Backend *bk, void *impl)
{
    CudaCollective *c = (CudaCollective *)impl;
    CUDA_CHECK(cudaEventRecord(c->summed, c->stream));
    CUDA_CHECK(cudaStreamWaitEvent(cuda_state(bk)->stream, c->summed, 0));
}

void cuda_collective_sum_double(Backend *bk, void *impl, double *dev, size_t count)
{
    CudaCollective *c = (CudaCollective *)impl;
    if (!count) return;
    NCCL_CHECK(&c->nccl, c->nccl.all_reduce(dev, dev, count, ncclFloat64, ncclSum, c->comm, cuda_state(bk)->stream));
}
