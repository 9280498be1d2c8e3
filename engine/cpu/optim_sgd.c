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

/* Elements [from, to) of one tensor. The rule is copied into locals and the pointers are
 * restrict so the compiler hoists the rule's branches and vectorizes the loop (through the
 * rule's pointer every store to w might have changed it: the loop ran scalar, and on two threads
 * the update of a small model took twice its one-thread time). Without contraction (ISO C's
 * default in GCC) the vector loop does each element's operations in the same order: the same bits. */
static void sgd_range(const SgdRule *rule, size_t from, size_t to, real *restrict w, const real *restrict g,
                      real *restrict v)
{
    const SgdRule r = *rule;
    for (size_t i = from; i < to; i++) {
        real gi = g[i];
        if (r.coupled) gi += r.wd * w[i];
        real step = gi;
        if (v) {
            real vi = gi;
            if (!r.first) {
                vi = v[i] * r.momentum;
                vi += r.keep * gi;
            }
            v[i] = vi;
            step = vi;
            if (r.nesterov) step = gi += r.momentum * vi;
        }
        real wi = w[i];
        if (r.decoupled) wi *= r.decay;
        wi += r.neg_lr * step;
        w[i] = wi;
    }
}

/* Tensors [first, end) in one parallel region (a region per tensor cost more than the small tensors'
 * updates on two threads): a tensor of CPU_PARALLEL_MIN elements or more is split across the
 * threads, a smaller one goes whole to one thread, in turn. Each element's arithmetic is the
 * same whichever thread does it. */
typedef struct {
    const SgdRule *r;
    const BkParamList *pl;
    int first, end;
    bool momentum;
} SgdTensors;

static void sgd_thread_tensors(void *ctx, int t, int threads)
{
    const SgdTensors *a = ctx;
    const BkParamList *pl = a->pl;
    for (int p = a->first, small = 0; p < a->end; p++) {
        const size_t count = pl->count[p];
        size_t from = 0, to = count;
        if (count >= CPU_PARALLEL_MIN) {
            from = count * t / threads;
            to = count * (t + 1) / threads;
        } else if (small++ % threads != t) {
            continue;
        }
        sgd_range(a->r, from, to, pl->w[p], pl->g[p], a->momentum ? pl->slot[0][p] : NULL);
    }
}

static void sgd_tensors(Backend *bk, const SgdRule *r, const BkParamList *pl, int first, int end, bool momentum)
{
    SgdTensors a = {r, pl, first, end, momentum};
    cpu_run(bk->threads, sgd_thread_tensors, &a);
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
    const bool momentum = c->momentum > 0;
    if (!st->stats) {
        sgd_tensors(bk, &r, st->pl, 0, st->pl->n, momentum);
        return;
    }
    /* a step that logs statistics: tensor by tensor, each one's w saved before its update */
    for (int p = 0; p < st->pl->n; p++) {
        cpu_stats_before(bk, st, p);
        sgd_tensors(bk, &r, st->pl, p, p + 1, momentum);
        cpu_stats_after(bk, st, p, cpu_w_norm(st, p), cpu_g_norm(st, p), 1.0, lr);
    }
}
