/* SGD with momentum, dampening, Nesterov and coupled or decoupled weight decay, exactly as
 * engine/cpu/optim_sgd.c (torch.optim.SGD): one pass over every tensor, each value going
 * through the CPU's sequence of vector operations in registers (the gradient is read only):
 *   g += wd*w (coupled); v = g (first update) or v = m*v, v += (1-d)*g;
 *   g += m*v (Nesterov: the step is g, else v); w *= 1 - lr*wd (decoupled); w += -lr*step. */
#include "optim.cuh"

struct SgdOp {
    bool coupled, momentum, first, nesterov, decay;
    float wd, m, one_minus_d, decay_by, neg_lr;

    __device__ void operator()(const MtTensor &t, const MtCoef &, size_t i, double &, double &s1) const
    {
        const float w0 = t.w[i];
        float g = t.g[i];
        if (coupled) g = g + __fmul_rn(wd, w0);
        float step = g;
        if (momentum && t.v) {
            const float v = first ? g : __fmul_rn(t.v[i], m) + __fmul_rn(one_minus_d, g);
            t.v[i] = v;
            if (nesterov) {
                g = g + __fmul_rn(m, v);
                step = g;
            } else {
                step = v;
            }
        }
        float w = w0;
        if (decay) w = __fmul_rn(w, decay_by);
        w = w + __fmul_rn(neg_lr, step);
        t.w[i] = w; /* the gradient is left as it came, as on the CPU: only read, never written */
        s1 += mt_sq((double)(w0 - w));
    }
};

void cuda_optim_sgd(const CudaOptStep *st)
{
    const OptConfig *c = st->c;
    SgdOp op;
    op.coupled = c->weight_decay != 0 && !c->decoupled_wd;
    op.momentum = c->momentum > 0;
    op.first = st->updates == 0;
    op.nesterov = c->nesterov;
    op.decay = c->weight_decay != 0 && c->decoupled_wd;
    op.wd = (real)c->weight_decay;
    op.m = (real)c->momentum;
    op.one_minus_d = (real)(1 - c->dampening);
    op.decay_by = (real)(1 - st->lr * c->weight_decay);
    op.neg_lr = (real)-st->lr;
    mt_pass(st->view, st->stream, op);
    cuda_optim_stats(st, true);
}
