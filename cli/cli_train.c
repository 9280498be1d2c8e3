/* `bigbatch train`: one run from flags, printed as a table of epochs. */
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sweeps/flags/cli_args.h"
#include "../engine/train/train.h"
#include "../sweeps/flags/train_flags.h"
#include "../engine/base/util.h"
#include "../sweeps/run_config.h"
#include "../sweeps/run_record.h"
#include "cli.h"

static void train_usage(FILE *f)
{
    fprintf(f, "usage: bigbatch train [options]\n\n");
    train_flags_usage(f);
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

static void print_start(Observer *o, const TrainConfig *cfg, const char *device, const char *summary)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_start(p->record, o, device);
    printf("%s\n", summary);
    if (strcmp(device, "cpu")) printf("device: %s\n", device);
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

static void record_checkpoint(Observer *o, const char *path, long step, int epoch)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_checkpoint(p->record, path, step, epoch);
}

/* Set by SIGUSR1 when the run saves checkpoints: save after this step and stop (how a sweep
 * stops its runs for a preemption). The one flag a handler can reach. */
static volatile sig_atomic_t checkpoint_asked;

static void on_checkpoint_signal(int sig)
{
    checkpoint_asked = sig;
}

static void record_step(Observer *o, int epoch, long step, double loss, double lr, bool skipped)
{
    Printer *p = o->ctx;
    if (p->record) run_record_on_step(p->record, o, epoch, step, loss, lr, skipped);
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
        if (lead) train_usage(stdout);
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
    if (flags.run_id && !flags.db && !flags.record_stream) {
        if (lead) fprintf(stderr, "bigbatch train: --run-id needs --db (or --record-stream)\n");
        return 2;
    }
    if (flags.db && flags.record_stream) {
        if (lead) fprintf(stderr, "bigbatch train: --db and --record-stream: the run writes the database or sends "
                                  "its records, not both\n");
        return 2;
    }
    if (!lead) flags.db = NULL, flags.record_stream = false;
    const bool recorded = flags.db || flags.record_stream;
    RunRecord record;
    if (flags.record_stream) {
        run_record_begin_stream(&record, stdout, flags.run_id);
    } else if (flags.db && open_record(&record, &flags, argc, argv, &err) != 0) {
        fprintf(stderr, "bigbatch train: %s\n", err.msg);
        return 1;
    }
    if (flags.db) printf("run %s (attempt %d) in %s\n", record.run_id, record.attempt, flags.db);
    if (flags.preset_said[0] && lead) printf("%s\n", flags.preset_said);
    Printer printer = {!cfg.quiet && isatty(STDERR_FILENO), 0, 0, 0, NULL, NULL, NULL, recorded ? &record : NULL};
    Observer obs = {.on_start = print_start, .on_progress = print_progress, .on_epoch = print_epoch,
                    .on_step = record_step, .on_diverged = print_diverged, .on_eval = print_eval,
                    .on_layer_stats = keep_layer_stats, .on_checkpoint = record_checkpoint, .ctx = &printer};
    if (cfg.save) {
        struct sigaction sa = {0};
        sa.sa_handler = on_checkpoint_signal;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL) != 0) {
            fprintf(stderr, "bigbatch train: cannot catch SIGUSR1: %s\n", strerror(errno));
            return 1;
        }
        cfg.checkpoint_now = &checkpoint_asked;
    }
    TrainResult res;
    int status = 0;
    if (train_run(&cfg, &obs, &res, &err) != 0) {
        if (recorded && record.broken) err = record.err; /* the store's failure is the cause */
        if (comm->size > 1) fprintf(stderr, "bigbatch train: rank %d: %s\n", comm->rank, err.msg);
        else fprintf(stderr, "bigbatch train: %s\n", err.msg);
        status = 1;
        Error ferr = {{0}};
        if (recorded) run_record_finish(&record, NULL, err.msg, &ferr);
    } else if (res.stopped) { /* no end record: the run goes on from its checkpoint */
        fprintf(stderr, "bigbatch train: stopped by signal %d after step %ld, its checkpoint saved\n",
                (int)checkpoint_asked, res.steps);
        status = TRAIN_EXIT_CHECKPOINTED;
    } else {
        Error ferr = {{0}};
        if (recorded && run_record_finish(&record, &res, NULL, &ferr) != 0) {
            fprintf(stderr, "bigbatch train: %s\n", ferr.msg);
            status = 1;
        }
        if (cfg.layer_stats && printer.stats) print_layer_stats(&printer);
        char scaling[64] = "";
        if (res.scales_loss)
            snprintf(scaling, sizeof scaling, " skipped=%ld loss_scale=%g", res.skipped_steps, res.loss_scale);
        if (lead)
            printf("final test_acc=%.4f test_loss=%.4f train_loss=%.4f steps=%ld%s%s%s\n", res.test_acc,
                   res.test_loss, res.train_loss, res.steps, scaling,
                   res.diverged ? " status=diverged" : res.collapsed ? " status=collapsed" : "",
                   res.reached_target ? " stopped=reached-target" : "");
        if (lead && res.allreduce_s > 0 && res.steps > 0) {
            double hidden = res.allreduce_s > res.allreduce_exposed_s ? res.allreduce_s - res.allreduce_exposed_s : 0;
            printf("allreduce: each step waited %.3g ms for the gradients' sum, in flight for %.3g ms, %.0f%% of "
                   "that hidden behind backward\n",
                   1e3 * res.allreduce_exposed_s / (double)res.steps, 1e3 * res.allreduce_s / (double)res.steps,
                   100 * hidden / res.allreduce_s);
        }
    }
    if (recorded) run_record_close(&record);
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
