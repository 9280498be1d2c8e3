/* LARS / LARC: one implementation whose behaviour is the set of switches in
 * OptConfig (see optimizer.h and docs/papers.md section 2h); the presets of
 * optimizer_apply_preset select the paper, NVCaffe, apex, TF contrib, timm,
 * MLPerf and TF Model Garden forms. Per parameter tensor (layer) with weights w,
 * data-loss gradient g, weight decay wd (0 for excluded kinds), momentum m:
 *
 *   g' = g + wd*w                  if lars_wd_in_update (and coupled wd)
 *   r  = eta*||w|| / denominator   denominator per lars_denom; r = 1 when ||w|| = 0
 *                                  or the norm in the denominator (||g||, ||g + wd w||
 *                                  or ||update||) is 0
 *                                  (apex guard: additionally g' = g, no wd this step);
 *                                  r = 1 without clipping for excluded kinds, and where
 *                                  lars_adapt_if_wd and the parameter's wd is 0
 *   clip (larc_policy): scale: eff = lr*r; nvcaffe: eff = min(lr, r); apex: r = min(r/lr, 1)
 *   lars_momentum:
 *     LARS_LR_INSIDE:   v = m*v + eff*g'; w -= v   (nesterov: w -= m*v + eff*g')
 *     LARS_LR_AFTER:    torch SGD on r*g': b = r*g' on the first update, else
 *                       b = m*b + (1-d)*r*g'; w -= lr*b (nesterov: lr*(r*g' + m*b))
 *     LARS_TRUST_AFTER: b = m*b + g'; step = b (nesterov: g' + m*b); w -= lr*r*step
 *   decoupled_wd: g' = g and w *= 1 - lr*wd before the step. */
#include <math.h>

#include "optim.h"

void cpu_lars_update(Backend *bk, const OptStep *st)
{
    const OptConfig *c = st->c;
    const double lr = st->lr, m = c->momentum;
    for (int p = 0; p < st->pl->n; p++) {
        size_t count = st->pl->count[p];
        real *w = st->pl->w[p], *g = st->pl->g[p];
        const bool excluded = cpu_kind_excluded(c, st->pl->kind[p]);
        double wd = excluded ? 0 : c->weight_decay;
        const bool adapt = !excluded && !(c->lars_adapt_if_wd && wd == 0);
        double w_norm = cpu_w_norm(st, p);
        double g_norm = cpu_g_norm(st, p);
        if (isnan(g_norm) && c->lars_denom == LARS_DENOM_G) g_norm = 0; /* NVCaffe: NaN -> r = 1 */
        cpu_stats_before(bk, st, p);

        /* The guard looks at the norm in the denominator: ||g|| here, ||g + wd w|| and
         * ||update|| below (the Model Garden tests its own gradient norm). */
        bool guard = adapt && c->lars_denom != LARS_DENOM_DECAYED && c->lars_denom != LARS_DENOM_UPDATE &&
                     !(w_norm > 0 && g_norm > 0);
        if (guard && c->lars_guard == LARS_GUARD_APEX) wd = 0; /* grad untouched, wd skipped */
        const bool coupled = wd != 0 && !c->decoupled_wd;
        if (coupled && c->lars_wd_in_update) cpu_axpy(bk, count, (real)wd, w, g); /* g' */

        double r = 1;
        if (adapt && !guard && c->lars_denom != LARS_DENOM_UPDATE) {
            double n = g_norm, extra = 0; /* the norm the guard tests, and the rest */
            if (c->lars_denom == LARS_DENOM_G_WD) {
                extra = wd * w_norm;
            } else if (c->lars_denom == LARS_DENOM_DECAYED) {
                if (coupled && c->lars_wd_in_update) { /* ||g + wd w||, g' is in g */
                    n = sqrt(cpu_sum_squares(bk, count, g));
                } else { /* ||g + wd w|| without materialising it */
                    double acc = 0;
                    for (size_t i = 0; i < count; i++) {
                        double d = (double)g[i] + wd * (double)w[i];
                        acc += d * d;
                    }
                    n = sqrt(acc);
                }
            }
            double denom = n + extra + c->lars_eps;
            if (w_norm > 0 && n > 0 && denom > 0)
                r = c->eta * w_norm / denom;
            else
                guard = true;
        }

        /* Momentum buffer (or the gradient itself without momentum) and the step. */
        real *v = m > 0 ? st->pl->slot[0][p] : NULL;
        const real *step = g;
        if (c->lars_momentum == LARS_TRUST_AFTER) {
            if (v) {
                cpu_scale(bk, count, (real)m, v);
                cpu_axpy(bk, count, (real)1, g, v);
                if (c->nesterov)
                    cpu_axpy(bk, count, (real)m, v, g); /* g' + m*b */
                else
                    step = v;
            }
            if (adapt && !guard && c->lars_denom == LARS_DENOM_UPDATE) {
                double u_norm = sqrt(cpu_sum_squares(bk, count, step));
                if (w_norm > 0 && u_norm > 0 && u_norm + c->lars_eps > 0)
                    r = c->eta * w_norm / (u_norm + c->lars_eps);
                else
                    guard = true;
            }
        }

        /* Clipping: rc is the local rate applied, eff = lr * rc the effective rate. */
        double rc = r, eff = lr * r;
        const bool clip = adapt && !(guard && c->lars_guard == LARS_GUARD_APEX);
        if (clip && c->larc_policy == LARC_CLIP_NVCAFFE) {
            eff = fmin(lr, r);
            rc = lr > 0 ? eff / lr : 1;
        } else if (clip && c->larc_policy == LARC_CLIP_APEX) {
            rc = lr > 0 ? fmin(r / lr, 1.0) : 1;
            eff = lr * rc;
        }

        if (wd != 0 && c->decoupled_wd) cpu_scale(bk, count, (real)(1 - lr * wd), w);
        switch (c->lars_momentum) {
        case LARS_LR_INSIDE:
            if (v) {
                cpu_scale(bk, count, (real)m, v);
                cpu_axpy(bk, count, (real)eff, g, v);
                if (c->nesterov) {
                    cpu_axpy(bk, count, (real)-m, v, w);
                    cpu_axpy(bk, count, (real)-eff, g, w);
                } else {
                    cpu_axpy(bk, count, (real)-1, v, w);
                }
            } else {
                cpu_axpy(bk, count, (real)-eff, g, w);
            }
            break;
        case LARS_LR_AFTER:
            if (rc != 1) cpu_scale(bk, count, (real)rc, g);
            if (v) {
                if (st->updates == 0) {
                    cpu_copy(bk, count, g, v);
                } else {
                    cpu_scale(bk, count, (real)m, v);
                    cpu_axpy(bk, count, (real)(1 - c->dampening), g, v);
                }
                if (c->nesterov)
                    cpu_axpy(bk, count, (real)m, v, g);
                else
                    step = v;
            }
            cpu_axpy(bk, count, (real)-lr, step, w);
            break;
        default: /* LARS_TRUST_AFTER */
            cpu_axpy(bk, count, (real)-eff, step, w);
            break;
        }
        cpu_stats_after(bk, st, p, w_norm, g_norm, rc, eff);
    }
}
