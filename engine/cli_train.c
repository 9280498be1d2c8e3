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
#include "data/data.h"
#include "opt_names.h"
#include "train.h"
#include "train_flags.h"
#include "../sweeps/run_config.h"
#include "../sweeps/run_record.h"
#include "util.h"

static void train_usage(FILE *f, const TrainConfig *d)
{
    char data_names[128], opt_names_[128];
    dataset_names(data_names, sizeof data_names, " | ", " | ");
    opt_names(opt_names_, sizeof opt_names_, " | ", " | ");
    fprintf(f,
            "usage: bigbatch train [options]\n"
            "\n"
            "model and data:\n"
            "  --model NAME           model (bigbatch models lists them) [%s]\n"
            "  --data NAME            %s [%s]\n"
            "  --data-root DIR        dataset location [the dataset's default]\n"
            "  --image-size N         imagefolder/cifar10: store every image with its shorter side scaled\n"
            "                         to N and the centre N x N kept (ImageNet: 256); the model's input is\n"
            "                         then cropped from it, at random in training, the centre in evaluation\n"
            "                         [the images' own size, which must then be one]\n"
            "  --augment on|off       random crop (pad 4, or within a larger stored image) + horizontal\n"
            "                         flip [on for cifar10 and imagefolder]\n"
            "  --train-subset N       use N training images spread evenly over the set [all]\n"
            "  --test-subset N        use N test images spread evenly over the set [all]\n"
            "schedule:\n"
            "  --epochs N             epochs [%d]\n"
            "  --steps N              stop after N iterations in total [no limit]\n"
            "  --batch N              global batch size; the last partial batch of an epoch is dropped [%d]\n"
            "  --eval-batch N         batch size for evaluation [min(batch, 500)]\n"
            "  --eval-every N         also evaluate on the test set every N steps within an epoch (steps to\n"
            "                         a target at finer grain than epochs) [at epoch ends only]\n"
            "  --stop-at-acc A        end the run at the first evaluation whose test accuracy is >= A\n"
            "                         (0 < A <= 1; with --eval-every, steps to a target for less) [off]\n"
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
            "  --opt NAME             %s [%s]\n"
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
            "  --quiet                no progress line on stderr\n"
            "  --diverge-factor X     end the run as diverged when a step's loss exceeds X times the\n"
            "                         first step's (NaN and Inf always do; 0: off) [%g]\n"
            "  --db PATH              also store the run (epochs, step losses, layer statistics) in this\n"
            "                         SQLite results database (results/SCHEMA.md)\n"
            "  --run-id ID            the run's row, claimed by `bigbatch sweep` [the hash of the flags]\n"
            "data parallelism (mpirun -np K bigbatch train ...: each rank trains on batch/K images):\n"
            "  --bucket-mb X          gradient allreduce bucket size; buckets start while backward\n"
            "                         still runs on earlier layers [%g]\n"
            "  --plain-allreduce      one blocking allreduce of all gradients after backward\n"
            "  --sync-bn              BN statistics over the images of all ranks, not per rank\n",
            d->model, data_names, d->data, d->epochs, d->batch, d->lr, d->base_batch, d->sched.gamma,
            d->sched.step_epochs, d->sched.power, d->sched.end_lr, d->sched.warmup_epochs,
            d->sched.warmup_start_lr, opt_names_, d->opt.name, d->opt.momentum,
            d->opt.dampening, d->opt.weight_decay, d->label_smoothing, d->seed, d->threads, d->diverge_factor, d->bucket_mb);
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
    RunRecord *record;  /* --db: the run's rows in the results store, or NULL */
} Printer;

static void keep_layer_stats(Observer *o, long step, const Net *net, const OptStats *stats)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_layer_stats(p->record, o, step, net, stats);
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
    if (p->record) run_record_on_epoch(p->record, o, m);
    if (p->progress) fprintf(stderr, "\r%*s\r", 80, "");
    printf("%5d %8ld %10.4f %9.4f %10.4f %9.4f %8.4f %10.5g %9.0f %8.1fs", m->epoch, m->step,
           m->train_loss, m->train_acc, m->test_loss, m->test_acc, m->loss_gap, m->lr,
           m->images_per_sec, m->elapsed);
    if (!isnan(m->noise_scale)) printf(" %9.1f", m->noise_scale);
    printf("\n");
    fflush(stdout);
}

static void print_eval(Observer *o, int epoch, long step, double test_loss, double test_acc)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_eval(p->record, o, epoch, step, test_loss, test_acc);
    if (p->progress) fprintf(stderr, "\r%*s\r", 80, "");
    printf("%5s %8ld %10s %9s %10.4f %9.4f\n", "", step, "", "", test_loss, test_acc);
    fflush(stdout);
}

static void print_diverged(Observer *o, long step, double loss)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_diverged(p->record, o, step, loss);
    if (p->progress) fprintf(stderr, "\r%*s\r", 80, "");
    printf("diverged at step %ld: loss %g\n", step, loss);
    fflush(stdout);
}

static void record_step(Observer *o, int epoch, long step, double loss, double lr)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_step(p->record, o, epoch, step, loss, lr);
}

/* --db: opens the store and claims the run; 0, or -1 with err. */
static int open_record(RunRecord *rec, const TrainFlags *flags, int argc, char **argv, Error *err)
{
    char *config = run_config_from_argv(argc, argv, err);
    if (!config) return -1;
    char *args = run_config_command("bigbatch", argc, argv);
    int rc = run_record_begin(rec, flags->db, flags->run_id, config, args, err);
    free(config);
    free(args);
    return rc;
}

/* One rank's part of the run; only rank 0 prints and writes the database. */
static int train_rank(int argc, char **argv, const Comm *comm)
{
    TrainFlags flags;
    Error err = {{0}};
    const bool lead = comm->rank == 0;
    int parsed = train_flags_parse(argc, argv, &flags, &err);
    if (parsed == 1) {
        TrainConfig d;
        train_config_defaults(&d);
        if (lead) train_usage(stdout, &d);
        return 0;
    }
    if (parsed < 0) { /* every rank parses the same flags and stops here */
        if (lead) fprintf(stderr, "bigbatch train: %s\n", err.msg);
        return 2;
    }
    TrainConfig cfg = flags.cfg;
    cfg.comm = comm;
    if (train_config_check(&cfg, &err) != 0) { /* the same on every rank: all stop cleanly */
        if (lead) fprintf(stderr, "bigbatch train: %s\n", err.msg);
        return 2;
    }
    if (flags.run_id && !flags.db) {
        if (lead) fprintf(stderr, "bigbatch train: --run-id needs --db\n");
        return 2;
    }
    if (!lead) flags.db = NULL;
    RunRecord record;
    if (flags.db && open_record(&record, &flags, argc, argv, &err) != 0) {
        fprintf(stderr, "bigbatch train: %s\n", err.msg);
        return 1;
    }
    if (flags.db) printf("run %s (attempt %d) in %s\n", record.run_id, record.attempt, flags.db);
    if (flags.preset_said[0] && lead) printf("%s\n", flags.preset_said);
    Printer printer = {!cfg.quiet && isatty(STDERR_FILENO), 0, 0, 0, NULL, NULL, NULL, flags.db ? &record : NULL};
    Observer obs = {.on_start = print_start, .on_progress = print_progress, .on_epoch = print_epoch,
                    .on_step = record_step, .on_diverged = print_diverged, .on_eval = print_eval,
                    .on_layer_stats = keep_layer_stats, .ctx = &printer};
    TrainResult res;
    int status = 0;
    if (train_run(&cfg, &obs, &res, &err) != 0) {
        if (flags.db && record.broken) err = record.err; /* the store's failure is the cause */
        if (comm->size > 1) fprintf(stderr, "bigbatch train: rank %d: %s\n", comm->rank, err.msg);
        else fprintf(stderr, "bigbatch train: %s\n", err.msg);
        status = 1;
        Error ferr = {{0}};
        if (flags.db) run_record_finish(&record, NULL, err.msg, &ferr);
    } else {
        Error ferr = {{0}};
        if (flags.db && run_record_finish(&record, &res, NULL, &ferr) != 0) {
            fprintf(stderr, "bigbatch train: %s\n", ferr.msg);
            status = 1;
        }
        if (cfg.layer_stats && printer.stats) print_layer_stats(&printer);
        if (lead)
            printf("final test_acc=%.4f test_loss=%.4f train_loss=%.4f steps=%ld%s%s\n", res.test_acc,
                   res.test_loss, res.train_loss, res.steps, res.diverged ? " status=diverged" : "",
                   res.reached_target ? " stopped=reached-target" : "");
    }
    if (flags.db) run_record_close(&record);
    free(printer.names);
    free(printer.kinds);
    free(printer.stats);
    return status;
}

int cli_train(int argc, char **argv)
{
    Comm comm;
    Error err = {{0}};
    if (comm_init(&comm, &argc, &argv, &err) != 0) {
        fprintf(stderr, "bigbatch train: %s\n", err.msg);
        return 2;
    }
    int status = train_rank(argc, argv, &comm);
    /* A rank that failed at run time ends the whole job: its peers would wait for it forever. */
    if (status == 1 && comm.size > 1) comm_abort(&comm, status);
    comm_finalize(&comm);
    return status;
}
