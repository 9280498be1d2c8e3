/* Pointwise convolutions (1x1, no padding, one group: two thirds of ResNet-50's convolutions,
 * its strided downsampling ones too) as cuBLAS products, image by image in one strided-batched
 * call. A stride above 1 first gathers the pixels it reads into the workspace (and scatters
 * the data gradient back from there), so the products always see a dense [c, P] plane. On the H200
 * (2026-12-04) cuDNN's deterministic algorithms ran these layers at 10-20 TFLOP/s in FP32,
 * their backward at a quarter of the forward's rate; its faster backward algorithms sum with
 * atomics and do not repeat bit for bit. cuBLAS's products do (same GPU, same library), and
 * the weight gradient's sum over images is ours, in image order.
 *
 * Per image (row-major): Y_n [co, P] = W [co, ci] X_n [ci, P], P = the output's h*w. Read column-major (as
 * in linear.cu) every matrix is its transpose, so each product is computed transposed:
 *   forward      Y_n^T [P, co]  = X_n^T [P, ci] W^T [ci, co]
 *   data         dX_n^T [P, ci] += dY_n^T [P, co] W [co, ci]
 *   weight       dW^T [ci, co]  += sum over n of X_n [ci, P] dY_n^T [P, co]
 * The weight gradient's per-image products go to the workspace a chunk of images at a time,
 * then one kernel adds them up per element in double, in image order. BIGBATCH_CUDA_POINTWISE=
 * cudnn leaves these layers to cuDNN (conv.cu) like every other.
 *
 * --precision bf16/fp16 (the _lowp functions): the same products through cublasGemmEx on
 * bf16/fp16 copies (lowp.cu) with fp32 sums written to fp32 results, rounded after as the CPU
 * emulation rounds (engine/cpu/low_precision.c); the bias too is theirs. */
#include "cuda.h"

static_assert(sizeof(real) == sizeof(float), "the CUDA backend is float only");

/* The most workspace a chunk of per-image weight gradients takes. */
enum { POINTWISE_CHUNK_BYTES = 256 << 20 };

bool cuda_conv_is_pointwise(const ConvShape *s)
{
    return s->k_h == 1 && s->k_w == 1 && s->pad == 0 && s->groups == 1 && s->stride >= 1 &&
           s->out_h == (s->in_h - 1) / s->stride + 1 && s->out_w == (s->in_w - 1) / s->stride + 1;
}

/* The pixels a strided 1x1 convolution reads: for each of the n*c*oh*ow outputs i, the offset
 * of (row oh*stride, column ow*stride) of its plane in the input. */
static __device__ inline size_t strided_offset(size_t i, int oh, int ow, int h, int w, int stride)
{
    const size_t plane = i / ((size_t)oh * ow);
    const int r = (int)(i - plane * oh * ow), y = r / ow, xcol = r % ow;
    return plane * h * w + (size_t)y * stride * w + (size_t)xcol * stride;
}

template <typename T>
static __global__ void gather_kernel(size_t count, int oh, int ow, int h, int w, int stride, const T *x, T *dense)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        dense[i] = x[strided_offset(i, oh, ow, h, w, stride)];
}

/* dx += dense at the pixels read; each input pixel has one output at most, so no two threads
 * meet. */
static __global__ void scatter_add_kernel(size_t count, int oh, int ow, int h, int w, int stride, const float *dense,
                                          float *dx)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        dx[strided_offset(i, oh, ow, h, w, stride)] += dense[i];
}

template <typename T> static void gather(CudaState *st, const ConvShape *s, int n, const T *x, T *dense)
{
    const size_t count = (size_t)n * s->in_c * s->out_h * s->out_w;
    gather_kernel<T><<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, s->out_h, s->out_w, s->in_h, s->in_w,
                                                                         s->stride, x, dense);
    CUDA_LAUNCHED();
}

static void scatter_add(CudaState *st, const ConvShape *s, int n, const float *dense, float *dx)
{
    const size_t count = (size_t)n * s->in_c * s->out_h * s->out_w;
    scatter_add_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, s->out_h, s->out_w, s->in_h,
                                                                              s->in_w, s->stride, dense, dx);
    CUDA_LAUNCHED();
}

/* Bytes of a dense copy of the input planes a strided layer reads (0 at stride 1). */
static size_t dense_bytes(const ConvShape *s, int n)
{
    return s->stride == 1 ? 0 : (size_t)n * s->in_c * s->out_h * s->out_w * sizeof(float);
}

void cuda_conv_pointwise_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, real *y)
{
    CudaState *st = cuda_state(bk);
    const int P = s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    const float one = 1.0f, zero = 0.0f;
    if (s->stride > 1) {
        float *dense = (float *)cuda_workspace(bk, dense_bytes(s, n));
        gather(st, s, n, x, dense);
        x = dense;
    }
    CUBLAS_CHECK(cublasSgemmStridedBatched(st->cublas, CUBLAS_OP_N, CUBLAS_OP_N, P, co, ci, &one, x, P,
                                           (long long)ci * P, w, ci, 0, &zero, y, P, (long long)co * P, n));
}

/* dw[e] += the sum over j < images of part[j * count + e], in double, j ascending. */
static __global__ void sum_images_kernel(size_t count, int images, const float *part, float *dw)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < count; e += (size_t)gridDim.x * blockDim.x) {
        double acc = 0;
        for (int j = 0; j < images; j++) acc += (double)part[(size_t)j * count + e];
        dw[e] += (float)acc;
    }
}

/* The workspace of a backward pass: [dense input | dense data gradient | chunk partials]; the
 * dense parts only with a stride. */
void cuda_conv_pointwise_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                  const real *dy, real *dx, real *dw)
{
    CudaState *st = cuda_state(bk);
    const int P = s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    const float one = 1.0f, zero = 0.0f;
    const size_t count = (size_t)ci * co, per_image = count * sizeof(float), dense = dense_bytes(s, n);
    int chunk = (int)(POINTWISE_CHUNK_BYTES / per_image);
    if (chunk < 1) chunk = 1;
    if (chunk > n) chunk = n;
    char *ws = (char *)cuda_workspace(bk, 2 * dense + (size_t)chunk * per_image);
    float *part = (float *)(ws + 2 * dense);
    if (dense) {
        gather(st, s, n, x, (float *)ws);
        x = (const float *)ws;
    }
    if (dx) {
        /* at stride 1 straight into dx (beta 1); else into the dense copy, scattered after */
        float *into = dense ? (float *)(ws + dense) : dx;
        const float beta = dense ? zero : one;
        CUBLAS_CHECK(cublasSgemmStridedBatched(st->cublas, CUBLAS_OP_N, CUBLAS_OP_T, P, ci, co, &one, dy, P,
                                               (long long)co * P, w, ci, 0, &beta, into, P, (long long)ci * P, n));
        if (dense) scatter_add(st, s, n, into, dx);
    }
    for (int n0 = 0; n0 < n; n0 += chunk) {
        const int m = n - n0 < chunk ? n - n0 : chunk;
        CUBLAS_CHECK(cublasSgemmStridedBatched(st->cublas, CUBLAS_OP_T, CUBLAS_OP_N, ci, co, P, &one,
                                               x + (size_t)n0 * ci * P, P, (long long)ci * P,
                                               dy + (size_t)n0 * co * P, P, (long long)co * P, &zero, part, ci,
                                               (long long)count, m));
        sum_images_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, m, part, dw);
        CUDA_LAUNCHED();
    }
}

/* ---- bf16 / fp16 ---- */
/* A value of the low precision, as gather moves it (two bytes, whichever format). */
typedef unsigned short LowpBits;
static_assert(sizeof(LowpBits) == LOWP_BYTES, "bf16 and fp16 are two bytes");

static size_t in_elems(const ConvShape *s, int n) { return (size_t)n * s->in_c * s->in_h * s->in_w; }
static size_t dense_elems(const ConvShape *s, int n) { return (size_t)n * s->in_c * s->out_h * s->out_w; }

/* r(x) in the scratch part `xl`, densely gathered into `dense` at a stride (else xl itself). */
static const void *lowp_input(Backend *bk, const ConvShape *s, int n, const real *x, void *xl, void *dense)
{
    cuda_lowp_convert(bk, in_elems(s, n), x, xl);
    if (s->stride == 1) return xl;
    gather(cuda_state(bk), s, n, (const LowpBits *)xl, (LowpBits *)dense);
    return dense;
}

/* y = r(r(x) r(w) + r(b)): y starts as r(b) (beta 1), the product adds its fp32 sum, one rounding. */
void cuda_conv_pointwise_forward_lowp(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                      const real *b, real *y)
{
    CudaState *st = cuda_state(bk);
    const int P = s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    const size_t ny = (size_t)n * co * P;
    const size_t bytes[3] = {in_elems(s, n) * LOWP_BYTES, (size_t)ci * co * LOWP_BYTES,
                             s->stride == 1 ? 0 : dense_elems(s, n) * LOWP_BYTES};
    void *part[3]; /* x, w, the gathered x */
    cuda_lowp_parts(bk, 3, bytes, part);
    const void *xl = lowp_input(bk, s, n, x, part[0], part[2]);
    cuda_lowp_convert(bk, (size_t)ci * co, w, part[1]);
    if (b) cuda_lowp_fill_bias(bk, ny, co, (size_t)P, b, y, false);
    cuda_lowp_gemm(st, CUBLAS_OP_N, CUBLAS_OP_N, P, co, ci, xl, P, (long long)ci * P, part[1], ci, 0, b ? 1.0f : 0.0f, y, P,
              (long long)co * P, n);
    cuda_lowp_round(bk, LOWP_COPY, ny, y, false, y);
}

/* The data gradient's fp32 sums (dense at a stride, scattered into a zeroed full-size copy, so
 * the pixels no output reads are rounded too, as the CPU rounds every element of dx). */
static void data_grad_lowp(Backend *bk, const ConvShape *s, int n, const void *dyl, const void *wl, float *dense,
                           float *full, real *dx, bool accumulate)
{
    CudaState *st = cuda_state(bk);
    const int P = s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    cuda_lowp_gemm(st, CUBLAS_OP_N, CUBLAS_OP_T, P, ci, co, dyl, P, (long long)co * P, wl, ci, 0, 0.0f, dense, P,
              (long long)ci * P, n);
    if (full) {
        CUDA_CHECK(cudaMemsetAsync(full, 0, in_elems(s, n) * sizeof(float), st->stream));
        scatter_add(st, s, n, dense, full);
        dense = full;
    }
    cuda_lowp_round(bk, accumulate ? LOWP_INTO_LOWP : LOWP_COPY, in_elems(s, n), dense, false, dx);
}

/* dw += r(the sum over every image of r(x_n) r(dy_n)^T): the chunks' per-image products summed
 * into one fp32 total first, so it is rounded once, as the CPU rounds its whole sum. */
static void weight_grad_lowp(Backend *bk, const ConvShape *s, int n, const void *xl, const void *dyl, float *total,
                             real *dw)
{
    CudaState *st = cuda_state(bk);
    const int P = s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    const size_t count = (size_t)ci * co, per_image = count * sizeof(float);
    int chunk = (int)(POINTWISE_CHUNK_BYTES / per_image);
    if (chunk < 1) chunk = 1;
    if (chunk > n) chunk = n;
    float *part = (float *)cuda_workspace(bk, (size_t)chunk * per_image);
    CUDA_CHECK(cudaMemsetAsync(total, 0, per_image, st->stream));
    for (int n0 = 0; n0 < n; n0 += chunk) {
        const int m = n - n0 < chunk ? n - n0 : chunk;
        cuda_lowp_gemm(st, CUBLAS_OP_T, CUBLAS_OP_N, ci, co, P, (const char *)xl + (size_t)n0 * ci * P * LOWP_BYTES, P,
                  (long long)ci * P, (const char *)dyl + (size_t)n0 * co * P * LOWP_BYTES, P, (long long)co * P, 0.0f,
                  part, ci, (long long)count, m);
        sum_images_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, m, part, total);
        CUDA_LAUNCHED();
    }
    cuda_lowp_round(bk, LOWP_INTO_FP32, count, total, false, dw);
}

void cuda_conv_pointwise_backward_lowp(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                                       const real *dy, real *dx, bool accumulate, real *dw, real *db)
{
    const int P = s->out_h * s->out_w, ci = s->in_c, co = s->out_c;
    const bool strided = s->stride > 1;
    const size_t bytes[7] = {in_elems(s, n) * LOWP_BYTES,
                             strided ? dense_elems(s, n) * LOWP_BYTES : 0,
                             dx ? (size_t)ci * co * LOWP_BYTES : 0,
                             (size_t)n * co * P * LOWP_BYTES,
                             dx ? dense_elems(s, n) * sizeof(float) : 0,
                             dx && strided ? in_elems(s, n) * sizeof(float) : 0,
                             (size_t)ci * co * sizeof(float)};
    void *part[7]; /* x, the gathered x, w, dy, dx's dense sums, dx's full-size sums, dw's total */
    cuda_lowp_parts(bk, 7, bytes, part);
    const void *xl = lowp_input(bk, s, n, x, part[0], part[1]);
    cuda_lowp_convert(bk, (size_t)n * co * P, dy, part[3]);
    if (dx) {
        cuda_lowp_convert(bk, (size_t)ci * co, w, part[2]);
        data_grad_lowp(bk, s, n, part[3], part[2], (float *)part[4], (float *)part[5], dx, accumulate);
    }
    weight_grad_lowp(bk, s, n, xl, part[3], (float *)part[6], dw);
    if (db) cuda_lowp_bias_grad(bk, n, co, (size_t)P, part[3], db);
}
