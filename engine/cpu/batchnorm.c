/* Batch normalization, one channel per OpenMP iteration: each channel's sums are
 * taken by one thread in a fixed order, so results do not depend on threads. */
#include "cpu.h"

void bk_batchnorm_forward_train(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                const real *gamma, const real *beta, real *y, real *save_mean,
                                real *save_invstd, real *running_mean, real *running_var)
{
    const int C = s->c, HW = s->hw;
    const double m = (double)n * HW;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int c = 0; c < C; c++) {
        double sum = 0, sq = 0;
        for (int i = 0; i < n; i++) {
            const real *xc = x + ((size_t)i * C + c) * HW;
            for (int j = 0; j < HW; j++) sum += xc[j];
        }
        double mean = sum / m;
        for (int i = 0; i < n; i++) {
            const real *xc = x + ((size_t)i * C + c) * HW;
            for (int j = 0; j < HW; j++) sq += (xc[j] - mean) * (xc[j] - mean);
        }
        double var = sq / m;
        real invstd = (real)(1.0 / sqrt(var + s->eps));
        real g = gamma ? gamma[c] : 1, bt = beta ? beta[c] : 0, mu = (real)mean;
        real a = g * invstd, b = bt - mu * a;
        for (int i = 0; i < n; i++) {
            size_t off = ((size_t)i * C + c) * HW;
            for (int j = 0; j < HW; j++) y[off + j] = a * x[off + j] + b;
        }
        save_mean[c] = mu;
        save_invstd[c] = invstd;
        double unbiased = m > 1 ? var * m / (m - 1) : var;
        running_mean[c] = (real)((1 - s->momentum) * running_mean[c] + s->momentum * mean);
        running_var[c] = (real)((1 - s->momentum) * running_var[c] + s->momentum * unbiased);
    }
}

void bk_batchnorm_forward_eval(Backend *bk, const BatchNormShape *s, int n, const real *x,
                               const real *gamma, const real *beta, const real *running_mean,
                               const real *running_var, real *y)
{
    const int C = s->c, HW = s->hw;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int c = 0; c < C; c++) {
        real invstd = 1 / sqrt(running_var[c] + s->eps);
        real g = gamma ? gamma[c] : 1, bt = beta ? beta[c] : 0;
        real a = g * invstd, b = bt - running_mean[c] * a;
        for (int i = 0; i < n; i++) {
            size_t off = ((size_t)i * C + c) * HW;
            for (int j = 0; j < HW; j++) y[off + j] = a * x[off + j] + b;
        }
    }
}

void bk_batchnorm_backward(Backend *bk, const BatchNormShape *s, int n, const real *x,
                           const real *gamma, const real *save_mean, const real *save_invstd,
                           const real *dy, real *dx, real *dgamma, real *dbeta)
{
    const int C = s->c, HW = s->hw;
    const double m = (double)n * HW;
#pragma omp parallel for schedule(static) num_threads(bk->threads)
    for (int c = 0; c < C; c++) {
        const real mu = save_mean[c], invstd = save_invstd[c];
        double sum_dy = 0, sum_dy_x = 0;
        for (int i = 0; i < n; i++) {
            size_t off = ((size_t)i * C + c) * HW;
            real acc_dy = 0, acc_dy_x = 0; /* per plane in real, across planes in double */
            for (int j = 0; j < HW; j++) {
                acc_dy += dy[off + j];
                acc_dy_x += dy[off + j] * (x[off + j] - mu);
            }
            sum_dy += acc_dy;
            sum_dy_x += acc_dy_x;
        }
        double sum_dy_xhat = sum_dy_x * invstd;
        if (dgamma) dgamma[c] += (real)sum_dy_xhat;
        if (dbeta) dbeta[c] += (real)sum_dy;
        /* dx = g*invstd/m * (m*dy - sum(dy) - xhat*sum(dy*xhat)) */
        real g = gamma ? gamma[c] : 1;
        real k = g * invstd;
        real mean_dy = (real)(sum_dy / m), mean_dy_xhat = (real)(sum_dy_xhat / m);
        for (int i = 0; i < n; i++) {
            size_t off = ((size_t)i * C + c) * HW;
            for (int j = 0; j < HW; j++)
                dx[off + j] += k * (dy[off + j] - mean_dy - (x[off + j] - mu) * invstd * mean_dy_xhat);
        }
    }
}
