/* The optimizer interface: one update over all parameters of a net, given the
 * global learning rate of this iteration. Per-parameter state lives in named
 * slots (e.g. "momentum_buffer") so checkpoints can save any optimizer's state.
 *
 * Optimizers (OptConfig.name): "sgd" (torch.optim.SGD), "lars" and "larc" (one
 * engine, lars.c, whose behaviour is the set of lars_* switches below; presets
 * fill them, see optimizer_apply_preset), "adamw" (torch.optim.AdamW) and "lamb". */
#ifndef BB_OPTIMIZER_H
#define BB_OPTIMIZER_H
#include <stdbool.h>
#include <stddef.h>

#include "net.h"
#include "util.h"

/* Ratio denominator of the local rate r = eta * ||w|| / denominator. */
typedef enum {
    LARS_DENOM_G_WD,    /* ||g|| + wd*||w|| + eps (paper, TF contrib, apex, timm, MLPerf) */
    LARS_DENOM_G,       /* ||g|| + eps (NVCaffe 0.16/0.17.0 LARC, GPU path) */
    LARS_DENOM_DECAYED, /* ||g + wd*w|| + eps (TF Model Garden, classic momentum) */
    LARS_DENOM_UPDATE,  /* ||update after momentum|| + eps (TF Model Garden, non-classic) */
} LarsDenom;

/* Where the global LR and the local rate enter relative to momentum. g' is the
 * gradient plus the coupled weight decay when lars_wd_in_update. */
typedef enum {
    LARS_LR_INSIDE,    /* v = m*v + lr_eff*g'; w -= v (paper, NVCaffe, Model Garden, MLPerf) */
    LARS_LR_AFTER,     /* b = m*b + r*g' (torch SGD on the scaled grad); w -= lr*b (apex, timm) */
    LARS_TRUST_AFTER,  /* b = m*b + g'; w -= lr*r*b: the current lr*r multiplies the whole
                        * accumulator (TF contrib; Model Garden non-classic) */
} LarsMomentum;

/* LARC clipping of the local rate. */
typedef enum {
    LARC_SCALE,        /* no clip: effective rate = lr * r */
    LARC_CLIP_NVCAFFE, /* effective rate = min(lr, r) (absolute) */
    LARC_CLIP_APEX,    /* r = min(r / lr, 1), effective rate = lr * r */
} LarcPolicy;

/* What happens when ||w|| = 0 or ||g|| = 0 (or the denominator is 0). */
typedef enum {
    LARS_GUARD_RATIO_ONE, /* r = 1, weight decay still added (all but apex) */
    LARS_GUARD_APEX,      /* r = 1, gradient untouched and weight decay skipped this step */
} LarsGuard;

/* lars_exclude bits: parameter kinds excluded from layer adaptation (r = 1) and
 * from weight decay. Also used by adamw (weight decay only) and lamb (both). */
#define OPT_EXCLUDE_KIND(k) (1u << (k))
#define OPT_EXCLUDE_BIAS (OPT_EXCLUDE_KIND(PARAM_BIAS))
#define OPT_EXCLUDE_BN (OPT_EXCLUDE_KIND(PARAM_BN_SCALE) | OPT_EXCLUDE_KIND(PARAM_BN_SHIFT))

typedef struct {
    char name[16];        /* "sgd", "lars", "larc", "adamw", "lamb" */
    double momentum;      /* 0 = plain SGD */
    double dampening;     /* sgd, and lars with LARS_LR_AFTER (torch SGD underneath) */
    bool nesterov;
    double weight_decay;  /* sgd/lars: coupled (wd*w added to the gradient) unless decoupled_wd */
    bool decoupled_wd;    /* sgd/lars: w -= lr*wd*w beside the step; adamw/lamb: always decoupled */
    /* LARS / LARC switches (see lars.c) */
    char lars_variant[16]; /* preset that filled them ("" = set by hand / defaults = paper) */
    int lars_denom;        /* LarsDenom */
    bool lars_wd_in_update;/* add wd*w to the update direction (false: TF contrib) */
    int lars_momentum;     /* LarsMomentum */
    int larc_policy;       /* LarcPolicy */
    int lars_guard;        /* LarsGuard */
    bool lars_adapt_if_wd; /* timm: adapt only where the parameter's wd != 0 */
    unsigned lars_exclude; /* OPT_EXCLUDE_* bitmask of ParamKind */
    double eta;            /* trust coefficient */
    double lars_eps;       /* added to the ratio denominator */
    /* Adam family */
    double beta1, beta2, adam_eps;
} OptConfig;

/* Per-parameter statistics of the last update (filled when opt->collect_stats). */
typedef struct {
    double w_norm;       /* ||w|| before the update */
    double g_norm;       /* ||g|| of the data loss, before weight decay */
    double local_rate;   /* r after clipping (1 for non-layer-wise optimizers) */
    double eff_rate;     /* global lr x local rate after clipping */
    double update_ratio; /* ||w_before - w_after|| / ||w_before|| (0 when ||w|| = 0) */
} OptStats;

typedef struct Optimizer Optimizer;
struct Optimizer {
    OptConfig cfg;
    int n_slots;
    const char *slot_names[4];
    Tensor *slots;        /* n_params * n_slots, slot s of param p at [p * n_slots + s] */
    int n_params;
    long updates;         /* number of updates applied */
    void (*update)(Optimizer *opt, Net *net, double lr);
    bool collect_stats;   /* fill stats on every update */
    OptStats *stats;      /* n_params entries */
    Tensor scratch;       /* largest parameter size: previous weights for update_ratio */
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
/* The preset a bare --opt NAME implies: "paper" for lars, "nvcaffe" for larc, else NULL. */
const char *optimizer_default_preset(const char *name);
Optimizer *optimizer_create(const OptConfig *cfg, const Net *net, Error *err);
void optimizer_destroy(Optimizer *opt);
void optimizer_step(Optimizer *opt, Net *net, double lr);
static inline Tensor *optimizer_slot(Optimizer *opt, int param, int slot)
{
    return &opt->slots[param * opt->n_slots + slot];
}

/* For the optimizer implementations. */
bool optimizer_excluded(const OptConfig *c, const Param *p);
/* Saves w into opt->scratch when collecting statistics. */
void optimizer_stats_before(Optimizer *opt, Backend *bk, int p, const Param *pr);
/* Records the statistics of parameter p after its update. */
void optimizer_stats_after(Optimizer *opt, Backend *bk, int p, const Param *pr, double w_norm,
                           double g_norm, double local_rate, double eff_rate);

#endif
