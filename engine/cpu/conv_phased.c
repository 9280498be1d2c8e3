/* A strided convolution whose filter spans three strides (BVLC AlexNet's conv1: 11x11, stride 4)
 * as a stride-1 3x3 convolution of its input's phases, which conv_winograd.c's F(2x2, 3x3) then
 * takes. With P the stride and xp the padded input,
 *   x'[(c P + a) P + b][i][j]    = xp[c][i P + a][j P + b]
 *   w'[o][(c P + a) P + b][u][v] = w[o][c][u P + a][v P + b]   (zero past the filter)
 * give y[o][i][j] = sum w'[o][.][u][v] x'[.][i + u][j + v]: every tap of the filter once, and
 * the zero taps that pad it to 3P x 3P. AlexNet's conv1 becomes 48 -> 96 channels on 57x57
 * planes: 144 taps for 121, at 16 multiplies per 2x2 outputs for 36. The images go through in
 * passes of PASS_IMAGES, their phases and the phases' gradient in the shared workspace after
 * Winograd's own; the weight gradient goes back to the filter's taps once, after the last pass.
 * Tested against im2col by tests/test_conv_paths.c. */
#include <string.h>

#include "cpu.h"
#include "guard.h"

enum { PASS_IMAGES = 8 };

/* The phases' convolution: 3x3, stride 1, no padding, out_h + 2 rows of phases. */
static ConvShape phased_shape(const ConvShape *s)
{
    const int P = s->stride;
    return (ConvShape){s->in_c * P * P, s->out_h + 2, s->out_w + 2, s->out_c, s->out_h, s->out_w, 3, 3, 1, 0, 1};
}

int phased_applies(const ConvShape *s)
{
    const int P = s->stride, k = s->k_h;
    if (P < 2 || k != s->k_w || s->groups != 1 || k <= 2 * P || k > 3 * P) return 0;
    const ConvShape ps = phased_shape(s);
    return winograd_applies(&ps);
}

static size_t image_elems(const ConvShape *ps) { return (size_t)ps->in_c * ps->in_h * ps->in_w; }
static size_t phased_weights(const ConvShape *ps) { return (size_t)ps->out_c * ps->in_c * 9; }

/* Shared: Winograd's, then the phases of a pass's images and their gradient, w' and dw'. */
typedef struct {
    ConvShape ps;
    real *x, *dx, *w, *dw;
} Phased;

static Phased phased_at(Backend *bk, const ConvShape *s)
{
    Phased p = {phased_shape(s), NULL, NULL, NULL, NULL};
    p.x = cpu_shared_workspace(bk) + winograd_workspace(&p.ps).shared;
    p.dx = p.x + PASS_IMAGES * image_elems(&p.ps);
    p.w = p.dx + PASS_IMAGES * image_elems(&p.ps);
    p.dw = p.w + phased_weights(&p.ps);
    return p;
}

Workspace phased_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    (void)weight_elems, (void)batch;
    const ConvShape ps = phased_shape(s);
    Workspace w = winograd_workspace(&ps);
    w.shared += 2 * PASS_IMAGES * image_elems(&ps) + 2 * phased_weights(&ps);
    return w;
}

/* Padded input row r of the phase with offset a holds image row r P + a - pad. */
static int image_index(const ConvShape *s, int phased, int a) { return phased * s->stride + a - s->pad; }

/* x' of images [first, first + count) of x. */
static void phase_images(Backend *bk, const ConvShape *s, const ConvShape *ps, const real *x, int count, real *xp)
{
    const int P = s->stride;
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, planes = (size_t)count * ps->in_c;
    CPU_FOR(bk, size_t, q, planes, {
        const int i = (int)(q / ps->in_c), ch = (int)(q % ps->in_c), c = ch / (P * P), a = ch / P % P, b = ch % P;
        const real *xc = x + i * in_item + (size_t)c * s->in_h * s->in_w;
        real *out = xp + q * ps->in_h * ps->in_w;
        for (int r = 0; r < ps->in_h; r++, out += ps->in_w) {
            const int ir = image_index(s, r, a);
            for (int j = 0; j < ps->in_w; j++) {
                const int ic = image_index(s, j, b);
                out[j] = ir >= 0 && ir < s->in_h && ic >= 0 && ic < s->in_w ? xc[(size_t)ir * s->in_w + ic] : 0;
            }
        }
    });
}

/* dx += the phases' gradient dx' of `count` images, the padding's dropped. */
static void unphase_add(Backend *bk, const ConvShape *s, const ConvShape *ps, const real *dxp, int count, real *dx)
{
    const int P = s->stride;
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, planes = (size_t)count * s->in_c;
    CPU_FOR(bk, size_t, q, planes, {
        real *dxc = dx + (q / s->in_c) * in_item + (q % s->in_c) * s->in_h * s->in_w;
        const real *from = dxp + (q / s->in_c) * image_elems(ps) + (q % s->in_c) * P * P * ps->in_h * ps->in_w;
        for (int ir = 0; ir < s->in_h; ir++) {
            const int r = (ir + s->pad) / P, a = (ir + s->pad) % P;
            if (r >= ps->in_h) break;
            for (int ic = 0; ic < s->in_w; ic++) {
                const int j = (ic + s->pad) / P, b = (ic + s->pad) % P;
                if (j >= ps->in_w) break;
                dxc[(size_t)ir * s->in_w + ic] += from[(((size_t)a * P + b) * ps->in_h + r) * ps->in_w + j];
            }
        }
    });
}

/* w' from w, the taps past the filter zero. */
static void phase_weights(const ConvShape *s, const real *w, real *wp)
{
    const int P = s->stride, k = s->k_h;
    for (size_t oc = 0; oc < (size_t)s->out_c * s->in_c; oc++)
        for (int a = 0; a < P; a++)
            for (int b = 0; b < P; b++)
                for (int u = 0; u < 3; u++)
                    for (int v = 0; v < 3; v++) {
                        const int r = u * P + a, c = v * P + b;
                        wp[((oc * P + a) * P + b) * 9 + u * 3 + v] = r < k && c < k ? w[(oc * k + r) * k + c] : 0;
                    }
}

/* dw += the filter's taps of dw'. */
static void unphase_weights_add(const ConvShape *s, const real *dwp, real *dw)
{
    const int P = s->stride, k = s->k_h;
    for (size_t oc = 0; oc < (size_t)s->out_c * s->in_c; oc++)
        for (int r = 0; r < k; r++)
            for (int c = 0; c < k; c++)
                dw[(oc * k + r) * k + c] += dwp[((oc * P + r % P) * P + c % P) * 9 + r / P * 3 + c / P];
}

void phased_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *b, real *y)
{
    BK_GUARD(bk);
    const Phased p = phased_at(bk, s);
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, out_item = (size_t)s->out_c * s->out_h * s->out_w;
    phase_weights(s, w, p.w);
    for (int first = 0; first < n; first += PASS_IMAGES) {
        const int count = n - first < PASS_IMAGES ? n - first : PASS_IMAGES;
        phase_images(bk, s, &p.ps, x + first * in_item, count, p.x);
        winograd_conv_forward(bk, &p.ps, count, p.x, p.w, b, y + first * out_item);
    }
}

/* dw += the weight gradient; dx (may be NULL) += the data gradient. */
void phased_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy, real *dx,
                     real *dw)
{
    BK_GUARD(bk);
    const Phased p = phased_at(bk, s);
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, out_item = (size_t)s->out_c * s->out_h * s->out_w;
    phase_weights(s, w, p.w);
    memset(p.dw, 0, sizeof(real) * phased_weights(&p.ps));
    for (int first = 0; first < n; first += PASS_IMAGES) {
        const int count = n - first < PASS_IMAGES ? n - first : PASS_IMAGES;
        phase_images(bk, s, &p.ps, x + first * in_item, count, p.x);
        if (dx) memset(p.dx, 0, sizeof(real) * count * image_elems(&p.ps));
        winograd_conv_backward(bk, &p.ps, count, p.x, p.w, dy + first * out_item, dx ? p.dx : NULL, p.dw);
        if (dx) unphase_add(bk, s, &p.ps, p.dx, count, dx + first * in_item);
    }
    unphase_weights_add(s, p.dw, dw);
}
