/* The direct convolution's pieces shared by its files: the vectors, where an image's prepared
 * input lies under each tap and the preparing (conv_direct_input.c, a leaf both others call),
 * and the weight gradient by outer products (conv_direct_outer.c), which conv_direct.c calls
 * for the layers it applies to. Internal to engine/cpu. */
#ifndef BB_CPU_CONV_DIRECT_H
#define BB_CPU_CONV_DIRECT_H
#include <stddef.h>
#include <string.h>

#include "cpu.h"

/* Output channels per register block; the vector width: 16 floats with AVX-512, else 8. */
enum { OCB = 8, DIRECT_MAX_CHANNELS = 128 };
#ifdef __AVX512F__
enum { VLEN = 16 };
#else
enum { VLEN = 8 };
#endif
typedef real Vec __attribute__((vector_size(VLEN * sizeof(real))));

/* Vectors move through pointers, never by value across a call: without AVX enabled (the
 * fuzzing build) a 32- or 64-byte vector argument has a different ABI, and compilers warn. */
static inline void load_vec(Vec *v, const real *p) { memcpy(v, p, sizeof *v); }

/* A run of floats zeroed, and one copied, in loops GCC vectorizes in place: as calls to memset
 * and memcpy (which GCC makes of such loops unless told not to), the few rows zeroed around
 * each copy of a plane cost more in calls than in stores. (Clang, which builds the fuzzers,
 * has no such switch; there the calls stay.) */
#if defined(__GNUC__) && !defined(__clang__)
#define KEEP_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define KEEP_LOOP
#endif

KEEP_LOOP static inline void zero_run(real *restrict p, size_t n)
{
    for (size_t j = 0; j < n; j++) p[j] = 0;
}

KEEP_LOOP static inline void copy_run(real *restrict d, const real *restrict s, size_t n)
{
    for (size_t j = 0; j < n; j++) d[j] = s[j];
}


/* Where a channel's input under each tap lies for a run of output pixels: tap t of output pixel
 * p reads in + c * chan + taps[t] + p, `in` an image's prepared copies (prepare_input). */
typedef struct {
    size_t chan;
    int count; /* taps a channel */
    ptrdiff_t taps[25];
} TapLayout;

/* conv_direct_input.c: the layout of an image's prepared input, and the preparing; whether a
 * layer is a 1x1 stride-2 shortcut */
TapLayout direct_input_layout(const ConvShape *s);
void direct_prepare_input(const ConvShape *s, int channels, const real *x, real *sx);
int direct_shortcut_applies(const ConvShape *s);

/* out (channels_out planes of `pixels`) = or += the convolution of an image's prepared input sx
 * (lay->count taps a channel) with filters arranged [out block of OCB][in channel][tap][OCB],
 * in register blocks of OCB output channels by two vectors of pixels. */
void direct_convolve_image(const TapLayout *lay, const real *sx, int channels_in, const real *arranged,
                           int channels_out, int pixels, const real *bias, int accumulate, real *out);

/* A weight gradient over image chunks has this many whatever the threads (fewer images, fewer). */
enum { DW_CHUNKS = 8 };

/* The chunks of a batch of n images: DW_CHUNKS, or one an image in smaller batches. */
static inline int direct_image_chunks(int n) { return n < DW_CHUNKS ? (n > 0 ? n : 1) : DW_CHUNKS; }

/* The first image of chunk `chunk` of `chunks` over n images (chunk `chunks`: n). */
static inline int direct_chunk_first(int n, int chunks, int chunk) { return (int)((long)chunk * n / chunks); }

/* A layer's weights: out x in x k x k. */
static inline size_t direct_weight_elems(const ConvShape *s) { return (size_t)s->out_c * s->in_c * s->k_h * s->k_w; }

/* conv_direct_outer.c: its workspace per thread (shared: the weights times the image chunks) and
 * dw += the weight gradient, for the layers direct_outer_gradient_applies accepts */
size_t outer_gradient_scratch(const ConvShape *s);
void outer_weight_gradient(Backend *bk, const ConvShape *s, int n, const real *x, const real *dy, real *dw);

#endif
