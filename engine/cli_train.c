/* `bigbatch train`: one run from flags, printed as a table of epochs. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_args.h"
#include "train.h"
#include "util.h"

static void train_usage(FILE *f, const TrainConfig *d)
{
    fprintf(f,
            "usage: bigbatch train [options]\n"
            "\n"
            "model and data:\n"
            "  --model NAME           model (bigbatch models lists them) [%s]\n"
            "  --data NAME            fashion-mnist | cifar10 | imagefolder | synthetic [%s]\n"
            "  --data-root DIR        dataset location [the dataset's default]\n"
            "  --augment on|off       random crop (pad 4) + horizontal flip [on for cifar10]\n"
            "  --train-subset N       use N training images spread evenly over the set [all]\n"
            "  --test-subset N        use N test images spread evenly over the set [all]\n"
            "schedule:\n"
            "  --epochs N             epochs [%d]\n"
            "  --steps N              stop after N iterations in total [no limit]\n"
            "  --batch N              global batch size; the last partial batch of an epoch is dropped [%d]\n"
            "  --eval-batch N         batch size for evaluation [min(batch, 500)]\n"
            "learning rate, evaluated every iteration:\n"
            "  --lr X                 base learning rate, before --lr-scaling [%g]\n"
            "  --lr-scaling RULE      none | linear (lr*batch/base) | sqrt (lr*sqrt(batch/base)) [none]\n"
            "  --base-batch N         the batch the base LR belongs to [%d]\n"
            "  --lr-policy P          fixed | step | multistep | poly | cosine [fixed]\n"
            "  --lr-gamma X           step/multistep factor [%g]\n"
            "  --lr-step-epochs X     step: multiply by gamma every X epochs [%g]\n"
            "  --milestones E1,E2,..  multistep: epochs where the LR is multiplied by gamma\n"
            "  --poly-power X         poly/cosine: (lr - end)*(1 - t/T)^power + end [%g]\n"
            "  --end-lr X             poly/cosine: final LR [%g]\n"
            "  --poly-horizon H       total (NVCaffe: warmup counts inside the horizon) |\n"
            "                         after-warmup (MLPerf: decay starts after warmup) [total]\n"
            "  --warmup-epochs X      ramp from --warmup-start-lr to the base LR [%g]\n"
            "  --warmup-start-lr X    [%g]\n"
            "  --warmup-shape S       linear | quadratic (NVCaffe rampup) [linear]\n"
            "optimizer:\n"
            "  --opt NAME             sgd | lars | larc | adamw | lamb [sgd]\n"
            "  --lars-variant V       preset of the LARS/LARC switches: paper | nvcaffe (= nvcaffe-scale) |\n"
            "                         nvcaffe-clip | apex | tf | timm | mlperf | tf-garden | tf-garden-nc\n"
            "                         [paper for lars, nvcaffe for larc]; the run prints what it set\n"
            "  --larc-policy P        clip (min(lr, r), NVCaffe) | apex-clip (lr*min(r/lr, 1)) |\n"
            "                         scale (lr*r) [the preset's]\n"
            "  --lars-denom D         ratio eta*||w||/D: g-wd (||g||+wd||w||) | g | decayed (||g+wd w||) |\n"
            "                         update (||update after momentum||) [the preset's]\n"
            "  --lars-wd-in-update B  yes | no: add wd*w to the update direction [the preset's]\n"
            "  --lars-momentum M      inside (v=m v+lr r g') | after (b=m b+r g'; w-=lr b) |\n"
            "                         trust-after (b=m b+g'; w-=lr r b) [the preset's]\n"
            "  --lars-guard G         one (r=1 at a zero norm) | apex (also skip scaling and wd) [the preset's]\n"
            "  --lars-adapt-if-wd B   yes | no: adapt only parameters with weight decay (timm) [the preset's]\n"
            "  --eta X                trust coefficient [the preset's: 0.001, apex 0.02]\n"
            "  --lars-eps X           added to the ratio's denominator [the preset's]\n"
            "  --lars-exclude LIST    bias,bn | bias | bn | none: kinds without adaptation or weight\n"
            "                         decay [the preset's: bias,bn for mlperf, else none]\n"
            "  --decoupled-wd         sgd/lars: w -= lr*wd*w beside the step (adamw/lamb always are)\n"
            "  --beta1 X, --beta2 X, --adam-eps X   adamw/lamb [0.9, 0.999, 1e-8]\n"
            "  --micro-batch M        accumulate the gradient over micro-batches of M images; BN\n"
            "                         statistics per micro-batch (ghost BN, NVCaffe iter_size) [off]\n"
            "  --workers-emulated K   behave like K workers of batch/K each: --micro-batch batch/K\n"
            "  --noise-scale          estimate the gradient noise scale B_simple (McCandlish et al.\n"
            "                         2018) from the micro-batch and batch gradients; printed per epoch\n"
            "  --layer-stats          print ||w||, ||g||, ratio, local and effective rate and\n"
            "                         ||update||/||w|| of every parameter after the last step\n"
            "  --layer-stats-every N  also collect them every N steps (and at steps 0, 1)\n"
            "  --momentum X           momentum [%g]\n"
            "  --dampening X          momentum dampening [%g]\n"
            "  --nesterov             Nesterov momentum [off]\n"
            "  --weight-decay X       L2 weight decay added to the gradient [%g]\n"
            "  --label-smoothing X    label smoothing of the cross-entropy [%g]\n"
            "run:\n"
            "  --seed N               seed of initialization, shuffling, augmentation, dropout [%llu]\n"
            "  --threads N            threads [%d: the number of CPUs]\n"
            "  --save PATH            write a safetensors checkpoint at the end\n"
            "  --save-every N         also every N epochs [0: only at the end]\n"
            "  --resume PATH          continue from a checkpoint (same flags)\n"
            "  --quiet                no progress line on stderr\n",
            d->model, d->data, d->epochs, d->batch, d->lr, d->base_batch, d->sched.gamma,
            d->sched.step_epochs, d->sched.power, d->sched.end_lr, d->sched.warmup_epochs,
            d->sched.warmup_start_lr, d->opt.momentum,
            d->opt.dampening, d->opt.weight_decay, d->label_smoothing, d->seed, d->threads);
}

typedef struct {
    bool progress;
    double last_progress;
    /* The last per-layer statistics, copied (the net is gone when they are printed). */
    int n_stats;
    long stats_step;
    char (*names)[96];
    ParamKind *kinds;
    OptStats *stats;
} Printer;

static void keep_layer_stats(Observer *o, long step, const Net *net, const OptStats *stats)
{
    Printer *p = o->ctx;
    if (!p->stats) { /* once, at the first collection */
        p->names = xcalloc((size_t)net->n_params, sizeof *p->names, "stats names");
        p->kinds = xcalloc((size_t)net->n_params, sizeof *p->kinds, "stats kinds");
        p->stats = xcalloc((size_t)net->n_params, sizeof *p->stats, "stats");
        for (int i = 0; i < net->n_params; i++) {
            memcpy(p->names[i], net->params[i].name, sizeof p->names[i]);
            p->kinds[i] = net->params[i].kind;
        }
    }
    p->n_stats = net->n_params;
    p->stats_step = step;
    memcpy(p->stats, stats, sizeof *stats * (size_t)net->n_params);
}

/* The paper's Table 2 layout: every parameter tensor in network order. */
static void print_layer_stats(const Printer *p)
{
    printf("\nper-layer statistics of the update at step %ld (after %ld iteration%s):\n", p->stats_step,
           p->stats_step + 1, p->stats_step ? "s" : "");
    printf("%-28s %-9s %11s %11s %11s %11s %11s %11s\n", "parameter", "kind", "||w||", "||g||",
           "||w||/||g||", "local_rate", "eff_rate", "||dw||/||w||");
    double lo = INFINITY, hi = 0;
    int at_lo = -1, at_hi = -1;
    for (int i = 0; i < p->n_stats; i++) {
        const OptStats *s = &p->stats[i];
        double ratio = s->g_norm > 0 ? s->w_norm / s->g_norm : NAN;
        printf("%-28s %-9s %11.4g %11.4g %11.4g %11.4g %11.4g %11.4g\n", p->names[i],
               param_kind_name(p->kinds[i]), s->w_norm, s->g_norm, ratio, s->local_rate, s->eff_rate,
               s->update_ratio);
        if (isfinite(ratio) && ratio > 0) {
            if (ratio < lo) lo = ratio, at_lo = i;
            if (ratio > hi) hi = ratio, at_hi = i;
        }
    }
    if (at_lo >= 0)
        printf("||w||/||g|| ranges from %.4g (%s) to %.4g (%s): a spread of %.0fx\n", lo, p->names[at_lo],
               hi, p->names[at_hi], hi / lo);
}

static void print_start(Observer *o, const TrainConfig *cfg, const char *summary)
{
    (void)o;
    printf("%s\n", summary);
    printf("%5s %8s %10s %9s %10s %9s %8s %10s %9s %9s%s\n", "epoch", "step", "train_loss", "train_acc",
           "test_loss", "test_acc", "gap", "lr", "img/s", "elapsed", cfg->noise_scale ? "  B_simple" : "");
    fflush(stdout);
}

static void print_progress(Observer *o, int epoch, long done, long total, double loss, double img_s)
{
    Printer *p = o->ctx;
    if (!p->progress) return;
    double t = now_seconds();
    if (t - p->last_progress < 0.2 && done < total) return;
    p->last_progress = t;
    int width = 30, filled = total ? (int)(width * done / total) : width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '=' : ' ';
    bar[width] = 0;
    fprintf(stderr, "\repoch %d [%s] %ld/%ld loss %.4f %.0f img/s ", epoch, bar, done, total, loss, img_s);
    fflush(stderr);
}

static void print_epoch(Observer *o, const EpochMetrics *m)
{
    Printer *p = o->ctx;
    if (p->progress) fprintf(stderr, "\r%*s\r", 80, "");
    printf("%5d %8ld %10.4f %9.4f %10.4f %9.4f %8.4f %10.5g %9.0f %8.1fs", m->epoch, m->step,
           m->train_loss, m->train_acc, m->test_loss, m->test_acc, m->loss_gap, m->lr,
           m->images_per_sec, m->elapsed);
    if (!isnan(m->noise_scale)) printf(" %9.1f", m->noise_scale);
    printf("\n");
    fflush(stdout);
}

static void print_diverged(Observer *o, long step, double loss)
{
    Printer *p = o->ctx;
    if (p->progress) fprintf(stderr, "\r%*s\r", 80, "");
    printf("diverged at step %ld: loss %g\n", step, loss);
    fflush(stdout);
}

static int parse_double(const char *flag, const char *s, double *out)
{
    return cli_parse_double("train", flag, s, out);
}

static int parse_long(const char *flag, const char *s, long min, long *out)
{
    return cli_parse_long("train", flag, s, min, out);
}

static int bad_choice(const char *flag, const char *value, const char *choices)
{
    fprintf(stderr, "bigbatch train: %s: '%s' is not one of %s\n", flag, value, choices);
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
static int parse_milestones(const char *s, ScheduleConfig *sched)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    sched->n_milestones = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (sched->n_milestones == SCHEDULE_MAX_MILESTONES) {
            fprintf(stderr, "bigbatch train: --milestones: more than %d epochs\n", SCHEDULE_MAX_MILESTONES);
            return -1;
        }
        if (parse_double("--milestones", tok, &sched->milestones[sched->n_milestones])) return -1;
        sched->n_milestones++;
    }
    return 0;
}

enum {
    OPT_MODEL = 256, OPT_DATA, OPT_DATA_ROOT, OPT_AUGMENT, OPT_TRAIN_SUBSET, OPT_TEST_SUBSET,
    OPT_EPOCHS, OPT_STEPS, OPT_BATCH, OPT_EVAL_BATCH, OPT_LR, OPT_MOMENTUM, OPT_DAMPENING,
    OPT_NESTEROV, OPT_WD, OPT_SMOOTHING, OPT_SEED, OPT_THREADS, OPT_SAVE, OPT_SAVE_EVERY,
    OPT_RESUME, OPT_QUIET, OPT_HELP, OPT_LR_SCALING, OPT_BASE_BATCH, OPT_LR_POLICY, OPT_LR_GAMMA,
    OPT_LR_STEP_EPOCHS, OPT_MILESTONES, OPT_POLY_POWER, OPT_END_LR, OPT_POLY_HORIZON,
    OPT_WARMUP_EPOCHS, OPT_WARMUP_START_LR, OPT_WARMUP_SHAPE, OPT_OPT, OPT_LARS_VARIANT,
    OPT_LARC_POLICY, OPT_ETA, OPT_LARS_EPS, OPT_LARS_EXCLUDE, OPT_DECOUPLED_WD, OPT_BETA1, OPT_BETA2,
    OPT_ADAM_EPS, OPT_LAYER_STATS, OPT_LAYER_STATS_EVERY, OPT_MICRO_BATCH, OPT_WORKERS_EMULATED,
    OPT_NOISE_SCALE, OPT_LARS_DENOM, OPT_LARS_WD_IN_UPDATE, OPT_LARS_MOMENTUM, OPT_LARS_GUARD,
    OPT_LARS_ADAPT_IF_WD
};

static const struct option LONG_OPTS[] = {
    {"model", required_argument, 0, OPT_MODEL},
    {"data", required_argument, 0, OPT_DATA},
    {"data-root", required_argument, 0, OPT_DATA_ROOT},
    {"augment", required_argument, 0, OPT_AUGMENT},
    {"train-subset", required_argument, 0, OPT_TRAIN_SUBSET},
    {"test-subset", required_argument, 0, OPT_TEST_SUBSET},
    {"epochs", required_argument, 0, OPT_EPOCHS},
    {"steps", required_argument, 0, OPT_STEPS},
    {"batch", required_argument, 0, OPT_BATCH},
    {"eval-batch", required_argument, 0, OPT_EVAL_BATCH},
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

static int parse_exclude(const char *s, unsigned *out)
{
    if (!strcmp(s, "none")) *out = 0;
    else if (!strcmp(s, "bias")) *out = OPT_EXCLUDE_BIAS;
    else if (!strcmp(s, "bn")) *out = OPT_EXCLUDE_BN;
    else if (!strcmp(s, "bias,bn") || !strcmp(s, "bn,bias")) *out = OPT_EXCLUDE_BIAS | OPT_EXCLUDE_BN;
    else return bad_choice("--lars-exclude", s, "bias,bn, bias, bn, none");
    return 0;
}

/* Presets first, then the switches given by hand; `what` says what the preset set. */
static int resolve_optimizer(OptConfig *opt, const OptOverrides *ov, char *what, size_t len)
{
    what[0] = 0;
    const char *variant = ov->variant ? ov->variant : optimizer_default_preset(opt->name);
    if (ov->variant && strcmp(opt->name, "lars") && strcmp(opt->name, "larc")) {
        fprintf(stderr, "bigbatch train: --lars-variant needs --opt lars or --opt larc\n");
        return -1;
    }
    if (variant) {
        Error err = {{0}};
        if (optimizer_apply_preset(opt, variant, what, len, &err) != 0) {
            fprintf(stderr, "bigbatch train: --lars-variant: %s\n", err.msg);
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
static int parse_train_flags(int argc, char **argv, TrainConfig *cfg, OptOverrides *ov)
{
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
        case OPT_AUGMENT:
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "bigbatch train: --augment: '%s' is not on or off\n", optarg);
                return -1;
            }
            cfg->augment = strcmp(optarg, "on") == 0;
            break;
        case OPT_TRAIN_SUBSET: if (parse_long("--train-subset", optarg, 1, &v)) return -1; cfg->train_subset = (int)v; break;
        case OPT_TEST_SUBSET: if (parse_long("--test-subset", optarg, 1, &v)) return -1; cfg->test_subset = (int)v; break;
        case OPT_EPOCHS: if (parse_long("--epochs", optarg, 1, &v)) return -1; cfg->epochs = (int)v; break;
        case OPT_STEPS: if (parse_long("--steps", optarg, 1, &v)) return -1; cfg->steps = v; break;
        case OPT_BATCH: if (parse_long("--batch", optarg, 1, &v)) return -1; cfg->batch = (int)v; break;
        case OPT_EVAL_BATCH: if (parse_long("--eval-batch", optarg, 1, &v)) return -1; cfg->eval_batch = (int)v; break;
        case OPT_LR: if (parse_double("--lr", optarg, &cfg->lr)) return -1; break;
        case OPT_MOMENTUM: if (parse_double("--momentum", optarg, &cfg->opt.momentum)) return -1; break;
        case OPT_DAMPENING: if (parse_double("--dampening", optarg, &cfg->opt.dampening)) return -1; break;
        case OPT_NESTEROV: cfg->opt.nesterov = true; break;
        case OPT_WD: if (parse_double("--weight-decay", optarg, &cfg->opt.weight_decay)) return -1; break;
        case OPT_SMOOTHING:
            if (parse_double("--label-smoothing", optarg, &x)) return -1;
            if (x < 0 || x >= 1) {
                fprintf(stderr, "bigbatch train: --label-smoothing: %g is not in [0, 1)\n", x);
                return -1;
            }
            cfg->label_smoothing = x;
            break;
        case OPT_SEED: if (parse_long("--seed", optarg, 0, &v)) return -1; cfg->seed = (unsigned long long)v; break;
        case OPT_THREADS: if (parse_long("--threads", optarg, 1, &v)) return -1; cfg->threads = (int)v; break;
        case OPT_SAVE: cfg->save = optarg; break;
        case OPT_SAVE_EVERY: if (parse_long("--save-every", optarg, 0, &v)) return -1; cfg->save_every = (int)v; break;
        case OPT_RESUME: cfg->resume = optarg; break;
        case OPT_QUIET: cfg->quiet = true; break;
        case OPT_HELP: return 1;
        case OPT_LR_SCALING:
            if (schedule_parse_scaling(optarg, &cfg->lr_scaling)) return bad_choice("--lr-scaling", optarg, "none, linear, sqrt");
            break;
        case OPT_BASE_BATCH: if (parse_long("--base-batch", optarg, 1, &v)) return -1; cfg->base_batch = (int)v; break;
        case OPT_LR_POLICY:
            if (schedule_parse_policy(optarg, &cfg->sched.policy))
                return bad_choice("--lr-policy", optarg, "fixed, step, multistep, poly, cosine");
            break;
        case OPT_LR_GAMMA: if (parse_double("--lr-gamma", optarg, &cfg->sched.gamma)) return -1; break;
        case OPT_LR_STEP_EPOCHS: if (parse_double("--lr-step-epochs", optarg, &cfg->sched.step_epochs)) return -1; break;
        case OPT_MILESTONES: if (parse_milestones(optarg, &cfg->sched)) return -1; break;
        case OPT_POLY_POWER: if (parse_double("--poly-power", optarg, &cfg->sched.power)) return -1; break;
        case OPT_END_LR: if (parse_double("--end-lr", optarg, &cfg->sched.end_lr)) return -1; break;
        case OPT_POLY_HORIZON:
            if (schedule_parse_poly_horizon(optarg, &cfg->sched.poly_horizon))
                return bad_choice("--poly-horizon", optarg, "total, after-warmup");
            break;
        case OPT_WARMUP_EPOCHS: if (parse_double("--warmup-epochs", optarg, &cfg->sched.warmup_epochs)) return -1; break;
        case OPT_WARMUP_START_LR: if (parse_double("--warmup-start-lr", optarg, &cfg->sched.warmup_start_lr)) return -1; break;
        case OPT_WARMUP_SHAPE:
            if (schedule_parse_warmup_shape(optarg, &cfg->sched.warmup_shape))
                return bad_choice("--warmup-shape", optarg, "linear, quadratic");
            break;
        case OPT_OPT: snprintf(cfg->opt.name, sizeof cfg->opt.name, "%s", optarg); break;
        case OPT_LARS_VARIANT: ov->variant = optarg; break;
        case OPT_LARC_POLICY:
            if ((ov->larc_policy = choice(optarg, (const char *[]){"scale", "clip", "apex-clip", NULL})) < 0)
                return bad_choice("--larc-policy", optarg, "clip, apex-clip, scale");
            break;
        case OPT_LARS_DENOM:
            if ((ov->denom = choice(optarg, (const char *[]){"g-wd", "g", "decayed", "update", NULL})) < 0)
                return bad_choice("--lars-denom", optarg, "g-wd, g, decayed, update");
            break;
        case OPT_LARS_WD_IN_UPDATE:
            if ((ov->wd_in_update = choice(optarg, (const char *[]){"no", "yes", NULL})) < 0)
                return bad_choice("--lars-wd-in-update", optarg, "yes, no");
            break;
        case OPT_LARS_MOMENTUM:
            if ((ov->momentum = choice(optarg, (const char *[]){"inside", "after", "trust-after", NULL})) < 0)
                return bad_choice("--lars-momentum", optarg, "inside, after, trust-after");
            break;
        case OPT_LARS_GUARD:
            if ((ov->guard = choice(optarg, (const char *[]){"one", "apex", NULL})) < 0)
                return bad_choice("--lars-guard", optarg, "one, apex");
            break;
        case OPT_LARS_ADAPT_IF_WD:
            if ((ov->adapt_if_wd = choice(optarg, (const char *[]){"no", "yes", NULL})) < 0)
                return bad_choice("--lars-adapt-if-wd", optarg, "yes, no");
            break;
        case OPT_ETA: if (parse_double("--eta", optarg, &ov->eta)) return -1; ov->has_eta = true; break;
        case OPT_LARS_EPS: if (parse_double("--lars-eps", optarg, &ov->eps)) return -1; ov->has_eps = true; break;
        case OPT_LARS_EXCLUDE:
            if (parse_exclude(optarg, &ov->exclude)) return -1;
            ov->has_exclude = true;
            break;
        case OPT_DECOUPLED_WD: cfg->opt.decoupled_wd = true; break;
        case OPT_BETA1: if (parse_double("--beta1", optarg, &cfg->opt.beta1)) return -1; break;
        case OPT_BETA2: if (parse_double("--beta2", optarg, &cfg->opt.beta2)) return -1; break;
        case OPT_ADAM_EPS: if (parse_double("--adam-eps", optarg, &cfg->opt.adam_eps)) return -1; break;
        case OPT_LAYER_STATS: cfg->layer_stats = true; break;
        case OPT_MICRO_BATCH: if (parse_long("--micro-batch", optarg, 1, &v)) return -1; cfg->micro_batch = (int)v; break;
        case OPT_WORKERS_EMULATED: if (parse_long("--workers-emulated", optarg, 1, &v)) return -1; workers = v; break;
        case OPT_NOISE_SCALE: cfg->noise_scale = true; break;
        case OPT_LAYER_STATS_EVERY:
            if (parse_long("--layer-stats-every", optarg, 1, &v)) return -1;
            cfg->layer_stats_every = (int)v;
            break;
        case ':':
            fprintf(stderr, "bigbatch train: %s needs a value\n", flag);
            return -1;
        default:
            fprintf(stderr, "bigbatch train: unknown option '%s' (bigbatch train --help)\n", flag);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bigbatch train: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (workers > 0) {
        if (cfg->micro_batch > 0) {
            fprintf(stderr, "bigbatch train: give --micro-batch or --workers-emulated, not both\n");
            return -1;
        }
        if (cfg->batch % workers != 0) {
            fprintf(stderr, "bigbatch train: --batch %d is not divisible by --workers-emulated %ld\n",
                    cfg->batch, workers);
            return -1;
        }
        cfg->micro_batch = cfg->batch / (int)workers;
    }
    if (cfg->lr < 0 || cfg->opt.momentum < 0 || cfg->opt.momentum >= 1 || cfg->opt.weight_decay < 0) {
        fprintf(stderr, "bigbatch train: --lr and --weight-decay must be >= 0 and --momentum in [0, 1)\n");
        return -1;
    }
    return 0;
}

int cli_train(int argc, char **argv)
{
    TrainConfig cfg;
    train_config_defaults(&cfg);
    OptOverrides ov = {NULL, -1, -1, -1, -1, -1, -1, false, false, false, 0, 0, 0};
    int parsed = parse_train_flags(argc, argv, &cfg, &ov);
    if (parsed == 1) {
        TrainConfig d;
        train_config_defaults(&d);
        train_usage(stdout, &d);
        return 0;
    }
    if (parsed < 0) return 2;
    char preset_said[768];
    if (resolve_optimizer(&cfg.opt, &ov, preset_said, sizeof preset_said) != 0) return 2;
    if (preset_said[0]) printf("%s\n", preset_said);
    Printer printer = {!cfg.quiet && isatty(STDERR_FILENO), 0, 0, 0, NULL, NULL, NULL};
    Observer obs = {print_start, print_progress, print_epoch, print_diverged, keep_layer_stats, &printer};
    TrainResult res;
    Error err = {{0}};
    int status = 0;
    if (train_run(&cfg, &obs, &res, &err) != 0) {
        fprintf(stderr, "bigbatch train: %s\n", err.msg);
        status = 1;
    } else {
        if (cfg.layer_stats && printer.stats) print_layer_stats(&printer);
        printf("final test_acc=%.4f test_loss=%.4f train_loss=%.4f%s\n", res.test_acc, res.test_loss,
               res.train_loss, res.diverged ? " status=diverged" : "");
    }
    free(printer.names);
    free(printer.kinds);
    free(printer.stats);
    return status;
}
