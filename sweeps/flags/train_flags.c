/* The flags of `bigbatch train`, parsed into a TrainConfig. Shared by the CLI and by the
 * experiment files, whose keys are these flags: one parser, one set of error messages.
 *
 * One table, FLAGS, holds every flag: its name, the name of its value, its help text and
 * how its default is printed, and where its value goes (a type and an offset, or a setter
 * for the flags that need more). The parsing, the help text, the docs' tables and
 * train_flag_takes_value are all generated from it by flag_table.c. */
#include "train_flags.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "flag_table.h"
#include "../../engine/data/data.h"
#include "../../engine/optim/opt_names.h"
#include "../../engine/optim/opt_switches.h"

/* LARS/LARC flags given by hand: applied over the preset, whatever their order. */
typedef struct {
    const char *variant;
    int larc_policy; /* -1 here and below: the preset's */
    int denom, wd_in_update, momentum, guard, adapt_if_wd;
    bool has_eta, has_eps, has_exclude;
    double eta, eps;
    unsigned exclude;
} OptOverrides;

/* Everything a flag can set; FLAGS' offsets are into this. */
typedef struct {
    TrainFlags flags;
    OptOverrides ov;
    long workers;  /* --workers-emulated */
} FlagParse;

/* ---- setters of the flags a type does not cover ---- */

/* --augment's names, indexed by AUGMENT_*. */
static const char *const AUGMENT_NAMES[] = {"off", "on", "rrc"};

static int set_augment(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    for (int k = 0; k < (int)(sizeof AUGMENT_NAMES / sizeof *AUGMENT_NAMES); k++)
        if (!strcmp(v, AUGMENT_NAMES[k])) {
            ps->flags.cfg.augment = k;
            return 0;
        }
    error_set(err, "%s: '%s' is not off, on or rrc", c->flag, v);
    return -1;
}

static int set_lr_scaling(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    return schedule_parse_scaling(v, &ps->flags.cfg.lr_scaling) ? flag_bad_choice(c, v, err) : 0;
}

static int set_lr_policy(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    return schedule_parse_policy(v, &ps->flags.cfg.sched.policy) ? flag_bad_choice(c, v, err) : 0;
}

static int set_poly_horizon(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    ScheduleConfig *s = &ps->flags.cfg.sched;
    return schedule_parse_poly_horizon(v, &s->poly_horizon) ? flag_bad_choice(c, v, err) : 0;
}

static int set_warmup_shape(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    ScheduleConfig *s = &ps->flags.cfg.sched;
    return schedule_parse_warmup_shape(v, &s->warmup_shape) ? flag_bad_choice(c, v, err) : 0;
}

/* "30,60,80" -> milestones in epochs */
static int set_milestones(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    (void)c;
    ScheduleConfig *sched = &ps->flags.cfg.sched;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    sched->n_milestones = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (sched->n_milestones == SCHEDULE_MAX_MILESTONES) {
            error_set(err, "--milestones: more than %d epochs", SCHEDULE_MAX_MILESTONES);
            return -1;
        }
        if (cli_parse_double("--milestones", tok, &sched->milestones[sched->n_milestones], err)) return -1;
        if (sched->milestones[sched->n_milestones] < 0) {
            error_set(err, "--milestones: %s is a negative epoch", tok);
            return -1;
        }
        sched->n_milestones++;
    }
    return 0;
}

static int set_opt(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    (void)c;
    (void)err;
    snprintf(ps->flags.cfg.opt.name, sizeof ps->flags.cfg.opt.name, "%s", v);
    return 0;
}

static int mark_eta(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    (void)c;
    (void)v;
    (void)err;
    ps->ov.has_eta = true;
    return 0;
}

static int mark_eps(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    (void)c;
    (void)v;
    (void)err;
    ps->ov.has_eps = true;
    return 0;
}

static int set_exclude(void *target, const FlagCall *c, const char *v, Error *err)
{
    FlagParse *ps = target;
    unsigned *out = &ps->ov.exclude;
    if (!strcmp(v, "none")) *out = 0;
    else if (!strcmp(v, "bias")) *out = OPT_EXCLUDE_BIAS;
    else if (!strcmp(v, "bn")) *out = OPT_EXCLUDE_BN;
    else if (!strcmp(v, "bias,bn") || !strcmp(v, "bn,bias")) *out = OPT_EXCLUDE_BIAS | OPT_EXCLUDE_BN;
    else return flag_bad_choice(c, v, err);
    ps->ov.has_exclude = true;
    return 0;
}

static char *data_choices(char *buf, size_t len) { return dataset_names(buf, len, " | ", " | "); }
static char *opt_choices(char *buf, size_t len) { return opt_names(buf, len, " | ", " | "); }

static const char *const NO_YES[] = {"no", "yes", NULL};

/* A LARS/LARC switch's value by its name in the switches' table (opt_switches.h). */
static int set_switch(const FlagCall *c, OptSwitchKind k, int *out, const char *v, Error *err)
{
    char names[128];
    *out = opt_switch_find(k, v);
    if (*out >= 0) return 0;
    error_set(err, "%s: '%s' is not one of %s", c->flag, v, opt_switch_names(k, names, sizeof names));
    return -1;
}

static int set_policy(void *target, const FlagCall *c, const char *v, Error *err)
{
    return set_switch(c, OPT_SWITCH_POLICY, &((FlagParse *)target)->ov.larc_policy, v, err);
}

static int set_denom(void *target, const FlagCall *c, const char *v, Error *err)
{
    return set_switch(c, OPT_SWITCH_DENOM, &((FlagParse *)target)->ov.denom, v, err);
}

static int set_momentum(void *target, const FlagCall *c, const char *v, Error *err)
{
    return set_switch(c, OPT_SWITCH_MOMENTUM, &((FlagParse *)target)->ov.momentum, v, err);
}

static int set_guard(void *target, const FlagCall *c, const char *v, Error *err)
{
    return set_switch(c, OPT_SWITCH_GUARD, &((FlagParse *)target)->ov.guard, v, err);
}

/* A switch's values for the help, "name (meaning) | ...", a line break before one that
 * would pass 66 columns. */
static char *switch_choices(OptSwitchKind k, char *buf, size_t len)
{
    Said s = {buf, len, 0, ""};
    size_t line = 0;
    buf[0] = 0;
    char text[128];
    for (int v = 0; opt_switch_value(k, v); v++) {
        opt_switch_text(k, v, text, sizeof text);
        const char *sep = !v ? "" : line + strlen(text) + 3 > 66 ? " |\n" : " | ";
        size_t before = s.used;
        said(&s, "%s%s", sep, text);
        line = sep[2] == '\n' ? strlen(text) : line + (s.used - before);
    }
    return buf;
}

static char *policy_choices(char *buf, size_t len) { return switch_choices(OPT_SWITCH_POLICY, buf, len); }
static char *denom_choices(char *buf, size_t len) { return switch_choices(OPT_SWITCH_DENOM, buf, len); }
static char *momentum_choices(char *buf, size_t len) { return switch_choices(OPT_SWITCH_MOMENTUM, buf, len); }
static char *guard_choices(char *buf, size_t len) { return switch_choices(OPT_SWITCH_GUARD, buf, len); }

/* ---- the table ---- */

#define AT(member) offsetof(FlagParse, member)
#define CFG(member) offsetof(FlagParse, flags.cfg.member)
#define HEADING FLAG_HEADING
/* where the value goes, by type */
#define STR F_STR
#define INT(at_, min_) F_INT(at_, min_, INT_MAX)
#define INT_TO F_INT
#define LONG(at_, min_) F_LONG(at_, min_, LONG_MAX)
#define LONG_TO F_LONG
#define ULL F_ULL
#define DBL F_DBL
#define SWITCH F_SWITCH
#define CHOICE F_CHOICE
#define RANGE F_RANGE

static const Flag FLAGS[] = {
    HEADING("model and data:"),
    {"model", "NAME", "model (bigbatch models lists them)", "%s", STR(CFG(model))},
    {"data", "NAME", "", "%s", STR(CFG(data)), .choices = data_choices},
    {"data-root", "DIR", "dataset location [the dataset's default]", NULL, STR(CFG(data_root))},
    {"image-size", "N",
     "imagefolder/cifar10: store every image with its shorter side scaled\n"
     "to N and the centre N x N kept (ImageNet: 256); the model's input is\n"
     "then cropped from it, at random in training, the centre in evaluation\n"
     "[the images' own size, which must then be one]",
     NULL, INT_TO(CFG(image_size), 8, BB_MAX_IMAGE_SIDE)},
    {"partial-batches", NULL,
     "cifar10's binary batches may hold fewer than the official 10,000\n"
     "records each (small fixtures) [refused: a truncated file]",
     NULL, SWITCH(CFG(partial_batches))},
    {"augment", "off|on|rrc",
     "on: random crop (pad 4, or within a larger stored image; a packed\n"
     "store: shorter side resized to input/0.875, then cropped) + horizontal\n"
     "flip; rrc (packed stores): torchvision's RandomResizedCrop + flip\n"
     "[on for cifar10 and imagefolder]",
     NULL, .set = set_augment},
    {"train-subset", "N", "use N training images spread evenly over the set [all]; synthetic\n"
                          "data for a full-size net draws max(N, 256) images", NULL,
     INT(CFG(train_subset), 1)},
    {"test-subset", "N", "use N test images spread evenly over the set [all]", NULL, INT(CFG(test_subset), 1)},

    HEADING("schedule:"),
    {"epochs", "N", "epochs", "%d", INT(CFG(epochs), 1)},
    {"steps", "N", "stop after N iterations in total [no limit]", NULL, LONG(CFG(steps), 1)},
    {"batch", "N", "global batch size; the last partial batch of an epoch is dropped", "%d", INT_TO(CFG(batch), 1, BB_MAX_BATCH)},
    {"eval-batch", "N", "batch size for evaluation [min(micro-batch or each rank's share of the batch, 500)]", NULL, INT_TO(CFG(eval_batch), 1, BB_MAX_BATCH)},
    {"eval-every", "N",
     "also evaluate on the test set every N steps within an epoch (steps to\n"
     "a target at finer grain than epochs) [at epoch ends only]",
     NULL, LONG(CFG(eval_every), 1)},
    {"stop-at-acc", "A",
     "end the run at the first evaluation whose test accuracy is >= A\n"
     "(0 < A <= 1; with --eval-every, steps to a target for less) [off]",
     NULL, DBL(CFG(stop_at_acc)), RANGE(0, 1, true, false, "is not a test accuracy in (0, 1]")},

    HEADING("learning rate, evaluated every iteration:"),
    {"lr", "X", "base learning rate, before --lr-scaling", "%g", DBL(CFG(lr))},
    {"lr-scaling", "RULE", "none | linear (lr*batch/base) | sqrt (lr*sqrt(batch/base)) [none]", NULL,
     .set = set_lr_scaling, .expected = "none, linear, sqrt"},
    {"base-batch", "N", "the batch the base LR belongs to", "%d", INT_TO(CFG(base_batch), 1, BB_MAX_BATCH)},
    {"lr-policy", "P", "fixed | step | multistep | poly | cosine [fixed]", NULL, .set = set_lr_policy,
     .expected = "fixed, step, multistep, poly, cosine"},
    {"lr-gamma", "X", "step/multistep factor", "%g", DBL(CFG(sched.gamma)), RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"lr-step-epochs", "X", "step: multiply by gamma every X epochs", "%g", DBL(CFG(sched.step_epochs)),
     RANGE(0, HUGE_VAL, true, false, "is not positive")},
    {"milestones", "E1,E2,..", "multistep: epochs where the LR is multiplied by gamma", NULL, .set = set_milestones},
    {"poly-power", "X", "poly/cosine: (lr - end)*(1 - t/T)^power + end", "%g", DBL(CFG(sched.power)),
     RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"end-lr", "X", "poly/cosine: final LR", "%g", DBL(CFG(sched.end_lr)), RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"poly-horizon", "H",
     "total (NVCaffe: warmup counts inside the horizon) |\n"
     "after-warmup (MLPerf: decay starts after warmup) [total]",
     NULL, .set = set_poly_horizon, .expected = "total, after-warmup"},
    {"warmup-epochs", "X", "ramp from --warmup-start-lr to the base LR", "%g", DBL(CFG(sched.warmup_epochs))},
    {"warmup-start-lr", "X", "the LR the warmup starts from", "%g", DBL(CFG(sched.warmup_start_lr)), RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"warmup-shape", "S", "linear | quadratic (NVCaffe rampup) [linear]", NULL, .set = set_warmup_shape,
     .expected = "linear, quadratic"},

    HEADING("optimizer:"),
    {"opt", "NAME", "", "%s", .type = T_CHARS, .at = CFG(opt.name), .set = set_opt, .choices = opt_choices},
    {"lars-variant", "V",
     "preset of the LARS/LARC switches: paper | nvcaffe (= nvcaffe-scale) |\n"
     "nvcaffe-clip | apex | tf | timm | mlperf | tf-garden | tf-garden-nc\n"
     "[paper for lars, nvcaffe for larc]; the run prints what it set",
     NULL, STR(AT(ov.variant))},
    {"larc-policy", "P", "[the preset's]", NULL, .set = set_policy, .choices = policy_choices},
    {"lars-denom", "D", "[the preset's]", NULL, .set = set_denom,
     .choices = denom_choices},
    {"lars-wd-in-update", "B", "yes | no: add wd*w to the update direction [the preset's]", NULL,
     CHOICE(AT(ov.wd_in_update), NO_YES, "yes, no")},
    {"lars-momentum", "M", "[the preset's]", NULL, .set = set_momentum, .choices = momentum_choices},
    {"lars-guard", "G", "[the preset's]", NULL, .set = set_guard, .choices = guard_choices},
    {"lars-adapt-if-wd", "B", "yes | no: adapt only parameters with weight decay (timm) [the preset's]", NULL,
     CHOICE(AT(ov.adapt_if_wd), NO_YES, "yes, no")},
    {"eta", "X", "trust coefficient [the preset's: 0.001, apex 0.02]", NULL, DBL(AT(ov.eta)), .set = mark_eta,
     RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"lars-eps", "X", "added to the ratio's denominator [the preset's]", NULL, DBL(AT(ov.eps)), .set = mark_eps,
     RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"lars-exclude", "LIST",
     "bias,bn | bias | bn | none: kinds without adaptation or weight\n"
     "decay [the preset's: bias,bn for mlperf, else none]",
     NULL, .set = set_exclude, .expected = "bias,bn, bias, bn, none"},
    {"decoupled-wd", NULL, "sgd/lars: w -= lr*wd*w beside the step (adamw/lamb always are)", NULL,
     SWITCH(CFG(opt.decoupled_wd))},
    {"beta1", "X", "adamw/lamb: decay of the first moment", "%g", DBL(CFG(opt.beta1)), RANGE(0, 1, false, true, "is not in [0, 1)")},
    {"beta2", "X", "adamw/lamb: decay of the second moment", "%g", DBL(CFG(opt.beta2)), RANGE(0, 1, false, true, "is not in [0, 1)")},
    {"adam-eps", "X", "adamw/lamb: added to the denominator", "%g", DBL(CFG(opt.adam_eps)), RANGE(0, HUGE_VAL, true, false, "is not positive")},
    {"micro-batch", "M",
     "accumulate the gradient over micro-batches of M images; BN\n"
     "statistics per micro-batch (ghost BN, NVCaffe iter_size) [off]",
     NULL, INT_TO(CFG(micro_batch), 1, BB_MAX_BATCH)},
    {"workers-emulated", "K", "behave like K workers of batch/K each: --micro-batch batch/K", NULL,
     LONG_TO(AT(workers), 1, BB_MAX_PROCESSES)},
    {"noise-scale", NULL,
     "estimate the gradient noise scale B_simple (McCandlish et al.\n"
     "2018) from the micro-batch (or, at 2+ ranks, each rank's) and batch\n"
     "gradients; printed per epoch",
     NULL, SWITCH(CFG(noise_scale))},
    {"layer-stats", NULL,
     "print ||w||, ||g||, ratio, local and effective rate and\n"
     "||update||/||w|| of every parameter after the last step",
     NULL, SWITCH(CFG(layer_stats))},
    {"layer-stats-every", "N", "also collect them every N steps (and at steps 0, 1)", NULL,
     INT(CFG(layer_stats_every), 1)},
    {"momentum", "X", "momentum", "%g", DBL(CFG(opt.momentum))},
    {"dampening", "X", "momentum dampening", "%g", DBL(CFG(opt.dampening)), RANGE(0, 1, false, false, "is not in [0, 1]")},
    {"nesterov", NULL, "Nesterov momentum [off]", NULL, SWITCH(CFG(opt.nesterov))},
    {"weight-decay", "X", "L2 weight decay added to the gradient", "%g", DBL(CFG(opt.weight_decay))},
    {"label-smoothing", "X", "label smoothing of the cross-entropy", "%g", DBL(CFG(label_smoothing)),
     RANGE(0, 1, false, true, "is not in [0, 1)")},

    HEADING("run:"),
    {"seed", "N", "seed of initialization, shuffling, augmentation, dropout", "%llu", ULL(CFG(seed), 0)},
    {"threads", "N", "threads", "%d: the number of CPUs", .dflt_doc = "the number of CPUs", INT_TO(CFG(threads), 1, BB_MAX_THREADS)},
    {"loader-threads", "N",
     "threads that decode and crop batches ahead (any N gives the same run)\n"
     "[1 on the CPU, whose cores compute; --threads on a GPU]",
     NULL, INT_TO(CFG(loader_threads), 1, BB_MAX_THREADS)},
    {"device", "NAME",
     "what to compute on: cpu, or cuda / cuda:N (the N-th GPU; cuda alone: the\n"
     "GPU of the process's slot: its sweep worker and local MPI or SLURM rank)\n"
     "in a make GPU=1 build",
     "%s", STR(CFG(device))},
    {"precision", "P",
     "arithmetic of convolutions and fully connected layers: fp32, tf32 on a\n"
     "GPU (tensor cores; faster, differs in the 3rd digit), or bf16 / fp16\n"
     "(mixed: fp32 master weights, optimizer, BN and loss; fp16 scales the\n"
     "loss dynamically; CUDA on tensor cores, the CPU emulates both)",
     "%s", STR(CFG(precision))},
    {"loss-scale", "X",
     "fp16: the dynamic loss scale's start (halved and the step skipped on an\n"
     "inf/NaN gradient, doubled after 2000 good steps); other precisions: a\n"
     "fixed scale, undone before the optimizer (a power of two changes nothing)",
     "65536 for fp16, else 1", DBL(CFG(loss_scale)), RANGE(0, HUGE_VAL, true, false, "is not positive")},
    {"cuda-graph", "on|off",
     "after the first step, replay each micro-batch's forward and backward\n"
     "from a graph captured once (a CUDA graph; the CPU checks that every\n"
     "replay issues what was captured); one process, no --noise-scale, no\n"
     "dropout. Written and checked on the CPU, not yet run on a GPU [off]",
     NULL, CHOICE(CFG(cuda_graph), FLAG_OFF_ON, "on, off")},
    {"save", "PATH", "write a safetensors checkpoint at the end", NULL, STR(CFG(save))},
    {"save-every", "N", "also every N epochs [0: only at the end]", NULL, INT(CFG(save_every), 0)},
    {"save-seconds", "S", "also after the step that ends S seconds since the last save,\nmid-epoch too [0: off]",
     NULL, DBL(CFG(save_seconds)), RANGE(0, HUGE_VAL, false, false, "is negative")},
    {"save-handoff", NULL,
     "with --record-stream: each checkpoint goes to PATH.step<N> and a\nrecord names it; the sweep renames it "
     "to PATH once the rows before it\nare in its database (how a sweep checkpoints its runs)",
     NULL, SWITCH(CFG(save_handoff))},
    {"resume", "PATH", "continue from a checkpoint (same flags)", NULL, STR(CFG(resume))},
    {"quiet", NULL, "no progress line on stderr", NULL, SWITCH(CFG(quiet))},
    {"diverge-factor", "X",
     "end the run as diverged when a step's loss exceeds X times the\n"
     "first step's (NaN and Inf always do; 0: off)",
     "%g", DBL(CFG(diverge_factor)), RANGE(0, INFINITY, false, false, "is negative (0 turns the check off)")},
    {"collapse-patience", "N",
     "end the run as collapsed after N epochs in a row at the chance level\n"
     "(test accuracy at most 1.1/classes, or under 1.5/classes with the\n"
     "train loss within 2% of ln(classes)); 0: judge only the end (slow\n"
     "starts recover)",
     NULL, INT(CFG(collapse_patience), 0)},
    {"db", "PATH",
     "also store the run (epochs, step losses, layer statistics) in this\n"
     "SQLite results database (results/SCHEMA.md)",
     NULL, STR(AT(flags.db))},
    {"run-id", "ID", "the run's row, claimed for it by another program [the hash of\nthe flags]", NULL,
     STR(AT(flags.run_id))},
    {"record-stream", NULL,
     "send the rows to standard output as records instead (how\n`bigbatch sweep` starts its runs; docs/formats.md)",
     NULL, SWITCH(AT(flags.record_stream))},

    HEADING("data parallelism (mpirun -np K bigbatch train ...: each rank trains on batch/K images):"),
    {"bucket-mb", "X",
     "gradient allreduce bucket size; buckets start while backward\n"
     "still runs on earlier layers",
     "%g", DBL(CFG(bucket_mb)), RANGE(0, INFINITY, true, false, "is not a positive size")},
    {"plain-allreduce", NULL, "one blocking allreduce of all gradients after backward", NULL,
     SWITCH(CFG(plain_allreduce))},
    {"sync-bn", NULL, "BN statistics over the images of all ranks, not per rank", NULL, SWITCH(CFG(sync_bn))},

    FLAG_HELP_ROW,
};
enum { N_FLAGS = FLAG_COUNT(FLAGS) };

static void train_defaults(void *target) { train_config_defaults(&((FlagParse *)target)->flags.cfg); }

static const FlagTable TABLE = {"train", FLAGS, N_FLAGS, sizeof(FlagParse), train_defaults, NULL, NULL, 0, NULL, NULL, NULL, 0, 0};

/* ---- parsing ---- */

/* --workers-emulated K becomes --micro-batch batch/K; then the checks across flags. */
static int check_flags(FlagParse *ps, Error *err)
{
    TrainConfig *cfg = &ps->flags.cfg;
    if (ps->workers > 0) {
        if (cfg->micro_batch > 0) {
            error_set(err, "give --micro-batch or --workers-emulated, not both");
            return -1;
        }
        if (cfg->batch % ps->workers != 0) {
            error_set(err, "--batch %d is not divisible by --workers-emulated %ld", cfg->batch, ps->workers);
            return -1;
        }
        cfg->micro_batch = cfg->batch / (int)ps->workers;
    }
    if ((cfg->save_every > 0 || cfg->save_seconds > 0 || cfg->save_handoff) && !cfg->save) {
        error_set(err, "--save-every, --save-seconds and --save-handoff need --save PATH");
        return -1;
    }
    if (cfg->save_handoff && !ps->flags.record_stream) {
        error_set(err, "--save-handoff needs --record-stream: a sweep renames the checkpoints it hands off");
        return -1;
    }
    if (cfg->lr < 0 || cfg->opt.momentum < 0 || cfg->opt.momentum >= 1 || cfg->opt.weight_decay < 0) {
        error_set(err, "--lr and --weight-decay must be >= 0 and --momentum in [0, 1)");
        return -1;
    }
    return 0;
}

/* Fills ps from argv; returns 0, 1 for --help, -1 on a bad flag. */
static int parse_flags(int argc, char **argv, FlagParse *ps, Error *err)
{
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, ps, &rest, err);
    if (rc != 0) return rc;
    return check_flags(ps, err);
}

/* ---- the LARS/LARC preset and the switches by hand ---- */

static int apply_preset(OptConfig *opt, const OptOverrides *ov, char *what, size_t len, Error *err)
{
    const char *variant = ov->variant ? ov->variant : optimizer_default_preset(opt->name);
    const OptName *known = opt_name_find(opt->name);
    if (ov->variant && !(known && known->lars_switches)) {
        error_set(err, "--lars-variant needs --opt lars or --opt larc");
        return -1;
    }
    if (!variant) return 0;
    Error e = {{0}};
    if (optimizer_apply_preset(opt, variant, what, len, &e) == 0) return 0;
    error_set(err, "--lars-variant: %s", e.msg);
    return -1;
}

/* The switches given by hand, over the preset. */
static void apply_switches(OptConfig *opt, const OptOverrides *ov, Said *s)
{
    /* kind: the switch's table, or -1 for a yes/no */
    struct { int value; int *field; bool *flag; const char *name; int kind; } sw[] = {
        {ov->larc_policy, &opt->larc_policy, NULL, "larc-policy", OPT_SWITCH_POLICY},
        {ov->denom, &opt->lars_denom, NULL, "lars-denom", OPT_SWITCH_DENOM},
        {ov->wd_in_update, NULL, &opt->lars_wd_in_update, "lars-wd-in-update", -1},
        {ov->momentum, &opt->lars_momentum, NULL, "lars-momentum", OPT_SWITCH_MOMENTUM},
        {ov->guard, &opt->lars_guard, NULL, "lars-guard", OPT_SWITCH_GUARD},
        {ov->adapt_if_wd, NULL, &opt->lars_adapt_if_wd, "lars-adapt-if-wd", -1},
    };
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        if (sw[i].value < 0) continue;
        if (sw[i].field) *sw[i].field = sw[i].value;
        else *sw[i].flag = sw[i].value == 1;
        const char *name = sw[i].kind < 0 ? NO_YES[sw[i].value] : opt_switch_value(sw[i].kind, sw[i].value)->name;
        said(s, " %s=%s", sw[i].name, name);
    }
}

/* The numbers and the exclusions given by hand, over the preset. */
static void apply_values(OptConfig *opt, const OptOverrides *ov, Said *s)
{
    if (ov->has_eta) {
        opt->eta = ov->eta;
        said(s, " eta=%g", ov->eta);
    }
    if (ov->has_eps) {
        opt->lars_eps = ov->eps;
        said(s, " lars-eps=%g", ov->eps);
    }
    if (ov->has_exclude) {
        unsigned x = ov->exclude;
        opt->lars_exclude = x;
        said(s, " lars-exclude=%s%s%s", x & OPT_EXCLUDE_BIAS ? "bias" : "",
             (x & OPT_EXCLUDE_BIAS) && (x & OPT_EXCLUDE_BN) ? "," : "", x ? (x & OPT_EXCLUDE_BN ? "bn" : "") : "none");
    }
}

/* The preset first, then the flags given by hand; preset_said says what each set. */
static int resolve_optimizer(FlagParse *ps, Error *err)
{
    TrainFlags *f = &ps->flags;
    f->preset_said[0] = 0;
    if (apply_preset(&f->cfg.opt, &ps->ov, f->preset_said, sizeof f->preset_said, err) != 0) return -1;
    size_t used = strlen(f->preset_said);
    Said s = {f->preset_said, sizeof f->preset_said, used, used ? "; then by hand:" : "set by hand:"};
    apply_switches(&f->cfg.opt, &ps->ov, &s);
    apply_values(&f->cfg.opt, &ps->ov, &s);
    return 0;
}

int train_flags_parse(int argc, char **argv, TrainFlags *out, Error *err)
{
    FlagParse ps;
    memset(&ps, 0, sizeof ps);
    train_config_defaults(&ps.flags.cfg);
    ps.ov = (OptOverrides){NULL, -1, -1, -1, -1, -1, -1, false, false, false, 0, 0, 0};
    int parsed = parse_flags(argc, argv, &ps, err);
    if (parsed == 0) parsed = resolve_optimizer(&ps, err);
    *out = ps.flags;
    return parsed;
}

int train_flag_takes_value(const char *name) { return flag_table_takes_value(&TABLE, name); }

/* ---- the help text ---- */

void train_flags_usage(FILE *out) { flag_table_usage(&TABLE, out); }

void train_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }
