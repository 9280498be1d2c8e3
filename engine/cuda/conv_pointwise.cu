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
 * cudnn leaves these layers to cuDNN (conv.cu) like every other. */
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

static __global__ void gather_kernel(size_t count, int oh, int ow, int h, int w, int stride, const float *x,
                                     float *dense)
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

static void gather(CudaState *st, const ConvShape *s, int n, const float *x, float *dense)
{
    const size_t count = (size_t)n * s->in_c * s->out_h * s->out_w;
    gather_kernel<<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, s->out_h, s->out_w, s->in_h, s->in_w,
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
