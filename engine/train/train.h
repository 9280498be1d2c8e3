/* One training run: data, model, optimizer, the loop, evaluation and reporting.
 * The engine reports what happens through an Observer and knows nothing of how it
 * is stored or printed (the CLI prints; `train --db` will store in SQLite). */
#ifndef BB_TRAIN_H
#define BB_TRAIN_H
#include <signal.h>
#include <stdbool.h>

#include "../dist/comm.h"
#include "../optim/optimizer.h"
#include "../optim/schedule.h"
#include "../base/util.h"

/* --augment's values, in train_flags.c's one table of their names. */
enum { AUGMENT_OFF, AUGMENT_ON, AUGMENT_RRC };

typedef struct {
    const char *model;
    const char *data;       /* a name of dataset_list() (data/data.h) */
    const char *data_root;  /* NULL: the dataset's default */
    int image_size;         /* > 0: image folders stored at this square size (then cropped) */
    bool partial_batches;   /* binary CIFAR-10: batch files of fewer than 10,000 records allowed */
    int epochs;
    long steps;             /* > 0: stop after this many iterations in total */
    int batch;
    int eval_batch;
    long eval_every;        /* > 0: also evaluate on the test set every N steps within an epoch */
    double stop_at_acc;     /* > 0: end the run at the first evaluation (epoch end or eval_every)
                             * whose test accuracy reaches it; steps to a target need no more */
    double lr;              /* base LR, before the scaling rule */
    ScheduleConfig sched;   /* policy, warmup, ...; its base_lr is derived from lr */
    LrScaling lr_scaling;   /* lr * batch/base_batch (linear) or its square root */
    int base_batch;
    OptConfig opt;
    double label_smoothing;
    unsigned long long seed;
    int threads;
    int loader_threads;     /* the batch loader's pool (loader.h); 0: loader_default_threads */
    const char *device;     /* backend_open's name: "cpu", "cuda", "cuda:N" (engine/backend.h) */
    const char *precision;  /* backend_set_precision's name: fp32, tf32, bf16 or fp16 */
    double loss_scale;      /* > 0: fp16's first dynamic loss scale, else a fixed one; 0: the
                             * precision's (65536 for fp16, 1: none) */
    int augment;            /* -1: the dataset's default (on for CIFAR-10), else an AUGMENT_* */
    int train_subset;       /* > 0: use only the first N training images */
    int test_subset;
    bool quiet;             /* no progress line */
    const char *save;       /* checkpoint written at the end (and every save_every epochs) */
    int save_every;
    double save_seconds;    /* > 0: also after the step that ends this many seconds since the
                             * last save (or the start), mid-epoch too */
    bool save_handoff;      /* each checkpoint goes to <save>.step<N> and is announced to the
                             * observer, whose sweep renames it to <save> (docs/cluster.md) */
    volatile sig_atomic_t *checkpoint_now; /* non-zero (set by a signal handler): save after
                             * this step and stop, res->stopped (NULL: never) */
    const char *resume;
    int micro_batch;        /* > 0: accumulate gradients over micro-batches of this size
                             * (BN statistics per micro-batch: ghost BN, NVCaffe's iter_size) */
    bool noise_scale;       /* estimate the gradient noise scale from the micro-batches */
    int cuda_graph;         /* 1 (--cuda-graph on): replay each pass from a graph after the first
                             * step (engine/train/step.h); one process, no --noise-scale, no dropout */
    int layer_stats_every;  /* > 0: per-layer statistics every N steps (and at steps 0, 1, last) */
    bool layer_stats;       /* collect at steps 0, 1 and the last (the CLI prints the last) */
    double diverge_factor;  /* > 0: a step loss above this multiple of the first step's loss
                             * ends the run as diverged (as NaN and Inf always do) */
    int collapse_patience;  /* > 0: end the run as collapsed after this many epochs in a row at
                             * the chance level (collapse.h); 0: judge only at the end */
    const Comm *comm;       /* the ranks of a data-parallel job; NULL = one process. Each rank
                             * trains on batch/size images of every step; only rank 0 reports
                             * to the observer and writes checkpoints */
    double bucket_mb;       /* gradient allreduce bucket size, MB */
    bool plain_allreduce;   /* one blocking allreduce after backward instead of buckets */
    bool sync_bn;           /* BN statistics over the whole batch of all ranks (per micro-batch
                             * index), instead of per rank */
} TrainConfig;

typedef struct {
    int epoch;              /* 1-based; partial epochs (--steps) report too */
    long step;
    double train_loss, train_acc, test_loss, test_acc, loss_gap;
    double lr, images_per_sec, elapsed;
    double noise_scale;     /* B_simple (McCandlish et al.), NAN when not measured */
} EpochMetrics;

typedef struct Observer Observer;
struct Observer {
    /* `device`: what the run computes on, as recorded with it ("cpu", "cuda:0 NVIDIA H200"). */
    void (*on_start)(Observer *o, const TrainConfig *cfg, const char *device, const char *summary);
    void (*on_progress)(Observer *o, int epoch, long done, long total, double loss, double img_s);
    void (*on_epoch)(Observer *o, const EpochMetrics *m);
    /* Every iteration's loss and LR; `step` is 0-based. `skipped`: the update was not applied
     * (fp16's gradients were inf or NaN; the loss scale was halved). */
    void (*on_step)(Observer *o, int epoch, long step, double loss, double lr, bool skipped);
    void (*on_diverged)(Observer *o, long step, double loss);
    /* An evaluation within an epoch (--eval-every), after `step` iterations in all. */
    void (*on_eval)(Observer *o, int epoch, long step, double test_loss, double test_acc);
    /* Per-parameter statistics of the update at `step` (0-based), in network order. */
    void (*on_layer_stats)(Observer *o, long step, const Net *net, const OptStats *stats);
    /* A checkpoint of the position after `step` iterations (`epoch` epochs done) is at path,
     * written in full (--save-handoff). */
    void (*on_checkpoint)(Observer *o, const char *path, long step, int epoch);
    void *ctx;
    bool stop;              /* set by a callback: the run ends after this step with an error */
};

typedef struct {
    double test_acc, test_loss, train_loss;
    long steps;
    long skipped_steps;     /* updates skipped for inf/NaN gradients (fp16's loss scaling) */
    double loss_scale;      /* the loss scale at the end (1 unless scales_loss) */
    bool scales_loss;       /* the run scaled its loss dynamically (--precision fp16) */
    bool diverged;
    bool collapsed;         /* ended at the chance level (collapse.h), or stopped there early
                               by collapse_patience; never set with diverged */
    bool reached_target;    /* ended early: test accuracy reached stop_at_acc */
    bool stopped;           /* checkpoint_now: saved and stopped before the end; no result */
    double allreduce_s;     /* ranks > 1: seconds gradient sums were in flight on this rank,
                               waits for the peers included (0: not measured) */
    double allreduce_exposed_s; /* of the steps' time, waiting for them: the rest was hidden
                                   behind backward */
} TrainResult;

/* The exit status of a `train` stopped by SIGUSR1 after saving its checkpoint (EX_TEMPFAIL):
 * not a result, not a failure; the next attempt resumes. */
enum { TRAIN_EXIT_CHECKPOINTED = 75 };

void train_config_defaults(TrainConfig *cfg);
/* The checks that need no data: names exist, sizes divide, the schedule is consistent. */
int train_config_check(const TrainConfig *cfg, Error *err);
/* 0 on success (a diverged run is a success: its result says so); -1 with err. */
int train_run(const TrainConfig *cfg, Observer *obs, TrainResult *result, Error *err);

#endif
