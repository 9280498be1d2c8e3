/* conv_im2col.c: the reference convolution, im2col + gemm, and its pieces that other paths
 * reuse (conv_batched.c's columns). A leaf: what it declares calls no other convolution file.
 * Internal to engine/cpu. */
#ifndef BB_CPU_CONV_IM2COL_H
#define BB_CPU_CONV_IM2COL_H
#include "cpu.h"

Workspace conv_im2col_workspace(const ConvShape *s, size_t weight_elems, int batch);
void conv_im2col_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *b, real *y);
/* dw += the weight gradient, dx (may be NULL) += the data gradient */
void conv_im2col_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *dy, real *dx, real *dw);
void conv_add_partials(Backend *bk, const real *partials, int count, size_t elems, real *dst);
/* A 1x1 layer with stride 1 and no padding: its input already is its im2col matrix. */
static inline int conv_is_pointwise(const ConvShape *s)
{
    return s->k_h == 1 && s->k_w == 1 && s->stride == 1 && s->pad == 0;
}
/* col's rows (ld apart) = x's values under each filter tap, one column an output pixel; and back,
 * added into dx */
void conv_im2col(const ConvShape *s, int channels, const real *x, real *col, size_t ld);
void conv_col2im_add(const ConvShape *s, int channels, const real *col, size_t ld, real *dx);

#endif
