/* Direct 3x3 and 5x5 convolution for stride-1 "same" layers (padding 1 and 2), 3x3 stride-2
 * layers with padding 1 and 1x1 stride-2 shortcuts, with output channels in eights and input
 * channels in eights or fewer than eight (first layers), up to DIRECT_MAX_CHANNELS (ResNet-20's
 * and ResNet-8's layers, the CIFAR AlexNets', ResNet-50's first two stages' 3x3, simple-cnn's).
 * Each input plane is copied k times, shifted by one column each, with k/2 zero rows above and
 * below and zeros where the shift leaves the image: then the input under tap (kh, kw) of output
 * pixels p .. p + 15 is the 16 consecutive values of copy kw from p + kh * width, across row
 * ends too, so a whole plane is one run of vectors whatever its width. A register block holds
 * OCB output channels of a run chunk, and every input channel and tap adds a weight times an
 * input vector to each: the products never leave the registers, with no im2col matrix and no
 * Winograd transforms, which is what costs most at these channel counts. The data gradient is
 * the same computation on dy with the filters transposed and flipped. The weight gradient of
 * 3x3 layers with output channels in 2 * VLEN's, and of the shortcuts, goes by outer products
 * (conv_direct_outer.c); the others keep vector sums along the pixels in registers over a group
 * of images: 2 output channels x 9 taps of one input channel for 3x3, 4 output channels x one
 * row of 5 taps for 5x5. Stride 2 reads the input's phases instead of shifted copies
 * (phase_image) and takes its data gradient phase by phase; the kernels find each tap's input
 * through a table of offsets (TapLayout), whatever the layout.
 *
 * A plane whose pixels are not a multiple of the vector ends in a partial chunk: it reads
 * whole vectors (the lanes past the plane read the next copy, or a zeroed slack after the
 * last), computes them, and stores only the plane's lanes; the weight gradient reads dy from
 * planes padded with zeros to whole vectors, so those lanes add nothing.
 *
 * Threads take whole images for the output and the data gradient, and for the weight gradient
 * fixed chunks of the batch's images or of the input channels, every sum running over its
 * images in order, chunks added in chunk order: none of it depends on the number of threads
 * or on which thread takes what, so the work goes to whichever thread is free (threads.h).
 * conv_im2col.c is the reference, im2col, this one is tested against
 * (tests/test_conv_paths.c). The kernels are chains of multiply-adds, compiled with contraction
 * on (Makefile). */
#include <string.h>

#include "conv_direct.h"
#include "guard.h"

/* Stride 2: 3x3 with padding 1 on planes of even size (ResNet's downsampling 3x3 layers). */
static int stride2_applies(const ConvShape *s)
{
    return s->stride == 2 && s->k_h == 3 && s->pad == 1 && s->in_h % 2 == 0 && s->in_w % 2 == 0 &&
           s->out_h == s->in_h / 2 && s->out_w == s->in_w / 2;
}

/* Layers of 64 channels and more on output planes of 28x28 and more (ResNet-50's first two
 * stages) leave the direct path: there Winograd's gemms are wide enough (64 channels on 56x56
 * planes, batch 16: 55 -> 40 ms a step; 128 on 28x28: 42 -> 39), and so are im2col's for the
 * stride-2 3x3 layer (128 channels, 56x56 onto 28x28: 65 -> 58 ms). */
static int wide_large_plane(const ConvShape *s) { return s->in_c >= 64 && s->out_h * s->out_w >= 784; }

int direct_applies(const ConvShape *s)
{
    if (wide_large_plane(s)) return 0;
    const int k = s->k_h;
    const int stride1 = (k == 3 || k == 5) && s->pad == k / 2 && s->stride == 1;
    return (stride1 || stride2_applies(s) || direct_shortcut_applies(s)) && s->k_w == k && s->groups == 1 &&
           (s->in_c % OCB == 0 || s->in_c < OCB) && s->out_c % OCB == 0 && s->in_c <= DIRECT_MAX_CHANNELS &&
           s->out_c <= DIRECT_MAX_CHANNELS;
}

/* The first `count` lanes of v from p (zeros after them), and back. */
static inline void load_lanes(Vec *v, const real *p, int count)
{
    memset(v, 0, sizeof *v);
    memcpy(v, p, sizeof(real) * count);
}

static inline void store_lanes(real *p, const Vec *v, int count) { memcpy(p, v, sizeof(real) * count); }

/* A stride-2 data gradient's copies of dy (prepare_dy), and its scratch per thread: a phase's
 * result for one image, then the image's prepared dy. */
static size_t dy_copy_elems(const ConvShape *s) { return (size_t)(s->out_h + 1) * s->out_w; }

static size_t stride2_data_scratch(const ConvShape *s)
{
    return (size_t)s->in_c * s->out_h * s->out_w + (size_t)s->out_c * 2 * dy_copy_elems(s) + VLEN;
}

/* The data gradient as a stride-1 convolution of dy: the shape with inputs and outputs swapped. */
static ConvShape data_gradient_shape(const ConvShape *s)
{
    return (ConvShape){s->out_c, s->out_h, s->out_w, s->in_c, s->in_h, s->in_w, s->k_h, s->k_w, 1, s->pad, 1};
}

/* A plane's pixels rounded up to whole vectors. */
static size_t padded_pixels(const ConvShape *s) { return ((size_t)s->out_h * s->out_w + VLEN - 1) / VLEN * VLEN; }

/* The weight gradient sums over a group of images at a time, about DW_RUNS vectors of
 * output pixels, before its accumulators go back to memory. */
enum { DW_RUNS = 64 };

static int dw_group(const ConvShape *s)
{
    int per_image = (int)(padded_pixels(s) / VLEN);
    return (DW_RUNS + per_image - 1) / per_image;
}

/* At most dw_group's images a group, the groups evened out: 32 images of 15x15 make 7 groups
 * of 5 at most, so 5, 5, 5, 5, 4, 4, 4 rather than six of 5 and one of 2. */
static int dw_even_group(const ConvShape *s, int n)
{
    const int most = dw_group(s);
    const int groups = (n + most - 1) / most;
    return groups ? (n + groups - 1) / groups : 1;
}

/* The weight gradient of a layer with few weights goes over DW_CHUNKS chunks of the batch's
 * images apart, each into its own lane sums, added in chunk order at the end: two threads
 * splitting the input channels each read all of dy and x (ResNet-20's 16- and 32-channel
 * layers ran at three quarters of their one-thread rate on two), and the chunks do not depend on the
 * thread count, so neither do the sums. Larger layers split the input channels: 8 copies of
 * their lane sums would not stay in cache. */
static const size_t DW_CHUNKED_LANES_BYTES = (size_t)8 << 20;

static int dw_image_chunks(const ConvShape *s, int n)
{
    const size_t lanes = direct_weight_elems(s) * VLEN * sizeof(real);
    if (lanes * DW_CHUNKS > DW_CHUNKED_LANES_BYTES) return 1;
    return direct_image_chunks(n);
}

/* Whether dy's planes are whole vectors already, so the weight gradient reads dy in place. */
static int dy_padded_already(const ConvShape *s) { return padded_pixels(s) == (size_t)s->out_h * s->out_w; }

/* Per thread: the shifted input of one image (forward) or dy of one image (data gradient), or a
 * group's shifted images (weight gradient). Shared: the arranged filters; or the weight
 * gradient's lane sums and, where planes are not whole vectors, the batch's dy padded to them. */
Workspace direct_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    const size_t image = direct_input_layout(s).chan;
    size_t data = (size_t)s->in_c * image + VLEN;
    /* the data gradient: dy shifted (stride 1), or prepared and a phase's result (stride 2) */
    const ConvShape ds = data_gradient_shape(s);
    const size_t back = s->stride == 1 ? (size_t)s->out_c * direct_input_layout(&ds).chan + VLEN : stride2_data_scratch(s);
    if (data < back) data = back;
    size_t group = (size_t)dw_group(s) * s->in_c * image + VLEN;
    size_t lanes = weight_elems * VLEN * dw_image_chunks(s, batch) +
                   (dy_padded_already(s) ? 0 : (size_t)batch * s->out_c * padded_pixels(s));
    if (direct_outer_gradient_applies(s)) {
        group = outer_gradient_scratch(s);
        lanes = weight_elems * direct_image_chunks(batch);
    }
    Workspace w = {data > group ? data : group, lanes > weight_elems ? lanes : weight_elems};
    return w;
}

/* acc[o][v] += f[o] * in[v] for one tap of the OCB = 8 output channels: each weight broadcast
 * into a register and every sum kept in its own (vfmadd231ps), four output channels an asm
 * statement (at most 30 operands). Left to itself, GCC made a dying broadcast or input register
 * the next sum in turn and moved the sums back: a register move for every three to five
 * multiply-adds, on the ports they need (the 16-channel forward ran 5-6% slower). The same
 * fused multiply-adds, so the same bits, as the plain C below. */
_Static_assert(OCB == 8, "TAP_MULTIPLY_ADD_* name eight output channels");
#if defined(__x86_64__) && defined(__AVX__) && defined(__FMA__) && !defined(BB_DOUBLE)
#define FMA_PAIR_(o) "vbroadcastss " #o "*4(%[f]), %[w]\n\tvfmadd231ps %[w], %[i0], %[a" #o "0]\n\tvfmadd231ps %[w], %[i1], %[a" #o "1]\n\t"
#define FMA_ONE_(o) "vbroadcastss " #o "*4(%[f]), %[w]\n\tvfmadd231ps %[w], %[i0], %[a" #o "0]\n\t"
#define FOUR_PAIRS_(acc, in, f, o0, o1, o2, o3)                                                   \
    do {                                                                                           \
        Vec w_;                                                                                    \
        __asm__(FMA_PAIR_(0) FMA_PAIR_(1) FMA_PAIR_(2) FMA_PAIR_(3)                                \
                : [a00] "+v"(acc[o0][0]), [a01] "+v"(acc[o0][1]), [a10] "+v"(acc[o1][0]), [a11] "+v"(acc[o1][1]), \
                  [a20] "+v"(acc[o2][0]), [a21] "+v"(acc[o2][1]), [a30] "+v"(acc[o3][0]), [a31] "+v"(acc[o3][1]), \
                  [w] "=&v"(w_)                                                                    \
                : [i0] "v"(in[0]), [i1] "v"(in[1]), [f] "r"((f) + (o0)), "m"(*(const real(*)[4])((f) + (o0)))); \
    } while (0)
#define FOUR_ONES_(acc, in, f, o0, o1, o2, o3)                                                    \
    do {                                                                                           \
        Vec w_;                                                                                    \
        __asm__(FMA_ONE_(0) FMA_ONE_(1) FMA_ONE_(2) FMA_ONE_(3)                                    \
                : [a00] "+v"(acc[o0][0]), [a10] "+v"(acc[o1][0]), [a20] "+v"(acc[o2][0]), [a30] "+v"(acc[o3][0]), \
                  [w] "=&v"(w_)                                                                    \
                : [i0] "v"(in[0]), [f] "r"((f) + (o0)), "m"(*(const real(*)[4])((f) + (o0))));    \
    } while (0)
#define TAP_MULTIPLY_ADD_2(acc, in, f)                                                             \
    do {                                                                                           \
        FOUR_PAIRS_(acc, in, f, 0, 1, 2, 3);                                                       \
        FOUR_PAIRS_(acc, in, f, 4, 5, 6, 7);                                                       \
    } while (0)
#define TAP_MULTIPLY_ADD_1(acc, in, f)                                                             \
    do {                                                                                           \
        FOUR_ONES_(acc, in, f, 0, 1, 2, 3);                                                        \
        FOUR_ONES_(acc, in, f, 4, 5, 6, 7);                                                        \
    } while (0)
#else
#define TAP_MULTIPLY_ADD_2(acc, in, f)                                                             \
    for (int o = 0; o < OCB; o++)                                                                  \
        for (int v = 0; v < 2; v++) acc[o][v] += f[o] * in[v]
#define TAP_MULTIPLY_ADD_1(acc, in, f)                                                             \
    for (int o = 0; o < OCB; o++) acc[o][0] += f[o] * in[0]
#endif

/* One chunk of a plane's run of pixels in one register block: OCB output channels. */
typedef struct {
    const real *in;    /* input channel 0's prepared copies, at the chunk's first pixel */
    const TapLayout *lay;
    int channels;      /* input channels summed */
    const real *filt;  /* the block's filters: [channel][tap][OCB] */
    real *out;         /* output channel 0 of the block, at the chunk */
    size_t out_plane;
    const real *bias;  /* OCB values, or NULL */
    int outputs;       /* the block's channels stored: OCB but in a first layer's data gradient */
    int accumulate;    /* add to out rather than overwrite it */
    int count;         /* the pixels stored of the last vector: VLEN but in a partial chunk */
} Chunk;

/* The kernel for NV vectors and TAPS taps a channel: the accumulators stay in registers for the
 * whole sum over channels and taps (OCB x NV of them). */
#define DIRECT_CHUNK_KERNEL(NAME, NV, TAPS)                                                        \
    static void NAME(const Chunk *k)                                                               \
    {                                                                                              \
        Vec acc[OCB][NV]; /* indexed by constants alone, so that it lives in registers */           \
        _Pragma("GCC unroll 8") for (int o = 0; o < OCB; o++)                                      \
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) acc[o][v] = (Vec){0};             \
        for (int c = 0; c < k->channels; c++) {                                                    \
            const real *x = k->in + c * k->lay->chan, *f = k->filt + (size_t)c * TAPS * OCB;       \
            _Pragma("GCC unroll 9") /* a rolled 3x3 loop ran its forward about 5% slower */         \
            for (int t = 0; t < TAPS; t++, f += OCB) {                                             \
                const real *p = x + k->lay->taps[t];                                               \
                Vec in[NV];                                                                        \
                for (int v = 0; v < NV; v++) load_vec(&in[v], p + v * VLEN);                       \
                TAP_MULTIPLY_ADD_##NV(acc, in, f);                                                 \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 8") for (int o = 0; o < OCB; o++)                                      \
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) {                                 \
                if (o >= k->outputs) break;                                                        \
                real *q = k->out + o * k->out_plane + v * VLEN;                                    \
                Vec r = acc[o][v], old;                                                            \
                if (k->bias) r += k->bias[o];                                                      \
                if (v < NV - 1 || k->count == VLEN) {                                              \
                    if (k->accumulate) {                                                           \
                        load_vec(&old, q);                                                         \
                        r += old;                                                                  \
                    }                                                                              \
                    memcpy(q, &r, sizeof r);                                                       \
                } else {                                                                           \
                    if (k->accumulate) {                                                           \
                        load_lanes(&old, q, k->count);                                             \
                        r += old;                                                                  \
                    }                                                                              \
                    store_lanes(q, &r, k->count);                                                  \
                }                                                                                  \
            }                                                                                      \
    }

DIRECT_CHUNK_KERNEL(chunk_two_3x3, 2, 9)
DIRECT_CHUNK_KERNEL(chunk_one_3x3, 1, 9)
DIRECT_CHUNK_KERNEL(chunk_two_5x5, 2, 25)
DIRECT_CHUNK_KERNEL(chunk_one_5x5, 1, 25)
DIRECT_CHUNK_KERNEL(chunk_two_4, 2, 4) /* a stride-2 data gradient's phases: 4, 2 and 1 taps */
DIRECT_CHUNK_KERNEL(chunk_one_4, 1, 4)
DIRECT_CHUNK_KERNEL(chunk_two_2, 2, 2)
DIRECT_CHUNK_KERNEL(chunk_one_2, 1, 2)
DIRECT_CHUNK_KERNEL(chunk_two_1, 2, 1)
DIRECT_CHUNK_KERNEL(chunk_one_1, 1, 1)

/* The kernels of one filter size: two vectors of pixels, and one. */
typedef struct {
    void (*two)(const Chunk *);
    void (*one)(const Chunk *);
} ChunkKernels;

static ChunkKernels chunk_kernels(int taps)
{
    switch (taps) {
    case 25: return (ChunkKernels){chunk_two_5x5, chunk_one_5x5};
    case 9: return (ChunkKernels){chunk_two_3x3, chunk_one_3x3};
    case 4: return (ChunkKernels){chunk_two_4, chunk_one_4};
    case 2: return (ChunkKernels){chunk_two_2, chunk_one_2};
    default: return (ChunkKernels){chunk_two_1, chunk_one_1};
    }
}

/* out (channels_out planes of `pixels`) = or += the convolution of the prepared input with the
 * arranged filters of lay->count taps, block by block, chunk by chunk along each plane's run
 * of pixels. */
void direct_convolve_image(const TapLayout *lay, const real *sx, int channels_in, const real *arranged,
                           int channels_out, int pixels, const real *bias, int accumulate, real *out)
{
    const ChunkKernels run = chunk_kernels(lay->count);
    Chunk k = {.lay = lay, .channels = channels_in, .out_plane = (size_t)pixels, .accumulate = accumulate};
    for (int ob = 0; ob < channels_out; ob += OCB) {
        k.filt = arranged + (size_t)ob * channels_in * lay->count;
        k.bias = bias ? bias + ob : NULL;
        k.outputs = channels_out - ob < OCB ? channels_out - ob : OCB;
        for (int p = 0; p < pixels;) {
            int left = pixels - p;
            k.in = sx + p;
            k.out = out + (size_t)ob * pixels + p;
            k.count = VLEN;
            if (left >= 2 * VLEN) {
                run.two(&k);
                p += 2 * VLEN;
            } else if (left > VLEN) {
                k.count = left - VLEN;
                run.two(&k);
                p = pixels;
            } else {
                k.count = left;
                run.one(&k);
                p = pixels;
            }
        }
    }
}

/* Forward filters as the kernels read them: [out block][in channel][tap][OCB]. */
static void arrange_forward(const ConvShape *s, const real *w, real *a)
{
    const int taps = s->k_h * s->k_w;
    for (int ob = 0; ob < s->out_c; ob += OCB)
        for (int c = 0; c < s->in_c; c++)
            for (int t = 0; t < taps; t++)
                for (int o = 0; o < OCB; o++)
                    a[(((size_t)ob * s->in_c + (size_t)c * OCB) * taps) + (size_t)t * OCB + o] =
                        w[((size_t)(ob + o) * s->in_c + c) * taps + t];
}

/* A data gradient's filters as the kernels read them, in and out channels swapped:
 * [in block][out channel][tap][OCB], tap t the filter's tap tap_index[t], the in channels past
 * a first layer's few padded with zero filters. */
static void arrange_transposed(const ConvShape *s, const real *w, const int *tap_index, int taps, real *a)
{
    const int filter = s->k_h * s->k_w;
    for (int ib = 0; ib < s->in_c; ib += OCB)
        for (int c = 0; c < s->out_c; c++)
            for (int t = 0; t < taps; t++)
                for (int i = 0; i < OCB; i++)
                    a[((size_t)ib * s->out_c + (size_t)c * OCB) * taps + (size_t)t * OCB + i] =
                        ib + i < s->in_c ? w[((size_t)c * s->in_c + ib + i) * filter + tap_index[t]] : 0;
}

/* Stride 1: every tap, each filter turned half a circle. */
static void arrange_backward(const ConvShape *s, const real *w, real *a)
{
    const int taps = s->k_h * s->k_w;
    int flipped[25];
    for (int t = 0; t < taps; t++) flipped[t] = taps - 1 - t;
    arrange_transposed(s, w, flipped, taps, a);
}

/* ---- The data gradient of a stride-2 layer, phase by phase ----
 * dx's pixels of row parity rp and column parity cp take the taps whose input has those
 * parities: rows rp = 0 from tap row 1 at dy's row i, rp = 1 from tap rows 0 (dy's row i + 1)
 * and 2 (row i); columns alike. Each phase is then a stride-1 convolution of dy with 1, 2 or 4
 * taps, whose result goes to every other row and column of dx. dy is prepared as two copies a
 * channel, as it is and moved left a column (zero in the last), each with a zero row below:
 * tap (ki, kj) reads copy kj == 0, (ki == 0) rows further on. */

static void prepare_dy(const ConvShape *s, const real *dy, real *d)
{
    const size_t copy = dy_copy_elems(s), pixels = (size_t)s->out_h * s->out_w;
    for (int c = 0; c < s->out_c; c++) {
        const real *plane = dy + c * pixels;
        real *same = d + 2 * c * copy, *moved = same + copy;
        copy_run(same, plane, pixels);
        copy_run(moved, plane + 1, pixels - 1);
        for (int r = 0; r < s->out_h; r++) moved[(size_t)r * s->out_w + s->out_w - 1] = 0;
        zero_run(same + pixels, s->out_w);
        zero_run(moved + pixels, s->out_w);
    }
    zero_run(d + 2 * s->out_c * copy, VLEN);
}

/* Phase (rp, cp)'s taps, and where each reads the prepared dy. */
static TapLayout phase_layout(const ConvShape *s, int rp, int cp, int tap_index[4])
{
    static const int rows[2][2] = {{1, -1}, {0, 2}}; /* tap rows (or columns) of each parity */
    TapLayout l = {.chan = 2 * dy_copy_elems(s)};
    for (int a = 0; a < 2 && rows[rp][a] >= 0; a++)
        for (int b = 0; b < 2 && rows[cp][b] >= 0; b++) {
            const int ki = rows[rp][a], kj = rows[cp][b];
            tap_index[l.count] = ki * 3 + kj;
            l.taps[l.count++] = (ptrdiff_t)((kj == 0) * dy_copy_elems(s) + (size_t)(ki == 0) * s->out_w);
        }
    return l;
}

/* x[2j] += in[j], or with !add x[2j] = in[j]: restrict and the stride spelled out let GCC move
 * them in vectors. */
static void to_even(real *restrict x, const real *restrict in, int count, bool add)
{
    if (add)
        for (int j = 0; j < count; j++) x[2 * j] += in[j];
    else
        for (int j = 0; j < count; j++) x[2 * j] = in[j];
}

static size_t padded_channels(int c) { return ((size_t)c + OCB - 1) / OCB * OCB; }

/* dx += (or with !accumulate =) the data gradient: the four phases cover every pixel of dx once. */
static void stride2_data_gradient(Backend *bk, const ConvShape *s, int n, const real *w, const real *dy, real *dx,
                                  bool accumulate)
{
    TapLayout lay[4];
    const real *filters[4];
    real *at = cpu_shared_workspace(bk);
    for (int p = 0; p < 4; p++) {
        int tap_index[4];
        lay[p] = phase_layout(s, p / 2, p % 2, tap_index);
        arrange_transposed(s, w, tap_index, lay[p].count, at);
        filters[p] = at;
        at += padded_channels(s->in_c) * s->out_c * lay[p].count;
    }
    const int OH = s->out_h, OW = s->out_w, pixels = OH * OW;
    const size_t dy_item = (size_t)s->out_c * pixels, dx_item = (size_t)s->in_c * s->in_h * s->in_w;
    CPU_FOR_T(bk, t, int, i, n, {
        real *phase = cpu_workspace(bk, t), *prepared = phase + (size_t)s->in_c * pixels;
        prepare_dy(s, dy + i * dy_item, prepared);
        for (int p = 0; p < 4; p++) {
            direct_convolve_image(&lay[p], prepared, s->out_c, filters[p], s->in_c, pixels, NULL, 0, phase);
            for (int c = 0; c < s->in_c; c++)
                for (int r = 0; r < OH; r++)
                    to_even(dx + i * dx_item + ((size_t)c * s->in_h + 2 * r + p / 2) * s->in_w + p % 2,
                            phase + ((size_t)c * OH + r) * OW, OW, accumulate);
        }
    });
}

/* A shortcut's data gradient: dx's even rows and columns take the one-tap convolution of dy
 * with the filters transposed, the rest of dx nothing (zeros, without accumulate). Where dy's
 * planes are not whole vectors it is copied with zeros after it, which a partial chunk's last
 * lanes read; else it is read where it lies. */
static void shortcut_data_gradient(Backend *bk, const ConvShape *s, int n, const real *w, const real *dy, real *dx,
                                   bool accumulate)
{
    real *arranged = cpu_shared_workspace(bk);
    const int tap = 0, pixels = s->out_h * s->out_w;
    arrange_transposed(s, w, &tap, 1, arranged);
    const TapLayout lay = {.chan = (size_t)pixels, .count = 1};
    const size_t dy_item = (size_t)s->out_c * pixels, dx_item = (size_t)s->in_c * s->in_h * s->in_w;
    const bool whole = dy_padded_already(s);
    CPU_FOR_T(bk, t, int, i, n, {
        real *phase = cpu_workspace(bk, t), *copy = phase + (size_t)s->in_c * pixels, *x = dx + i * dx_item;
        const real *d = dy + i * dy_item;
        if (!whole) {
            copy_run(copy, d, dy_item);
            zero_run(copy + dy_item, VLEN);
            d = copy;
        }
        direct_convolve_image(&lay, d, s->out_c, arranged, s->in_c, pixels, NULL, 0, phase);
        if (!accumulate) zero_run(x, dx_item);
        for (int c = 0; c < s->in_c; c++)
            for (int r = 0; r < s->out_h; r++)
                to_even(x + ((size_t)c * s->in_h + 2 * r) * s->in_w, phase + ((size_t)c * s->out_h + r) * s->out_w,
                        s->out_w, true);
    });
}

/* For each of n images: its input prepared in the thread's workspace, then convolved with the
 * arranged filters into (or added to) its output: the forward pass, and (with the shape of
 * data_gradient_shape) the data gradient. */
static void convolve_batch(Backend *bk, const ConvShape *s, int n, const real *src, const real *arranged,
                           const real *bias, int accumulate, real *dst)
{
    const size_t src_item = (size_t)s->in_c * s->in_h * s->in_w, dst_item = (size_t)s->out_c * s->out_h * s->out_w;
    const TapLayout lay = direct_input_layout(s);
    CPU_FOR_T(bk, t, int, i, n, {
        real *prepared = cpu_workspace(bk, t);
        direct_prepare_input(s, s->in_c, src + i * src_item, prepared);
        direct_convolve_image(&lay, prepared, s->in_c, arranged, s->out_c, s->out_h * s->out_w, bias, accumulate,
                       dst + i * dst_item);
    });
}

void direct_conv_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                         real *y)
{
    BK_GUARD(bk);
    real *arranged = cpu_shared_workspace(bk);
    arrange_forward(s, w, arranged);
    convolve_batch(bk, s, n, x, arranged, b, 0, y);
}

/* One group of images, as the weight-gradient kernel reads it. */
typedef struct {
    const real *sx;        /* the group's prepared input: [channel from ic_base][image][copies] */
    const TapLayout *lay;
    int ic_base;           /* the first input channel in sx */
    const real *dy;        /* the group's dy, each plane padded with zeros to whole vectors */
    size_t dy_item, plane; /* out_c padded planes; one */
    int images, in_c;
} DwGroup;

/* Keeps v in a register: without it the compiler folds the load into each multiply-add that
 * uses it, and the unaligned loads, not the multiply-adds, set the pace. Only where a Vec is
 * one register: float vectors with AVX (a double-precision Vec with AVX-512 is two). */
#if defined(__x86_64__) && defined(__AVX__) && !defined(BB_DOUBLE)
#define IN_REGISTER(v) __asm__("" : "+v"(v))
#else
#define IN_REGISTER(v) (void)0
#endif

/* lanes (a vector per [out][in][tap]) += (or, for the batch's first group, =)
 * the gradient of OC output channels from oc and input channel ic over the group, in tap rows
 * row .. row + ROWS - 1 of a K x K filter: OC x ROWS x K vector sums held in registers
 * meanwhile. Their lanes are added up once, after the batch's last group (add_lane_totals). */
#define DW_KERNEL(NAME, OC, K, ROWS)                                                               \
    static void NAME(const DwGroup *g, int oc, int ic, int row, int first, real *lanes)            \
    {                                                                                              \
        Vec acc[OC][ROWS * K];                                                                     \
        real *at[OC];                                                                              \
        for (int o = 0; o < OC; o++)                                                               \
            at[o] = lanes + (((size_t)(oc + o) * g->in_c + ic) * K * K + (size_t)row * K) * VLEN;  \
        if (first)                                                                                 \
            memset(acc, 0, sizeof acc);                                                            \
        else                                                                                       \
            for (int o = 0; o < OC; o++)                                                           \
                for (int t = 0; t < ROWS * K; t++) load_vec(&acc[o][t], at[o] + t * VLEN);         \
        for (int i = 0; i < g->images; i++) {                                                      \
            const real *x = g->sx + ((size_t)(ic - g->ic_base) * g->images + i) * g->lay->chan;     \
            const real *d = g->dy + i * g->dy_item + oc * g->plane;                                \
            for (size_t p = 0; p < g->plane; p += VLEN) {                                          \
                Vec dy[OC], in;                                                                    \
                _Pragma("GCC unroll 8") for (int o = 0; o < OC; o++) load_vec(&dy[o], d + o * g->plane + p); \
                for (int kh = 0; kh < ROWS; kh++)                                                  \
                    for (int kw = 0; kw < K; kw++) {                                               \
                        load_vec(&in, x + g->lay->taps[(row + kh) * K + kw] + p);                  \
                        IN_REGISTER(in);                                                           \
                        for (int o = 0; o < OC; o++) acc[o][kh * K + kw] += dy[o] * in;            \
                    }                                                                              \
            }                                                                                      \
        }                                                                                          \
        for (int o = 0; o < OC; o++)                                                               \
            for (int t = 0; t < ROWS * K; t++) memcpy(at[o] + t * VLEN, &acc[o][t], sizeof(Vec));  \
    }

DW_KERNEL(dw_3x3_pair, 2, 3, 3)
DW_KERNEL(dw_5x5_quad_row, 4, 5, 1)

/* A 3x3 filter's 2 x 9 sums for two output channels fit the registers at once. A 5x5 filter
 * goes a tap row at a time for four output channels (20 sums): each input vector then feeds
 * four multiply-adds, and each pass reads dy again, from cache. */
static int dw_channels(int k) { return k == 3 ? 2 : 4; }

static void dw_block(int k, const DwGroup *g, int oc, int ic, int first, real *lanes)
{
    if (k == 3) {
        dw_3x3_pair(g, oc, ic, 0, first, lanes);
        return;
    }
    for (int row = 0; row < 5; row++) dw_5x5_quad_row(g, oc, ic, row, first, lanes);
}

/* dst[j] += the sum of the lanes of vector j, added in lane order. */
static void add_lane_totals(size_t count, const real *v, real *dst)
{
    for (size_t j = 0; j < count; j++) {
        real sum = 0;
        for (int l = 0; l < VLEN; l++) sum += v[j * VLEN + l];
        dst[j] += sum;
    }
}

/* dy with each plane padded with zeros to whole vectors, image by image. */
static void pad_planes(Backend *bk, const ConvShape *s, int n, const real *dy, real *dyp)
{
    const size_t pixels = (size_t)s->out_h * s->out_w, plane = padded_pixels(s);
    CPU_FOR(bk, int, i, n, {
        for (int c = 0; c < s->out_c; c++) {
            real *d = dyp + ((size_t)i * s->out_c + c) * plane;
            copy_run(d, dy + ((size_t)i * s->out_c + c) * pixels, pixels);
            zero_run(d + pixels, plane - pixels);
        }
    });
}

/* dw's output channel oc += its lane sums added over the image chunks in chunk order, then
 * their lanes in lane order. The first chunk's sums take the total. */
static void add_chunk_totals(const ConvShape *s, int chunks, int oc, real *lanes, real *dw)
{
    const size_t w_elems = direct_weight_elems(s), per_oc = (size_t)s->in_c * s->k_h * s->k_w;
    real *first = lanes + oc * per_oc * VLEN;
    for (int c = 1; c < chunks; c++) {
        const real *more = first + c * w_elems * VLEN;
        for (size_t j = 0; j < per_oc * VLEN; j++) first[j] += more[j];
    }
    add_lane_totals(per_oc, first, dw + oc * per_oc);
}

typedef struct {
    const ConvShape *s;
    int n, chunks, chunk; /* image chunks (dw_image_chunks); input channels a task */
    int oc_step;         /* output channels a task */
    DwGroup shape;
    const real *x;
    real *lanes;
} WeightGradient;

/* Task `task`: input channels [ic0, ic0 + chunk) and output channels [oc0, oc1) over every
 * group of the images of one image chunk in order, into that chunk's lane sums (added up into
 * dw once every task has run: add_chunk_totals). */
static void weight_gradient_channels(const WeightGradient *a, int task, real *sx)
{
    const ConvShape *s = a->s;
    const int oc_parts = (s->out_c + a->oc_step - 1) / a->oc_step, per_chunk = s->in_c / a->chunk * oc_parts;
    const int part = task % per_chunk, image_chunk = task / per_chunk;
    const int k = s->k_h, ic0 = part / oc_parts * a->chunk, oc0 = part % oc_parts * a->oc_step;
    const int oc1 = oc0 + a->oc_step < s->out_c ? oc0 + a->oc_step : s->out_c;
    const int n0 = direct_chunk_first(a->n, a->chunks, image_chunk);
    const int n1 = direct_chunk_first(a->n, a->chunks, image_chunk + 1);
    const int group = dw_even_group(s, n1 - n0);
    real *lanes = a->lanes + image_chunk * direct_weight_elems(s) * VLEN;
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, plane = (size_t)s->in_h * s->in_w;
    for (int first = n0; first < n1; first += group) {
        DwGroup g = a->shape;
        g.images = n1 - first < group ? n1 - first : group;
        g.sx = sx;
        g.ic_base = ic0;
        g.dy = a->shape.dy + first * a->shape.dy_item;
        /* channel by channel, so that one channel's copies over the group are one stretch of
         * memory: an image's copies a multiple of 4 KiB apart (64 channels of 8x8) fell into the
         * same few L1 sets, and the kernel read them from L2 */
        for (int c = 0; c < a->chunk; c++)
            for (int i = 0; i < g.images; i++)
                direct_prepare_input(s, 1, a->x + (first + i) * in_item + (ic0 + c) * plane,
                              sx + ((size_t)c * g.images + i) * g.lay->chan);
        /* one input channel's shifted planes stay in cache while dy's channels pass by */
        for (int ic = ic0; ic < ic0 + a->chunk; ic++)
            for (int oc = oc0; oc < oc1; oc += dw_channels(k)) dw_block(k, &g, oc, ic, first == n0, lanes);
    }
}

/* Input channels per task: all of them on one thread; else about four tasks a thread, counting
 * the image chunks' (so that a faster core can take more of them), each task of a chunk
 * reading its dy once more. */
static int dw_chunk(const ConvShape *s, int threads, int image_chunks)
{
    if (threads <= 1) return s->in_c;
    int chunk = s->in_c * image_chunks / (4 * threads);
    if (chunk > s->in_c) chunk = s->in_c;
    if (chunk < 1) chunk = 1;
    while (s->in_c % chunk) chunk--;
    return chunk;
}

/* Output channels per task: all of them, but where a first layer's few input channels (times
 * the image chunks) make fewer than four tasks a thread, the output channels are split too (3
 * tasks on 2 threads left one idle for a third of the time), each part shifting its images'
 * input once more. */
static int dw_oc_step(const ConvShape *s, int threads, int chunk, int image_chunks)
{
    const int ic_tasks = s->in_c / chunk * image_chunks, want = 4 * threads, unit = dw_channels(s->k_h);
    if (threads <= 1 || ic_tasks >= want) return s->out_c;
    const int parts = (want + ic_tasks - 1) / ic_tasks, step = (s->out_c + parts - 1) / parts;
    return (step + unit - 1) / unit * unit;
}

static void weight_gradient(Backend *bk, const ConvShape *s, int n, const real *x, const real *dy, real *dw)
{
    if (n <= 0) return;
    if (direct_outer_gradient_applies(s)) {
        outer_weight_gradient(bk, s, n, x, dy, dw);
        return;
    }
    const int chunks = dw_image_chunks(s, n), chunk = dw_chunk(s, bk->threads, chunks);
    const size_t w_elems = direct_weight_elems(s);
    real *lanes = cpu_shared_workspace(bk), *dyp = lanes + w_elems * VLEN * chunks;
    if (!dy_padded_already(s)) {
        pad_planes(bk, s, n, dy, dyp);
        dy = dyp;
    }
    const int oc_step = dw_oc_step(s, bk->threads, chunk, chunks);
    const int tasks = s->in_c / chunk * ((s->out_c + oc_step - 1) / oc_step) * chunks;
    const TapLayout lay = direct_input_layout(s);
    const WeightGradient a = {s, n, chunks, chunk, oc_step,
                              {.lay = &lay, .dy = dy,
                               .dy_item = (size_t)s->out_c * padded_pixels(s), .plane = padded_pixels(s),
                               .in_c = s->in_c},
                              x, lanes};
    CPU_FOR_T(bk, t, int, task, tasks, { weight_gradient_channels(&a, task, cpu_workspace(bk, t)); });
    CPU_FOR(bk, int, oc, s->out_c, { add_chunk_totals(s, chunks, oc, lanes, dw); });
}

/* dw += the weight gradient; dx (may be NULL) += the data gradient, or with !accumulate
 * dx = that (written, not read: no pass to zero it first). */
void direct_conv_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                          real *dx, bool accumulate, real *dw)
{
    BK_GUARD(bk);
    weight_gradient(bk, s, n, x, dy, dw);
    if (!dx) return;
    if (s->k_h == 1) {
        shortcut_data_gradient(bk, s, n, w, dy, dx, accumulate);
        return;
    }
    if (s->stride == 2) {
        stride2_data_gradient(bk, s, n, w, dy, dx, accumulate);
        return;
    }
    real *arranged = cpu_shared_workspace(bk);
    arrange_backward(s, w, arranged);
    const ConvShape ds = data_gradient_shape(s);
    convolve_batch(bk, &ds, n, dy, arranged, NULL, accumulate, dx);
}
