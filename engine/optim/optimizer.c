/* Optimizer construction by name, LARS/LARC presets and the shared state
 * bookkeeping (slots, per-parameter statistics). */
#include "optimizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_names.h"
#include "opt_switches.h"

void opt_config_defaults(OptConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->name, sizeof cfg->name, "sgd");
    /* LARS switches at the paper form (used only by name "lars"/"larc"). */
    cfg->lars_denom = LARS_DENOM_G_WD;
    cfg->lars_wd_in_update = true;
    cfg->lars_momentum = LARS_LR_INSIDE;
    cfg->larc_policy = LARC_SCALE;
    cfg->lars_guard = LARS_GUARD_RATIO_ONE;
    cfg->eta = 0.001;
    cfg->beta1 = 0.9;
    cfg->beta2 = 0.999;
    cfg->adam_eps = 1e-8;
}

/* One row per preset; see docs/papers.md section 2h. */
typedef struct {
    const char *variant, *name;
    int denom;
    bool wd_in_update;
    int momentum;
    int policy;
    int guard;
    bool adapt_if_wd;
    unsigned exclude;
    double eta, eps;
    const char *source;
} LarsPreset;

static const LarsPreset presets[] = {
    {"paper", "lars", LARS_DENOM_G_WD, true, LARS_LR_INSIDE, LARC_SCALE, LARS_GUARD_RATIO_ONE, false, 0,
     0.001, 0, "You et al. 2017 / NVCaffe Aug 2017"},
    {"nvcaffe", "larc", LARS_DENOM_G, true, LARS_LR_INSIDE, LARC_SCALE, LARS_GUARD_RATIO_ONE, false, 0,
     0.001, 0, "NVCaffe 0.16/0.17.0 LARC, policy scale (proto default)"},
    {"nvcaffe-scale", "larc", LARS_DENOM_G, true, LARS_LR_INSIDE, LARC_SCALE, LARS_GUARD_RATIO_ONE, false,
     0, 0.001, 0, "NVCaffe 0.16/0.17.0 LARC, policy scale"},
    {"nvcaffe-clip", "larc", LARS_DENOM_G, true, LARS_LR_INSIDE, LARC_CLIP_NVCAFFE, LARS_GUARD_RATIO_ONE,
     false, 0, 0.001, 0, "NVCaffe 0.16/0.17.0 LARC, policy clip"},
    {"apex", "larc", LARS_DENOM_G_WD, true, LARS_LR_AFTER, LARC_CLIP_APEX, LARS_GUARD_APEX, false, 0, 0.02,
     1e-8, "apex.parallel.LARC (clip=True) around torch SGD"},
    {"tf", "lars", LARS_DENOM_G_WD, false, LARS_TRUST_AFTER, LARC_SCALE, LARS_GUARD_RATIO_ONE, false, 0,
     0.001, 0, "TF contrib LARSOptimizer (skip_list None; wd expected in the loss)"},
    {"timm", "lars", LARS_DENOM_G_WD, true, LARS_LR_AFTER, LARC_SCALE, LARS_GUARD_RATIO_ONE, true, 0, 0.001,
     1e-8, "timm Lars (trust_clip False, always_adapt False)"},
    {"mlperf", "lars", LARS_DENOM_G_WD, true, LARS_LR_INSIDE, LARC_SCALE, LARS_GUARD_RATIO_ONE, false,
     OPT_EXCLUDE_BIAS | OPT_EXCLUDE_BN, 0.001, 1e-7, "MLPerf TF2 reference (eps 0 -> keras 1e-7)"},
    {"tf-garden", "lars", LARS_DENOM_DECAYED, true, LARS_LR_INSIDE, LARC_SCALE, LARS_GUARD_RATIO_ONE, false,
     0, 0.001, 0, "TF Model Garden LARS, classic_momentum True"},
    {"tf-garden-nc", "lars", LARS_DENOM_UPDATE, true, LARS_TRUST_AFTER, LARC_SCALE, LARS_GUARD_RATIO_ONE,
     false, 0, 0.001, 0, "TF Model Garden LARS, classic_momentum False"},
};

static const char *exclude_name(unsigned x) { return x ? "bias,bn (no ratio, no wd)" : "none"; }
static const char *yes_no(bool b) { return b ? "yes" : "no"; }

/* A table cell: text with '|' escaped, so the ratio's norms stay in their column. */
static void md_cell(FILE *out, const char *text)
{
    fputs(" ", out);
    for (const char *c = text; *c; c++) {
        if (*c == '|') fputc('\\', out);
        fputc(*c, out);
    }
    fputs(" |", out);
}

void optimizer_presets_markdown(FILE *out)
{
    fputs("| preset | opt | ratio eta\\|w\\|/(denominator) | wd in update | LR and momentum | clip | zero-norm guard "
          "| adapt only if wd | excluded | eta | eps | after |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
          out);
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const LarsPreset *p = &presets[i];
        char eta[32], eps[32], denom[64], momentum[64], policy[64], guard[80];
        snprintf(eta, sizeof eta, "%g", p->eta);
        snprintf(eps, sizeof eps, "%g", p->eps);
        const char *cells[] = {p->variant, p->name, opt_switch_text(OPT_SWITCH_DENOM, p->denom, denom, sizeof denom),
                               yes_no(p->wd_in_update),
                               opt_switch_text(OPT_SWITCH_MOMENTUM, p->momentum, momentum, sizeof momentum),
                               opt_switch_text(OPT_SWITCH_POLICY, p->policy, policy, sizeof policy),
                               opt_switch_text(OPT_SWITCH_GUARD, p->guard, guard, sizeof guard),
                               yes_no(p->adapt_if_wd), exclude_name(p->exclude), eta, eps, p->source};
        fputs("|", out);
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) md_cell(out, cells[c]);
        fputs("\n", out);
    }
}

const char *optimizer_preset_at(int i)
{
    return i >= 0 && i < (int)(sizeof presets / sizeof presets[0]) ? presets[i].variant : NULL;
}

const char *optimizer_default_preset(const char *name)
{
    if (strcmp(name, "lars") == 0) return "paper";
    if (strcmp(name, "larc") == 0) return "nvcaffe";
    return NULL;
}

/* What a preset sets, in the switches' names (opt_switches.h), into what[len]. */
static void preset_said(const LarsPreset *ps, char *what, size_t len)
{
    char denom[64], momentum[64], policy[64], guard[80];
    snprintf(what, len,
             "%s [%s]: opt=%s eta=%g eps=%g lars-denom=%s wd-in-update=%s lars-momentum=%s "
             "larc-policy=%s lars-guard=%s adapt-only-if-wd=%s exclude=%s",
             ps->variant, ps->source, ps->name, ps->eta, ps->eps,
             opt_switch_text(OPT_SWITCH_DENOM, ps->denom, denom, sizeof denom), yes_no(ps->wd_in_update),
             opt_switch_text(OPT_SWITCH_MOMENTUM, ps->momentum, momentum, sizeof momentum),
             opt_switch_text(OPT_SWITCH_POLICY, ps->policy, policy, sizeof policy),
             opt_switch_text(OPT_SWITCH_GUARD, ps->guard, guard, sizeof guard), yes_no(ps->adapt_if_wd),
             exclude_name(ps->exclude));
}

int optimizer_apply_preset(OptConfig *cfg, const char *variant, char *what_it_set, size_t len,
                           Error *err)
{
    const LarsPreset *ps = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].variant, variant) == 0) ps = &presets[i];
    if (!ps) {
        char known[256] = "";
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
            size_t n = strlen(known);
            snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "", presets[i].variant);
        }
        error_set(err, "unknown LARS variant '%s' (known: %s)", variant, known);
        return -1;
    }
    snprintf(cfg->name, sizeof cfg->name, "%s", ps->name);
    snprintf(cfg->lars_variant, sizeof cfg->lars_variant, "%s", ps->variant);
    cfg->lars_denom = ps->denom;
    cfg->lars_wd_in_update = ps->wd_in_update;
    cfg->lars_momentum = ps->momentum;
    cfg->larc_policy = ps->policy;
    cfg->lars_guard = ps->guard;
    cfg->lars_adapt_if_wd = ps->adapt_if_wd;
    cfg->lars_exclude = ps->exclude;
    cfg->eta = ps->eta;
    cfg->lars_eps = ps->eps;
    if (what_it_set && len) preset_said(ps, what_it_set, len);
    return 0;
}

/* The parameter list the backend updates: the net's views and the optimizer's slots. */
static void optimizer_list(Optimizer *opt, const Net *net, size_t largest)
{
    BkParamList *l = &opt->list;
    size_t n = (size_t)(net->n_params ? net->n_params : 1);
    l->n = net->n_params;
    l->w = xcalloc(n, sizeof *l->w, "parameter list");
    l->g = xcalloc(n, sizeof *l->g, "parameter list");
    for (int s = 0; s < 2; s++) l->slot[s] = xcalloc(n, sizeof *l->slot[s], "parameter list");
    l->count = xcalloc(n, sizeof *l->count, "parameter list");
    l->kind = xcalloc(n, sizeof *l->kind, "parameter list");
    for (int p = 0; p < net->n_params; p++) {
        const Param *pr = &net->params[p];
        l->w[p] = pr->value.data;
        l->g[p] = pr->grad.data;
        l->count[p] = tensor_count(&pr->value);
        l->kind[p] = (unsigned char)pr->kind;
        for (int s = 0; s < opt->n_slots; s++) l->slot[s][p] = optimizer_slot(opt, p, s)->data;
    }
    tensor_alloc(&opt->scratch, net->bk, 1, 1, 1, (int)largest);
    l->scratch = opt->scratch.data;
    opt->norms = bk_buffer_alloc(net->bk, 2 * n * sizeof(double));
    opt->stats_dev = bk_buffer_alloc(net->bk, n * sizeof(OptStats));
}

static Optimizer *optimizer_alloc(const OptConfig *cfg, const Net *net, int n_slots, const char *const *slot_names)
{
    Optimizer *opt = xcalloc(1, sizeof *opt, "optimizer");
    opt->cfg = *cfg;
    opt->n_params = net->n_params;
    opt->n_slots = n_slots;
    opt->slot_names[0] = slot_names[0];
    opt->slot_names[1] = slot_names[1];
    opt->slots = xcalloc((size_t)net->n_params * (opt->n_slots ? opt->n_slots : 1), sizeof *opt->slots,
                         "optimizer slots");
    opt->stats = xcalloc((size_t)(net->n_params ? net->n_params : 1), sizeof *opt->stats, "optimizer stats");
    size_t largest = 1;
    for (int p = 0; p < net->n_params; p++) {
        const Param *pr = &net->params[p];
        if (tensor_count(&pr->value) > largest) largest = tensor_count(&pr->value);
        for (int s = 0; s < opt->n_slots; s++)
            tensor_alloc(optimizer_slot(opt, p, s), net->bk, pr->n, pr->c, pr->h, pr->w);
    }
    optimizer_list(opt, net, largest);
    return opt;
}

Optimizer *optimizer_create(const OptConfig *cfg, const Net *net, Error *err)
{
    if (opt_name_check(cfg->name, err) != 0) return NULL;
    const OptName *kind = opt_name_find(cfg->name);
    int n_slots = 0;
    const char *slot_names[2] = {"momentum_buffer", NULL};
    const bool lars = kind->lars_switches;
    if (!kind->adam_moments) {
        n_slots = cfg->momentum > 0 ? 1 : 0;
        if (cfg->nesterov && (cfg->momentum <= 0 || cfg->dampening != 0)) {
            error_set(err, "--nesterov needs --momentum > 0 and zero dampening");
            return NULL;
        }
    } else {
        n_slots = 2;
        slot_names[0] = "exp_avg";
        slot_names[1] = "exp_avg_sq";
        if (!(cfg->beta1 >= 0 && cfg->beta1 < 1 && cfg->beta2 >= 0 && cfg->beta2 < 1)) {
            error_set(err, "%s needs betas in [0, 1) (got %g, %g)", cfg->name, cfg->beta1, cfg->beta2);
            return NULL;
        }
    }
    if (lars) {
        if (cfg->lars_denom < LARS_DENOM_G_WD || cfg->lars_denom > LARS_DENOM_UPDATE ||
            cfg->lars_momentum < LARS_LR_INSIDE || cfg->lars_momentum > LARS_TRUST_AFTER ||
            cfg->larc_policy < LARC_SCALE || cfg->larc_policy > LARC_CLIP_APEX ||
            cfg->lars_guard < LARS_GUARD_RATIO_ONE || cfg->lars_guard > LARS_GUARD_APEX) {
            error_set(err, "LARS switches out of range");
            return NULL;
        }
        if (cfg->lars_denom == LARS_DENOM_UPDATE && cfg->lars_momentum != LARS_TRUST_AFTER) {
            error_set(err, "the |update| ratio denominator needs the ratio applied after momentum");
            return NULL;
        }
        if (cfg->dampening != 0 && cfg->lars_momentum != LARS_LR_AFTER) {
            error_set(err, "LARS dampening exists only with the LR applied after momentum (apex, timm)");
            return NULL;
        }
        if (!(cfg->eta > 0)) {
            error_set(err, "LARS needs eta > 0 (got %g)", cfg->eta);
            return NULL;
        }
    }
    return optimizer_alloc(cfg, net, n_slots, slot_names);
}

void optimizer_destroy(Optimizer *opt)
{
    if (!opt) return;
    for (int i = 0; i < opt->n_params * opt->n_slots; i++) tensor_free(&opt->slots[i]);
    free(opt->slots);
    free(opt->stats);
    tensor_free(&opt->scratch);
    bk_buffer_free(opt->norms);
    bk_buffer_free(opt->stats_dev);
    BkParamList *l = &opt->list;
    free(l->w);
    free(l->g);
    free(l->slot[0]);
    free(l->slot[1]);
    free(l->count);
    free(l->kind);
    free(opt);
}

void optimizer_step(Optimizer *opt, Net *net, double lr, const double *check)
{
    Backend *bk = net->bk;
    double *norms = NULL;
    /* LARS/LARC and LAMB read the norms every step; the others only for statistics */
    if (opt->collect_stats || opt_name_find(opt->cfg.name)->reads_norms) {
        norms = bk_buffer_address(opt->norms);
        bk_param_norms(bk, &opt->list, norms);
    }
    OptStats *stats = opt->collect_stats ? bk_buffer_address(opt->stats_dev) : NULL;
    bk_optimizer_update(bk, &opt->cfg, &opt->list, lr, opt->updates, norms, stats, check);
    /* the step's one download, and only on a step that logs statistics */
    if (stats) bk_download(bk, opt->stats, stats, (size_t)opt->n_params * sizeof *opt->stats);
    opt->updates++;
}

void optimizer_step_skipped(Optimizer *opt) { opt->updates--; }
