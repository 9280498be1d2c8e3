/* Max and average pooling over each (image, channel) plane. Windows are clipped to
 * the input; max ignores padding, average counts it (PyTorch defaults). */
#include <string.h>

#include "cpu.h"
#include "guard.h"

/* The first element of the window, then strictly greater ones: the first maximum in row-major
 * order takes the gradient. Selects, not branches: which value wins is data. */
static inline void window_max(const real *xp, int W, int h0, int h1, int w0, int w1, real *y, int32_t *argmax)
{
    int32_t at = h0 * W + w0;
    real best = xp[at];
    for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++) {
            const bool greater = xp[ih * W + iw] > best;
            best = greater ? xp[ih * W + iw] : best;
            at = greater ? ih * W + iw : at;
        }
    *y = best;
    *argmax = at;
}

#if defined(__AVX2__) && !defined(BB_DOUBLE)
#include <immintrin.h>

/* Inputs 0, 2, .., 14 (even) or 1, 3, .., 15 (odd) of a and b, 8 each: the columns of the
 * windows' first and second taps for 8 stride-2 outputs. */
static inline __m256 deinterleave_even(__m256 a, __m256 b)
{
    const __m256 pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}

static inline __m256 deinterleave_odd(__m256 a, __m256 b)
{
    const __m256 pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* One tap: where v is strictly greater, it and its input index win (NaN never wins, as in the
 * scalar loop). */
static inline void take_greater(__m256 v, __m256i index, __m256 *best, __m256i *at)
{
    const __m256 greater = _mm256_cmp_ps(v, *best, _CMP_GT_OQ);
    *best = _mm256_blendv_ps(*best, v, greater);
    *at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(*at), _mm256_castsi256_ps(index), greater));
}

/* Outputs 0 .. m - 1 (m = 1 .. 8) of a K x K stride-2 row (K = 2 or 3) whose windows start at
 * column c0 of input row ih0, all inside the plane: the taps in row-major order, so the first
 * maximum wins. Reads only the windows' columns, c0 .. c0 + 2 (m - 1) + K - 1: a short row loads
 * under a mask. */
static inline void maxpool_s2_vector(const float *xp, int W, int K, int ih0, int c0, int m, float *y,
                                     int32_t *argmax)
{
    const __m256i lanes = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i shift_one = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
    const __m256i count = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int columns = 2 * (m - 1) + K;
    const __m256i first_half = _mm256_cmpgt_epi32(_mm256_set1_epi32(columns), count);
    const __m256i second_half = _mm256_cmpgt_epi32(_mm256_set1_epi32(columns - 8), count);
    __m256 best = _mm256_setzero_ps();
    __m256i at = _mm256_setzero_si256();
    for (int kh = 0; kh < K; kh++) {
        const int32_t row_at = (ih0 + kh) * W + c0;
        const float *r = xp + row_at;
        const __m256 a = m == 8 ? _mm256_loadu_ps(r) : _mm256_maskload_ps(r, first_half);
        const __m256 b = m == 8 ? _mm256_loadu_ps(r + 8) : _mm256_maskload_ps(r + 8, second_half);
        const __m256 even = deinterleave_even(a, b), odd = deinterleave_odd(a, b);
        const __m256i index = _mm256_add_epi32(_mm256_set1_epi32(row_at), lanes);
        if (kh == 0) {
            best = even;
            at = index;
        } else {
            take_greater(even, index, &best, &at);
        }
        take_greater(odd, _mm256_add_epi32(index, _mm256_set1_epi32(1)), &best, &at);
        if (K == 3) {
            /* the third tap: the even columns one further; the last one, needed by a whole
             * vector only, loaded alone */
            __m256 third = _mm256_permutevar8x32_ps(even, shift_one);
            if (m == 8) third = _mm256_blend_ps(third, _mm256_set1_ps(r[16]), 0x80);
            take_greater(third, _mm256_add_epi32(index, _mm256_set1_epi32(2)), &best, &at);
        }
    }
    if (m == 8) {
        _mm256_storeu_ps(y, best);
        _mm256_storeu_si256((__m256i *)argmax, at);
        return;
    }
    float best_out[8];
    int32_t at_out[8];
    _mm256_storeu_ps(best_out, best);
    _mm256_storeu_si256((__m256i *)at_out, at);
    memcpy(y, best_out, (size_t)m * sizeof *y);
    memcpy(argmax, at_out, (size_t)m * sizeof *argmax);
}

/* Outputs ow0 .. ow1 - 1 of one row whose K x K windows at stride 2 lie wholly inside the plane,
 * 8 at a time, the last 8 overlapping the ones before when the row is not a multiple of 8 (they
 * write the same values); a row of fewer than 8 under a mask. The generic loop spent ~25
 * cycles an output. */
#define MAXPOOL_ROW(NAME, K)                                                                        \
    static void NAME(const real *xp, int W, int pad, int ih0, int ow0, int ow1, real *y, int32_t *argmax) \
    {                                                                                               \
        if (ow1 - ow0 < 8) {                                                                        \
            maxpool_s2_vector(xp, W, K, ih0, ow0 * 2 - pad, ow1 - ow0, y + ow0, argmax + ow0);      \
            return;                                                                                 \
        }                                                                                           \
        for (int ow = ow0;; ow += 8) {                                                              \
            if (ow > ow1 - 8) ow = ow1 - 8;                                                         \
            maxpool_s2_vector(xp, W, K, ih0, ow * 2 - pad, 8, y + ow, argmax + ow);                 \
            if (ow == ow1 - 8) return;                                                              \
        }                                                                                           \
    }
enum { ROW_KERNEL_MIN = 1 };
#else
/* Outputs ow0 .. ow1 - 1 of one row whose K x K windows at stride 2 lie wholly inside the
 * plane, from input row ih0 and column ow * 2 - pad: the window's size known to the compiler,
 * so the loop over outputs is unrolled (the generic loop spent ~25 cycles an output). */
#define MAXPOOL_ROW(NAME, K)                                                                        \
    static void NAME(const real *xp, int W, int pad, int ih0, int ow0, int ow1, real *y, int32_t *argmax) \
    {                                                                                               \
        for (int ow = ow0; ow < ow1; ow++) {                                                        \
            int32_t at = ih0 * W + ow * 2 - pad;                                                    \
            real best = xp[at];                                                                     \
            for (int kh = 0; kh < K; kh++)                                                          \
                for (int kw = 0; kw < K; kw++) {                                                    \
                    const int32_t i = (ih0 + kh) * W + ow * 2 - pad + kw;                           \
                    const bool greater = xp[i] > best;                                              \
                    best = greater ? xp[i] : best;                                                  \
                    at = greater ? i : at;                                                          \
                }                                                                                   \
            y[ow] = best;                                                                           \
            argmax[ow] = at;                                                                        \
        }                                                                                           \
    }
/* below about a vector's width of outputs the unrolled kernel was slower than the loop */
enum { ROW_KERNEL_MIN = 12 };
#endif

MAXPOOL_ROW(maxpool_row_2s2, 2)
MAXPOOL_ROW(maxpool_row_3s2, 3)

typedef void (*MaxpoolRow)(const real *xp, int W, int pad, int ih0, int ow0, int ow1, real *y, int32_t *argmax);

/* The models' windows: 2x2 and 3x3 at stride 2 (NULL: the generic loop only). */
static MaxpoolRow maxpool_row_kernel(const PoolShape *s)
{
    if (s->stride != 2) return NULL;
    return s->k == 2 ? maxpool_row_2s2 : s->k == 3 ? maxpool_row_3s2 : NULL;
}

/* Outputs [from, to) of one row by the generic loop, each window clipped to the input. */
static void clipped_windows(const PoolShape *s, const real *xp, int h0, int h1, int from, int to, real *y,
                            int32_t *argmax)
{
    for (int ow = from; ow < to; ow++) {
        int w0 = ow * s->stride - s->pad, w1 = w0 + s->k;
        if (w0 < 0) w0 = 0;
        if (w1 > s->in_w) w1 = s->in_w;
        window_max(xp, s->in_w, h0, h1, w0, w1, &y[ow], &argmax[ow]);
    }
}

/* One output row: the windows wholly inside the plane by `row`, the clipped ones around them
 * by the generic loop. */
static void maxpool_output_row(const PoolShape *s, MaxpoolRow row, const real *xp, int oh, real *y, int32_t *argmax)
{
    const int H = s->in_h, W = s->in_w;
    int h0 = oh * s->stride - s->pad, h1 = h0 + s->k;
    const bool whole_rows = h0 >= 0 && h1 <= H;
    if (h0 < 0) h0 = 0;
    if (h1 > H) h1 = H;
    /* outputs [inner0, inner1) have windows wholly inside the columns */
    int inner0 = (s->pad + s->stride - 1) / s->stride, inner1 = W - s->k + s->pad >= 0 ? (W - s->k + s->pad) / s->stride + 1 : 0;
    if (inner1 > s->out_w) inner1 = s->out_w;
    if (!row || !whole_rows || inner1 - inner0 < ROW_KERNEL_MIN) {
        clipped_windows(s, xp, h0, h1, 0, s->out_w, y, argmax);
        return;
    }
    clipped_windows(s, xp, h0, h1, 0, inner0, y, argmax);
    row(xp, W, s->pad, h0, inner0, inner1, y, argmax);
    clipped_windows(s, xp, h0, h1, inner1, s->out_w, y, argmax);
}

void cpu_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                        int32_t *argmax)
{
    BK_GUARD(bk);
    const int planes = n * s->c, ohw = s->out_h * s->out_w;
    const MaxpoolRow row = maxpool_row_kernel(s);
    CPU_FOR(bk, int, p, planes, {
        const real *xp = x + (size_t)p * s->in_h * s->in_w;
        for (int oh = 0; oh < s->out_h; oh++)
            maxpool_output_row(s, row, xp, oh, y + (size_t)p * ohw + (size_t)oh * s->out_w,
                               argmax + (size_t)p * ohw + (size_t)oh * s->out_w);
    });
}

typedef struct {
    const PoolShape *s;
    int planes;
    const int32_t *argmax;
    const real *dy;
    real *dx;
    bool accumulate;
} MaxpoolBackward;

/* Thread t's planes: a fresh gradient zeroed in one pass, then each output's gradient added
 * at its argmax. The zeroing and the adding take the same planes, so a thread adds only into
 * planes it has zeroed itself. (Zeroing each plane right before its scatter was slower on two
 * threads: 0.31 ms against 0.18 for the CIFAR AlexNet-BN's first pool, batch 32; and zeroing
 * split by elements instead of planes, as once, zeroed another thread's sums where the threads
 * did not divide the planes evenly.) */
static void maxpool_backward_planes(void *ctx, int t, int T)
{
    const MaxpoolBackward *a = ctx;
    const PoolShape *s = a->s;
    const size_t ohw = (size_t)s->out_h * s->out_w, plane = (size_t)s->in_h * s->in_w;
    size_t from, to;
    cpu_share((size_t)a->planes, t, T, &from, &to);
    if (!a->accumulate) memset(a->dx + from * plane, 0, (to - from) * plane * sizeof *a->dx);
    for (size_t p = from; p < to; p++) {
        real *dxp = a->dx + p * plane;
        for (size_t j = 0; j < ohw; j++) dxp[a->argmax[p * ohw + j]] += a->dy[p * ohw + j];
    }
}

void cpu_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                         const real *dy, real *dx, bool accumulate)
{
    BK_GUARD(bk);
    MaxpoolBackward a = {s, n * s->c, argmax, dy, dx, accumulate};
    cpu_run(bk->threads, maxpool_backward_planes, &a);
}

void cpu_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y)
{
    BK_GUARD(bk);
    const int planes = n * s->c, H = s->in_h, W = s->in_w;
    const real inv = (real)1 / (real)(s->k * s->k);
    CPU_FOR(bk, int, p, planes, {
        const real *xp = x + (size_t)p * H * W;
        real *yp = y + (size_t)p * s->out_h * s->out_w;
        for (int oh = 0; oh < s->out_h; oh++) {
            for (int ow = 0; ow < s->out_w; ow++) {
                int h0 = oh * s->stride - s->pad, w0 = ow * s->stride - s->pad;
                real acc = 0;
                for (int ih = h0; ih < h0 + s->k; ih++) {
                    if (ih < 0 || ih >= H) continue;
                    for (int iw = w0; iw < w0 + s->k; iw++)
                        if (iw >= 0 && iw < W) acc += xp[ih * W + iw];
                }
                yp[oh * s->out_w + ow] = acc * inv;
            }
        }
    });
}

void cpu_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx)
{
    BK_GUARD(bk);
    const int planes = n * s->c, H = s->in_h, W = s->in_w;
    const real inv = (real)1 / (real)(s->k * s->k);
    CPU_FOR(bk, int, p, planes, {
        real *dxp = dx + (size_t)p * H * W;
        const real *dyp = dy + (size_t)p * s->out_h * s->out_w;
        for (int oh = 0; oh < s->out_h; oh++) {
            for (int ow = 0; ow < s->out_w; ow++) {
                int h0 = oh * s->stride - s->pad, w0 = ow * s->stride - s->pad;
                real g = dyp[oh * s->out_w + ow] * inv;
                for (int ih = h0; ih < h0 + s->k; ih++) {
                    if (ih < 0 || ih >= H) continue;
                    for (int iw = w0; iw < w0 + s->k; iw++)
                        if (iw >= 0 && iw < W) dxp[ih * W + iw] += g;
                }
            }
        }
    });
}
