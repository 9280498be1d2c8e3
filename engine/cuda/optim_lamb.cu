/* LAMB exactly as engine/cpu/optim_lamb.c, t = update number from 1, per tensor:
 *   m = b1*m, m += (1-b1)*g; v = b2*v + (1-b2)*g*g (float);
 *   u = (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps) + wd*w (double; wd = 0 for excluded kinds);
 *   q = ||w|| / ||u|| (1 if either is 0 or the kind is excluded); w -= lr*q*u.
 * Three launches as the CPU's two passes: the moments with ||u||^2 (sum 0), q on the device
 * (one thread per tensor), then the step recomputing u from the stored moments. */
#include <math.h>

#include "optim.cuh"

struct LambArgs {
    unsigned exclude;
    double wd, bc1, bc2, eps, lr;
};

static __device__ inline double lamb_wd(const LambArgs &a, int kind) { return mt_excluded(a.exclude, kind) ? 0 : a.wd; }

static __device__ inline double lamb_u(const LambArgs &a, float m, float v, float w, double wd)
{
    return ((double)m / a.bc1) / (sqrt((double)v / a.bc2) + a.eps) + __dmul_rn(wd, (double)w);
}

struct LambMomentsOp {
    LambArgs a;
    float b1, one_minus_b1, b2, one_minus_b2;

    __device__ void operator()(const MtTensor &t, const MtCoef &, size_t i, double &s0, double &) const
    {
        const float g = t.g[i];
        const float m = __fmul_rn(t.v[i], b1) + __fmul_rn(one_minus_b1, g);
        t.v[i] = m;
        const float v = __fmul_rn(b2, t.s[i]) + __fmul_rn(__fmul_rn(one_minus_b2, g), g);
        t.s[i] = v;
        s0 += mt_sq(lamb_u(a, m, v, t.w[i], lamb_wd(a, t.kind)));
    }
};

/* q and the statistics' rates of each tensor. */
static __global__ void lamb_ratio_kernel(MtView L, LambArgs a, const double *norms)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= L.n || mt_skipped(L)) return;
    double u2, unused;
    mt_totals(L, p, &u2, &unused);
    const double u_norm = sqrt(u2);
    MtCoef c = L.coef[p];
    c.w_norm = norms ? norms[2 * p] : 0;
    c.g_norm = norms ? norms[2 * p + 1] : 0;
    c.r = !mt_excluded(a.exclude, L.t[p].kind) && c.w_norm > 0 && u_norm > 0 ? c.w_norm / u_norm : 1;
    c.rc = c.r;
    c.eff = a.lr * c.r;
    L.coef[p] = c;
}

struct LambStepOp {
    LambArgs a;

    __device__ void operator()(const MtTensor &t, const MtCoef &c, size_t i, double &, double &s1) const
    {
        const float w0 = t.w[i];
        const double u = lamb_u(a, t.v[i], t.s[i], w0, lamb_wd(a, t.kind));
        const float w = (real)((double)w0 - __dmul_rn(a.lr * c.rc, u));
        t.w[i] = w;
        s1 += mt_sq((double)(w0 - w));
    }
};

void cuda_optim_lamb(const CudaOptStep *st)
{
    const OptConfig *c = st->c;
    const double b1 = c->beta1, b2 = c->beta2, t = (double)(st->updates + 1);
    LambArgs a;
    a.exclude = c->lars_exclude;
    a.wd = c->weight_decay;
    a.bc1 = 1 - pow(b1, t);
    a.bc2 = 1 - pow(b2, t);
    a.eps = c->adam_eps;
    a.lr = st->lr;
    LambMomentsOp moments;
    moments.a = a;
    moments.b1 = (real)b1;
    moments.one_minus_b1 = (real)(1 - b1);
    moments.b2 = (real)b2;
    moments.one_minus_b2 = (real)(1 - b2);
    mt_pass(st->view, st->stream, moments);
    lamb_ratio_kernel<<<mt_tensor_blocks(st->view.n), MT_TENSOR_THREADS, 0, st->stream>>>(st->view, a, st->norms);
    CUDA_LAUNCHED();
    LambStepOp step;
    step.a = a;
    mt_pass(st->view, st->stream, step);
    cuda_optim_stats(st, false);
}
