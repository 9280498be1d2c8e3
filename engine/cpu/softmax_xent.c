/* Softmax cross-entropy over the class dimension, with label smoothing. */
#include "cpu.h"
#include "guard.h"

void cpu_softmax_xent_forward(Backend *bk, int n, int classes, const real *logits,
                             const int32_t *labels, real smoothing, real *probs, double *result)
{
    BK_GUARD(bk);
    double total = 0;
    int right = 0;
    for (int i = 0; i < n; i++) {
        const real *z = logits + (size_t)i * classes;
        real *p = probs + (size_t)i * classes;
        int best = 0;
        for (int k = 1; k < classes; k++)
            if (z[k] > z[best]) best = k;
        double zmax = z[best], sum = 0;
        for (int k = 0; k < classes; k++) sum += exp((double)z[k] - zmax);
        double log_sum = log(sum) + zmax, sum_logp = 0;
        for (int k = 0; k < classes; k++) {
            double logp = (double)z[k] - log_sum;
            p[k] = (real)exp(logp);
            sum_logp += logp;
        }
        double logp_y = (double)z[labels[i]] - log_sum;
        total += -((1 - smoothing) * logp_y + smoothing / classes * sum_logp);
        if (best == labels[i]) right++;
    }
    result[0] = n > 0 ? total / n : 0;
    result[1] = right;
}

void cpu_softmax_xent_backward(Backend *bk, int n, int classes, const real *probs,
                              const int32_t *labels, real smoothing, real scale, real *dlogits)
{
    BK_GUARD(bk);
    real off = smoothing / classes, on = 1 - smoothing + off;
    for (int i = 0; i < n; i++) {
        const real *p = probs + (size_t)i * classes;
        real *d = dlogits + (size_t)i * classes;
        for (int k = 0; k < classes; k++) d[k] += (p[k] - (k == labels[i] ? on : off)) * scale;
    }
}
