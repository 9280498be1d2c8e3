/* LAMB (You et al., arXiv 1904.00962; the variant of docs/papers.md section 4,
 * as tensorflow_addons LAMB): per parameter tensor, t = update number from 1,
 *   m = b1*m + (1-b1)*g ; v = b2*v + (1-b2)*g^2
 *   u = (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps) + wd*w     (wd = 0 for excluded kinds)
 *   q = ||w|| / ||u||  (phi = identity; q = 1 if either norm is 0 or the kind is excluded)
 *   w -= lr * q * u
 * Bias correction on, eps outside the square root, decoupled weight decay inside
 * the trust-ratio direction, no eta, no clipping of ||w||. Slots exp_avg,
 * exp_avg_sq. Two passes (norm of u, then the step) so no extra buffer is needed. */
#include <math.h>

#include "optim.h"

void cpu_lamb_update(Backend *bk, const OptStep *st)
{
    const OptConfig *c = st->c;
    const double lr = st->lr, b1 = c->beta1, b2 = c->beta2, t = (double)(st->updates + 1);
    const double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    for (int p = 0; p < st->pl->n; p++) {
        size_t count = st->pl->count[p];
        real *w = st->pl->w[p], *g = st->pl->g[p];
        real *m = st->pl->slot[0][p], *v = st->pl->slot[1][p];
        const bool excluded = cpu_kind_excluded(c, st->pl->kind[p]);
        const double wd = excluded ? 0 : c->weight_decay;
        double w_norm = cpu_w_norm(st, p);
        double g_norm = cpu_g_norm(st, p);
        cpu_stats_before(bk, st, p);
        cpu_scale(bk, count, (real)b1, m);
        cpu_axpy(bk, count, (real)(1 - b1), g, m);
        double u2 = 0;
        for (size_t i = 0; i < count; i++) {
            real vi = (real)b2 * v[i] + (real)(1 - b2) * g[i] * g[i];
            v[i] = vi;
            double u = ((double)m[i] / bc1) / (sqrt((double)vi / bc2) + c->adam_eps) + wd * (double)w[i];
            u2 += u * u;
        }
        double u_norm = sqrt(u2);
        double q = !excluded && w_norm > 0 && u_norm > 0 ? w_norm / u_norm : 1;
        for (size_t i = 0; i < count; i++) {
            double u = ((double)m[i] / bc1) / (sqrt((double)v[i] / bc2) + c->adam_eps) + wd * (double)w[i];
            w[i] = (real)((double)w[i] - lr * q * u);
        }
        cpu_stats_after(bk, st, p, w_norm, g_norm, q, lr * q);
    }
}
