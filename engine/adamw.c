/* AdamW exactly as torch.optim.AdamW (amsgrad False, non-capturable), t = update
 * number from 1:
 *   w *= 1 - lr*wd                      (decoupled; 0 for kinds in lars_exclude)
 *   m = b1*m + (1-b1)*g ; v = b2*v + (1-b2)*g^2
 *   w -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 * Slots exp_avg, exp_avg_sq (torch's names). */
#include <math.h>

#include "optimizer.h"

void adamw_update(Optimizer *opt, Net *net, double lr)
{
    const OptConfig *c = &opt->cfg;
    Backend *bk = net->bk;
    const double b1 = c->beta1, b2 = c->beta2, t = (double)(opt->updates + 1);
    const double step_size = lr / (1 - pow(b1, t));
    const double bc2_sqrt = sqrt(1 - pow(b2, t));
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        size_t count = tensor_count(&pr->value);
        real *w = pr->value.data, *g = pr->grad.data;
        real *m = optimizer_slot(opt, p, 0)->data, *v = optimizer_slot(opt, p, 1)->data;
        double wd = optimizer_excluded(c, pr) ? 0 : c->weight_decay;
        double w_norm = 0, g_norm = 0;
        if (opt->collect_stats) {
            w_norm = sqrt(bk_sum_squares(bk, count, w));
            g_norm = sqrt(bk_sum_squares(bk, count, g));
            optimizer_stats_before(opt, bk, p, pr);
        }
        if (wd != 0) bk_scale(bk, count, (real)(1 - lr * wd), w);
        bk_scale(bk, count, (real)b1, m);
        bk_axpy(bk, count, (real)(1 - b1), g, m);
        /* TODO backend op: v = b2*v + (1-b2)*g^2 and w -= s*m/(sqrt(v)/c + eps) */
        for (size_t i = 0; i < count; i++) {
            real vi = (real)b2 * v[i] + (real)(1 - b2) * g[i] * g[i];
            v[i] = vi;
            double denom = sqrt((double)vi) / bc2_sqrt + c->adam_eps;
            w[i] = (real)((double)w[i] - step_size * (double)m[i] / denom);
        }
        optimizer_stats_after(opt, bk, p, pr, w_norm, g_norm, 1.0, lr);
    }
}
