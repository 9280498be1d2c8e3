/* LARS / LARC with every switch of OptConfig, exactly as engine/cpu/optim_lars.c (the rule
 * and its switches are written out there). The per-tensor scalars run on the device, one
 * thread per tensor (lars_begin, lars_finish into MtCoef), and the element functions read
 * them, so nothing is downloaded:
 *   - denominators ||g|| + wd*||w|| and ||g|| need only the norms: begin and finish in one
 *     kernel, then one pass does the whole update;
 *   - ||g + wd*w|| (LARS_DENOM_DECAYED) and ||update|| (LARS_DENOM_UPDATE, after momentum)
 *     are norms taken midway: pass A forms g' (and, with the trust ratio after momentum, the
 *     accumulator) and sums the norm, one thread per tensor finishes the ratio, pass B
 *     applies the step.
 * Each value goes through the CPU's sequence of vector operations, one rounding each. */
#include <math.h>

#include "optim.cuh"

typedef struct {
    double lr, m, wd, eta, eps;
    unsigned exclude;
    int denom, momentum, policy, guard; /* LarsDenom, LarsMomentum, LarcPolicy, LarsGuard */
    bool nesterov, decoupled, wd_in_update, adapt_if_wd;
    bool split; /* a norm is taken midway: passes A and B */
} LarsArgs;

/* What the CPU decides before any norm taken midway: exclusion, adaptation, the zero-norm
 * guard on ||w|| and ||g|| (the apex guard drops the weight decay), g' and the decoupled
 * decay, and the ratio itself for the denominators that need only the norms. */
static __device__ MtCoef lars_begin(const LarsArgs &a, int kind, const double *norms, int p)
{
    MtCoef c;
    const bool excluded = mt_excluded(a.exclude, kind);
    double wd = excluded ? 0 : a.wd;
    const bool adapt = !excluded && !(a.adapt_if_wd && wd == 0);
    const double w_norm = norms ? norms[2 * p] : 0;
    double g_norm = norms ? norms[2 * p + 1] : 0;
    if (isnan(g_norm) && a.denom == LARS_DENOM_G) g_norm = 0; /* NVCaffe: NaN -> r = 1 */
    bool guard = adapt && a.denom != LARS_DENOM_DECAYED && a.denom != LARS_DENOM_UPDATE &&
                 !(w_norm > 0 && g_norm > 0);
    if (guard && a.guard == LARS_GUARD_APEX) wd = 0; /* grad untouched, wd skipped */
    const bool coupled = wd != 0 && !a.decoupled;
    double r = 1;
    if (adapt && !guard && (a.denom == LARS_DENOM_G_WD || a.denom == LARS_DENOM_G)) {
        const double n = g_norm, extra = a.denom == LARS_DENOM_G_WD ? __dmul_rn(wd, w_norm) : 0;
        const double denom = n + extra + a.eps;
        if (w_norm > 0 && n > 0 && denom > 0)
            r = a.eta * w_norm / denom;
        else
            guard = true;
    }
    c.w_norm = w_norm;
    c.g_norm = g_norm;
    c.wd = wd;
    c.r = r;
    c.rc = r;
    c.eff = a.lr * r;
    c.wd_f = (real)wd;
    c.decay_f = (real)(1 - __dmul_rn(a.lr, wd));
    c.rc_f = (real)c.rc;
    c.eff_f = (real)c.eff;
    c.adapt = adapt;
    c.guard = guard;
    c.g_prime = coupled && a.wd_in_update;
    c.decay = wd != 0 && a.decoupled;
    c.scale_g = 0;
    return c;
}

/* The ratio from the norm taken midway (`mid`: its sum of squares), then the clipping:
 * rc is the local rate applied, eff = lr * rc the effective rate. */
static __device__ void lars_finish(MtCoef &c, const LarsArgs &a, double mid)
{
    if (a.split && c.adapt && !c.guard) {
        const double n = sqrt(mid);
        if (a.denom == LARS_DENOM_DECAYED) { /* n + extra (0) + eps */
            const double denom = n + a.eps;
            if (c.w_norm > 0 && n > 0 && denom > 0)
                c.r = a.eta * c.w_norm / denom;
            else
                c.guard = true;
        } else { /* LARS_DENOM_UPDATE with the trust ratio after momentum */
            if (c.w_norm > 0 && n > 0 && n + a.eps > 0)
                c.r = a.eta * c.w_norm / (n + a.eps);
            else
                c.guard = true;
        }
    }
    double rc = c.r, eff = a.lr * c.r;
    const bool clip = c.adapt && !(c.guard && a.guard == LARS_GUARD_APEX);
    if (clip && a.policy == LARC_CLIP_NVCAFFE) {
        eff = fmin(a.lr, c.r);
        rc = a.lr > 0 ? eff / a.lr : 1;
    } else if (clip && a.policy == LARC_CLIP_APEX) {
        rc = a.lr > 0 ? fmin(c.r / a.lr, 1.0) : 1;
        eff = a.lr * rc;
    }
    c.rc = rc;
    c.eff = eff;
    c.rc_f = (real)rc;
    c.eff_f = (real)eff;
    c.scale_g = rc != 1;
}

/* stage 0: begin (and finish without a midway norm); stage 1: finish from pass A's sums. */
static __global__ void lars_coef_kernel(MtView L, LarsArgs a, const double *norms, int stage)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= L.n || mt_skipped(L)) return;
    MtCoef c;
    double mid = 0, unused;
    if (stage == 0) {
        c = lars_begin(a, L.t[p].kind, norms, p);
        if (a.split) {
            L.coef[p] = c;
            return;
        }
    } else {
        c = L.coef[p];
        mt_totals(L, p, &mid, &unused);
    }
    lars_finish(c, a, mid);
    L.coef[p] = c;
}

enum { LARS_PASS_A, LARS_PASS_B, LARS_PASS_AB };

struct LarsOp {
    LarsArgs a;
    int pass;
    bool momentum, first;
    float m, neg_m, one_minus_d, neg_lr;

    /* Pass A: g' (and the accumulator with the trust ratio after momentum); sum 0 gets
     * the norm the ratio needs midway. g and v are left in memory for pass B. */
    __device__ void part_a(const MtTensor &t, const MtCoef &c, size_t i, float w, float &g, float &v,
                           bool &g_changed, double &s0) const
    {
        const float g_in = g;
        if (c.g_prime) {
            g = g + __fmul_rn(c.wd_f, w);
            g_changed = true;
        }
        if (a.denom == LARS_DENOM_DECAYED) {
            /* ||g'|| when g' is in g, else ||g + wd*w|| in double without forming it */
            const double d = c.g_prime ? (double)g : (double)g_in + __dmul_rn(c.wd, (double)w);
            s0 += mt_sq(d);
        }
        if (a.momentum != LARS_TRUST_AFTER) return;
        float step = g;
        if (momentum) {
            v = __fmul_rn(t.v[i], m) + g; /* v *= m; v += 1*g */
            t.v[i] = v;
            if (a.nesterov) {
                g = g + __fmul_rn(m, v); /* g' + m*b */
                g_changed = true;
                step = g;
            } else {
                step = v;
            }
        }
        if (a.denom == LARS_DENOM_UPDATE) s0 += mt_sq((double)step);
    }

    /* Pass B: the decoupled decay and the step with the local rate. */
    __device__ float part_b(const MtTensor &t, const MtCoef &c, size_t i, float w, float &g, float v,
                            bool &g_changed) const
    {
        if (c.decay) w = __fmul_rn(w, c.decay_f);
        if (a.momentum == LARS_LR_INSIDE) {
            if (momentum) {
                v = __fmul_rn(t.v[i], m) + __fmul_rn(c.eff_f, g);
                t.v[i] = v;
                if (a.nesterov) {
                    w = w + __fmul_rn(neg_m, v);
                    w = w + __fmul_rn(-c.eff_f, g);
                } else {
                    w = w - v; /* w += -1*v */
                }
            } else {
                w = w + __fmul_rn(-c.eff_f, g);
            }
        } else if (a.momentum == LARS_LR_AFTER) {
            if (c.scale_g) {
                g = __fmul_rn(g, c.rc_f);
                g_changed = true;
            }
            float step = g;
            if (momentum) {
                v = first ? g : __fmul_rn(t.v[i], m) + __fmul_rn(one_minus_d, g);
                t.v[i] = v;
                if (a.nesterov) {
                    g = g + __fmul_rn(m, v);
                    g_changed = true;
                    step = g;
                } else {
                    step = v;
                }
            }
            w = w + __fmul_rn(neg_lr, step);
        } else { /* LARS_TRUST_AFTER: part_a left the step in g (Nesterov, no momentum) or v */
            const float step = momentum && !a.nesterov ? v : g;
            w = w + __fmul_rn(-c.eff_f, step);
        }
        return w;
    }

    __device__ void operator()(const MtTensor &t, const MtCoef &c, size_t i, double &s0, double &s1) const
    {
        const float w0 = t.w[i];
        float g = t.g[i], v = 0;
        bool g_changed = false;
        if (pass != LARS_PASS_B) part_a(t, c, i, w0, g, v, g_changed, s0);
        if (pass == LARS_PASS_A) {
            if (g_changed) t.g[i] = g;
            return;
        }
        if (pass == LARS_PASS_B && a.momentum == LARS_TRUST_AFTER && momentum) v = t.v[i];
        const float w = part_b(t, c, i, w0, g, v, g_changed);
        t.w[i] = w;
        if (g_changed) t.g[i] = g; /* the CPU leaves g' (scaled, plus m*v) in the gradient */
        s1 += mt_sq((double)(w0 - w));
    }
};

void cuda_optim_lars(const CudaOptStep *st)
{
    const OptConfig *c = st->c;
    LarsArgs a;
    a.lr = st->lr;
    a.m = c->momentum;
    a.wd = c->weight_decay;
    a.eta = c->eta;
    a.eps = c->lars_eps;
    a.exclude = c->lars_exclude;
    a.denom = c->lars_denom;
    a.momentum = c->lars_momentum;
    a.policy = c->larc_policy;
    a.guard = c->lars_guard;
    a.nesterov = c->nesterov;
    a.decoupled = c->decoupled_wd;
    a.wd_in_update = c->lars_wd_in_update;
    a.adapt_if_wd = c->lars_adapt_if_wd;
    a.split = a.denom == LARS_DENOM_DECAYED || (a.denom == LARS_DENOM_UPDATE && a.momentum == LARS_TRUST_AFTER);
    LarsOp op;
    op.a = a;
    op.momentum = c->momentum > 0;
    op.first = st->updates == 0;
    op.m = (real)c->momentum;
    op.neg_m = (real)-c->momentum;
    op.one_minus_d = (real)(1 - c->dampening);
    op.neg_lr = (real)-st->lr;

    const unsigned blocks = mt_tensor_blocks(st->view.n);
    lars_coef_kernel<<<blocks, MT_TENSOR_THREADS, 0, st->stream>>>(st->view, a, st->norms, 0);
    CUDA_LAUNCHED();
    if (a.split) {
        op.pass = LARS_PASS_A;
        mt_pass(st->view, st->stream, op);
        lars_coef_kernel<<<blocks, MT_TENSOR_THREADS, 0, st->stream>>>(st->view, a, st->norms, 1);
        CUDA_LAUNCHED();
        op.pass = LARS_PASS_B;
    } else {
        op.pass = LARS_PASS_AB;
    }
    mt_pass(st->view, st->stream, op);
    cuda_optim_stats(st, false);
}
