/* Private to the CUDA backend's optimizers (optim.cu and optim_*.cu): every tensor of the
 * parameter list in one launch per pass.
 *
 * The list is a device table of tensors (MtTensor) cut into chunks of MT_CHUNK values; a
 * pass runs one block per chunk, calls its element function on each value and leaves two
 * fixed-order double sums per chunk in `partial` (a strided sum in ascending order, then
 * reduce.cuh's tree); mt_totals adds a tensor's chunk sums in chunk order. The chunks depend
 * only on the counts, so every sum is the same run to run.
 *
 * Everything a CPU update computes per tensor from norms (the LARS ratio, its guard and
 * clipping, LAMB's trust ratio) is computed on the device by one thread per tensor into
 * MtCoef, which the element functions read: an update never waits for the device. Host
 * scalars (lr, the switches, the bias corrections) are kernel arguments.
 *
 * The float expressions are the CPU's, one rounding per operation as there: the CPU build
 * contracts nothing into an FMA, so products that are added are rounded first (__fmul_rn,
 * __dmul_rn). By convention a pass leaves in sum 1 the squared change of w, for the
 * statistics, and in sum 0 a norm the update needs midway. */
#ifndef BB_CUDA_OPTIM_CUH
#define BB_CUDA_OPTIM_CUH
#include "reduce.cuh"

/* Values per chunk: 32 per thread of a CUDA_THREADS block. */
enum { MT_CHUNK = 8192 };
/* Threads of the one-thread-per-tensor kernels. */
enum { MT_TENSOR_THREADS = 128 };

/* One tensor of the list (device addresses; v and s are the slots, NULL when absent). */
typedef struct {
    real *w, *g, *v, *s;
    size_t count;
    int kind; /* ParamKind */
} MtTensor;

/* What one thread per tensor computes from the norms before (and midway through) an update. */
typedef struct {
    double w_norm, g_norm; /* as the statistics report them */
    double wd;             /* weight decay on this tensor this step */
    double r, rc, eff;     /* local rate, the local rate after clipping, lr times it */
    float wd_f, decay_f;   /* (real)wd, (real)(1 - lr*wd) */
    float rc_f, eff_f;     /* (real)rc, (real)eff */
    int adapt, guard;      /* LARS: the ratio applies; the zero-norm guard fired */
    int g_prime;           /* LARS: g += wd*w (coupled, in the update) */
    int decay;             /* LARS: w *= 1 - lr*wd (decoupled) */
    int scale_g;           /* LARS, LR after momentum: g *= rc (rc != 1) */
} MtCoef;

/* The device table and its work arrays, by value into kernels. */
typedef struct {
    int n;
    size_t chunks;
    const MtTensor *t;
    const size_t *first; /* first[p]: the first chunk of tensor p; first[n] = chunks */
    double *partial;     /* 2 per chunk */
    MtCoef *coef;        /* 1 per tensor */
    const double *check; /* an update's check (bk_optimizer_update), or NULL */
} MtView;

/* Whether this update is skipped: every kernel of an update returns at once when its check is
 * not finite (fp16's inf/NaN step), read here on the device so the host never waits for it. */
static __device__ inline bool mt_skipped(const MtView &L) { return L.check && !isfinite(*L.check); }

/* One update, as optim.cu hands it to a rule (OptStep of engine/cpu/optim.h). */
typedef struct {
    const OptConfig *c;
    const BkParamList *pl;
    double lr;
    long updates;
    const double *norms; /* device, or NULL */
    OptStats *stats;     /* device, or NULL */
    MtView view;
    cudaStream_t stream;
} CudaOptStep;

/* Tensor p excluded by lars_exclude (no weight decay; no layer-wise rate). */
static __host__ __device__ inline bool mt_excluded(unsigned exclude, int kind) { return (exclude >> kind) & 1u; }

/* The tensor chunk ch belongs to: the last p with first[p] <= ch (empty tensors have no chunk). */
static __device__ inline int mt_tensor_of(const MtView &L, size_t ch)
{
    int lo = 0, hi = L.n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (L.first[mid] <= ch)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Tensor p's two sums of the last pass, its chunks added in order. */
static __device__ inline void mt_totals(const MtView &L, int p, double *s0, double *s1)
{
    double a = 0, b = 0;
    for (size_t ch = L.first[p]; ch < L.first[p + 1]; ch++) {
        a += L.partial[2 * ch];
        b += L.partial[2 * ch + 1];
    }
    *s0 = a;
    *s1 = b;
}

/* (double)x * x, rounded before it is added to a sum. */
static __device__ inline double mt_sq(double x) { return __dmul_rn(x, x); }

/* One pass: op(t, coef, i, s0, s1) for every value i of every tensor, adding to its sums. */
template <class Op> __global__ void mt_pass_kernel(MtView L, Op op)
{
    if (mt_skipped(L)) return;
    for (size_t ch = blockIdx.x; ch < L.chunks; ch += gridDim.x) {
        const int p = mt_tensor_of(L, ch);
        const MtTensor t = L.t[p];
        const MtCoef c = L.coef[p];
        const size_t begin = (ch - L.first[p]) * MT_CHUNK;
        const size_t end = begin + MT_CHUNK < t.count ? begin + MT_CHUNK : t.count;
        double s0 = 0, s1 = 0;
        for (size_t i = begin + threadIdx.x; i < end; i += CUDA_THREADS) op(t, c, i, s0, s1);
        s0 = block_sum(s0);
        s1 = block_sum(s1);
        if (threadIdx.x == 0) {
            L.partial[2 * ch] = s0;
            L.partial[2 * ch + 1] = s1;
        }
    }
}

template <class Op> void mt_pass(const MtView &L, cudaStream_t stream, const Op &op)
{
    const size_t most = 65535;
    const unsigned blocks = (unsigned)(L.chunks < 1 ? 1 : L.chunks > most ? most : L.chunks);
    mt_pass_kernel<Op><<<blocks, CUDA_THREADS, 0, stream>>>(L, op);
    CUDA_LAUNCHED();
}

static inline unsigned mt_tensor_blocks(int n) { return (unsigned)((n + MT_TENSOR_THREADS - 1) / MT_TENSOR_THREADS); }

/* The statistics after the last pass (sum 1: the squared change of w). plain: SGD and AdamW,
 * whose rates are 1 and lr and whose norms come straight from `norms`; else from MtCoef. */
void cuda_optim_stats(const CudaOptStep *st, bool plain);

/* The update rules (optim_sgd.cu, optim_lars.cu, optim_adamw.cu, optim_lamb.cu). */
void cuda_optim_sgd(const CudaOptStep *st);
void cuda_optim_lars(const CudaOptStep *st);
void cuda_optim_adamw(const CudaOptStep *st);
void cuda_optim_lamb(const CudaOptStep *st);

#endif
