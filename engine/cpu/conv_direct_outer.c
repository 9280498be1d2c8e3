/* The weight gradient of direct-path layers (conv_direct.c) as outer products: 3x3 layers with
 * output channels in 2 * VLEN's, and the 1x1 stride-2 shortcuts.
 *
 * dw[o][c][t] sums dy[o][p] * x_t[c][p] over the images and their pixels p, x_t the input
 * under tap t. Here the vectors run along the output channels, not the pixels: an image's dy
 * is transposed to [pixel][channel], and each input value under a tap is broadcast to them.
 * 2 vectors of output channels x 9 taps of one input channel stay in registers over an
 * image's pixels, 11 loads a pixel for 18 multiply-adds, none across cache lines whatever the
 * plane's width, and the sums are the weights' own, with no lanes to add up at the end. On
 * 32- and 64-channel layers (16x16 and 8x8) it ran 17-40% faster than the lane kernel; on the
 * CIFAR AlexNets' 15x15 and 7x7 layers (64-96 channels) their step ran 9-17% faster than with
 * gemms over chunks of images (it replaced them); on 16 channels (one vector) it was slower,
 * so those keep the lane kernel (conv_direct.c). A shortcut's 1x1 filter has one tap, so its
 * kernel takes 8 input channels at a time instead of 9 taps. The batch goes in DW_CHUNKS
 * chunks of images whatever the threads, each into its own copy of the weights, the copies
 * added in chunk order: the result does not depend on the thread count. */
#include <string.h>

#include "conv_direct.h"

enum { OUTER_VECS = 2 };

int direct_outer_gradient_applies(const ConvShape *s)
{
    return (s->k_h == 3 || direct_shortcut_applies(s)) && s->out_c % (OUTER_VECS * VLEN) == 0;
}

/* Per thread: an image's prepared input and its dy transposed. */
size_t outer_gradient_scratch(const ConvShape *s)
{
    return (size_t)s->in_c * direct_input_layout(s).chan + VLEN + (size_t)s->out_c * s->out_h * s->out_w;
}

#if defined(__AVX2__) && !defined(BB_DOUBLE)
#include <immintrin.h>

/* The 8 x 8 block of dy at channel o0, pixel p0 into dt, in registers: unpack pairs, then
 * quadruples, then halves (scalar, the transpose took a tenth of the weight gradient). */
static void transpose_block(const real *dy, int pixels, int channels, int o0, int p0, real *dt)
{
    __m256 r[8], t[8], q[8];
    for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps(dy + (size_t)(o0 + k) * pixels + p0);
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4)
        for (int j = 0; j < 2; j++) {
            q[k + 2 * j] = _mm256_shuffle_ps(t[k + j], t[k + j + 2], _MM_SHUFFLE(1, 0, 1, 0));
            q[k + 2 * j + 1] = _mm256_shuffle_ps(t[k + j], t[k + j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        }
    for (int j = 0; j < 4; j++) {
        _mm256_storeu_ps(dt + (size_t)(p0 + j) * channels + o0, _mm256_permute2f128_ps(q[j], q[j + 4], 0x20));
        _mm256_storeu_ps(dt + (size_t)(p0 + j + 4) * channels + o0, _mm256_permute2f128_ps(q[j], q[j + 4], 0x31));
    }
}
enum { TRANSPOSE_BLOCK = 8 };
#else
static void transpose_block(const real *dy, int pixels, int channels, int o0, int p0, real *dt)
{
    (void)dy, (void)pixels, (void)channels, (void)o0, (void)p0, (void)dt;
}
enum { TRANSPOSE_BLOCK = 0 };
#endif

/* dt[p][o] = dy[o][p] for one image: 8 x 8 blocks where AVX2 has them, the rest one by one. */
static void transpose_dy(const real *restrict dy, int channels, int pixels, real *restrict dt)
{
    int p0 = 0;
    if (TRANSPOSE_BLOCK > 0 && channels % 8 == 0)
        for (; p0 + 8 <= pixels; p0 += 8)
            for (int o0 = 0; o0 < channels; o0 += 8) transpose_block(dy, pixels, channels, o0, p0, dt);
    for (int o = 0; o < channels; o++)
        for (int p = p0; p < pixels; p++) dt[(size_t)p * channels + o] = dy[(size_t)o * pixels + p];
}

/* sums (STREAMS rows of out_c, one a stream) += one image's gradient of output channels
 * o0 .. o0 + OUTER_VECS * VLEN - 1 against STREAMS runs of input: a 3x3 layer's 9 taps of one
 * input channel, or a shortcut's 8 input channels. */
#define OUTER_BLOCK(NAME, STREAMS)                                                                 \
    static void NAME(const real *dt, int out_c, int o0, int pixels, const real *const *in, real *sums) \
    {                                                                                              \
        Vec acc[OUTER_VECS][STREAMS];                                                              \
        _Pragma("GCC unroll 9") for (int t = 0; t < STREAMS; t++)                                  \
            _Pragma("GCC unroll 2") for (int v = 0; v < OUTER_VECS; v++)                           \
                load_vec(&acc[v][t], sums + (size_t)t * out_c + o0 + v * VLEN);                    \
        for (int p = 0; p < pixels; p++) {                                                         \
            Vec d[OUTER_VECS];                                                                     \
            _Pragma("GCC unroll 2") for (int v = 0; v < OUTER_VECS; v++)                           \
                load_vec(&d[v], dt + (size_t)p * out_c + o0 + v * VLEN);                           \
            _Pragma("GCC unroll 9") for (int t = 0; t < STREAMS; t++)                              \
            {                                                                                      \
                const real in_t = in[t][p];                                                        \
                _Pragma("GCC unroll 2") for (int v = 0; v < OUTER_VECS; v++) acc[v][t] += d[v] * in_t; \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 9") for (int t = 0; t < STREAMS; t++)                                  \
            _Pragma("GCC unroll 2") for (int v = 0; v < OUTER_VECS; v++)                           \
                memcpy(sums + (size_t)t * out_c + o0 + v * VLEN, &acc[v][t], sizeof(Vec));         \
    }

OUTER_BLOCK(outer_taps, 9)
OUTER_BLOCK(outer_channels, OCB)

/* One image's gradient of input channels [0, per) (x their prepared input, sums their rows)
 * against every output channel. */
static void outer_image(const ConvShape *s, const TapLayout *lay, int per, const real *dt, const real *x, real *sums)
{
    const int pixels = s->out_h * s->out_w, block = OUTER_VECS * VLEN;
    const real *in[9];
    if (s->k_h == 1) {
        for (int c = 0; c < per; c += OCB) {
            for (int j = 0; j < OCB; j++) in[j] = x + (c + j) * lay->chan;
            for (int o0 = 0; o0 < s->out_c; o0 += block)
                outer_channels(dt, s->out_c, o0, pixels, in, sums + (size_t)c * s->out_c);
        }
        return;
    }
    for (int c = 0; c < per; c++) {
        for (int t = 0; t < 9; t++) in[t] = x + c * lay->chan + lay->taps[t];
        for (int o0 = 0; o0 < s->out_c; o0 += block) outer_taps(dt, s->out_c, o0, pixels, in, sums + (size_t)c * 9 * s->out_c);
    }
}

typedef struct {
    const ConvShape *s;
    int n, chunks, ic_parts;
    const real *x, *dy;
    real *sums; /* per image chunk: [in channel][tap][out channel] */
} OuterGradient;

/* Task `task`: input channels of one part over the images of one chunk, into that chunk's sums
 * (which it zeroes first). */
static void outer_task(const OuterGradient *a, int task, real *ws)
{
    const ConvShape *s = a->s;
    const int chunk = task / a->ic_parts, per = s->in_c / a->ic_parts, ic0 = task % a->ic_parts * per;
    const int n0 = direct_chunk_first(a->n, a->chunks, chunk), n1 = direct_chunk_first(a->n, a->chunks, chunk + 1);
    const int pixels = s->out_h * s->out_w;
    const size_t plane = (size_t)s->in_h * s->in_w, in_item = (size_t)s->in_c * plane;
    const size_t out_item = (size_t)s->out_c * pixels, per_channel = (size_t)s->k_h * s->k_w * s->out_c;
    const TapLayout lay = direct_input_layout(s);
    real *sx = ws, *dt = ws + (size_t)per * lay.chan + VLEN;
    real *sums = a->sums + chunk * direct_weight_elems(s) + ic0 * per_channel;
    memset(sums, 0, per * per_channel * sizeof(real));
    for (int i = n0; i < n1; i++) {
        direct_prepare_input(s, per, a->x + i * in_item + ic0 * plane, sx);
        transpose_dy(a->dy + i * out_item, s->out_c, pixels, dt);
        outer_image(s, &lay, per, dt, sx, sums);
    }
}

/* Input-channel parts a chunk: enough for about four tasks a thread, dividing the channels (in
 * eights for a shortcut, whose kernel takes eight at a time). */
static int outer_ic_parts(const ConvShape *s, int threads, int chunks)
{
    const int units = s->k_h == 1 ? s->in_c / OCB : s->in_c;
    int parts = (4 * threads + chunks - 1) / chunks;
    if (parts > units) parts = units;
    while (units % parts) parts++;
    return parts;
}

/* dw[o][c][t] += the chunks' sums[c][t][o], added in chunk order into the first chunk's (along
 * its rows), then moved to dw's order, input channel by input channel. */
static void add_outer_sums(Backend *bk, const ConvShape *s, int chunks, real *sums, real *dw)
{
    const size_t elems = direct_weight_elems(s), per_ic = elems / s->in_c, taps = (size_t)s->k_h * s->k_w;
    CPU_FOR(bk, int, c, s->in_c, {
        real *first = sums + c * per_ic;
        for (int k = 1; k < chunks; k++) {
            const real *more = first + k * elems;
            for (size_t j = 0; j < per_ic; j++) first[j] += more[j];
        }
        for (size_t t = 0; t < taps; t++)
            for (int o = 0; o < s->out_c; o++) dw[((size_t)o * s->in_c + c) * taps + t] += first[t * s->out_c + o];
    });
}

void outer_weight_gradient(Backend *bk, const ConvShape *s, int n, const real *x, const real *dy, real *dw)
{
    const int chunks = direct_image_chunks(n), parts = outer_ic_parts(s, bk->threads, chunks);
    const OuterGradient a = {s, n, chunks, parts, x, dy, cpu_shared_workspace(bk)};
    CPU_FOR_T(bk, t, int, task, chunks * parts, { outer_task(&a, task, cpu_workspace(bk, t)); });
    add_outer_sums(bk, s, chunks, a.sums, dw);
}

