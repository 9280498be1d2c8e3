/* Fully connected layers on cuBLAS: y[n,out] = x[n,in] W[out,in]^T + b, as engine/cpu/linear.c.
 * Each product is one sgemm over the whole batch (FP32, CUBLAS_DEFAULT_MATH: no TF32, unless
 * --precision tf32 sets CUBLAS_TF32_TENSOR_OP_MATH, backend_cuda.cu); the bias and its gradient are small kernels, the gradient summed per
 * output column in double in batch order so it is the same run to run.
 *
 * cuBLAS is column-major and our data row-major. A row-major [r, c] matrix with row stride c
 * is, read column-major with leading dimension c, the [c, r] matrix: its transpose. So each
 * row-major product C = A B is computed as the column-major C^T = B^T A^T, where every ^T is
 * just the other reading of the same memory:
 *   x  [n, in]   -> column-major x^T  [in, n],   ld in
 *   W  [out, in] -> column-major W^T  [in, out], ld in
 *   y  [n, out]  -> column-major y^T  [out, n],  ld out (dy likewise)
 *   dW [out, in] -> column-major dW^T [in, out], ld in
 * and cublasSgemm(ta, tb, m, n, k, A, lda, B, ldb, C, ldc) computes C[m,n] = op(A)[m,k] op(B)[k,n]
 * (op(A) of an untransposed A is A stored [m, k], lda >= m; transposed, A stored [k, m], lda >= k).
 *
 * --precision bf16/fp16: the same products through cublasGemmEx on bf16/fp16 copies (lowp.cu),
 * fp32 sums into fp32 results, rounded after at the CPU emulation's points
 * (engine/cpu/low_precision.c): y = r(r(x) r(W)^T + r(b)); dx = r(dx + r(dy W)); dW += r(dy^T x);
 * db += r(sum of r(dy)). */
#include "cuda.h"

static_assert(sizeof(real) == sizeof(float), "the CUDA backend is float only");

/* y[i, o] += b[o] over the n x out elements of y */
static __global__ void bias_add_kernel(size_t count, int out, const float *b, float *y)
{
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < count; j += (size_t)gridDim.x * blockDim.x)
        y[j] += b[j % (size_t)out];
}

/* db[o] += sum over i of dy[i, o]: one thread per column, rows in order, in double. Adjacent
 * threads read adjacent columns, so each row is read coalesced. */
static __global__ void bias_grad_kernel(int n, int out, const float *dy, float *db)
{
    for (size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x; o < (size_t)out; o += (size_t)gridDim.x * blockDim.x) {
        double acc = 0;
        for (int i = 0; i < n; i++) acc += dy[(size_t)i * out + o];
        db[o] += (float)acc;
    }
}

/* y starts as r(b) (beta 1), the product adds its fp32 sum, then one rounding. */
static void forward_lowp(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *b, real *y)
{
    CudaState *st = cuda_state(bk);
    const size_t bytes[2] = {(size_t)n * in * LOWP_BYTES, (size_t)out * in * LOWP_BYTES};
    void *part[2]; /* x, W */
    cuda_lowp_parts(bk, 2, bytes, part);
    cuda_lowp_convert(bk, (size_t)n * in, x, part[0]);
    cuda_lowp_convert(bk, (size_t)out * in, w, part[1]);
    if (b) cuda_lowp_fill_bias(bk, (size_t)n * out, out, 1, b, y, false);
    cuda_lowp_gemm(st, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, part[1], in, 0, part[0], in, 0, b ? 1.0f : 0.0f, y, out, 0,
                   1);
    cuda_lowp_round(bk, LOWP_COPY, (size_t)n * out, y, false, y);
}

/* The products of the fp32 form into fp32 scratch (beta 0), then rounded into dx and dW. */
static void backward_lowp(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *dy, real *dx,
                          real *dw, real *db)
{
    CudaState *st = cuda_state(bk);
    const size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    const size_t bytes[5] = {nx * LOWP_BYTES, dx ? nw * LOWP_BYTES : 0, ny * LOWP_BYTES, dx ? nx * sizeof(float) : 0,
                             nw * sizeof(float)};
    void *part[5]; /* x, W, dy, dx's sums, dW's sums */
    cuda_lowp_parts(bk, 5, bytes, part);
    cuda_lowp_convert(bk, nx, x, part[0]);
    cuda_lowp_convert(bk, ny, dy, part[2]);
    if (dx) {
        cuda_lowp_convert(bk, nw, w, part[1]);
        cuda_lowp_gemm(st, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, part[1], in, 0, part[2], out, 0, 0.0f, (float *)part[3], in,
                       0, 1);
        cuda_lowp_round(bk, LOWP_INTO_LOWP, nx, part[3], false, dx); /* the layer adds into dx */
    }
    cuda_lowp_gemm(st, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, part[0], in, 0, part[2], out, 0, 0.0f, (float *)part[4], in, 0,
                   1);
    cuda_lowp_round(bk, LOWP_INTO_FP32, nw, part[4], false, dw);
    if (db) cuda_lowp_bias_grad(bk, n, out, 1, part[2], db);
}

void cuda_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                         const real *b, real *y)
{
    if (n <= 0) return; /* y is empty */
    CudaState *st = cuda_state(bk);
    if (cuda_low_precision(st)) {
        forward_lowp(bk, n, in, out, x, w, b, y);
        return;
    }
    const float one = 1.0f, zero = 0.0f;
    /* y^T [out, n] = W [out, in] x^T [in, n]: W is the transpose of the stored W^T [in, out] (ld in),
     * x^T is stored as is (ld in). m = out, n = n, k = in. */
    CUBLAS_CHECK(cublasSgemm(st->cublas, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one, w, in, x, in, &zero, y, out));
    if (b) {
        size_t count = (size_t)n * out;
        bias_add_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, out, b, y);
        CUDA_LAUNCHED();
    }
}

void cuda_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                          const real *dy, real *dx, real *dw, real *db)
{
    if (n <= 0) return; /* nothing to add */
    CudaState *st = cuda_state(bk);
    if (cuda_low_precision(st)) {
        backward_lowp(bk, n, in, out, x, w, dy, dx, dw, db);
        return;
    }
    const float one = 1.0f;
    /* dx[n, in] += dy[n, out] W[out, in], i.e. dx^T [in, n] += W^T [in, out] dy^T [out, n]: both
     * stored as is (ld in, ld out). m = in, n = n, k = out. */
    if (dx)
        CUBLAS_CHECK(cublasSgemm(st->cublas, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one, w, in, dy, out, &one, dx,
                                 in));
    /* dW[out, in] += dy^T [out, n] x[n, in], i.e. dW^T [in, out] += x^T [in, n] dy [n, out]: x^T stored
     * as is (ld in), dy the transpose of the stored dy^T [out, n] (ld out). m = in, n = out, k = n. */
    CUBLAS_CHECK(cublasSgemm(st->cublas, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one, x, in, dy, out, &one, dw, in));
    if (db) {
        bias_grad_kernel<<<cuda_blocks((size_t)out), CUDA_THREADS, 0, st->stream>>>(n, out, dy, db);
        CUDA_LAUNCHED();
    }
}
