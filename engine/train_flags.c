/* The flags of `bigbatch train`, parsed into a TrainConfig. Shared by the CLI and by the
 * experiment files, whose keys are these flags: one parser, one set of error messages. */
#include "train_flags.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "opt_names.h"

static int bad_choice(const char *flag, const char *value, const char *choices, Error *err)
{
    error_set(err, "%s: '%s' is not one of %s", flag, value, choices);
    return -1;
}

/* Index of s in a NULL-terminated list of names (in the order of the enum it maps to), or -1. */
static int choice(const char *s, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* "30,60,80" -> milestones in epochs */
static int parse_milestones(const char *s, ScheduleConfig *sched, Error *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    sched->n_milestones = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (sched->n_milestones == SCHEDULE_MAX_MILESTONES) {
            error_set(err, "--milestones: more than %d epochs", SCHEDULE_MAX_MILESTONES);
            return -1;
        }
        if (cli_parse_double("--milestones", tok, &sched->milestones[sched->n_milestones], err)) return -1;
        sched->n_milestones++;
    }
    return 0;
}

enum {
    OPT_MODEL = 256, OPT_DATA, OPT_DATA_ROOT, OPT_IMAGE_SIZE, OPT_AUGMENT, OPT_TRAIN_SUBSET, OPT_TEST_SUBSET,
    OPT_EPOCHS, OPT_STEPS, OPT_BATCH, OPT_EVAL_BATCH, OPT_EVAL_EVERY, OPT_STOP_AT_ACC, OPT_LR, OPT_MOMENTUM, OPT_DAMPENING,
    OPT_NESTEROV, OPT_WD, OPT_SMOOTHING, OPT_SEED, OPT_THREADS, OPT_SAVE, OPT_SAVE_EVERY,
    OPT_RESUME, OPT_QUIET, OPT_HELP, OPT_LR_SCALING, OPT_BASE_BATCH, OPT_LR_POLICY, OPT_LR_GAMMA,
    OPT_LR_STEP_EPOCHS, OPT_MILESTONES, OPT_POLY_POWER, OPT_END_LR, OPT_POLY_HORIZON,
    OPT_WARMUP_EPOCHS, OPT_WARMUP_START_LR, OPT_WARMUP_SHAPE, OPT_OPT, OPT_LARS_VARIANT,
    OPT_LARC_POLICY, OPT_ETA, OPT_LARS_EPS, OPT_LARS_EXCLUDE, OPT_DECOUPLED_WD, OPT_BETA1, OPT_BETA2,
    OPT_ADAM_EPS, OPT_LAYER_STATS, OPT_LAYER_STATS_EVERY, OPT_MICRO_BATCH, OPT_WORKERS_EMULATED,
    OPT_NOISE_SCALE, OPT_LARS_DENOM, OPT_LARS_WD_IN_UPDATE, OPT_LARS_MOMENTUM, OPT_LARS_GUARD,
    OPT_LARS_ADAPT_IF_WD, OPT_DB, OPT_RUN_ID, OPT_DIVERGE_FACTOR, OPT_BUCKET_MB, OPT_PLAIN_ALLREDUCE, OPT_SYNC_BN
};

static const struct option LONG_OPTS[] = {
    {"model", required_argument, 0, OPT_MODEL},
    {"data", required_argument, 0, OPT_DATA},
    {"data-root", required_argument, 0, OPT_DATA_ROOT},
    {"image-size", required_argument, 0, OPT_IMAGE_SIZE},
    {"augment", required_argument, 0, OPT_AUGMENT},
    {"train-subset", required_argument, 0, OPT_TRAIN_SUBSET},
    {"test-subset", required_argument, 0, OPT_TEST_SUBSET},
    {"epochs", required_argument, 0, OPT_EPOCHS},
    {"steps", required_argument, 0, OPT_STEPS},
    {"batch", required_argument, 0, OPT_BATCH},
    {"eval-batch", required_argument, 0, OPT_EVAL_BATCH},
    {"eval-every", required_argument, 0, OPT_EVAL_EVERY},
    {"stop-at-acc", required_argument, 0, OPT_STOP_AT_ACC},
    {"lr", required_argument, 0, OPT_LR},
    {"momentum", required_argument, 0, OPT_MOMENTUM},
    {"dampening", required_argument, 0, OPT_DAMPENING},
    {"nesterov", no_argument, 0, OPT_NESTEROV},
    {"weight-decay", required_argument, 0, OPT_WD},
    {"label-smoothing", required_argument, 0, OPT_SMOOTHING},
    {"seed", required_argument, 0, OPT_SEED},
    {"threads", required_argument, 0, OPT_THREADS},
    {"save", required_argument, 0, OPT_SAVE},
    {"save-every", required_argument, 0, OPT_SAVE_EVERY},
    {"resume", required_argument, 0, OPT_RESUME},
    {"quiet", no_argument, 0, OPT_QUIET},
    {"help", no_argument, 0, OPT_HELP},
    {"lr-scaling", required_argument, 0, OPT_LR_SCALING},
    {"base-batch", required_argument, 0, OPT_BASE_BATCH},
    {"lr-policy", required_argument, 0, OPT_LR_POLICY},
    {"lr-gamma", required_argument, 0, OPT_LR_GAMMA},
    {"lr-step-epochs", required_argument, 0, OPT_LR_STEP_EPOCHS},
    {"milestones", required_argument, 0, OPT_MILESTONES},
    {"poly-power", required_argument, 0, OPT_POLY_POWER},
    {"end-lr", required_argument, 0, OPT_END_LR},
    {"poly-horizon", required_argument, 0, OPT_POLY_HORIZON},
    {"warmup-epochs", required_argument, 0, OPT_WARMUP_EPOCHS},
    {"warmup-start-lr", required_argument, 0, OPT_WARMUP_START_LR},
    {"warmup-shape", required_argument, 0, OPT_WARMUP_SHAPE},
    {"opt", required_argument, 0, OPT_OPT},
    {"lars-variant", required_argument, 0, OPT_LARS_VARIANT},
    {"larc-policy", required_argument, 0, OPT_LARC_POLICY},
    {"eta", required_argument, 0, OPT_ETA},
    {"lars-eps", required_argument, 0, OPT_LARS_EPS},
    {"lars-exclude", required_argument, 0, OPT_LARS_EXCLUDE},
    {"decoupled-wd", no_argument, 0, OPT_DECOUPLED_WD},
    {"beta1", required_argument, 0, OPT_BETA1},
    {"beta2", required_argument, 0, OPT_BETA2},
    {"adam-eps", required_argument, 0, OPT_ADAM_EPS},
    {"layer-stats", no_argument, 0, OPT_LAYER_STATS},
    {"layer-stats-every", required_argument, 0, OPT_LAYER_STATS_EVERY},
    {"micro-batch", required_argument, 0, OPT_MICRO_BATCH},
    {"workers-emulated", required_argument, 0, OPT_WORKERS_EMULATED},
    {"noise-scale", no_argument, 0, OPT_NOISE_SCALE},
    {"lars-denom", required_argument, 0, OPT_LARS_DENOM},
    {"lars-wd-in-update", required_argument, 0, OPT_LARS_WD_IN_UPDATE},
    {"lars-momentum", required_argument, 0, OPT_LARS_MOMENTUM},
    {"lars-guard", required_argument, 0, OPT_LARS_GUARD},
    {"lars-adapt-if-wd", required_argument, 0, OPT_LARS_ADAPT_IF_WD},
    {"db", required_argument, 0, OPT_DB},
    {"run-id", required_argument, 0, OPT_RUN_ID},
    {"diverge-factor", required_argument, 0, OPT_DIVERGE_FACTOR},
    {"bucket-mb", required_argument, 0, OPT_BUCKET_MB},
    {"plain-allreduce", no_argument, 0, OPT_PLAIN_ALLREDUCE},
    {"sync-bn", no_argument, 0, OPT_SYNC_BN},
    {0, 0, 0, 0},
};

/* LARS/LARC flags given by hand: applied over the preset, whatever their order. */
typedef struct {
    const char *variant;
    int larc_policy; /* -1 here and below: the preset's */
    int denom, wd_in_update, momentum, guard, adapt_if_wd;
    bool has_eta, has_eps, has_exclude;
    double eta, eps;
    unsigned exclude;
} OptOverrides;

static int parse_exclude(const char *s, unsigned *out, Error *err)
{
    if (!strcmp(s, "none")) *out = 0;
    else if (!strcmp(s, "bias")) *out = OPT_EXCLUDE_BIAS;
    else if (!strcmp(s, "bn")) *out = OPT_EXCLUDE_BN;
    else if (!strcmp(s, "bias,bn") || !strcmp(s, "bn,bias")) *out = OPT_EXCLUDE_BIAS | OPT_EXCLUDE_BN;
    else return bad_choice("--lars-exclude", s, "bias,bn, bias, bn, none", err);
    return 0;
}

/* Presets first, then the switches given by hand; `what` says what the preset set. */
static int resolve_optimizer(OptConfig *opt, const OptOverrides *ov, char *what, size_t len, Error *err)
{
    what[0] = 0;
    const char *variant = ov->variant ? ov->variant : optimizer_default_preset(opt->name);
    const OptName *known = opt_name_find(opt->name);
    if (ov->variant && !(known && known->lars_switches)) {
        error_set(err, "--lars-variant needs --opt lars or --opt larc");
        return -1;
    }
    if (variant) {
        Error e = {{0}};
        if (optimizer_apply_preset(opt, variant, what, len, &e) != 0) {
            error_set(err, "--lars-variant: %s", e.msg);
            return -1;
        }
    }
    size_t used = strlen(what);
    const char *sep = used ? "; then by hand:" : "set by hand:";
    static const char *const policy_names[] = {"scale", "clip", "apex-clip"};
    static const char *const denom_names[] = {"g-wd", "g", "decayed", "update"};
    static const char *const momentum_names[] = {"inside", "after", "trust-after"};
    static const char *const guard_names[] = {"one", "apex"};
    static const char *const yes_no[] = {"no", "yes"};
    struct { int value; int *field; bool *flag; const char *name; const char *const *names; } sw[] = {
        {ov->larc_policy, &opt->larc_policy, NULL, "larc-policy", policy_names},
        {ov->denom, &opt->lars_denom, NULL, "lars-denom", denom_names},
        {ov->wd_in_update, NULL, &opt->lars_wd_in_update, "lars-wd-in-update", yes_no},
        {ov->momentum, &opt->lars_momentum, NULL, "lars-momentum", momentum_names},
        {ov->guard, &opt->lars_guard, NULL, "lars-guard", guard_names},
        {ov->adapt_if_wd, NULL, &opt->lars_adapt_if_wd, "lars-adapt-if-wd", yes_no},
    };
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        if (sw[i].value < 0) continue;
        if (sw[i].field) *sw[i].field = sw[i].value;
        else *sw[i].flag = sw[i].value == 1;
        used += (size_t)snprintf(what + used, used < len ? len - used : 0, "%s %s=%s", sep, sw[i].name,
                                 sw[i].names[sw[i].value]);
        sep = "";
    }
    if (ov->has_eta) {
        opt->eta = ov->eta;
        used += (size_t)snprintf(what + used, used < len ? len - used : 0, "%s eta=%g", sep, ov->eta);
        sep = "";
    }
    if (ov->has_eps) {
        opt->lars_eps = ov->eps;
        used += (size_t)snprintf(what + used, used < len ? len - used : 0, "%s lars-eps=%g", sep, ov->eps);
        sep = "";
    }
    if (ov->has_exclude) {
        opt->lars_exclude = ov->exclude;
        snprintf(what + used, used < len ? len - used : 0, "%s lars-exclude=%s%s%s", sep,
                 ov->exclude & OPT_EXCLUDE_BIAS ? "bias" : "",
                 (ov->exclude & OPT_EXCLUDE_BIAS) && (ov->exclude & OPT_EXCLUDE_BN) ? "," : "",
                 ov->exclude ? (ov->exclude & OPT_EXCLUDE_BN ? "bn" : "") : "none");
    }
    return 0;
}

/* Fills cfg from argv; returns 0, 1 for --help, -1 on a bad flag. */
static int parse_flags(int argc, char **argv, TrainFlags *out, OptOverrides *ov, Error *err)
{
    TrainConfig *cfg = &out->cfg;
    optind = 1;
    opterr = 0;
    int c;
    long v, workers = 0;
    double x;
    while ((c = getopt_long(argc, argv, "", LONG_OPTS, NULL)) != -1) {
        const char *flag = optind > 1 ? argv[optind - 1] : "?";
        switch (c) {
        case OPT_MODEL: cfg->model = optarg; break;
        case OPT_DATA: cfg->data = optarg; break;
        case OPT_DATA_ROOT: cfg->data_root = optarg; break;
        case OPT_IMAGE_SIZE: if (cli_parse_long("--image-size", optarg, 8, &v, err)) return -1; cfg->image_size = (int)v; break;
        case OPT_AUGMENT:
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                error_set(err, "--augment: '%s' is not on or off", optarg);
                return -1;
            }
            cfg->augment = strcmp(optarg, "on") == 0;
            break;
        case OPT_TRAIN_SUBSET: if (cli_parse_long("--train-subset", optarg, 1, &v, err)) return -1; cfg->train_subset = (int)v; break;
        case OPT_TEST_SUBSET: if (cli_parse_long("--test-subset", optarg, 1, &v, err)) return -1; cfg->test_subset = (int)v; break;
        case OPT_EPOCHS: if (cli_parse_long("--epochs", optarg, 1, &v, err)) return -1; cfg->epochs = (int)v; break;
        case OPT_STEPS: if (cli_parse_long("--steps", optarg, 1, &v, err)) return -1; cfg->steps = v; break;
        case OPT_BATCH: if (cli_parse_long("--batch", optarg, 1, &v, err)) return -1; cfg->batch = (int)v; break;
        case OPT_EVAL_EVERY: if (cli_parse_long("--eval-every", optarg, 1, &v, err)) return -1; cfg->eval_every = v; break;
        case OPT_STOP_AT_ACC:
            if (cli_parse_double("--stop-at-acc", optarg, &x, err)) return -1;
            if (!(x > 0 && x <= 1)) {
                error_set(err, "--stop-at-acc: %g is not a test accuracy in (0, 1]", x);
                return -1;
            }
            cfg->stop_at_acc = x;
            break;
        case OPT_EVAL_BATCH: if (cli_parse_long("--eval-batch", optarg, 1, &v, err)) return -1; cfg->eval_batch = (int)v; break;
        case OPT_LR: if (cli_parse_double("--lr", optarg, &cfg->lr, err)) return -1; break;
        case OPT_MOMENTUM: if (cli_parse_double("--momentum", optarg, &cfg->opt.momentum, err)) return -1; break;
        case OPT_DAMPENING: if (cli_parse_double("--dampening", optarg, &cfg->opt.dampening, err)) return -1; break;
        case OPT_NESTEROV: cfg->opt.nesterov = true; break;
        case OPT_WD: if (cli_parse_double("--weight-decay", optarg, &cfg->opt.weight_decay, err)) return -1; break;
        case OPT_SMOOTHING:
            if (cli_parse_double("--label-smoothing", optarg, &x, err)) return -1;
            if (x < 0 || x >= 1) {
                error_set(err, "--label-smoothing: %g is not in [0, 1)", x);
                return -1;
            }
            cfg->label_smoothing = x;
            break;
        case OPT_SEED: if (cli_parse_long("--seed", optarg, 0, &v, err)) return -1; cfg->seed = (unsigned long long)v; break;
        case OPT_THREADS: if (cli_parse_long("--threads", optarg, 1, &v, err)) return -1; cfg->threads = (int)v; break;
        case OPT_SAVE: cfg->save = optarg; break;
        case OPT_SAVE_EVERY: if (cli_parse_long("--save-every", optarg, 0, &v, err)) return -1; cfg->save_every = (int)v; break;
        case OPT_RESUME: cfg->resume = optarg; break;
        case OPT_QUIET: cfg->quiet = true; break;
        case OPT_HELP: return 1;
        case OPT_DB: out->db = optarg; break;
        case OPT_RUN_ID: out->run_id = optarg; break;
        case OPT_BUCKET_MB:
            if (cli_parse_double("--bucket-mb", optarg, &cfg->bucket_mb, err)) return -1;
            if (!(cfg->bucket_mb > 0)) {
                error_set(err, "--bucket-mb: %g is not a positive size", cfg->bucket_mb);
                return -1;
            }
            break;
        case OPT_PLAIN_ALLREDUCE: cfg->plain_allreduce = true; break;
        case OPT_SYNC_BN: cfg->sync_bn = true; break;
        case OPT_DIVERGE_FACTOR:
            if (cli_parse_double("--diverge-factor", optarg, &cfg->diverge_factor, err)) return -1;
            if (cfg->diverge_factor < 0) {
                error_set(err, "--diverge-factor: %g is negative (0 turns the check off)", cfg->diverge_factor);
                return -1;
            }
            break;
        case OPT_LR_SCALING:
            if (schedule_parse_scaling(optarg, &cfg->lr_scaling)) return bad_choice("--lr-scaling", optarg, "none, linear, sqrt", err);
            break;
        case OPT_BASE_BATCH: if (cli_parse_long("--base-batch", optarg, 1, &v, err)) return -1; cfg->base_batch = (int)v; break;
        case OPT_LR_POLICY:
            if (schedule_parse_policy(optarg, &cfg->sched.policy))
                return bad_choice("--lr-policy", optarg, "fixed, step, multistep, poly, cosine", err);
            break;
        case OPT_LR_GAMMA: if (cli_parse_double("--lr-gamma", optarg, &cfg->sched.gamma, err)) return -1; break;
        case OPT_LR_STEP_EPOCHS: if (cli_parse_double("--lr-step-epochs", optarg, &cfg->sched.step_epochs, err)) return -1; break;
        case OPT_MILESTONES: if (parse_milestones(optarg, &cfg->sched, err)) return -1; break;
        case OPT_POLY_POWER: if (cli_parse_double("--poly-power", optarg, &cfg->sched.power, err)) return -1; break;
        case OPT_END_LR: if (cli_parse_double("--end-lr", optarg, &cfg->sched.end_lr, err)) return -1; break;
        case OPT_POLY_HORIZON:
            if (schedule_parse_poly_horizon(optarg, &cfg->sched.poly_horizon))
                return bad_choice("--poly-horizon", optarg, "total, after-warmup", err);
            break;
        case OPT_WARMUP_EPOCHS: if (cli_parse_double("--warmup-epochs", optarg, &cfg->sched.warmup_epochs, err)) return -1; break;
        case OPT_WARMUP_START_LR: if (cli_parse_double("--warmup-start-lr", optarg, &cfg->sched.warmup_start_lr, err)) return -1; break;
        case OPT_WARMUP_SHAPE:
            if (schedule_parse_warmup_shape(optarg, &cfg->sched.warmup_shape))
                return bad_choice("--warmup-shape", optarg, "linear, quadratic", err);
            break;
        case OPT_OPT: snprintf(cfg->opt.name, sizeof cfg->opt.name, "%s", optarg); break;
        case OPT_LARS_VARIANT: ov->variant = optarg; break;
        case OPT_LARC_POLICY:
            if ((ov->larc_policy = choice(optarg, (const char *[]){"scale", "clip", "apex-clip", NULL})) < 0)
                return bad_choice("--larc-policy", optarg, "clip, apex-clip, scale", err);
            break;
        case OPT_LARS_DENOM:
            if ((ov->denom = choice(optarg, (const char *[]){"g-wd", "g", "decayed", "update", NULL})) < 0)
                return bad_choice("--lars-denom", optarg, "g-wd, g, decayed, update", err);
            break;
        case OPT_LARS_WD_IN_UPDATE:
            if ((ov->wd_in_update = choice(optarg, (const char *[]){"no", "yes", NULL})) < 0)
                return bad_choice("--lars-wd-in-update", optarg, "yes, no", err);
            break;
        case OPT_LARS_MOMENTUM:
            if ((ov->momentum = choice(optarg, (const char *[]){"inside", "after", "trust-after", NULL})) < 0)
                return bad_choice("--lars-momentum", optarg, "inside, after, trust-after", err);
            break;
        case OPT_LARS_GUARD:
            if ((ov->guard = choice(optarg, (const char *[]){"one", "apex", NULL})) < 0)
                return bad_choice("--lars-guard", optarg, "one, apex", err);
            break;
        case OPT_LARS_ADAPT_IF_WD:
            if ((ov->adapt_if_wd = choice(optarg, (const char *[]){"no", "yes", NULL})) < 0)
                return bad_choice("--lars-adapt-if-wd", optarg, "yes, no", err);
            break;
        case OPT_ETA: if (cli_parse_double("--eta", optarg, &ov->eta, err)) return -1; ov->has_eta = true; break;
        case OPT_LARS_EPS: if (cli_parse_double("--lars-eps", optarg, &ov->eps, err)) return -1; ov->has_eps = true; break;
        case OPT_LARS_EXCLUDE:
            if (parse_exclude(optarg, &ov->exclude, err)) return -1;
            ov->has_exclude = true;
            break;
        case OPT_DECOUPLED_WD: cfg->opt.decoupled_wd = true; break;
        case OPT_BETA1: if (cli_parse_double("--beta1", optarg, &cfg->opt.beta1, err)) return -1; break;
        case OPT_BETA2: if (cli_parse_double("--beta2", optarg, &cfg->opt.beta2, err)) return -1; break;
        case OPT_ADAM_EPS: if (cli_parse_double("--adam-eps", optarg, &cfg->opt.adam_eps, err)) return -1; break;
        case OPT_LAYER_STATS: cfg->layer_stats = true; break;
        case OPT_MICRO_BATCH: if (cli_parse_long("--micro-batch", optarg, 1, &v, err)) return -1; cfg->micro_batch = (int)v; break;
        case OPT_WORKERS_EMULATED: if (cli_parse_long("--workers-emulated", optarg, 1, &v, err)) return -1; workers = v; break;
        case OPT_NOISE_SCALE: cfg->noise_scale = true; break;
        case OPT_LAYER_STATS_EVERY:
            if (cli_parse_long("--layer-stats-every", optarg, 1, &v, err)) return -1;
            cfg->layer_stats_every = (int)v;
            break;
        case ':':
            error_set(err, "%s needs a value", flag);
            return -1;
        default:
            error_set(err, "unknown option '%s' (bigbatch train --help)", flag);
            return -1;
        }
    }
    if (optind < argc) {
        error_set(err, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (workers > 0) {
        if (cfg->micro_batch > 0) {
            error_set(err, "give --micro-batch or --workers-emulated, not both");
            return -1;
        }
        if (cfg->batch % workers != 0) {
            error_set(err, "--batch %d is not divisible by --workers-emulated %ld",
                    cfg->batch, workers);
            return -1;
        }
        cfg->micro_batch = cfg->batch / (int)workers;
    }
    if (cfg->lr < 0 || cfg->opt.momentum < 0 || cfg->opt.momentum >= 1 || cfg->opt.weight_decay < 0) {
        error_set(err, "--lr and --weight-decay must be >= 0 and --momentum in [0, 1)");
        return -1;
    }
    return 0;
}

int train_flags_parse(int argc, char **argv, TrainFlags *out, Error *err)
{
    memset(out, 0, sizeof *out);
    train_config_defaults(&out->cfg);
    OptOverrides ov = {NULL, -1, -1, -1, -1, -1, -1, false, false, false, 0, 0, 0};
    int parsed = parse_flags(argc, argv, out, &ov, err);
    if (parsed != 0) return parsed;
    return resolve_optimizer(&out->cfg.opt, &ov, out->preset_said, sizeof out->preset_said, err);
}

int train_flag_takes_value(const char *name)
{
    for (const struct option *o = LONG_OPTS; o->name; o++)
        if (!strcmp(o->name, name)) return o->val == OPT_HELP ? -1 : o->has_arg == required_argument;
    return -1;
}
