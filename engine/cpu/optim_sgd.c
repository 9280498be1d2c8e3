/* SGD with momentum, dampening, Nesterov and coupled weight decay, exactly as
 * torch.optim.SGD: g += wd*w; v = g on the first update, else v = m*v + (1-d)*g;
 * step = g + m*v (Nesterov) or v; w -= lr*step.
 * With decoupled_wd the gradient is left alone and w *= 1 - lr*wd before the step
 * (NVCaffe's regularization_type "WD"). */
#include <math.h>

#include "optim.h"

void cpu_sgd_update(Backend *bk, const OptStep *st)
{
    const OptConfig *c = st->c;
    const double lr = st->lr;
    for (int p = 0; p < st->pl->n; p++) {
        size_t count = st->pl->count[p];
        real *w = st->pl->w[p], *g = st->pl->g[p];
        cpu_stats_before(bk, st, p);
        if (c->weight_decay != 0 && !c->decoupled_wd) cpu_axpy(bk, count, (real)c->weight_decay, w, g);
        const real *step = g;
        if (c->momentum > 0) {
            real *v = st->pl->slot[0][p];
            if (st->updates == 0) {
                cpu_copy(bk, count, g, v);
            } else {
                cpu_scale(bk, count, (real)c->momentum, v);
                cpu_axpy(bk, count, (real)(1 - c->dampening), g, v);
            }
            if (c->nesterov)
                cpu_axpy(bk, count, (real)c->momentum, v, g);
            else
                step = v;
        }
        if (c->weight_decay != 0 && c->decoupled_wd) cpu_scale(bk, count, (real)(1 - lr * c->weight_decay), w);
        cpu_axpy(bk, count, (real)-lr, step, w);
        cpu_stats_after(bk, st, p, cpu_w_norm(st, p), cpu_g_norm(st, p), 1.0, lr);
    }
}
