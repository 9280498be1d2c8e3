/* The flags of `bigbatch train`, parsed into a TrainConfig. Shared by the CLI and by the
 * experiment files, whose keys are these flags: one parser, one set of error messages.
 *
 * One table, FLAGS, holds every flag: its name, the name of its value, its help text and
 * how its default is printed, and where its value goes (a type and an offset, or a setter
 * for the flags that need more). The getopt_long options, the parsing, the help text and
 * train_flag_takes_value are all generated from it. */
#include "train_flags.h"

#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "../../engine/data/data.h"
#include "../../engine/optim/opt_names.h"
#include "../../engine/base/name_table.h"

/* LARS/LARC flags given by hand: applied over the preset, whatever their order. */
typedef struct {
    const char *variant;
    int larc_policy; /* -1 here and below: the preset's */
    int denom, wd_in_update, momentum, guard, adapt_if_wd;
    bool has_eta, has_eps, has_exclude;
    double eta, eps;
    unsigned exclude;
} OptOverrides;

typedef struct Flag Flag;

/* Everything a flag can set; FLAGS' offsets are into this. */
typedef struct {
    TrainFlags flags;
    OptOverrides ov;
    long workers;  /* --workers-emulated */
    const Flag *f; /* the flag being set */
    char flag[48]; /* and its "--name", for messages */
} FlagParse;

/* A range of numbers: lo < x or lo <= x, x < hi or x <= hi. */
typedef struct {
    double lo, hi;
    bool lo_open, hi_open;
    const char *bad; /* the error after "--flag: X " */
} Range;

typedef enum {
    T_NONE,   /* the setter does it all */
    T_STR,    /* const char *, pointing into argv */
    T_INT,    /* int, an integer >= min */
    T_LONG,   /* long, an integer >= min */
    T_ULL,    /* unsigned long long, an integer >= min */
    T_DOUBLE, /* double, a finite number, within `range` when there is one */
    T_SWITCH, /* bool, set to true; the flag takes no value */
    T_CHOICE, /* int, the index of the value in `names` */
    T_CHARS,  /* char[], printed only (its setter fills it) */
    T_HELP,   /* --help: parsing stops and says so; the flag takes no value */
} FlagType;

struct Flag {
    const char *name;     /* without "--"; NULL: a row that only prints `help` as a heading */
    const char *arg;      /* the value's name in the help; NULL with T_SWITCH */
    const char *help;     /* lines separated by '\n'; NULL: not in the help (--help) */
    const char *dflt;     /* printf format of the default value at `at`, printed as " [...]"
                             after the help; NULL: none (the help may say it in words) */
    const char *dflt_doc; /* the default in the docs' words, where `dflt` prints this machine's */
    FlagType type;
    size_t at;            /* offsetof(FlagParse, ...) */
    long min, max;        /* T_INT, T_LONG, T_ULL: the values accepted */
    int (*set)(FlagParse *ps, const char *value, Error *err); /* after `type`'s; NULL: none */
    const Range *range;       /* T_DOUBLE: the values accepted; NULL: any */
    const char *const *names; /* T_CHOICE: the values, in the order of the enum they map to */
    const char *expected;     /* the values as the "is not one of" error lists them */
    char *(*choices)(char *buf, size_t len); /* values from a name table, printed first */
};

static int bad_choice(const char *flag, const char *value, const char *choices, Error *err)
{
    error_set(err, "%s: '%s' is not one of %s", flag, value, choices);
    return -1;
}

static void *field(FlagParse *ps, const Flag *f) { return (char *)ps + f->at; }

/* ---- setters of the flags a type does not cover ---- */

/* --augment's names, indexed by AUGMENT_*. */
static const char *const AUGMENT_NAMES[] = {"off", "on", "rrc"};

static int set_augment(FlagParse *ps, const char *v, Error *err)
{
    for (int k = 0; k < (int)(sizeof AUGMENT_NAMES / sizeof *AUGMENT_NAMES); k++)
        if (!strcmp(v, AUGMENT_NAMES[k])) {
            ps->flags.cfg.augment = k;
            return 0;
        }
    error_set(err, "%s: '%s' is not off, on or rrc", ps->flag, v);
    return -1;
}

static int set_lr_scaling(FlagParse *ps, const char *v, Error *err)
{
    return schedule_parse_scaling(v, &ps->flags.cfg.lr_scaling) ? bad_choice(ps->flag, v, ps->f->expected, err) : 0;
}

static int set_lr_policy(FlagParse *ps, const char *v, Error *err)
{
    return schedule_parse_policy(v, &ps->flags.cfg.sched.policy) ? bad_choice(ps->flag, v, ps->f->expected, err) : 0;
}

static int set_poly_horizon(FlagParse *ps, const char *v, Error *err)
{
    ScheduleConfig *s = &ps->flags.cfg.sched;
    return schedule_parse_poly_horizon(v, &s->poly_horizon) ? bad_choice(ps->flag, v, ps->f->expected, err) : 0;
}

static int set_warmup_shape(FlagParse *ps, const char *v, Error *err)
{
    ScheduleConfig *s = &ps->flags.cfg.sched;
    return schedule_parse_warmup_shape(v, &s->warmup_shape) ? bad_choice(ps->flag, v, ps->f->expected, err) : 0;
}

/* "30,60,80" -> milestones in epochs */
static int set_milestones(FlagParse *ps, const char *v, Error *err)
{
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

static int set_opt(FlagParse *ps, const char *v, Error *err)
{
    (void)err;
    snprintf(ps->flags.cfg.opt.name, sizeof ps->flags.cfg.opt.name, "%s", v);
    return 0;
}

static int mark_eta(FlagParse *ps, const char *v, Error *err)
{
    (void)v;
    (void)err;
    ps->ov.has_eta = true;
    return 0;
}

static int mark_eps(FlagParse *ps, const char *v, Error *err)
{
    (void)v;
    (void)err;
    ps->ov.has_eps = true;
    return 0;
}

static int set_exclude(FlagParse *ps, const char *v, Error *err)
{
    unsigned *out = &ps->ov.exclude;
    if (!strcmp(v, "none")) *out = 0;
    else if (!strcmp(v, "bias")) *out = OPT_EXCLUDE_BIAS;
    else if (!strcmp(v, "bn")) *out = OPT_EXCLUDE_BN;
    else if (!strcmp(v, "bias,bn") || !strcmp(v, "bn,bias")) *out = OPT_EXCLUDE_BIAS | OPT_EXCLUDE_BN;
    else return bad_choice(ps->flag, v, ps->f->expected, err);
    ps->ov.has_exclude = true;
    return 0;
}

static char *data_choices(char *buf, size_t len) { return dataset_names(buf, len, " | ", " | "); }
static char *opt_choices(char *buf, size_t len) { return opt_names(buf, len, " | ", " | "); }

/* The values of the LARS/LARC switches, in the order of their enums (optimizer.h). */
static const char *const POLICY_NAMES[] = {"scale", "clip", "apex-clip", NULL};
static const char *const DENOM_NAMES[] = {"g-wd", "g", "decayed", "update", NULL};
static const char *const MOMENTUM_NAMES[] = {"inside", "after", "trust-after", NULL};
static const char *const GUARD_NAMES[] = {"one", "apex", NULL};
static const char *const NO_YES[] = {"no", "yes", NULL};

/* ---- the table ---- */

#define AT(member) offsetof(FlagParse, member)
#define CFG(member) offsetof(FlagParse, flags.cfg.member)
#define HEADING(text) {.help = text}
/* where the value goes, by type */
#define STR(at_) .type = T_STR, .at = at_
#define INT(at_, min_) INT_TO(at_, min_, INT_MAX)
#define INT_TO(at_, min_, max_) .type = T_INT, .at = at_, .min = min_, .max = max_
#define LONG(at_, min_) LONG_TO(at_, min_, LONG_MAX)
#define LONG_TO(at_, min_, max_) .type = T_LONG, .at = at_, .min = min_, .max = max_
#define ULL(at_, min_) .type = T_ULL, .at = at_, .min = min_, .max = LONG_MAX
#define DBL(at_) .type = T_DOUBLE, .at = at_
#define SWITCH(at_) .type = T_SWITCH, .at = at_
#define CHOICE(at_, names_, expected_) .type = T_CHOICE, .at = at_, .names = names_, .expected = expected_
#define RANGE(lo, hi, lo_open, hi_open, bad) .range = &(const Range){lo, hi, lo_open, hi_open, bad}

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
    {"train-subset", "N", "use N training images spread evenly over the set [all]", NULL,
     INT(CFG(train_subset), 1)},
    {"test-subset", "N", "use N test images spread evenly over the set [all]", NULL, INT(CFG(test_subset), 1)},

    HEADING("schedule:"),
    {"epochs", "N", "epochs", "%d", INT(CFG(epochs), 1)},
    {"steps", "N", "stop after N iterations in total [no limit]", NULL, LONG(CFG(steps), 1)},
    {"batch", "N", "global batch size; the last partial batch of an epoch is dropped", "%d", INT_TO(CFG(batch), 1, BB_MAX_BATCH)},
    {"eval-batch", "N", "batch size for evaluation [min(batch, 500)]", NULL, INT_TO(CFG(eval_batch), 1, BB_MAX_BATCH)},
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
    {"larc-policy", "P",
     "clip (min(lr, r), NVCaffe) | apex-clip (lr*min(r/lr, 1)) |\n"
     "scale (lr*r) [the preset's]",
     NULL, CHOICE(AT(ov.larc_policy), POLICY_NAMES, "clip, apex-clip, scale")},
    {"lars-denom", "D",
     "ratio eta*||w||/D: g-wd (||g||+wd||w||) | g | decayed (||g+wd w||) |\n"
     "update (||update after momentum||) [the preset's]",
     NULL, CHOICE(AT(ov.denom), DENOM_NAMES, "g-wd, g, decayed, update")},
    {"lars-wd-in-update", "B", "yes | no: add wd*w to the update direction [the preset's]", NULL,
     CHOICE(AT(ov.wd_in_update), NO_YES, "yes, no")},
    {"lars-momentum", "M",
     "inside (v=m v+lr r g') | after (b=m b+r g'; w-=lr b) |\n"
     "trust-after (b=m b+g'; w-=lr r b) [the preset's]",
     NULL, CHOICE(AT(ov.momentum), MOMENTUM_NAMES, "inside, after, trust-after")},
    {"lars-guard", "G", "one (r=1 at a zero norm) | apex (also skip scaling and wd) [the preset's]", NULL,
     CHOICE(AT(ov.guard), GUARD_NAMES, "one, apex")},
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
     "loss dynamically; the CPU emulates both, CUDA has neither yet)",
     "%s", STR(CFG(precision))},
    {"loss-scale", "X",
     "fp16: the dynamic loss scale's start (halved and the step skipped on an\n"
     "inf/NaN gradient, doubled after 2000 good steps); other precisions: a\n"
     "fixed scale, undone before the optimizer (a power of two changes nothing)",
     "65536 for fp16, else 1", DBL(CFG(loss_scale)), RANGE(0, HUGE_VAL, true, false, "is not positive")},
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

    {"help", NULL, NULL, NULL, .type = T_HELP},
};
enum { N_FLAGS = (int)(sizeof FLAGS / sizeof FLAGS[0]) };
static const NameTable FLAG_NAMES = NAME_TABLE(FLAGS);

/* ---- parsing ---- */

static int check_range(const FlagParse *ps, double x, Error *err)
{
    const Range *r = ps->f->range;
    if (!r || ((r->lo_open ? x > r->lo : x >= r->lo) && (r->hi_open ? x < r->hi : x <= r->hi))) return 0;
    error_set(err, "%s: %g %s", ps->flag, x, r->bad);
    return -1;
}

/* Stores v by the flag's type (ps->f); 0, 1 for --help, or -1 with err. */
static int set_by_type(FlagParse *ps, const char *v, Error *err)
{
    const Flag *f = ps->f;
    void *p = field(ps, f);
    long n;
    int i;
    switch (f->type) {
    case T_STR: *(const char **)p = v; return 0;
    case T_SWITCH: *(bool *)p = true; return 0;
    case T_HELP: return 1;
    case T_DOUBLE: return cli_parse_double(ps->flag, v, p, err) ? -1 : check_range(ps, *(double *)p, err);
    case T_INT:
    case T_LONG:
    case T_ULL:
        if (cli_parse_long(ps->flag, v, f->min, f->max, &n, err)) return -1;
        if (f->type == T_INT) *(int *)p = (int)n;
        else if (f->type == T_LONG) *(long *)p = n;
        else *(unsigned long long *)p = (unsigned long long)n;
        return 0;
    case T_CHOICE:
        for (i = 0; f->names[i] && strcmp(v, f->names[i]); i++) {}
        if (!f->names[i]) return bad_choice(ps->flag, v, f->expected, err);
        *(int *)p = i;
        return 0;
    default: return 0; /* T_NONE, T_CHARS: the setter's */
    }
}

/* One flag's value (NULL for a switch): 0, 1 for --help, -1 with err. */
static int set_flag(const Flag *f, const char *v, FlagParse *ps, Error *err)
{
    ps->f = f;
    snprintf(ps->flag, sizeof ps->flag, "--%s", f->name);
    int rc = set_by_type(ps, v, err);
    if (rc != 0) return rc;
    return f->set ? f->set(ps, v, err) : 0;
}

/* getopt_long's options, from FLAGS: the value is 256 + the row. */
static const struct option *long_options(void)
{
    static struct option opts[N_FLAGS + 1];
    int n = 0;
    for (int i = 0; i < N_FLAGS; i++) {
        if (!FLAGS[i].name) continue;
        bool takes = FLAGS[i].type != T_SWITCH && FLAGS[i].type != T_HELP;
        opts[n++] = (struct option){FLAGS[i].name, takes ? required_argument : no_argument, 0, 256 + i};
    }
    opts[n] = (struct option){0, 0, 0, 0};
    return opts;
}

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
    const struct option *opts = long_options();
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *flag = optind > 1 ? argv[optind - 1] : "?";
        if (c == ':') {
            error_set(err, "%s needs a value", flag);
            return -1;
        }
        if (c < 256 || c >= 256 + N_FLAGS) {
            error_set(err, "unknown option '%s' (bigbatch train --help)", flag);
            return -1;
        }
        int rc = set_flag(&FLAGS[c - 256], optarg, ps, err);
        if (rc != 0) return rc;
    }
    if (optind < argc) {
        error_set(err, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return check_flags(ps, err);
}

/* ---- the LARS/LARC preset and the switches by hand ---- */

/* Text appended to buf[len] at `used`, each piece after `sep` (then "" for the rest). */
typedef struct {
    char *buf;
    size_t len, used;
    const char *sep;
} Said;

static void said(Said *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void said(Said *s, const char *fmt, ...)
{
    char piece[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(piece, sizeof piece, fmt, ap);
    va_end(ap);
    size_t at = s->used < s->len ? s->used : s->len;
    int n = snprintf(s->buf + at, s->len - at, "%s%s", s->sep, piece);
    if (n > 0) s->used += (size_t)n;
    s->sep = "";
}

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
    struct { int value; int *field; bool *flag; const char *name; const char *const *names; } sw[] = {
        {ov->larc_policy, &opt->larc_policy, NULL, "larc-policy", POLICY_NAMES},
        {ov->denom, &opt->lars_denom, NULL, "lars-denom", DENOM_NAMES},
        {ov->wd_in_update, NULL, &opt->lars_wd_in_update, "lars-wd-in-update", NO_YES},
        {ov->momentum, &opt->lars_momentum, NULL, "lars-momentum", MOMENTUM_NAMES},
        {ov->guard, &opt->lars_guard, NULL, "lars-guard", GUARD_NAMES},
        {ov->adapt_if_wd, NULL, &opt->lars_adapt_if_wd, "lars-adapt-if-wd", NO_YES},
    };
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        if (sw[i].value < 0) continue;
        if (sw[i].field) *sw[i].field = sw[i].value;
        else *sw[i].flag = sw[i].value == 1;
        said(s, " %s=%s", sw[i].name, sw[i].names[sw[i].value]);
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

int train_flag_takes_value(const char *name)
{
    const Flag *f = name_table_find(FLAG_NAMES, name);
    return !f || f->type == T_HELP ? -1 : f->type != T_SWITCH;
}

/* ---- the help text ---- */

/* The default of f as its `dflt` format prints it, into buf. */
static const char *default_text(const Flag *f, FlagParse *defaults, char *buf, size_t len)
{
    const void *p = field(defaults, f);
    switch (f->type) {
    case T_STR: snprintf(buf, len, f->dflt, *(const char *const *)p ? *(const char *const *)p : ""); break;
    case T_CHARS: snprintf(buf, len, f->dflt, (const char *)p); break;
    case T_INT: case T_CHOICE: snprintf(buf, len, f->dflt, *(const int *)p); break;
    case T_LONG: snprintf(buf, len, f->dflt, *(const long *)p); break;
    case T_ULL: snprintf(buf, len, f->dflt, *(const unsigned long long *)p); break;
    case T_DOUBLE: snprintf(buf, len, f->dflt, *(const double *)p); break;
    default: snprintf(buf, len, "%s", f->dflt); break;
    }
    return buf;
}

/* f's accepted values, as " (lo to hi)" or " (in [lo, hi))", into buf ("" when any). */
static const char *range_text(const Flag *f, char *buf, size_t len)
{
    buf[0] = 0;
    bool capped = (f->type == T_INT && f->max != INT_MAX) || (f->type == T_LONG && f->max != LONG_MAX);
    const Range *r = f->type == T_DOUBLE ? f->range : NULL;
    if (capped) snprintf(buf, len, " (%ld to %ld)", f->min, f->max);
    else if (r && isinf(r->hi)) snprintf(buf, len, " (%s %g)", r->lo_open ? ">" : ">=", r->lo);
    else if (r) snprintf(buf, len, " (in %s%g, %g%s)", r->lo_open ? "(" : "[", r->lo, r->hi, r->hi_open ? ")" : "]");
    return buf;
}

/* f's text in the help: the choices first, then its help, the default and the range. */
static void flag_text(const Flag *f, FlagParse *defaults, char *text, size_t len)
{
    char buf[256];
    text[0] = 0;
    Said s = {text, len, 0, ""};
    if (f->choices) said(&s, "%s", f->choices(buf, sizeof buf));
    if (f->help[0]) said(&s, "%s%s", s.used ? " " : "", f->help);
    if (f->dflt) said(&s, "%s[%s]", s.used ? " " : "", default_text(f, defaults, buf, sizeof buf));
    said(&s, "%s", range_text(f, buf, sizeof buf));
}

/* One flag: "  --name ARG" in 25 columns, then its text, continued lines indented as far. */
static void flag_usage(FILE *out, const Flag *f, FlagParse *defaults)
{
    char head[64], text[1024];
    snprintf(head, sizeof head, "--%s%s%s", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
    flag_text(f, defaults, text, sizeof text);
    const char *line = text;
    for (const char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        fprintf(out, "  %-22s %.*s\n", head, (int)(nl - line), line);
        head[0] = 0;
    }
    fprintf(out, "  %-22s %s\n", head, line);
}

/* text into a table cell: lines joined, '|' escaped. */
static void md_cell(FILE *out, const char *text)
{
    for (int i = 0; text[i]; i++) {
        if (text[i] == '|') fputc('\\', out);
        fputc(text[i] == '\n' ? ' ' : text[i], out);
    }
}

/* One flag as a Markdown table row: its default (the docs' words, the format's, or the
 * help's closing "[words]") in a column of its own, the choices, help and range in another. */
static void flag_markdown(FILE *out, const Flag *f, FlagParse *defaults)
{
    char head[64], meaning[1024] = "", dflt[256] = "", buf[256];
    snprintf(head, sizeof head, "--%s%s%s", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
    int n = (int)strlen(f->help);
    const char *open = n && f->help[n - 1] == ']' ? strrchr(f->help, '[') : NULL;
    if (f->dflt_doc) snprintf(dflt, sizeof dflt, "%s", f->dflt_doc);
    else if (f->dflt) default_text(f, defaults, dflt, sizeof dflt);
    else if (open) snprintf(dflt, sizeof dflt, "%.*s", (int)(f->help + n - 2 - open), open + 1);
    if (open && !f->dflt)
        for (n = (int)(open - f->help); n > 0 && isspace((unsigned char)f->help[n - 1]); n--) {}
    Said s = {meaning, sizeof meaning, 0, ""};
    if (f->choices) said(&s, "%s", f->choices(buf, sizeof buf));
    if (n) said(&s, "%s%.*s", s.used ? " " : "", n, f->help);
    said(&s, "%s", range_text(f, buf, sizeof buf) + !s.used);
    fputs("| `", out);
    md_cell(out, head);
    fputs("` | ", out);
    md_cell(out, meaning);
    fputs(" | ", out);
    md_cell(out, dflt);
    fputs(" |\n", out);
}

/* Calls print for every flag of the help, and heading for every heading. */
static void each_flag(FILE *out, void (*heading)(FILE *, const char *),
                      void (*print)(FILE *, const Flag *, FlagParse *))
{
    FlagParse defaults;
    memset(&defaults, 0, sizeof defaults);
    train_config_defaults(&defaults.flags.cfg);
    for (int i = 0; i < N_FLAGS; i++) {
        if (!FLAGS[i].help) continue;
        if (!FLAGS[i].name) heading(out, FLAGS[i].help);
        else print(out, &FLAGS[i], &defaults);
    }
}

static void heading_usage(FILE *out, const char *text) { fprintf(out, "%s\n", text); }

void train_flags_usage(FILE *out) { each_flag(out, heading_usage, flag_usage); }

/* A heading ends the table before it (a blank line) and opens one of its own. */
static void heading_markdown(FILE *out, const char *text)
{
    int n = (int)strlen(text);
    if (n && text[n - 1] == ':') n--;
    fprintf(out, "\n**%.*s**\n\n| flag | meaning | default |\n|---|---|---|\n", n, text);
}

void train_flags_markdown(FILE *out) { each_flag(out, heading_markdown, flag_markdown); }
