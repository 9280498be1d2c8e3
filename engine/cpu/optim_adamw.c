/* AdamW exactly as torch.optim.AdamW (amsgrad False, non-capturable), t = update
 * number from 1:
 *   w *= 1 - lr*wd                      (decoupled; 0 for kinds in lars_exclude)
 *   m = b1*m + (1-b1)*g ; v = b2*v + (1-b2)*g^2
 *   w -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 * Slots exp_avg, exp_avg_sq (torch's names). */
#include <math.h>

#include "optim.h"

void cpu_adamw_update(Backend *bk, const OptStep *st)
{
    const OptConfig *c = st->c;
    const double lr = st->lr, b1 = c->beta1, b2 = c->beta2, t = (double)(st->updates + 1);
    const double step_size = lr / (1 - pow(b1, t));
    const double bc2_sqrt = sqrt(1 - pow(b2, t));
    for (int p = 0; p < st->pl->n; p++) {
        size_t count = st->pl->count[p];
        real *w = st->pl->w[p], *g = st->pl->g[p];
        real *m = st->pl->slot[0][p], *v = st->pl->slot[1][p];
        double wd = cpu_kind_excluded(c, st->pl->kind[p]) ? 0 : c->weight_decay;
        cpu_stats_before(bk, st, p);
        if (wd != 0) cpu_scale(bk, count, (real)(1 - lr * wd), w);
        cpu_scale(bk, count, (real)b1, m);
        cpu_axpy(bk, count, (real)(1 - b1), g, m);
        for (size_t i = 0; i < count; i++) {
            real vi = (real)b2 * v[i] + (real)(1 - b2) * g[i] * g[i];
            v[i] = vi;
            double denom = sqrt((double)vi) / bc2_sqrt + c->adam_eps;
            w[i] = (real)((double)w[i] - step_size * (double)m[i] / denom);
        }
        cpu_stats_after(bk, st, p, cpu_w_norm(st, p), cpu_g_norm(st, p), 1.0, lr);
    }
}
