/* Antialiased bilinear resampling, computed as Pillow computes Image.resize(..., BILINEAR)
 * (its triangle filter widened by the shrink factor, separable, horizontal pass first, 22-bit
 * fixed-point weights, each pass rounded to 8 bits), so a crop resized here matches
 * torchvision's PIL transforms pixel for pixel on the same decoded image (resample.c). */
#ifndef BB_RESAMPLE_H
#define BB_RESAMPLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One axis: source pixels [0, in_size) (taps are clipped there, as PIL clips at the image's
 * edge), the box [in0, in1) of them scaled to out_full pixels, of which the out_count from
 * out_first are computed (a resize followed by a crop, without the rest of the resize). */
typedef struct {
    int in_size;
    float in0, in1; /* floats, as PIL's box */
    int origin;     /* the source pixel that resample_rgb's src addresses (a partial decode) */
    int out_full, out_first, out_count;
} ResampleAxis;

/* Scratch space (coefficients, the horizontal pass), grown as needed: one per thread. */
typedef struct {
    int *bounds_x, *bounds_y, *kk_x, *kk_y;
    size_t cap_bx, cap_by, cap_kx, cap_ky;
    uint8_t *tmp;
    size_t tmp_cap;
    int32_t *acc; /* one row's sums */
    size_t acc_cap;
    uint8_t *cols; /* the transposed source and horizontal pass */
    size_t cols_cap;
} Resampler;

void resampler_free(Resampler *r);
/* The source pixels [*lo, *hi) that the axis's outputs read. */
void resample_span(const ResampleAxis *a, int *lo, int *hi);
/* The RGB image at src (HWC, `stride` bytes a row; src addresses source pixel
 * (ax.origin, ay.origin)) resampled to ay.out_count x ax.out_count pixels, mirrored left-right when flip, into
 * out: CHW planes when chw, else HWC. */
void resample_rgb(Resampler *r, const uint8_t *src, size_t stride, const ResampleAxis *ax, const ResampleAxis *ay,
                  bool flip, bool chw, uint8_t *out);

#endif
