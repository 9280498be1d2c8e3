/* --precision bf16 / fp16 on the CPU: the products (convolutions, fully connected layers) run
 * the fp32 code on rounded copies, at the points where a GPU's mixed precision holds bf16 /
 * fp16 tensors (PyTorch autocast): the input, the weights (the working copy of the fp32 master)
 * and the bias going in, the output coming out; in backward the incoming gradient, and the
 * outgoing ones: the input's gradient is a bf16/fp16 tensor (added to one already there in that
 * precision), the weights' and bias's are bf16/fp16 before they are added to the fp32
 * gradients the optimizer reads. Products accumulate in fp32, as tensor cores do. Everything
 * else (batch norm, the loss, the optimizer) stays fp32. Slow (copies of every operand), and
 * exact to the emulated rounding: what it is for is testing the logic around it. The backend's
 * conv2d and linear operations choose between this and the fp32 code (at the end). */
#include <string.h>

#include "cpu.h"
#include "guard.h"
#include "round_lowp.h"

/* At least `elems` of the emulation's scratch, kept in the backend's state: the next call of
 * the same layer finds it large enough. */
static real *lowp_scratch(Backend *bk, size_t elems)
{
    CpuState *cs = bk->impl;
    if (elems > cs->lowp_elems) {
        cpu_workspace_grow(&cs->lowp, elems);
        cs->lowp_elems = elems;
    }
    return cs->lowp;
}

static real round_to(BkPrecision p, real v)
{
    return (real)(p == BK_PRECISION_BF16 ? round_bf16((float)v) : round_fp16((float)v));
}

/* How a rounded source meets its destination. */
typedef enum {
    ROUND_COPY,      /* dst = r(src) */
    ROUND_INTO_FP32, /* dst += r(src): a gradient into the fp32 master's */
    ROUND_INTO_LOWP  /* dst = r(dst + r(src)): into a gradient held in low precision */
} RoundMode;

typedef struct {
    BkPrecision p;
    RoundMode mode;
    size_t n;
    const real *src;
    real *dst;
} RoundArgs;

static void round_share(void *ctx, int t, int T)
{
    const RoundArgs *a = ctx;
    size_t from, to;
    cpu_share(a->n, t, T, &from, &to);
    for (size_t i = from; i < to; i++) {
        real v = round_to(a->p, a->src[i]);
        if (a->mode == ROUND_INTO_FP32) v += a->dst[i];
        else if (a->mode == ROUND_INTO_LOWP) v = round_to(a->p, v + a->dst[i]);
        a->dst[i] = v;
    }
}

static void round_array(Backend *bk, RoundMode mode, size_t n, const real *src, real *dst)
{
    RoundArgs a = {((CpuState *)bk->impl)->precision, mode, n, src, dst};
    cpu_run(n >= CPU_PARALLEL_MIN ? bk->threads : 1, round_share, &a);
}

/* The scratch cut into parts of the given sizes (0: none, NULL), each a cache line aligned. */
enum { LOWP_PARTS_MAX = 6, LOWP_ALIGN = 64 / sizeof(real) };

static void scratch_parts(Backend *bk, int k, const size_t *sizes, real **parts)
{
    size_t total = 0;
    for (int i = 0; i < k; i++) total += (sizes[i] + LOWP_ALIGN - 1) / LOWP_ALIGN * LOWP_ALIGN;
    real *at = lowp_scratch(bk, total ? total : 1);
    for (int i = 0; i < k; i++) {
        parts[i] = sizes[i] ? at : NULL;
        at += (sizes[i] + LOWP_ALIGN - 1) / LOWP_ALIGN * LOWP_ALIGN;
    }
}

/* Rounded copies of the operands a product reads; NULL in, NULL out. */
static void round_operands(Backend *bk, int k, const size_t *sizes, const real *const *src, real **copies)
{
    scratch_parts(bk, k, sizes, copies);
    for (int i = 0; i < k; i++) {
        if (!copies[i]) continue;
        if (src[i]) round_array(bk, ROUND_COPY, sizes[i], src[i], copies[i]);
        else memset(copies[i], 0, sizes[i] * sizeof(real)); /* a gradient the product adds into */
    }
}

static size_t conv_in_elems(const ConvShape *s, int n) { return (size_t)n * s->in_c * s->in_h * s->in_w; }
static size_t conv_out_elems(const ConvShape *s, int n) { return (size_t)n * s->out_c * s->out_h * s->out_w; }
static size_t conv_w_elems(const ConvShape *s)
{
    return (size_t)s->out_c * (s->in_c / s->groups) * s->k_h * s->k_w;
}

void lowp_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b,
                         real *y)
{
    BK_GUARD(bk);
    const size_t sizes[3] = {conv_in_elems(s, n), conv_w_elems(s), b ? (size_t)s->out_c : 0};
    const real *src[3] = {x, w, b};
    real *c[3];
    round_operands(bk, 3, sizes, src, c);
    conv_forward_fp32(bk, s, n, c[0], c[1], c[2], y);
    round_array(bk, ROUND_COPY, conv_out_elems(s, n), y, y);
}

void lowp_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                          real *dx, bool accumulate, real *dw, real *db)
{
    BK_GUARD(bk);
    const size_t nx = conv_in_elems(s, n), nw = conv_w_elems(s), nb = db ? (size_t)s->out_c : 0;
    /* x, w, dy rounded; then the product's own dx (written, not added), dw and db (added into zeros) */
    const size_t sizes[LOWP_PARTS_MAX] = {nx, nw, conv_out_elems(s, n), dx ? nx : 0, nw, nb};
    const real *src[LOWP_PARTS_MAX] = {x, w, dy, NULL, NULL, NULL};
    real *c[LOWP_PARTS_MAX];
    round_operands(bk, LOWP_PARTS_MAX, sizes, src, c);
    conv_backward_fp32(bk, s, n, c[0], c[1], c[2], c[3], false, c[4], c[5]);
    if (dx) round_array(bk, accumulate ? ROUND_INTO_LOWP : ROUND_COPY, nx, c[3], dx);
    round_array(bk, ROUND_INTO_FP32, nw, c[4], dw);
    if (db) round_array(bk, ROUND_INTO_FP32, nb, c[5], db);
}

void lowp_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *b, real *y)
{
    BK_GUARD(bk);
    const size_t sizes[3] = {(size_t)n * in, (size_t)out * in, b ? (size_t)out : 0};
    const real *src[3] = {x, w, b};
    real *c[3];
    round_operands(bk, 3, sizes, src, c);
    linear_forward_fp32(bk, n, in, out, c[0], c[1], c[2], y);
    round_array(bk, ROUND_COPY, (size_t)n * out, y, y);
}

void lowp_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w, const real *dy,
                          real *dx, real *dw, real *db)
{
    BK_GUARD(bk);
    const size_t nx = (size_t)n * in, nw = (size_t)out * in, nb = db ? (size_t)out : 0;
    const size_t sizes[LOWP_PARTS_MAX] = {nx, nw, (size_t)n * out, dx ? nx : 0, nw, nb};
    const real *src[LOWP_PARTS_MAX] = {x, w, dy, NULL, NULL, NULL};
    real *c[LOWP_PARTS_MAX];
    round_operands(bk, LOWP_PARTS_MAX, sizes, src, c);
    linear_backward_fp32(bk, n, in, out, c[0], c[1], c[2], c[3], c[4], c[5]);
    if (dx) round_array(bk, ROUND_INTO_LOWP, nx, c[3], dx); /* the layer adds into dx */
    round_array(bk, ROUND_INTO_FP32, nw, c[4], dw);
    if (db) round_array(bk, ROUND_INTO_FP32, nb, c[5], db);
}

/* The backend's products (its conv2d and linear operations): the fp32 code, or the emulation
 * around it. They live here, above conv.c's dispatcher and linear.c, so that neither of those
 * calls back into this file. */
void cpu_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                        const real *b, real *y)
{
    if (cpu_low_precision(bk)) lowp_conv2d_forward(bk, s, n, x, w, b, y);
    else conv_forward_fp32(bk, s, n, x, w, b, y);
}

void cpu_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *dy, real *dx, bool accumulate, real *dw, real *db)
{
    if (cpu_low_precision(bk)) lowp_conv2d_backward(bk, s, n, x, w, dy, dx, accumulate, dw, db);
    else conv_backward_fp32(bk, s, n, x, w, dy, dx, accumulate, dw, db);
}

void cpu_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                       const real *b, real *y)
{
    if (cpu_low_precision(bk)) lowp_linear_forward(bk, n, in, out, x, w, b, y);
    else linear_forward_fp32(bk, n, in, out, x, w, b, y);
}

void cpu_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                        const real *dy, real *dx, real *dw, real *db)
{
    if (cpu_low_precision(bk)) lowp_linear_backward(bk, n, in, out, x, w, dy, dx, dw, db);
    else linear_backward_fp32(bk, n, in, out, x, w, dy, dx, dw, db);
}
