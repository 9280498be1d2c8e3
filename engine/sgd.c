/* SGD with momentum, dampening, Nesterov and coupled weight decay, exactly as
 * torch.optim.SGD: g += wd*w; v = g on the first update, else v = m*v + (1-d)*g;
 * step = g + m*v (Nesterov) or v; w -= lr*step. */
#include "optimizer.h"

void sgd_update(Optimizer *opt, Net *net, double lr)
{
    const OptConfig *c = &opt->cfg;
    Backend *bk = net->bk;
    for (int p = 0; p < net->n_params; p++) {
        Param *pr = &net->params[p];
        size_t count = tensor_count(&pr->value);
        real *w = pr->value.data, *g = pr->grad.data;
        if (c->weight_decay != 0) bk_axpy(bk, count, (real)c->weight_decay, w, g);
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
        bk_axpy(bk, count, (real)-lr, step, w);
    }
}
