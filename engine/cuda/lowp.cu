/* --precision bf16 / fp16 on the GPU: the conversions and roundings around the products
 * (conv.cu, conv_pointwise.cu, linear.cu), at the points where the CPU emulation rounds
 * (engine/cpu/low_precision.c): the input, the weights and the bias going in, the output
 * coming out; in backward the incoming gradient, the input's gradient (added to the one
 * already there in low precision), the weights' and bias's gradients rounded before they are
 * added to the fp32 ones. The products read __nv_bfloat16 / __half copies on tensor cores and
 * accumulate in fp32, as the CPU's fp32 code does on its rounded copies, so the two differ
 * only in the order of the fp32 sums (tests/test_backend_ops.c states the tolerance).
 *
 * Rounding is CUDA's __float2bfloat16_rn / __float2half_rn: to nearest, ties to even, NaN
 * stays NaN, a finite value past the format's largest rounds to inf (fp16: 65520 and up),
 * fp16's subnormals kept: what engine/cpu/round_lowp.h computes with bit arithmetic. The
 * kernels are compiled without --use_fast_math, so no float subnormal is flushed on the way.
 *
 * The scratch (CudaState.lowp) holds the converted copies and the products' fp32 results
 * before rounding; it grows at a layer's first call, so later steps allocate nothing.
 *
 * conv.cu's channels-last plans take their copies in NHWC (x, dy; the filter KRSC) and give
 * back NHWC results: the _layout conversions transpose in the same pass that rounds (one read
 * and one write per value, through a shared tile), and the bias's fill and gradient see NHWC
 * as a plane of 1. The roundings are the same operations at the same points; only where a
 * value sits changes (engine/cuda/layout.h). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reduce.cuh"

/* The two formats' conversions, so each kernel is written once. */
template <typename L> struct Lowp;
template <> struct Lowp<__nv_bfloat16> {
    static __device__ __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
    static __device__ float to(__nv_bfloat16 v) { return __bfloat162float(v); }
};
template <> struct Lowp<__half> {
    static __device__ __half from(float v) { return __float2half_rn(v); }
    static __device__ float to(__half v) { return __half2float(v); }
};

template <typename L> static __device__ inline float round_to(float v) { return Lowp<L>::to(Lowp<L>::from(v)); }

/* A source value rounded: an fp32 one rounded, a bf16/fp16 one widened (exact). */
template <typename L> static __device__ inline float rounded(const float *src, size_t i) { return round_to<L>(src[i]); }
template <typename L> static __device__ inline float rounded(const L *src, size_t i) { return Lowp<L>::to(src[i]); }

void cuda_lowp_gemm(CudaState *st, cublasOperation_t ta, cublasOperation_t tb, int m, int nn, int k, const void *a,
                    int lda, long long sa, const void *b, int ldb, long long sb, float beta, float *c, int ldc,
                    long long sc, int batch)
{
    const float one = 1.0f;
    const cudaDataType_t t = st->precision == BK_PRECISION_FP16 ? CUDA_R_16F : CUDA_R_16BF;
    if (batch == 1)
        CUBLAS_CHECK(cublasGemmEx(st->cublas, ta, tb, m, nn, k, &one, a, t, lda, b, t, ldb, &beta, c, CUDA_R_32F, ldc,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(st->cublas, ta, tb, m, nn, k, &one, a, t, lda, sa, b, t, ldb, sb,
                                                &beta, c, CUDA_R_32F, ldc, sc, batch, CUBLAS_COMPUTE_32F,
                                                CUBLAS_GEMM_DEFAULT));
}

cudnnDataType_t cuda_lowp_cudnn_type(const CudaState *st)
{
    return st->precision == BK_PRECISION_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}

/* ---- the scratch ---- */
enum { LOWP_ALIGN = 256 }; /* what cuBLAS and cuDNN want of a tensor-core operand, and more */

static size_t aligned(size_t bytes) { return (bytes + LOWP_ALIGN - 1) / LOWP_ALIGN * LOWP_ALIGN; }

/* At least `bytes` of scratch (cuda_buffer_grow: nothing in flight reads the old). */
static char *lowp_scratch(Backend *bk, size_t bytes)
{
    CudaState *st = cuda_state(bk);
    return (char *)cuda_buffer_grow(st, &st->lowp, &st->lowp_bytes, bytes, "bf16/fp16 scratch");
}

void cuda_lowp_parts(Backend *bk, int k, const size_t *bytes, void **parts)
{
    size_t total = 0;
    for (int i = 0; i < k; i++) total += aligned(bytes[i]);
    char *at = lowp_scratch(bk, total ? total : (size_t)LOWP_ALIGN);
    for (int i = 0; i < k; i++) {
        parts[i] = bytes[i] ? at : NULL;
        at += aligned(bytes[i]);
    }
}

/* ---- conversions and roundings ---- */
#define GRID_STRIDE(i, count)                                                                   \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (count);                 \
         i += (size_t)gridDim.x * blockDim.x)

template <typename L> static __global__ void convert_kernel(size_t n, const float *src, L *dst)
{
    GRID_STRIDE(i, n) dst[i] = Lowp<L>::from(src[i]);
}

void cuda_lowp_convert(Backend *bk, size_t n, const float *src, void *dst)
{
    if (!n) return;
    CudaState *st = cuda_state(bk);
    if (st->precision == BK_PRECISION_FP16)
        convert_kernel<__half><<<cuda_blocks(n), CUDA_THREADS, 0, st->stream>>>(n, src, (__half *)dst);
    else
        convert_kernel<__nv_bfloat16><<<cuda_blocks(n), CUDA_THREADS, 0, st->stream>>>(n, src, (__nv_bfloat16 *)dst);
    CUDA_LAUNCHED();
}

/* A rounded value v meeting its destination's old value: as low_precision.c's round_share,
 * the same operations in the same order. */
template <typename L> static __device__ inline float combine(LowpMode mode, float v, float old)
{
    if (mode == LOWP_INTO_FP32) return v + old;
    if (mode == LOWP_INTO_LOWP) return round_to<L>(v + old);
    return v;
}

template <typename L, typename S> static __global__ void round_kernel(size_t n, LowpMode mode, const S *src, float *dst)
{
    GRID_STRIDE(i, n) dst[i] = combine<L>(mode, rounded<L>(src, i), dst[i]);
}

template <typename L> static void round_as(CudaState *st, LowpMode mode, size_t n, const void *src, bool src_lowp, float *dst)
{
    if (src_lowp)
        round_kernel<L, L><<<cuda_blocks(n), CUDA_THREADS, 0, st->stream>>>(n, mode, (const L *)src, dst);
    else
        round_kernel<L, float><<<cuda_blocks(n), CUDA_THREADS, 0, st->stream>>>(n, mode, (const float *)src, dst);
    CUDA_LAUNCHED();
}

void cuda_lowp_round(Backend *bk, LowpMode mode, size_t n, const void *src, bool src_lowp, float *dst)
{
    if (!n) return;
    CudaState *st = cuda_state(bk);
    if (st->precision == BK_PRECISION_FP16) round_as<__half>(st, mode, n, src, src_lowp, dst);
    else round_as<__nv_bfloat16>(st, mode, n, src, src_lowp, dst);
}

/* ---- the same, between fp32 NCHW and channels-last bf16/fp16 (conv.cu's NHWC plans) ----
 * One image's C x plane block goes through a shared tile (layout.h's tile_element), read along
 * the source's contiguous axis and written along the destination's: one read and one write of
 * each value, both coalesced. The padding column keeps the column-wise pass free of bank
 * conflicts. */
/* What moves through the tile: fp32 converted going into bf16/fp16 NHWC ... */
template <typename L> struct ConvertOp {
    const float *src;
    L *dst;
    __device__ float load(size_t i) const { return src[i]; }
    __device__ void store(size_t j, float v) const { dst[j] = Lowp<L>::from(v); }
};
/* ... and bf16/fp16 NHWC results (widened: exact) meeting their fp32 NCHW destination. */
template <typename L> struct RoundOp {
    const L *src;
    float *dst;
    LowpMode mode;
    __device__ float load(size_t i) const { return Lowp<L>::to(src[i]); }
    __device__ void store(size_t j, float v) const { dst[j] = combine<L>(mode, v, dst[j]); }
};

/* to_nhwc: src NCHW, dst NHWC; else the reverse. Tile (blockIdx.x, blockIdx.y) covers plane
 * positions p0.. and channels c0..; blockIdx.z walks the images. */
template <bool to_nhwc, typename Op> static __global__ void relayout_kernel(Dims4 d, Op op)
{
    __shared__ float tile[LAYOUT_TILE][LAYOUT_TILE + 1]; /* [channel][position] */
    const size_t p0 = (size_t)blockIdx.x * LAYOUT_TILE;
    const int c0 = blockIdx.y * LAYOUT_TILE;
    int c;
    size_t p;
    for (size_t n = blockIdx.z; n < (size_t)d.n; n += gridDim.z) {
        for (int k = threadIdx.y; k < LAYOUT_TILE; k += LAYOUT_TILE_ROWS)
            if (tile_element(d, to_nhwc, true, p0, c0, k, (int)threadIdx.x, &c, &p))
                tile[c - c0][p - p0] = op.load(layout_at(d, !to_nhwc, n, c, p));
        __syncthreads();
        for (int k = threadIdx.y; k < LAYOUT_TILE; k += LAYOUT_TILE_ROWS)
            if (tile_element(d, to_nhwc, false, p0, c0, k, (int)threadIdx.x, &c, &p))
                op.store(layout_at(d, to_nhwc, n, c, p), tile[c - c0][p - p0]);
        __syncthreads(); /* the tile is refilled for the next image */
    }
}

template <bool to_nhwc, typename Op> static void relayout(CudaState *st, Dims4 d, Op op)
{
    enum { MAX_GRID_YZ = 65535 };
    const dim3 block(LAYOUT_TILE, LAYOUT_TILE_ROWS);
    const unsigned images = (unsigned)(d.n < MAX_GRID_YZ ? d.n : MAX_GRID_YZ);
    const dim3 grid((unsigned)((dims_plane(d) + LAYOUT_TILE - 1) / LAYOUT_TILE),
                    (unsigned)((d.c + LAYOUT_TILE - 1) / LAYOUT_TILE), images);
    relayout_kernel<to_nhwc><<<grid, block, 0, st->stream>>>(d, op);
    CUDA_LAUNCHED();
}

/* With one channel or a one-value plane the two layouts are the same order. */
static bool same_order(Dims4 d) { return d.c == 1 || dims_plane(d) == 1; }

void cuda_lowp_convert_layout(Backend *bk, Dims4 d, bool nhwc, const float *src, void *dst)
{
    if (!dims_count(d)) return;
    if (!nhwc || same_order(d)) {
        cuda_lowp_convert(bk, dims_count(d), src, dst);
        return;
    }
    CudaState *st = cuda_state(bk);
    if (st->precision == BK_PRECISION_FP16) relayout<true>(st, d, ConvertOp<__half>{src, (__half *)dst});
    else relayout<true>(st, d, ConvertOp<__nv_bfloat16>{src, (__nv_bfloat16 *)dst});
}

void cuda_lowp_round_layout(Backend *bk, LowpMode mode, Dims4 d, bool nhwc, const void *src, float *dst)
{
    if (!dims_count(d)) return;
    if (!nhwc || same_order(d)) {
        cuda_lowp_round(bk, mode, dims_count(d), src, true, dst);
        return;
    }
    CudaState *st = cuda_state(bk);
    if (st->precision == BK_PRECISION_FP16) relayout<false>(st, d, RoundOp<__half>{(const __half *)src, dst, mode});
    else relayout<false>(st, d, RoundOp<__nv_bfloat16>{(const __nv_bfloat16 *)src, dst, mode});
}

/* ---- the bias: broadcast going in, summed coming back ---- */
template <typename L> static __device__ inline void store_bias(L *dst, size_t i, float b) { dst[i] = Lowp<L>::from(b); }
template <typename L> static __device__ inline void store_bias(float *dst, size_t i, float b) { dst[i] = round_to<L>(b); }

template <typename L, typename D>
static __global__ void fill_bias_kernel(size_t count, int c, size_t plane, const float *b, D *dst)
{
    GRID_STRIDE(i, count) store_bias<L>(dst, i, b[(i / plane) % (size_t)c]);
}

template <typename L>
static void fill_bias_as(CudaState *st, size_t count, int c, size_t plane, const float *b, void *dst, bool dst_lowp)
{
    if (dst_lowp)
        fill_bias_kernel<L, L><<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, c, plane, b, (L *)dst);
    else
        fill_bias_kernel<L, float><<<cuda_blocks(count), CUDA_THREADS, 0, st->stream>>>(count, c, plane, b,
                                                                                        (float *)dst);
    CUDA_LAUNCHED();
}

void cuda_lowp_fill_bias(Backend *bk, size_t count, int c, size_t plane, const float *b, void *dst, bool dst_lowp)
{
    if (!count) return;
    CudaState *st = cuda_state(bk);
    if (st->precision == BK_PRECISION_FP16) fill_bias_as<__half>(st, count, c, plane, b, dst, dst_lowp);
    else fill_bias_as<__nv_bfloat16>(st, count, c, plane, b, dst, dst_lowp);
}

/* One block per channel: its n * plane values summed in double in a fixed order (each
 * thread a strided share, then block_sum's tree), so a run repeats; the total rounded as the
 * CPU rounds its fp32 sum, then added to the fp32 gradient. An NHWC dy comes as n * plane
 * images of plane 1: the same values in the same order, read c apart (the neighbouring
 * channels' blocks find the rest of each sector in L2). */
template <typename L> static __global__ void bias_grad_kernel(size_t n, int c, size_t plane, const L *dy, float *db)
{
    const int k = blockIdx.x;
    const size_t count = n * plane;
    double acc = 0;
    for (size_t j = threadIdx.x; j < count; j += blockDim.x) {
        const size_t image = j / plane, at = j - image * plane;
        acc += Lowp<L>::to(dy[(image * c + k) * plane + at]);
    }
    const double total = block_sum(acc);
    if (threadIdx.x == 0) db[k] += round_to<L>((float)total);
}

void cuda_lowp_bias_grad(Backend *bk, size_t n, int c, size_t plane, const void *dy, float *db)
{
    if (!n || c <= 0) return;
    CudaState *st = cuda_state(bk);
    if (st->precision == BK_PRECISION_FP16)
        bias_grad_kernel<__half><<<c, CUDA_THREADS, 0, st->stream>>>(n, c, plane, (const __half *)dy, db);
    else
        bias_grad_kernel<__nv_bfloat16><<<c, CUDA_THREADS, 0, st->stream>>>(n, c, plane, (const __nv_bfloat16 *)dy,
                                                                             db);
    CUDA_LAUNCHED();
}
