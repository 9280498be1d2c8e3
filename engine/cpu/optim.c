/* The optimizer entry points of the CPU backend: the fused norms and the update by name (the
 * rules in optim_*.c; the per-tensor statistics they share in optim_stats.c, a leaf, so no rule
 * calls back into this dispatcher). */
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
                         long updates, const double *norms, OptStats *stats, const double *check)
{
    BK_GUARD(bk);
    if (check && !isfinite(*check)) return; /* an inf/NaN step (fp16): nothing changes */
    /* indexed by OptRule */
    static void (*const update[])(Backend *, const OptStep *) = {cpu_sgd_update, cpu_lars_update,
                                                                 cpu_adamw_update, cpu_lamb_update};
    const OptStep st = {cfg, pl, lr, updates, norms, stats};
    update[opt_name_find(cfg->name)->rule](bk, &st);
}
