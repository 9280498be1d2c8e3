/* The direct convolution's input as its kernels read it (conv_direct.h's TapLayout): a stride-1
 * plane as k shifted copies, a stride-2 one as its phases, a 1x1 stride-2 shortcut's as its
 * even pixels; and which layers are such shortcuts. A leaf that conv_direct.c (the path) and
 * conv_direct_outer.c (its weight gradient by outer products) both call, so that neither calls
 * the other back. */
#include "conv_direct.h"

/* 1x1, stride 2, no padding (ResNet's downsampling shortcuts): the output reads the input's even
 * rows and columns alone. Input channels in eights and output channels in 2 * VLEN's, for the
 * weight gradient by outer products (8 input channels at a time). In im2col's gemms of 16-32
 * rows these layers ran at 40-60 GFLOP/s. */
int direct_shortcut_applies(const ConvShape *s)
{
    return s->stride == 2 && s->k_h == 1 && s->pad == 0 && s->out_h == (s->in_h + 1) / 2 &&
           s->out_w == (s->in_w + 1) / 2 && s->in_c % OCB == 0 && s->out_c % (2 * VLEN) == 0;
}

/* One shifted copy of an h x w plane for a k x k filter: k / 2 zero rows above and below. */
static size_t copy_elems(int k, int h, int w) { return (size_t)(h + k - 1) * w; }

/* A plane's k shifted copies: copy kw, row r (0 .. h + k - 2), column c holds the input at
 * row r - k/2, column c + kw - k/2, or zero outside the image. An image's copies are followed
 * by VLEN zeros, which a partial chunk's last lanes read. */
static size_t shifted_elems(int k, int h, int w) { return (size_t)k * copy_elems(k, h, w); }

/* Copy kw is the plane moved by d = kw - k/2 places along its run of pixels: one long copy
 * between zeros, then the d columns that wrapped round from the next (or previous) row are
 * zeroed in every row. */
static void shift_image(int k, int channels, int h, int w, const real *x, real *sx)
{
    const int pad = k / 2;
    const size_t copy = copy_elems(k, h, w), pixels = (size_t)h * w;
    for (int c = 0; c < channels; c++) {
        const real *plane = x + c * pixels;
        for (int kw = 0; kw < k; kw++) {
            const int d = kw - pad;
            const size_t start = (size_t)pad * w - d; /* where the plane's first value lands */
            real *dst = sx + ((size_t)c * k + kw) * copy;
            zero_run(dst, start);
            copy_run(dst + start, plane, pixels);
            zero_run(dst + start + pixels, copy - start - pixels);
            const int from = d > 0 ? w - d : 0, to = d > 0 ? w : -d;
            /* column by column: row by row, GCC made each row's one or two values a memset call */
            for (int j = from; j < to; j++)
                for (int r = 0; r < h + k - 1; r++) dst[(size_t)r * w + j] = 0;
        }
    }
    zero_run(sx + channels * shifted_elems(k, h, w), VLEN);
}

/* Stride 2 reads an input plane as its phases: even or odd rows, even or odd columns, each a
 * plane of the output's size. A tap reads one of six copies, each of a phase with a zero row
 * above (for the row above the image) and the odd-column phases also moved a column right
 * (for the column left of it): copy rp * 3 + ci holds row phase rp and, by ci, the even
 * columns, the odd ones moved right, the odd ones. Tap (ki, kj) of output pixel (oh, ow) is
 * then row oh + (ki > 0), column ow of copy (ki != 1) * 3 + {1, 0, 2}[kj]: one run of pixels
 * across row ends, as in the stride-1 copies, with 1.5 times the input copied, not 3. */
enum { PHASE_COPIES = 6 };
static size_t phase_copy_elems(const ConvShape *s) { return (size_t)(s->out_h + 1) * s->out_w; }

/* out[j] = x[2j]: restrict and the stride spelled out let GCC move them in vectors. */
static void take_even(real *restrict out, const real *restrict x, int count)
{
    for (int j = 0; j < count; j++) out[j] = x[2 * j];
}

static void phase_image(const ConvShape *s, int channels, const real *x, real *sx)
{
    const int W = s->in_w, OH = s->out_h, OW = s->out_w;
    const size_t copy = phase_copy_elems(s), chan = copy * PHASE_COPIES, plane = (size_t)s->in_h * W;
    for (int c = 0; c < channels; c++)
        for (int j = 0; j < PHASE_COPIES; j++) {
            const int rp = j / 3, cp = j % 3 > 0, moved = j % 3 == 1;
            real *d = sx + c * chan + j * copy;
            zero_run(d, OW);
            for (int r = 0; r < OH; r++) {
                real *o = d + (size_t)(r + 1) * OW;
                const real *src = x + c * plane + (size_t)(2 * r + rp) * W + cp;
                /* a moved row takes all OW values too, in vectors: its last lands on the next
                 * row's first, zeroed next (or on the next copy's, or the slack, zeroed later) */
                take_even(o + moved, src, OW);
                if (moved) o[0] = 0;
            }
        }
    zero_run(sx + channels * chan, VLEN);
}

/* A shortcut's input: each channel's even rows and columns, one plane of the output's size. */
static void even_image(const ConvShape *s, int channels, const real *x, real *sx)
{
    const size_t plane = (size_t)s->in_h * s->in_w, pixels = (size_t)s->out_h * s->out_w;
    for (int c = 0; c < channels; c++)
        for (int r = 0; r < s->out_h; r++)
            take_even(sx + c * pixels + (size_t)r * s->out_w, x + c * plane + (size_t)2 * r * s->in_w, s->out_w);
    zero_run(sx + channels * pixels, VLEN);
}

TapLayout direct_input_layout(const ConvShape *s)
{
    const int k = s->k_h;
    TapLayout l = {.count = k * k};
    if (k == 1) { /* a shortcut: its one plane */
        l.chan = (size_t)s->out_h * s->out_w;
        return l;
    }
    if (s->stride == 2) {
        const size_t copy = phase_copy_elems(s);
        static const int column_copy[3] = {1, 0, 2};
        l.chan = copy * PHASE_COPIES;
        for (int ki = 0; ki < 3; ki++)
            for (int kj = 0; kj < 3; kj++)
                l.taps[ki * 3 + kj] =
                    (ptrdiff_t)(((ki != 1) * 3 + column_copy[kj]) * copy + (size_t)(ki > 0) * s->out_w);
        return l;
    }
    const size_t copy = copy_elems(k, s->in_h, s->in_w);
    l.chan = shifted_elems(k, s->in_h, s->in_w);
    for (int kh = 0; kh < k; kh++)
        for (int kw = 0; kw < k; kw++) l.taps[kh * k + kw] = (ptrdiff_t)(kw * copy + (size_t)kh * s->in_w);
    return l;
}

/* An image's `channels` input planes (from the first of x) as the kernels read them. */
void direct_prepare_input(const ConvShape *s, int channels, const real *x, real *sx)
{
    if (s->k_h == 1)
        even_image(s, channels, x, sx);
    else if (s->stride == 2)
        phase_image(s, channels, x, sx);
    else
        shift_image(s->k_h, channels, s->in_h, s->in_w, x, sx);
}
