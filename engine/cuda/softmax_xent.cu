/* Softmax cross-entropy with label smoothing (engine/cpu/softmax_xent.c). Forward: one
 * block per image computes its top-1, probabilities and loss in double (block_sum, a fixed
 * tree), leaving the loss and the hit in the reduce scratch; one more block adds those in
 * a fixed order into result[0] (mean loss) and result[1] (hits), on the device, without
 * waiting. Backward is elementwise and adds. */
#include <limits.h>

#include "reduce.cuh"

/* The CPU's top-1 is a scan keeping the first strictly greater logit, i.e. the smallest
 * index of the largest value, NaNs never taken except at index 0 where the scan starts.
 * Here each thread keeps (value, index) of its strided share and a tree keeps the larger
 * value, the smaller index on ties; a NaN at index 0 is settled afterwards. */
static __device__ int row_top1(const real *z, int classes)
{
    __shared__ real best_v[CUDA_THREADS];
    __shared__ int best_i[CUDA_THREADS];
    const unsigned t = threadIdx.x;
    real bv = -INFINITY;
    int bi = INT_MAX;
    for (int k = (int)t; k < classes; k += CUDA_THREADS) {
        real v = z[k];
        if (v > bv || (v == bv && k < bi)) {
            bv = v;
            bi = k;
        }
    }
    best_v[t] = bv;
    best_i[t] = bi;
    __syncthreads();
    for (unsigned half = CUDA_THREADS / 2; half > 0; half >>= 1) {
        if (t < half) {
            real ov = best_v[t + half];
            int oi = best_i[t + half];
            if (ov > best_v[t] || (ov == best_v[t] && oi < best_i[t])) {
                best_v[t] = ov;
                best_i[t] = oi;
            }
        }
        __syncthreads();
    }
    int best = best_i[0];
    __syncthreads();
    return isnan(z[0]) ? 0 : best;
}

/* w_label = 1 - smoothing and w_all = smoothing / classes, the CPU's float weights. */
static __global__ void xent_rows(int classes, const real *logits, const int32_t *labels, real w_label, real w_all,
                                 real *probs, double *row_loss, double *row_hit)
{
    const int i = blockIdx.x;
    const real *z = logits + (size_t)i * classes;
    real *p = probs + (size_t)i * classes;
    const int best = row_top1(z, classes);
    const double zmax = z[best];
    double part = 0;
    for (int k = threadIdx.x; k < classes; k += CUDA_THREADS) part += exp((double)z[k] - zmax);
    const double log_sum = log(block_sum(part)) + zmax;
    part = 0;
    for (int k = threadIdx.x; k < classes; k += CUDA_THREADS) {
        double logp = (double)z[k] - log_sum;
        p[k] = (real)exp(logp);
        part += logp;
    }
    const double sum_logp = block_sum(part);
    if (threadIdx.x == 0) {
        const int32_t label = labels[i];
        const double logp_y = (double)z[label] - log_sum;
        row_loss[i] = -(__dmul_rn(w_label, logp_y) + __dmul_rn(w_all, sum_logp)); /* no FMA, as the CPU */
        row_hit[i] = best == label;
    }
}

static __global__ void xent_total(int n, const double *row_loss, const double *row_hit, double *result)
{
    double loss = 0, hits = 0;
    for (int i = threadIdx.x; i < n; i += CUDA_THREADS) {
        loss += row_loss[i];
        hits += row_hit[i];
    }
    loss = block_sum(loss);
    hits = block_sum(hits); /* whole numbers: exact in any order */
    if (threadIdx.x == 0) {
        result[0] = n > 0 ? loss / n : 0;
        result[1] = hits;
    }
}

void cuda_softmax_xent_forward(Backend *bk, int n, int classes, const real *logits,
                               const int32_t *labels, real smoothing, real *probs, double *result)
{
    cudaStream_t stream = cuda_state(bk)->stream;
    /* a loss and a hit per image (elements [0, 2n) of the scratch) */
    double *row_loss = cuda_reduce_scratch(bk, 2 * (size_t)(n > 0 ? n : 1)), *row_hit = row_loss + n;
    const real w_label = 1 - smoothing, w_all = smoothing / classes; /* the CPU's float expressions */
    if (n > 0) {
        xent_rows<<<n, CUDA_THREADS, 0, stream>>>(classes, logits, labels, w_label, w_all, probs, row_loss,
                                                  row_hit);
        CUDA_LAUNCHED();
    }
    xent_total<<<1, CUDA_THREADS, 0, stream>>>(n, row_loss, row_hit, result);
    CUDA_LAUNCHED();
}

/* on = 1 - smoothing + off, off = smoothing / classes (the CPU's float expressions). The
 * difference is rounded before it is scaled and the product before the add (no FMA), as
 * on the CPU. */
static __global__ void xent_backward_kernel(size_t total, int classes, const real *probs, const int32_t *labels,
                                            real on, real off, real scale, real *dlogits)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t i = e / classes;
        const int k = (int)(e - i * classes);
        const real target = k == labels[i] ? on : off;
        dlogits[e] += __fmul_rn(probs[e] - target, scale);
    }
}

void cuda_softmax_xent_backward(Backend *bk, int n, int classes, const real *probs,
                                const int32_t *labels, real smoothing, real scale, real *dlogits)
{
    const size_t total = (size_t)n * classes;
    if (!total) return;
    const real off = smoothing / classes, on = 1 - smoothing + off;
    xent_backward_kernel<<<cuda_blocks(total), CUDA_THREADS, 0, cuda_state(bk)->stream>>>(
        total, classes, probs, labels, on, off, scale, dlogits);
    CUDA_LAUNCHED();
}
