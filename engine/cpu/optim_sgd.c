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

/* sgd_range a block at a time, the next block's weights fetched for writing (prefetchw) while
 * this one is updated: every thread's forward has read every weight, so each line of w sits in
 * both cores' caches, and a plain store waits for the other core's copy to be invalidated. */
enum { SGD_BLOCK = 512, REALS_PER_LINE = 64 / sizeof(real) };

static void sgd_blocks(const SgdRule *rule, size_t from, size_t to, real *w, const real *g, real *v)
{
    for (size_t b = from; b < to; b += SGD_BLOCK) {
        const size_t end = to - b > SGD_BLOCK ? b + SGD_BLOCK : to;
        const size_t next_end = to - end > SGD_BLOCK ? end + SGD_BLOCK : to;
        for (size_t j = end; j < next_end; j += REALS_PER_LINE) __builtin_prefetch(w + j, 1, 3);
        sgd_range(rule, b, end, w, g, v);
    }
}

/* Tensors [first, end) laid end to end in one parallel region, thread t taking elements
 * [total*t/T, total*(t+1)/T): the tensors lie in the net's gradient block in this order, so
 * that is the share of the block whose replica sums thread t has just written (replicas.c), and
 * its momentum stays on its core from step to step. Under CPU_PARALLEL_MIN elements in all, one
 * thread and no region. Each element's arithmetic is the same whichever thread does it. On two
 * threads LeNet's update took 37-41 us against 22-26 on one; 28-34 with this split and the
 * prefetches, 16-23 on one (one run in five took 13 us either way: the cores' copies do not
 * always cost; bench/results/2026-12-05-sgd-update.txt). */
typedef struct {
    const SgdRule *r;
    const BkParamList *pl;
    int first, end;
    size_t total;
    bool momentum;
} SgdTensors;

static void sgd_thread_tensors(void *ctx, int t, int threads)
{
    const SgdTensors *a = ctx;
    const BkParamList *pl = a->pl;
    const size_t lo = a->total * (size_t)t / (size_t)threads, hi = a->total * (size_t)(t + 1) / (size_t)threads;
    size_t at = 0; /* the first element of tensor p, counted from tensor `first`'s */
    for (int p = a->first; p < a->end && at < hi; p++) {
        const size_t count = pl->count[p];
        const size_t from = lo > at ? lo - at : 0, to = hi - at < count ? hi - at : count;
        if (from < to) sgd_blocks(a->r, from, to, pl->w[p], pl->g[p], a->momentum ? pl->slot[0][p] : NULL);
        at += count;
    }
}

static void sgd_tensors(Backend *bk, const SgdRule *r, const BkParamList *pl, int first, int end, bool momentum)
{
    SgdTensors a = {r, pl, first, end, 0, momentum};
    for (int p = first; p < end; p++) a.total += pl->count[p];
    cpu_run(a.total >= CPU_PARALLEL_MIN ? bk->threads : 1, sgd_thread_tensors, &a);
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
