/* Batch normalization in passes over the images: each thread takes whole images, as the
 * convolutions and ReLUs around it do, so it reads the planes its own core has just written
 * (one channel per thread read every image, half of them from the other core's cache, and did
 * not get faster on two threads). A plane's sums are taken in float lanes, block totals in
 * double (plane_sum.h); the per-channel totals add the images' plane sums in image order, so
 * results do not depend on the number of threads. With a BnSync the per-channel totals are completed across ranks
 * between the passes. The partial sums live in the shared workspace (batchnorm_workspace). */
#include "cpu.h"
#include "guard.h"
#include "plane_sum.h"

static inline double plane_sq_dev(const real *p, int hw, double mean)
{
    return plane_term_sum(TERM_SQUARED_DEVIATION, p, NULL, (real)mean, (size_t)hw);
}

/* sum(d) and sum(d * (x - mu)) over one plane: two passes, not one, since each vectorizes alone. */
static inline void plane_dy_sums(const real *d, const real *x, int hw, real mu, double *sum_dy, double *sum_dy_x)
{
    *sum_dy = plane_sum(d, (size_t)hw);
    *sum_dy_x = plane_term_sum(TERM_PRODUCT_WITH_DEVIATION, d, x, mu, (size_t)hw);
}

/* The shared workspace: per (image, channel) two partial sums, then the per-channel totals
 * (2c + 1 doubles, when no BnSync brings its own) and two coefficients per channel. */
typedef struct {
    double *part, *part2; /* [image][channel] */
    double *acc;          /* 2c + 1 totals: sync->scratch, or here */
    real *scale, *shift;  /* per channel */
} BnScratch;

Workspace batchnorm_workspace(const BatchNormShape *s, int batch)
{
    size_t doubles = 2 * (size_t)batch * s->c + 2 * (size_t)s->c + 1;
    /* per thread, with a fused ReLU: one plane of dy with the ReLU's mask applied */
    return (Workspace){s->relu ? (size_t)s->hw : 0, doubles * (sizeof(double) / sizeof(real)) + 2 * (size_t)s->c};
}

/* Channel c's normalization gamma*(x - mean)*invstd + beta as a * x + b: the forward's
 * coefficients, which the backward of a fused ReLU recomputes to the same bits for its mask. */
static inline void channel_affine(const real *gamma, const real *beta, int c, real mean, real invstd, real *a,
                                  real *b)
{
    *a = (gamma ? gamma[c] : 1) * invstd;
    *b = (beta ? beta[c] : 0) - mean * *a;
}

static BnScratch bn_scratch(Backend *bk, const BatchNormShape *s, int n, const BnSync *sync)
{
    double *part = (double *)cpu_shared_workspace(bk);
    BnScratch w = {part, part + (size_t)n * s->c, part + 2 * (size_t)n * s->c, NULL, NULL};
    w.scale = (real *)(w.acc + 2 * (size_t)s->c + 1);
    w.shift = w.scale + s->c;
    if (sync) w.acc = sync->scratch;
    return w;
}

/* total[c] = the sum of part[i][c] over the n images, in image order. */
static void image_totals(int n, int c, const double *part, double *total)
{
    image_order_totals(part, n, (size_t)c, 0, (size_t)c, total);
}

/* For each image's plane c: part[i][c] = its sum, or with `sums` its squared deviations from
 * the mean sums[c] / m. */
static void plane_sums(Backend *bk, const BatchNormShape *s, int n, const real *x, const double *sums, double m,
                       double *part)
{
    const int C = s->c;
    CPU_FOR(bk, int, i, n, {
        for (int c = 0; c < C; c++) {
            const real *p = x + ((size_t)i * C + c) * s->hw;
            part[(size_t)i * C + c] = sums ? plane_sq_dev(p, s->hw, sums[c] / m) : plane_sum(p, s->hw);
        }
    });
}

/* For each image's plane c: part[i][c] = its sum and part2[i][c] its squared deviations from
 * its own mean, in one pass over memory (the second loop reads the plane from cache). */
static void plane_moments(Backend *bk, const BatchNormShape *s, int n, const real *x, double *part, double *part2)
{
    const int C = s->c;
    CPU_FOR(bk, int, i, n, {
        for (int c = 0; c < C; c++) {
            const real *p = x + ((size_t)i * C + c) * s->hw;
            const double sum = plane_sum(p, s->hw);
            part[(size_t)i * C + c] = sum;
            part2[(size_t)i * C + c] = plane_sq_dev(p, s->hw, sum / s->hw);
        }
    });
}

/* Chan et al.'s pairwise update, in image order: channel c's squared deviations from its mean
 * sums[c] / m are the planes' own plus hw (plane mean - mean)^2 each. */
static void combine_moments(const BatchNormShape *s, int n, const BnScratch *w, const double *sums, double m,
                            double *sq_devs)
{
    const int C = s->c;
    for (int c = 0; c < C; c++) sq_devs[c] = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C; c++) {
            const double d = w->part[(size_t)i * C + c] / s->hw - sums[c] / m;
            sq_devs[c] += w->part2[(size_t)i * C + c] + s->hw * d * d;
        }
}

/* y = scale[c] * x + shift[c] on every plane, and with a fused ReLU max(0, that): the values
 * of the two layers apart, in one pass. */
static void apply_affine(Backend *bk, const BatchNormShape *s, int n, const real *x, const real *scale,
                         const real *shift, real *y)
{
    const int C = s->c, HW = s->hw;
    CPU_FOR(bk, int, i, n, {
        for (int c = 0; c < C; c++) {
            const size_t off = ((size_t)i * C + c) * HW;
            const real a = scale[c], b = shift[c];
            if (s->relu)
                for (int j = 0; j < HW; j++) {
                    const real v = a * x[off + j] + b;
                    y[off + j] = v > 0 ? v : 0;
                }
            else
                for (int j = 0; j < HW; j++) y[off + j] = a * x[off + j] + b;
        }
    });
}

/* Channel c's normalization y = gamma*(x - mean)*invstd + beta as a * x + b, the saved
 * statistics and the running ones. */
static void channel_coefficients(const BatchNormShape *s, int c, const real *gamma, const real *beta, double mean,
                                 double var, double m, BnScratch *w, real *save_mean, real *save_invstd,
                                 real *running_mean, real *running_var)
{
    real invstd = (real)(1.0 / sqrt(var + s->eps)), mu = (real)mean;
    channel_affine(gamma, beta, c, mu, invstd, &w->scale[c], &w->shift[c]);
    save_mean[c] = mu;
    save_invstd[c] = invstd;
    double unbiased = m > 1 ? var * m / (m - 1) : var;
    running_mean[c] = (real)((1 - s->momentum) * running_mean[c] + s->momentum * mean);
    running_var[c] = (real)((1 - s->momentum) * running_var[c] + s->momentum * unbiased);
}

void cpu_batchnorm_forward_train(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                const real *gamma, const real *beta, real *y, real *save_mean,
                                real *save_invstd, real *running_mean, real *running_var,
                                const BnSync *sync)
{
    BK_GUARD(bk);
    const int C = s->c;
    BnScratch w = bn_scratch(bk, s, n, sync);
    double *sums = w.acc, *sq_devs = w.acc + C + 1;
    double m = (double)n * s->hw;
    if (sync) {
        /* two passes, each completed over the ranks with --sync-bn: sums, then squared deviations */
        plane_sums(bk, s, n, x, NULL, 0, w.part);
        image_totals(n, C, w.part, sums);
        sums[C] = m;
        sync->sum(sync->ctx, sums, C + 1);
        m = sums[C];
        plane_sums(bk, s, n, x, sums, m, w.part);
        image_totals(n, C, w.part, sq_devs);
        sync->sum(sync->ctx, sq_devs, C);
    } else {
        /* one pass: each plane's sum and its own squared deviations, then combined */
        plane_moments(bk, s, n, x, w.part, w.part2);
        image_totals(n, C, w.part, sums);
        combine_moments(s, n, &w, sums, m, sq_devs);
    }
    for (int c = 0; c < C; c++)
        channel_coefficients(s, c, gamma, beta, sums[c] / m, sq_devs[c] / m, m, &w, save_mean, save_invstd,
                             running_mean, running_var);
    apply_affine(bk, s, n, x, w.scale, w.shift, y);
}

void cpu_batchnorm_forward_eval(Backend *bk, const BatchNormShape *s, int n, const real *x,
                               const real *gamma, const real *beta, const real *running_mean,
                               const real *running_var, real *y)
{
    BK_GUARD(bk);
    BnScratch w = bn_scratch(bk, s, n, NULL);
    for (int c = 0; c < s->c; c++)
        channel_affine(gamma, beta, c, running_mean[c], 1 / sqrt(running_var[c] + s->eps), &w.scale[c], &w.shift[c]);
    apply_affine(bk, s, n, x, w.scale, w.shift, y);
}

/* The gradient that reaches batch norm through a fused ReLU: dy where the forward's a * x + b
 * was positive, else 0 (the ReLU's own backward, from the same bits). */
static inline real through_relu(bool relu, real dy, real x, real a, real b) { return relu && !(a * x + b > 0) ? 0 : dy; }

/* dx += g*invstd/m * (m*dy - sum(dy) - xhat*sum(dy*xhat)) on every plane (dx = that, without
 * `accumulate`), from the per-channel totals sum_dy and sum_dy_xhat; dy through the fused ReLU
 * whose coefficients w holds. */
static void apply_dx(Backend *bk, const BatchNormShape *s, int n, const real *x, const real *gamma,
                     const real *save_mean, const real *save_invstd, const real *dy, real *dx, bool accumulate,
                     const BnScratch *w, const double *sum_dy, const double *sum_dy_xhat, double m)
{
    const int C = s->c, HW = s->hw;
    const bool relu = s->relu;
    CPU_FOR(bk, int, i, n, {
        for (int c = 0; c < C; c++) {
            const size_t off = ((size_t)i * C + c) * HW;
            const real mu = save_mean[c], invstd = save_invstd[c];
            const real a = relu ? w->scale[c] : 0, b = relu ? w->shift[c] : 0; /* set only with a ReLU */
            const real k = (gamma ? gamma[c] : 1) * invstd;
            const real mean_dy = (real)(sum_dy[c] / m), mean_dy_xhat = (real)(sum_dy_xhat[c] / m);
            if (accumulate)
                for (int j = 0; j < HW; j++)
                    dx[off + j] += k * (through_relu(relu, dy[off + j], x[off + j], a, b) - mean_dy -
                                        (x[off + j] - mu) * invstd * mean_dy_xhat);
            else
                for (int j = 0; j < HW; j++)
                    dx[off + j] = k * (through_relu(relu, dy[off + j], x[off + j], a, b) - mean_dy -
                                       (x[off + j] - mu) * invstd * mean_dy_xhat);
        }
    });
}

/* One plane of dy through the fused ReLU, into out. */
static void plane_through_relu(const real *dy, const real *x, int hw, real a, real b, real *out)
{
    for (int j = 0; j < hw; j++) out[j] = through_relu(true, dy[j], x[j], a, b);
}

void cpu_batchnorm_backward(Backend *bk, const BatchNormShape *s, int n, const real *x,
                           const real *gamma, const real *beta, const real *save_mean, const real *save_invstd,
                           const real *dy, real *dx, bool accumulate, real *dgamma, real *dbeta,
                           const BnSync *sync)
{
    BK_GUARD(bk);
    const int C = s->c, HW = s->hw;
    BnScratch w = bn_scratch(bk, s, n, sync);
    double *sum_dy = w.acc, *sum_dy_xhat = w.acc + C;
    if (s->relu)
        for (int c = 0; c < C; c++) channel_affine(gamma, beta, c, save_mean[c], save_invstd[c], &w.scale[c], &w.shift[c]);
    CPU_FOR_T(bk, t, int, i, n, {
        real *masked = cpu_workspace(bk, t);
        for (int c = 0; c < C; c++) {
            const size_t off = ((size_t)i * C + c) * HW;
            const real *d = dy + off;
            if (s->relu) {
                plane_through_relu(d, x + off, HW, w.scale[c], w.shift[c], masked);
                d = masked;
            }
            plane_dy_sums(d, x + off, HW, save_mean[c], &w.part[(size_t)i * C + c], &w.part2[(size_t)i * C + c]);
        }
    });
    image_totals(n, C, w.part, sum_dy);
    image_totals(n, C, w.part2, sum_dy_xhat);
    for (int c = 0; c < C; c++) {
        sum_dy_xhat[c] *= save_invstd[c];
        /* This rank's share: the gradient allreduce adds the other ranks'. */
        if (dgamma) dgamma[c] += (real)sum_dy_xhat[c];
        if (dbeta) dbeta[c] += (real)sum_dy[c];
    }
    double m = (double)n * HW;
    if (sync) {
        w.acc[2 * C] = m;
        sync->sum(sync->ctx, w.acc, 2 * C + 1);
        m = w.acc[2 * C];
    }
    apply_dx(bk, s, n, x, gamma, save_mean, save_invstd, dy, dx, accumulate, &w, sum_dy, sum_dy_xhat, m);
}
