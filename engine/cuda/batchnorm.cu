/* Batch normalization (engine/cpu/batchnorm.c) on the backend's stream. Our own kernels,
 * not cuDNN's: cuDNN's running variance and its no-affine form differ from the CPU's.
 * Each per-channel sum is taken in double by a fixed set of blocks (a strided sum in
 * ascending order, reduce.cuh's fixed tree, then the blocks' partials added in order), so
 * it is the same run to run; the elementwise passes then read the per-channel results. The
 * float expressions are the CPU's, with products rounded before they are added (__fmul_rn,
 * __dmul_rn): the CPU build contracts nothing into an FMA.
 *
 * Synchronized BN hands the per-channel partial sums to a host callback (an MPI allreduce),
 * so there, and only there, the stream is waited for: the sums go to the pinned host mirror
 * of cuda_reduce_scratch, the callback completes them, and they come back into
 * sync->scratch before the kernels that use the totals. (cuda_reduce_scratch itself waits
 * when it grows, at the first step only.) */
#include "fast_divide.h"
#include "reduce.cuh"

/* Threads of the one-thread-per-channel kernels. */
enum { BN_CHANNEL_THREADS = 128 };
/* A channel's sums are split over blocks taking about BN_SPLIT_VALUES values each, at most
 * BN_MAX_SPLITS (by the shape alone, so the order is the same on every run and GPU): one
 * block per channel would leave most of the GPU idle on the first layers (64 channels of
 * 256x112x112 values). The blocks' partials are then added in order. */
enum { BN_SPLIT_VALUES = 8192, BN_MAX_SPLITS = 64 };

static unsigned channel_blocks(int c) { return (unsigned)((c + BN_CHANNEL_THREADS - 1) / BN_CHANNEL_THREADS); }

static int bn_splits(int n, int hw)
{
    const size_t m = (size_t)(n > 0 ? n : 0) * (size_t)(hw > 0 ? hw : 0);
    const size_t s = (m + BN_SPLIT_VALUES - 1) / BN_SPLIT_VALUES;
    return s < 1 ? 1 : s > BN_MAX_SPLITS ? BN_MAX_SPLITS : (int)s;
}

/* f(k) for the flat index k of each value of channel c = blockIdx.x that this thread takes:
 * the channel's n*hw (image, position) pairs are cut into gridDim.y equal segments, block
 * (c, s) takes segment s and thread t its pairs t, t + B, t + 2B, ... (B = blockDim.x) in
 * ascending order. Image and position advance by fixed steps: no division per value. */
template <class F> __device__ void for_channel(int C, int hw, int n, F f)
{
    if (hw <= 0 || n <= 0) return;
    const size_t H = (size_t)hw, m = (size_t)n * H, seg = (m + gridDim.y - 1) / gridDim.y;
    const size_t begin = seg * blockIdx.y + threadIdx.x;
    const size_t end = seg * (blockIdx.y + 1) < m ? seg * (blockIdx.y + 1) : m;
    const size_t B = blockDim.x, di = B / H, dj = B % H, c = blockIdx.x;
    size_t i = begin / H, j = begin % H;
#pragma unroll 4
    for (size_t v = begin; v < end; v += B) {
        f((i * (size_t)C + c) * H + j);
        i += di;
        j += dj;
        if (j >= H) {
            j -= H;
            i++;
        }
    }
}

/* Block (c, s)'s two sums into partial[2 * (c * splits + s) + {0, 1}]. */
static __device__ inline void bn_store_partial(double a0, double a1, double *partial)
{
    a0 = block_sum(a0);
    a1 = block_sum(a1);
    if (threadIdx.x == 0) {
        const size_t at = 2 * ((size_t)blockIdx.x * gridDim.y + blockIdx.y);
        partial[at] = a0;
        partial[at + 1] = a1;
    }
}

/* Channel c's two sums: its blocks' partials added in order. */
static __device__ inline void bn_channel_totals(const double *partial, int splits, int c, double *a0, double *a1)
{
    double s0 = 0, s1 = 0;
    for (int s = 0; s < splits; s++) {
        const size_t at = 2 * ((size_t)c * splits + s);
        s0 += partial[at];
        s1 += partial[at + 1];
    }
    *a0 = s0;
    *a1 = s1;
}

/* The channel of each flat index of an n x C x hw tensor (fast_divide.h: no 64-bit division
 * per value). */
static ChannelOfIndex channels(size_t count, int C, int hw)
{
    return channel_of_index(count, (uint64_t)C, (uint64_t)hw);
}

#define GRID_STRIDE(k, count)                                                                    \
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < (count);                  \
         k += (size_t)gridDim.x * blockDim.x)

/* Where a pass's sums go: the scratch holds the 2C + 1 sums the CPU hands to BnSync (used
 * without sync too), dx's per-channel float pairs, then the per-block partials. */
typedef struct {
    double *acc;     /* sync->scratch, or the scratch's own */
    float2 *coef;    /* C pairs */
    double *partial; /* 2 per block */
    int splits;
} BnScratch;

static BnScratch bn_scratch(Backend *bk, const BnSync *sync, int C, int splits)
{
    const size_t c = (size_t)C, own = 2 * c + 1 + c; /* the sums, then C float pairs */
    double *base = cuda_reduce_scratch(bk, own + 2 * c * (size_t)splits);
    BnScratch s;
    s.acc = sync ? sync->scratch : base;
    s.coef = (float2 *)(base + 2 * c + 1);
    s.partial = base + own;
    s.splits = splits;
    return s;
}

/* ---- forward, training ---- */

/* Partial sums of x (one block per channel and segment). */
static __global__ void bn_sum_kernel(int C, int hw, int n, const real *x, double *partial)
{
    double a = 0;
    for_channel(C, hw, n, [&](size_t k) { a += (double)x[k]; });
    bn_store_partial(a, 0, partial);
}

/* Partial sums of (x - mean)^2, mean = acc[c] / m (in double as the CPU), m = acc[C]: the count
 * on the device, summed over the ranks with sync (NCCL leaves no host copy of it). */
static __global__ void bn_sq_dev_kernel(int C, int hw, int n, const real *x, const double *acc, double *partial)
{
    const double mean = acc[blockIdx.x] / acc[C];
    double a = 0;
    for_channel(C, hw, n, [&](size_t k) {
        const double d = (double)x[k] - mean;
        a += __dmul_rn(d, d);
    });
    bn_store_partial(a, 0, partial);
}

/* out[c] = channel c's total of the first sums; out[C] = m when m_at is set (the count
 * synchronized BN adds up with the sums). */
static __global__ void bn_total_kernel(int C, const double *partial, int splits, double *out, bool m_at, double m)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double a0, a1;
    bn_channel_totals(partial, splits, c, &a0, &a1);
    out[c] = a0;
    if (m_at && c == 0) out[C] = m;
}

/* The saved and the running statistics of each channel: normalize_channel's scalars (m = acc[C],
 * as in bn_sq_dev_kernel). */
static __global__ void bn_finalize_kernel(BatchNormShape s, const double *acc, real *save_mean, real *save_invstd,
                                          real *running_mean, real *running_var)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= s.c) return;
    const double m = acc[s.c];
    const double mean = acc[c] / m, var = acc[s.c + 1 + c] / m;
    save_mean[c] = (real)mean;
    save_invstd[c] = (real)(1.0 / sqrt(var + (double)s.eps));
    const double unbiased = m > 1 ? var * m / (m - 1) : var;
    /* (1 - momentum) * running is a float product, momentum * batch a double one */
    const real keep = 1 - s.momentum;
    running_mean[c] = (real)((double)__fmul_rn(keep, running_mean[c]) + __dmul_rn((double)s.momentum, mean));
    running_var[c] = (real)((double)__fmul_rn(keep, running_var[c]) + __dmul_rn((double)s.momentum, unbiased));
}

/* a*x + b with a = gamma*invstd, b = beta - mean*a (float, as the CPU): the forward's value,
 * which a fused ReLU's backward recomputes to the same bits for its mask. */
static __device__ inline real bn_value(real x, const real *gamma, const real *beta, int c, real mean, real invstd)
{
    const real g = gamma ? gamma[c] : 1, bt = beta ? beta[c] : 0;
    const real a = __fmul_rn(g, invstd), b = bt - __fmul_rn(mean, a);
    return __fmul_rn(a, x) + b;
}

/* The value out of a fused ReLU (relu), or v. */
static __device__ inline real bn_out(bool relu, real v) { return relu && !(v > 0) ? 0 : v; }

/* y = bn_value, through the fused ReLU with relu. */
static __global__ void bn_normalize_kernel(size_t count, ChannelOfIndex ch, const real *x, const real *gamma,
                                           const real *beta, const real *mean, const real *invstd, bool relu,
                                           real *y)
{
    GRID_STRIDE(k, count)
    {
        const int c = channel_at(ch, k);
        y[k] = bn_out(relu, bn_value(x[k], gamma, beta, c, mean[c], invstd[c]));
    }
}

/* Sums `count` partials in device memory over the ranks: on the devices with the job's
 * collective (NCCL, in stream order), else through the synchronized-BN callback on the host,
 * putting the totals back: then the one place these operations wait for the stream. */
static void bn_allreduce(Backend *bk, const BnSync *sync, double *dev, int count)
{
    if (sync->device_sum) {
        bk_collective_sum_double(sync->device_sum, dev, (size_t)count);
        return;
    }
    CudaState *st = cuda_state(bk);
    const size_t bytes = (size_t)count * sizeof(double);
    CUDA_CHECK(cudaMemcpyAsync(st->reduce_host, dev, bytes, cudaMemcpyDeviceToHost, st->stream));
    CUDA_CHECK(cudaStreamSynchronize(st->stream));
    sync->sum(sync->ctx, st->reduce_host, count);
    /* later writes of the host mirror are downloads on this stream, so it stays intact
     * until this copy has run */
    CUDA_CHECK(cudaMemcpyAsync(dev, st->reduce_host, bytes, cudaMemcpyHostToDevice, st->stream));
}

void cuda_batchnorm_forward_train(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                  const real *gamma, const real *beta, real *y, real *save_mean,
                                  real *save_invstd, real *running_mean, real *running_var,
                                  const BnSync *sync)
{
    const int C = s->c;
    if (C <= 0) return;
    cudaStream_t stream = cuda_state(bk)->stream;
    const double m = (double)n * s->hw;
    /* acc: sum(x) in [0, C), m at C, sum((x - mean)^2) in [C + 1, 2C + 1), as the CPU's; the
     * kernels after the sums read m (with sync, the total over the ranks) from acc[C] */
    const BnScratch sc = bn_scratch(bk, sync, C, bn_splits(n, s->hw));
    const dim3 grid((unsigned)C, (unsigned)sc.splits);
    bn_sum_kernel<<<grid, CUDA_THREADS, 0, stream>>>(C, s->hw, n, x, sc.partial);
    CUDA_LAUNCHED();
    bn_total_kernel<<<channel_blocks(C), BN_CHANNEL_THREADS, 0, stream>>>(C, sc.partial, sc.splits, sc.acc, true, m);
    CUDA_LAUNCHED();
    if (sync) bn_allreduce(bk, sync, sc.acc, C + 1);
    bn_sq_dev_kernel<<<grid, CUDA_THREADS, 0, stream>>>(C, s->hw, n, x, sc.acc, sc.partial);
    CUDA_LAUNCHED();
    bn_total_kernel<<<channel_blocks(C), BN_CHANNEL_THREADS, 0, stream>>>(C, sc.partial, sc.splits,
                                                                          sc.acc + C + 1, false, 0);
    CUDA_LAUNCHED();
    if (sync) bn_allreduce(bk, sync, sc.acc + C + 1, C);
    bn_finalize_kernel<<<channel_blocks(C), BN_CHANNEL_THREADS, 0, stream>>>(*s, sc.acc, save_mean, save_invstd,
                                                                               running_mean, running_var);
    CUDA_LAUNCHED();
    const size_t count = (size_t)(n > 0 ? n : 0) * C * (size_t)(s->hw > 0 ? s->hw : 0);
    if (!count) return;
    bn_normalize_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, stream>>>(count, channels(count, C, s->hw), x, gamma,
                                                                         beta, save_mean, save_invstd, s->relu, y);
    CUDA_LAUNCHED();
}

/* ---- forward, evaluation ---- */

/* The CPU computes invstd in float here: 1 / sqrt(running_var + eps) on floats. */
static __global__ void bn_eval_kernel(size_t count, ChannelOfIndex ch, real eps, const real *x, const real *gamma,
                                      const real *beta, const real *running_mean, const real *running_var,
                                      bool relu, real *y)
{
    GRID_STRIDE(k, count)
    {
        const int c = channel_at(ch, k);
        const real invstd = 1 / sqrtf(running_var[c] + eps);
        y[k] = bn_out(relu, bn_value(x[k], gamma, beta, c, running_mean[c], invstd));
    }
}

void cuda_batchnorm_forward_eval(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                 const real *gamma, const real *beta, const real *running_mean,
                                 const real *running_var, real *y)
{
    const size_t count = (size_t)(n > 0 ? n : 0) * (size_t)(s->c > 0 ? s->c : 0) * (size_t)(s->hw > 0 ? s->hw : 0);
    if (!count) return;
    bn_eval_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(
        count, channels(count, s->c, s->hw), s->eps, x, gamma, beta, running_mean, running_var, s->relu, y);
    CUDA_LAUNCHED();
}

/* ---- backward ---- */

/* What dx of channel c needs: the means of dy and of dy*xhat, rounded to float as the CPU. */
static __device__ inline void bn_dx_coef(const double *acc, int C, int c, double m, float2 *coef)
{
    coef[c] = make_float2((real)(acc[c] / m), (real)(acc[C + c] / m));
}

/* dy through the fused ReLU (relu): 0 where the forward's value was not positive. */
static __device__ inline real bn_through_relu(bool relu, real dy, real x, const real *gamma, const real *beta, int c,
                                              real mean, real invstd)
{
    return relu && !(bn_value(x, gamma, beta, c, mean, invstd) > 0) ? 0 : dy;
}

/* Partial sums of dy and of dy*(x - mean), the products in float as the CPU. */
static __global__ void bn_backward_sum_kernel(int C, int hw, int n, const real *x, const real *dy, const real *gamma,
                                              const real *beta, const real *save_mean, const real *save_invstd,
                                              bool relu, double *partial)
{
    const int c = blockIdx.x;
    const real mu = save_mean[c], invstd = save_invstd[c];
    double sum_dy = 0, sum_dy_x = 0;
    for_channel(C, hw, n, [&](size_t k) {
        const real d = bn_through_relu(relu, dy[k], x[k], gamma, beta, c, mu, invstd);
        sum_dy += (double)d;
        sum_dy_x += (double)__fmul_rn(d, x[k] - mu);
    });
    bn_store_partial(sum_dy, sum_dy_x, partial);
}

/* Per channel: sum(dy) and sum(dy*xhat) = invstd * sum(dy*(x - mean)); dgamma and dbeta get
 * this rank's share; acc[c], acc[C + c] and acc[2C] = m are what synchronized BN completes
 * over the ranks. coef (NULL with sync, whose totals are not known yet) receives dx's
 * per-channel means. */
static __global__ void bn_backward_total_kernel(int C, const double *partial, int splits, const real *save_invstd,
                                                real *dgamma, real *dbeta, double *acc, double m, float2 *coef)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    double sum_dy, sum_dy_x;
    bn_channel_totals(partial, splits, c, &sum_dy, &sum_dy_x);
    const double sum_dy_xhat = sum_dy_x * (double)save_invstd[c];
    if (dgamma) dgamma[c] += (real)sum_dy_xhat;
    if (dbeta) dbeta[c] += (real)sum_dy;
    acc[c] = sum_dy;
    acc[C + c] = sum_dy_xhat;
    if (c == 0) acc[2 * C] = m;
    if (coef) bn_dx_coef(acc, C, c, m, coef);
}

/* With sync: dx's per-channel means from the totals over the ranks, m = acc[2C] on the device
 * (NCCL leaves no host copy of it). */
static __global__ void bn_dx_coef_kernel(int C, const double *acc, float2 *coef)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) bn_dx_coef(acc, C, c, acc[2 * C], coef);
}

/* dx += g*invstd * (dy - mean_dy - (x - mean)*invstd*mean_dy_xhat), channel_dx's floats (dx =
 * that without `accumulate`). */
static __global__ void bn_dx_kernel(size_t count, ChannelOfIndex ch, const real *x, const real *gamma,
                                    const real *beta, const real *save_mean, const real *save_invstd, bool relu,
                                    const real *dy, const float2 *coef, real *dx, bool accumulate)
{
    GRID_STRIDE(k, count)
    {
        const int c = channel_at(ch, k);
        const real mu = save_mean[c], invstd = save_invstd[c];
        const real g = gamma ? gamma[c] : 1;
        const real kc = g * invstd;
        const float2 mc = coef[c]; /* mean_dy, mean_dy_xhat */
        const real t = __fmul_rn(__fmul_rn(x[k] - mu, invstd), mc.y);
        const real d = bn_through_relu(relu, dy[k], x[k], gamma, beta, c, mu, invstd);
        const real v = __fmul_rn(kc, (d - mc.x) - t);
        dx[k] = accumulate ? dx[k] + v : v;
    }
}

void cuda_batchnorm_backward(Backend *bk, const BatchNormShape *s, int n, const real *x,
                             const real *gamma, const real *beta, const real *save_mean, const real *save_invstd,
                             const real *dy, real *dx, bool accumulate, real *dgamma, real *dbeta,
                             const BnSync *sync)
{
    const int C = s->c;
    if (C <= 0) return;
    cudaStream_t stream = cuda_state(bk)->stream;
    const double m = (double)n * s->hw;
    const BnScratch sc = bn_scratch(bk, sync, C, bn_splits(n, s->hw));
    const dim3 grid((unsigned)C, (unsigned)sc.splits);
    bn_backward_sum_kernel<<<grid, CUDA_THREADS, 0, stream>>>(C, s->hw, n, x, dy, gamma, beta, save_mean, save_invstd,
                                                              s->relu, sc.partial);
    CUDA_LAUNCHED();
    bn_backward_total_kernel<<<channel_blocks(C), BN_CHANNEL_THREADS, 0, stream>>>(
        C, sc.partial, sc.splits, save_invstd, dgamma, dbeta, sc.acc, m, sync ? NULL : sc.coef);
    CUDA_LAUNCHED();
    if (sync) {
        bn_allreduce(bk, sync, sc.acc, 2 * C + 1);
        bn_dx_coef_kernel<<<channel_blocks(C), BN_CHANNEL_THREADS, 0, stream>>>(C, sc.acc, sc.coef);
        CUDA_LAUNCHED();
    }
    const size_t count = (size_t)(n > 0 ? n : 0) * C * (size_t)(s->hw > 0 ? s->hw : 0);
    if (!dx || !count) return;
    bn_dx_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, stream>>>(count, channels(count, C, s->hw), x, gamma, beta,
                                                                  save_mean, save_invstd, s->relu, dy, sc.coef, dx,
                                                                  accumulate);
    CUDA_LAUNCHED();
}
