/* Private to the CPU backend: one optimizer update over a parameter list, and the
 * bookkeeping every update rule shares (exclusion by kind, per-tensor statistics). */
#ifndef BB_CPU_OPTIM_H
#define BB_CPU_OPTIM_H
#include <stdbool.h>

#include "cpu.h"

typedef struct {
    const OptConfig *c;
    const BkParamList *pl;
    double lr;
    long updates;         /* applied before this one */
    const double *norms;  /* bk_param_norms of this step, or NULL */
    OptStats *stats;      /* NULL: no statistics this step */
} OptStep;

void cpu_sgd_update(Backend *bk, const OptStep *st);
void cpu_lars_update(Backend *bk, const OptStep *st);
void cpu_adamw_update(Backend *bk, const OptStep *st);
void cpu_lamb_update(Backend *bk, const OptStep *st);

static inline bool cpu_kind_excluded(const OptConfig *c, int kind)
{
    return (c->lars_exclude & OPT_EXCLUDE_KIND(kind)) != 0;
}
/* ||w_p|| and ||g_p|| of this step (0 when no norms were taken). */
static inline double cpu_w_norm(const OptStep *st, int p) { return st->norms ? st->norms[2 * p] : 0; }
static inline double cpu_g_norm(const OptStep *st, int p) { return st->norms ? st->norms[2 * p + 1] : 0; }
/* Saves w into the scratch before parameter p's update when collecting statistics. */
void cpu_stats_before(Backend *bk, const OptStep *st, int p);
/* Records the statistics of parameter p after its update. */
void cpu_stats_after(Backend *bk, const OptStep *st, int p, double w_norm, double g_norm,
                     double local_rate, double eff_rate);

#endif
