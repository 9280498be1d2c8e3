/* AdamW exactly as engine/cpu/optim_adamw.c (torch.optim.AdamW, amsgrad off), t = update
 * number from 1, one pass over every tensor:
 *   w *= 1 - lr*wd (0 for kinds in lars_exclude); m = b1*m, m += (1-b1)*g;
 *   v = b2*v + (1-b2)*g*g (float); w -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps) (double).
 * Slot 0 is exp_avg (m), slot 1 exp_avg_sq (v). */
#include <math.h>

#include "optim.cuh"

struct AdamwOp {
    unsigned exclude;
    bool decay;
    float decay_by, b1, one_minus_b1, b2, one_minus_b2;
    double step_size, bc2_sqrt, eps;

    __device__ void operator()(const MtTensor &t, const MtCoef &, size_t i, double &, double &s1) const
    {
        const float w0 = t.w[i], g = t.g[i];
        float w = w0;
        if (decay && !mt_excluded(exclude, t.kind)) w = __fmul_rn(w, decay_by);
        const float m = __fmul_rn(t.v[i], b1) + __fmul_rn(one_minus_b1, g);
        t.v[i] = m;
        const float v = __fmul_rn(b2, t.s[i]) + __fmul_rn(__fmul_rn(one_minus_b2, g), g);
        t.s[i] = v;
        const double denom = sqrt((double)v) / bc2_sqrt + eps;
        w = (real)((double)w - step_size * (double)m / denom);
        t.w[i] = w;
        s1 += mt_sq((double)(w0 - w));
    }
};

void cuda_optim_adamw(const CudaOptStep *st)
{
    const OptConfig *c = st->c;
    const double lr = st->lr, b1 = c->beta1, b2 = c->beta2, t = (double)(st->updates + 1);
    AdamwOp op;
    op.exclude = c->lars_exclude;
    op.decay = c->weight_decay != 0;
    op.decay_by = (real)(1 - lr * c->weight_decay);
    op.b1 = (real)b1;
    op.one_minus_b1 = (real)(1 - b1);
    op.b2 = (real)b2;
    op.one_minus_b2 = (real)(1 - b2);
    op.step_size = lr / (1 - pow(b1, t));
    op.bc2_sqrt = sqrt(1 - pow(b2, t));
    op.eps = c->adam_eps;
    mt_pass(st->view, st->stream, op);
    cuda_optim_stats(st, true);
}
