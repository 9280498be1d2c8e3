/* SGD with momentum, dampening, Nesterov and coupled weight decay, exactly as
 * torch.optim.SGD: g += wd*w; v = g on the first update, else v = m*v + (1-d)*g;
 * step = g + m*v (Nesterov) or v; w -= lr*step.
 * With decoupled_wd the gradient is left alone and w *= 1 - lr*wd before the step
 * (NVCaffe's regularization_type "WD"). */
#include <math.h>

#include "optimizer.h"

void sgd_update(Optimizer *opt, Net *net, double lr)
{
    const OptConfig *c = &opt->cfg;
    Backend *bk = net->bk;
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        size_t count = tensor_count(&pr->value);
        real *w = pr->value.data, *g = pr->grad.data;
        double w_norm = 0, g_norm = 0;
        if (opt->collect_stats) {
            w_norm = sqrt(bk_sum_squares(bk, count, w));
            g_norm = sqrt(bk_sum_squares(bk, count, g));
            optimizer_stats_before(opt, bk, p, pr);
        }
        if (c->weight_decay != 0 && !c->decoupled_wd) bk_axpy(bk, count, (real)c->weight_decay, w, g);
        const real *step = g;
        if (c->momentum > 0) {
            real *v = optimizer_slot(opt, p, 0)->data;
            if (opt->updates == 0) {
                bk_copy(bk, count, g, v);
            } else {
                bk_scale(bk, count, (real)c->momentum, v);
                bk_axpy(bk, count, (real)(1 - c->dampening), g, v);
            }
            if (c->nesterov)
                bk_axpy(bk, count, (real)c->momentum, v, g);
            else
                step = v;
        }
        if (c->weight_decay != 0 && c->decoupled_wd) bk_scale(bk, count, (real)(1 - lr * c->weight_decay), w);
        bk_axpy(bk, count, (real)-lr, step, w);
        optimizer_stats_after(opt, bk, p, pr, w_norm, g_norm, 1.0, lr);
    }
}
