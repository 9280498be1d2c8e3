/* The per-tensor statistics every update rule records (optim.h): the weights saved before a
 * parameter's update, then its norms, rates and update ratio after it. */
#include <math.h>

#include "optim.h"

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
