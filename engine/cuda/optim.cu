/* The optimizer entry points of the CUDA backend (engine/cpu/optim.c): the fused norms, the
 * update by name and the per-tensor statistics, over every tensor at once (optim.cuh).
 *
 * The parameter list's device table is kept in CudaState (optim_dev, with the host copy
 * optim_host it was built from) and rebuilt only when the list's tensors change, the one
 * time these functions wait for the device; a step uploads and downloads nothing. */
#include <string.h>

#include "optim.cuh"

extern "C" {
#include "../optim/opt_names.h"
#include "../base/util.h"
}

/* The host copy: the list the device table was built from, and where its parts are. */
typedef struct {
    int n;
    size_t chunks;
    MtView view;
    MtTensor *t; /* n entries, after this header in the same allocation */
} MtHost;

static real *slot_of(const BkParamList *pl, int s, int p) { return pl->slot[s] ? pl->slot[s][p] : NULL; }

static MtTensor tensor_of(const BkParamList *pl, int p)
{
    MtTensor t;
    memset(&t, 0, sizeof t);
    t.w = pl->w[p];
    t.g = pl->g[p];
    t.v = slot_of(pl, 0, p);
    t.s = slot_of(pl, 1, p);
    t.count = pl->count[p];
    t.kind = pl->kind[p];
    return t;
}

static bool same_tensor(const MtTensor *a, const MtTensor *b)
{
    return a->w == b->w && a->g == b->g && a->v == b->v && a->s == b->s && a->count == b->count &&
           a->kind == b->kind;
}

/* Whether the table was built from this list: its tensors, not the list's own addresses,
 * which a new list may reuse. */
static bool same_list(const MtHost *h, const BkParamList *pl)
{
    if (!h || h->n != pl->n) return false;
    for (int p = 0; p < pl->n; p++) {
        MtTensor t = tensor_of(pl, p);
        if (!same_tensor(&t, &h->t[p])) return false;
    }
    return true;
}

static size_t align_up(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

/* Builds the device table of pl (waiting for the device: only when the list changed). */
static void build_table(CudaState *st, const BkParamList *pl)
{
    const int n = pl->n;
    CUDA_CHECK(cudaStreamSynchronize(st->stream)); /* nothing in flight uses the old table */
    cuda_free_counted(st, st->optim_dev, st->optim_bytes);
    free(st->optim_host);
    st->optim_dev = NULL;
    st->optim_host = NULL;
    st->optim_bytes = 0;

    MtHost *h = (MtHost *)xcalloc(1, sizeof(MtHost) + (size_t)n * sizeof(MtTensor) + ((size_t)n + 1) * sizeof(size_t),
                                  "CUDA optimizer table");
    h->n = n;
    h->t = (MtTensor *)(h + 1);
    size_t *first = (size_t *)(h->t + n);
    for (int p = 0; p < n; p++) {
        h->t[p] = tensor_of(pl, p);
        first[p] = h->chunks;
        h->chunks += (h->t[p].count + MT_CHUNK - 1) / MT_CHUNK;
    }
    first[n] = h->chunks;

    const size_t t_bytes = align_up((size_t)n * sizeof(MtTensor));
    const size_t first_bytes = align_up(((size_t)n + 1) * sizeof(size_t));
    const size_t partial_bytes = align_up(2 * h->chunks * sizeof(double));
    const size_t bytes = t_bytes + first_bytes + partial_bytes + (size_t)n * sizeof(MtCoef);
    char *dev = NULL;
    if (cudaMalloc(&dev, bytes) != cudaSuccess) {
        fprintf(stderr, "bigbatch: out of GPU memory allocating %zu bytes of optimizer table\n", bytes);
        exit(3);
    }
    st->optim_bytes = bytes;
    cuda_count_bytes(st, bytes, false);
    CUDA_CHECK(cudaMemsetAsync(dev, 0, bytes, st->stream));
    CUDA_CHECK(cudaMemcpyAsync(dev, h->t, (size_t)n * sizeof(MtTensor), cudaMemcpyHostToDevice, st->stream));
    CUDA_CHECK(cudaMemcpyAsync(dev + t_bytes, first, ((size_t)n + 1) * sizeof(size_t), cudaMemcpyHostToDevice,
                               st->stream));
    CUDA_CHECK(cudaStreamSynchronize(st->stream)); /* the copies from pageable memory are done */
    h->view.n = n;
    h->view.chunks = h->chunks;
    h->view.t = (const MtTensor *)dev;
    h->view.first = (const size_t *)(dev + t_bytes);
    h->view.partial = (double *)(dev + t_bytes + first_bytes);
    h->view.coef = (MtCoef *)(dev + t_bytes + first_bytes + partial_bytes);
    st->optim_dev = dev;
    st->optim_host = h;
}

static MtView table(Backend *bk, const BkParamList *pl)
{
    CudaState *st = cuda_state(bk);
    if (!same_list((const MtHost *)st->optim_host, pl)) build_table(st, pl);
    return ((const MtHost *)st->optim_host)->view;
}

/* ---- the fused norms ---- */
struct NormsOp {
    __device__ void operator()(const MtTensor &t, const MtCoef &, size_t i, double &s0, double &s1) const
    {
        s0 += mt_sq((double)t.w[i]);
        s1 += mt_sq((double)t.g[i]);
    }
};

static __global__ void norms_kernel(MtView L, double *norms)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= L.n) return;
    double w2, g2;
    mt_totals(L, p, &w2, &g2);
    norms[2 * p] = sqrt(w2);
    norms[2 * p + 1] = sqrt(g2);
}

void cuda_param_norms(Backend *bk, const BkParamList *pl, double *norms)
{
    if (pl->n <= 0) return;
    const MtView L = table(bk, pl);
    cudaStream_t stream = cuda_state(bk)->stream;
    mt_pass(L, stream, NormsOp());
    norms_kernel<<<mt_tensor_blocks(L.n), MT_TENSOR_THREADS, 0, stream>>>(L, norms);
    CUDA_LAUNCHED();
}

/* ---- the statistics (cpu_stats_after) ---- */
static __global__ void stats_kernel(MtView L, const double *norms, bool plain, double lr, OptStats *stats)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= L.n || mt_skipped(L)) return;
    double unused, u2;
    mt_totals(L, p, &unused, &u2);
    const double u = sqrt(u2);
    OptStats s;
    if (plain) {
        s.w_norm = norms ? norms[2 * p] : 0;
        s.g_norm = norms ? norms[2 * p + 1] : 0;
        s.local_rate = 1.0;
        s.eff_rate = lr;
    } else {
        const MtCoef &c = L.coef[p];
        s.w_norm = c.w_norm;
        s.g_norm = c.g_norm;
        s.local_rate = c.rc;
        s.eff_rate = c.eff;
    }
    s.update_ratio = s.w_norm > 0 ? u / s.w_norm : 0;
    stats[p] = s;
}

void cuda_optim_stats(const CudaOptStep *st, bool plain)
{
    if (!st->stats) return;
    stats_kernel<<<mt_tensor_blocks(st->view.n), MT_TENSOR_THREADS, 0, st->stream>>>(st->view, st->norms, plain,
                                                                                      st->lr, st->stats);
    CUDA_LAUNCHED();
}

void cuda_optimizer_update(Backend *bk, const OptConfig *cfg, const BkParamList *pl, double lr,
                           long updates, const double *norms, OptStats *stats, const double *check)
{
    if (pl->n <= 0) return;
    /* indexed by OptRule */
    static void (*const update[])(const CudaOptStep *) = {cuda_optim_sgd, cuda_optim_lars, cuda_optim_adamw,
                                                          cuda_optim_lamb};
    MtView view = table(bk, pl);
    view.check = check;
    const CudaOptStep st = {cfg, pl, lr, updates, norms, stats, view, cuda_state(bk)->stream};
    update[opt_name_find(cfg->name)->rule](&st);
}
