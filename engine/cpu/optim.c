/* The optimizer entry points of the CPU backend: the fused norms, the update by name
 * and the per-tensor statistics. */
#include "optim.h"

#include <math.h>
#include <string.h>

#include "../optim/opt_names.h"
#include "guard.h"

void cpu_param_norms(Backend *bk, const BkParamList *pl, double *norms)
{
    BK_GUARD(bk);
    for (int p = 0; p < pl->n; p++) {
        norms[2 * p] = sqrt(cpu_sum_squares(bk, pl->count[p], pl->w[p]));
        norms[2 * p + 1] = sqrt(cpu_sum_squares(bk, pl->count[p], pl->g[p]));
    }
}

void cpu_optimizer_update(Backend *bk, const OptConfig *cfg, const BkParamList *pl, double lr,
                         long updates, const double *norms, OptStats *stats)
{
    BK_GUARD(bk);
    /* indexed by OptRule */
    static void (*const update[])(Backend *, const OptStep *) = {cpu_sgd_update, cpu_lars_update,
                                                                 cpu_adamw_update, cpu_lamb_update};
    const OptStep st = {cfg, pl, lr, updates, norms, stats};
    update[opt_name_find(cfg->name)->rule](bk, &st);
}

void cpu_stats_before(Backend *bk, const OptStep *st, int p)
{
    if (st->stats) cpu_copy(bk, st->pl->count[p], st->pl->w[p], st->pl->scratch);
}

void cpu_stats_after(Backend *bk, const OptStep *st, int p, double w_norm, double g_norm,
                     double local_rate, double eff_rate)
{
    if (!st->stats) return;
    size_t count = st->pl->count[p];
    real *diff = st->pl->scratch;
    cpu_axpy(bk, count, (real)-1, st->pl->w[p], diff); /* w_before - w_after */
    double u = sqrt(cpu_sum_squares(bk, count, diff));
    OptStats *s = &st->stats[p];
    s->w_norm = w_norm;
    s->g_norm = g_norm;
    s->local_rate = local_rate;
    s->eff_rate = eff_rate;
    s->update_ratio = s->w_norm > 0 ? u / s->w_norm : 0;
}
