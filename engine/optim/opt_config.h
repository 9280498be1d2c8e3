/* An optimizer's configuration and the statistics an update reports: plain data shared
 * by the engine (optimizer.h) and the backends that run the updates (backend.h).
 *
 * Optimizers (OptConfig.name): "sgd" (torch.optim.SGD), "lars" and "larc" (one
 * implementation whose behaviour is the set of lars_* switches below; presets fill
 * them, see optimizer_apply_preset), "adamw" (torch.optim.AdamW) and "lamb". */
#ifndef BB_OPT_CONFIG_H
#define BB_OPT_CONFIG_H
#include <stdbool.h>

#include "../net/param_kind.h"

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
    /* LARS / LARC switches (see cpu/optim_lars.c; presets in optimizer.c) */
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

#endif
