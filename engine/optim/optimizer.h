/* The optimizer interface: one update over all parameters of a net, given the
 * global learning rate of this iteration, run inside the backend (bk_optimizer_update;
 * the CPU's update rules are engine/cpu/optim_*.c). Per-parameter state lives in named
 * slots (e.g. "momentum_buffer") in backend memory so checkpoints can save any
 * optimizer's state. The configuration and the statistics are opt_config.h's. */
#ifndef BB_OPTIMIZER_H
#define BB_OPTIMIZER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../net/net.h"
#include "opt_config.h"
#include "../base/util.h"

typedef struct Optimizer Optimizer;
struct Optimizer {
    OptConfig cfg;
    int n_slots;
    const char *slot_names[4];
    Tensor *slots;        /* n_params * n_slots, slot s of param p at [p * n_slots + s] */
    int n_params;
    long updates;         /* number of updates applied */
    bool collect_stats;   /* fill stats on every update */
    OptStats *stats;      /* n_params entries on the host: the last update's, downloaded */
    BkParamList list;     /* the net's parameters and the slots, as backend addresses */
    Tensor scratch;       /* largest parameter size: previous weights for update_ratio */
    BkBuffer *norms;      /* 2 * n_params doubles: bk_param_norms of the step */
    BkBuffer *stats_dev;  /* n_params OptStats written by the update */
};

/* Plain SGD (name "sgd"), LARS switches at the paper form, eta 0.001, Adam betas
 * 0.9/0.999, eps 1e-8. */
void opt_config_defaults(OptConfig *cfg);
/* Fills the switches of a LARS/LARC preset (paper, nvcaffe = nvcaffe-scale,
 * nvcaffe-clip, apex, tf, timm, mlperf, tf-garden, tf-garden-nc), setting name to
 * "lars" or "larc", and writes a description of the fields it set into
 * what_it_set. Leaves momentum, weight_decay and the LR alone. 0 or -1 (err). */
int optimizer_apply_preset(OptConfig *cfg, const char *variant, char *what_it_set, size_t len,
                           Error *err);
/* Every preset's switches as one Markdown table (docs/engine.md's, by `bigbatch help
 * --markdown presets`), in the words the run prints when a preset sets them. */
void optimizer_presets_markdown(FILE *out);
/* The i-th preset's name (0, 1, ...), NULL past the last: for tests and help texts. */
const char *optimizer_preset_at(int i);
/* The preset a bare --opt NAME implies: "paper" for lars, "nvcaffe" for larc, else NULL. */
const char *optimizer_default_preset(const char *name);
Optimizer *optimizer_create(const OptConfig *cfg, const Net *net, Error *err);
void optimizer_destroy(Optimizer *opt);
/* One update at the learning rate lr. check: backend memory read by the backend (NULL: always
 * applied), the update happens only when it is finite (bk_optimizer_update). The host cannot
 * know which without a download, so `updates` counts the step; the caller that downloads the
 * check and finds the step skipped then calls optimizer_step_skipped, so `updates` (AdamW's and
 * LAMB's bias corrections) counts only applied updates. With collect_stats the step downloads
 * the statistics (a skipped step's are the last applied one's). */
void optimizer_step(Optimizer *opt, Net *net, double lr, const double *check);
void optimizer_step_skipped(Optimizer *opt);
static inline Tensor *optimizer_slot(Optimizer *opt, int param, int slot)
{
    return &opt->slots[param * opt->n_slots + slot];
}


#endif
