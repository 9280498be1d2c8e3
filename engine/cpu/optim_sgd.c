/* SGD with momentum, dampening, Nesterov and coupled weight decay, exactly as
 * torch.optim.SGD: g += wd*w; v = g on the first update, else v = m*v + (1-d)*g;
 * step = g + m*v (Nesterov) or v; w -= lr*step.
 * With decoupled_wd the gradient is left alone and w *= 1 - lr*wd before the step
 * (NVCaffe's regularization_type "WD"). One pass over each tensor, split across threads:
 * each element sees the same operations, in the same order and precision, as it would in
 * separate passes, so the result is the same to the bit. The gradient is only read: writing
 * g + wd*w back, which nothing reads before the next step zeroes it, was a sixth of the pass's
 * memory traffic (torch.optim.SGD too adds the decay out of place). */
#include <math.h>

#include "optim.h"

typedef struct {
    real wd, momentum, keep, neg_lr, decay; /* keep = 1 - dampening, decay = 1 - lr*wd */
    bool coupled, first, nesterov, decoupled;
} SgdRule;

static void sgd_tensor(Backend *bk, const SgdRule *r, size_t count, real *w, const real *g, real *v)
{
#pragma omp parallel for schedule(static) num_threads(bk->threads) if (count >= CPU_PARALLEL_MIN)
    for (size_t i = 0; i < count; i++) {
        real gi = g[i];
        if (r->coupled) gi += r->wd * w[i];
        real step = gi;
        if (v) {
            real vi = gi;
            if (!r->first) {
                vi = v[i] * r->momentum;
                vi += r->keep * gi;
            }
            v[i] = vi;
            step = vi;
            if (r->nesterov) step = gi += r->momentum * vi;
        }
        real wi = w[i];
        if (r->decoupled) wi *= r->decay;
        wi += r->neg_lr * step;
        w[i] = wi;
    }
}

void cpu_sgd_update(Backend *bk, const OptStep *st)
{
    const OptConfig *c = st->c;
    const double lr = st->lr;
    const SgdRule r = {(real)c->weight_decay,
                       (real)c->momentum,
                       (real)(1 - c->dampening),
                       (real)-lr,
                       (real)(1 - lr * c->weight_decay),
                       c->weight_decay != 0 && !c->decoupled_wd,
                       st->updates == 0,
                       c->nesterov,
                       c->weight_decay != 0 && c->decoupled_wd};
    for (int p = 0; p < st->pl->n; p++) {
        cpu_stats_before(bk, st, p);
        sgd_tensor(bk, &r, st->pl->count[p], st->pl->w[p], st->pl->g[p], c->momentum > 0 ? st->pl->slot[0][p] : NULL);
        cpu_stats_after(bk, st, p, cpu_w_norm(st, p), cpu_g_norm(st, p), 1.0, lr);
    }
}
