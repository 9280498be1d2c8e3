/* The training loop. One iteration has visible stages: assemble the batch,
 * forward, backward, reduce gradients (a no-op in one process; micro-batch
 * accumulation and MPI allreduce belong here), update. Shuffling and augmentation
 * draw from generators seeded by (seed, epoch) and (seed, step), and dropout masks are
 * Philox streams of (seed, step, layer, element), so a run resumed from a checkpoint
 * repeats an uninterrupted one exactly. Tensors live in backend memory: the loader's thread
 * crops the next batch on the host while this one computes, and the backend normalizes it
 * (engine/data/loader.h); parameters and BN buffers are broadcast through host copies. */
#include "train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "collapse.h"
#include "../data/data.h"
#include "../data/loader.h"
#include "../optim/loss_scale.h"
#include "../net/models.h"
#include "noise_scale.h"
#include "../optim/opt_names.h"
#include "../dist/replicas.h"
#include "step.h"

void train_config_defaults(TrainConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model = "lenet";
    cfg->data = "fashion-mnist";
    cfg->epochs = 1;
    cfg->batch = 128;
    cfg->eval_batch = 0; /* min(micro-batch or this rank's share of the batch, 500): evaluation never needs more memory than training */
    cfg->lr = 0.01;
    schedule_defaults(&cfg->sched);
    cfg->lr_scaling = LR_SCALING_NONE;
    cfg->base_batch = 256;
    opt_config_defaults(&cfg->opt);
    cfg->seed = 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->threads = cpus > 0 ? (int)cpus : 1;
    cfg->device = "cpu";
    cfg->precision = "fp32";
    cfg->augment = -1;
    cfg->diverge_factor = 10;
    cfg->bucket_mb = GRAD_BUCKET_MB_DEFAULT;
}

typedef struct {
    Dataset ds;
    Net *net;
    Replicas *replicas;  /* the step's threads split by images through per-thread nets, or NULL */
    Optimizer *opt;
    Backend *bk;
    uint32_t *order;
    Augment aug;      /* training: random crop and flip */
    Augment centre;   /* evaluation, and training without augmentation: the centre crop */
    bool use_aug;
    NoiseScale noise;
    Tensor grad_before;  /* the accumulated gradient before a micro-batch (noise scale) */
    Comm single;         /* rank 0 of 1 when the config has no communicator */
    const Comm *comm;
    GradReducer reducer;
    BkCollective *device_sum; /* the ranks' sums on their devices (NCCL), or NULL: MPI on the host */
    bool shared_gpu;          /* ranks share a GPU: MPI sums from page-locked host memory */
    size_t *ready_from;  /* per layer: the gradients from here to the end are final after it */
    Loader *loader;      /* batches into the net's input, cropped LOADER_AHEAD batches ahead */
    uint32_t *eval_idx;  /* 0, 1, ... for every test image: evaluate's batches are ranges of it */
    LossScaler scaler;   /* fp16's dynamic loss scale; a fixed 1 otherwise */
    Stepper stepper;     /* a step with one read back (one process); its block's check otherwise */
    bool step_skipped;   /* the last step's gradients were inf/NaN: no update (fp16) */
    /* the run's course, across epochs */
    const TrainConfig *cfg; /* resolved: eval_batch and the schedule's base LR set */
    Observer *obs;          /* NULL on ranks other than 0: rank 0 reports for the job */
    TrainPosition pos;      /* where training stands; what checkpoints hold */
    long steps_per_epoch, total_steps, last_step;
    double t0;              /* the clock of the epochs' elapsed time */
    double last_train_loss; /* of the last epoch (or of the step that diverged) */
    double last_lr;         /* at the last iteration */
    int chance_epochs;      /* epochs in a row that ended at the chance level */
    double last_save;       /* the clock at the last checkpoint (or the start): --save-seconds */
} Run;

static void run_free(Run *r)
{
    loader_destroy(r->loader); /* first: its thread reads the data set */
    grad_reducer_free(&r->reducer);
    bk_collective_close(r->device_sum);
    free(r->ready_from);
    tensor_free(&r->grad_before);
    stepper_free(&r->stepper);
    optimizer_destroy(r->opt);
    replicas_close(r->replicas);
    net_destroy(r->net);
    backend_destroy(r->bk);
    dataset_free(&r->ds);
    free(r->order);
    free(r->eval_idx);
}

/* Rank 0's values of t on every rank, through a host copy. */
static void bcast_tensor(const Comm *comm, Tensor *t)
{
    if (comm->size == 1) return;
    real *host = tensor_to_host(t);
    comm_bcast_real(comm, host, tensor_count(t), 0);
    tensor_upload(t, host);
    free(host);
}

/* BN running statistics differ between ranks (each sees its own images); evaluation and
 * checkpoints use rank 0's, as PyTorch DDP broadcasts buffers. */
static void share_buffers(Run *r)
{
    for (int b = 0; b < r->net->n_buffers; b++) bcast_tensor(r->comm, &r->net->buffers[b].value);
}

/* Evaluates on the whole test set in inference mode; each rank takes a contiguous shard. */
static void evaluate(Run *r, double *loss, double *acc)
{
    const ImageSet *set = &r->ds.test;
    const int eval_batch = r->cfg->eval_batch;
    share_buffers(r);
    const int first = (int)((long)set->count * r->comm->rank / r->comm->size);
    const int end = (int)((long)set->count * (r->comm->rank + 1) / r->comm->size);
    double sums[2] = {0, 0}; /* loss x images, hits */
    for (int start = first; start < end; start += eval_batch) {
        int n = end - start < eval_batch ? end - start : eval_batch;
        int after = start + n, n_after = end - after < eval_batch ? end - after : eval_batch;
        BatchJob job = {set, r->eval_idx + start, n, &r->centre, NULL, 0};
        BatchJob next = {set, r->eval_idx + after, n_after, &r->centre, NULL, 0};
        loader_load(r->loader, &job, &next, after < end);
        sums[0] += net_forward(r->net, n, false) * n;
        sums[1] += r->net->correct;
    }
    comm_allreduce_sum_double(r->comm, sums, 2);
    *loss = set->count ? sums[0] / set->count : 0;
    *acc = set->count ? sums[1] / set->count : 0;
}

/* --stop-at-acc: the run ends at an evaluation with this accuracy */
static bool target_reached(const TrainConfig *cfg, double test_acc)
{
    return cfg->stop_at_acc > 0 && test_acc >= cfg->stop_at_acc;
}

static void epoch_order(const Run *r, unsigned long long seed, int epoch, uint32_t *order)
{
    int n = r->ds.train.count;
    for (int i = 0; i < n; i++) order[i] = (uint32_t)i;
    Rng rng;
    rng_seed(&rng, seed, 0x5eed0000ULL + (uint64_t)epoch);
    rng_shuffle(&rng, order, (uint32_t)n);
}

/* Per-layer statistics are taken at steps 0 and 1 (the papers' tables are "after
 * one iteration"), every layer_stats_every steps, and at the last step. */
static bool stats_wanted(const TrainConfig *cfg, long step, long last_step)
{
    if (!cfg->layer_stats && cfg->layer_stats_every <= 0) return false;
    if (step <= 1 || step == last_step) return true;
    return cfg->layer_stats_every > 0 && step % cfg->layer_stats_every == 0;
}

static void bn_allreduce(void *ctx, double *values, int n)
{
    comm_allreduce_sum_double(ctx, values, n);
}

/* After a layer's backward on the last micro-batch: its gradients and all later ones are final. */
static void reduce_finished(Net *net, int layer, void *ctx)
{
    (void)net;
    Run *r = ctx;
    grad_reducer_ready(&r->reducer, r->ready_from[layer]);
}

/* The ranks of the job (cfg->comm's; 1 without one, as the run's own single-rank comm). */
static int config_ranks(const TrainConfig *cfg) { return cfg->comm ? cfg->comm->size : 1; }

/* The images of one forward and backward: --micro-batch, or this rank's whole share. */
static int micro_batch_size(const TrainConfig *cfg)
{
    return cfg->micro_batch > 0 ? cfg->micro_batch : cfg->batch / config_ranks(cfg);
}

/* The images of micro-batch j of a step (idx: the step's whole batch) for this rank, and the
 * start of their augmentation draws in *rng: the step's generator, seeded by (seed, step),
 * past the draws of the images before them in the global batch, so every image gets the
 * draws it gets in one process with the whole batch. */
static BatchJob micro_batch_job(const Run *r, const uint32_t *idx, long step, int j, Rng *rng)
{
    const TrainConfig *cfg = r->cfg;
    const int share = cfg->batch / r->comm->size, m = micro_batch_size(cfg);
    const int first = r->comm->rank * share + j * m;
    rng_seed(rng, cfg->seed, 0xa09000000ULL + (uint64_t)step);
    if (r->use_aug) augment_skip(&r->ds.train, &r->aug, rng, first);
    const uint64_t epoch = r->steps_per_epoch > 0 ? (uint64_t)(step / r->steps_per_epoch) : 0;
    return (BatchJob){&r->ds.train, idx + first, m, r->use_aug ? &r->aug : &r->centre, rng, epoch};
}

/* Micro-batch j of the step into the net, and the ones after it for the loader to crop ahead:
 * the rest of this step's, then those of the `later` steps that follow in r->order (each
 * step's batch right after the one before). */
static void load_micro_batch(Run *r, const uint32_t *idx, int later, long step, int j, int parts)
{
    Rng rng, ahead_rng[LOADER_AHEAD];
    BatchJob job = micro_batch_job(r, idx, step, j, &rng), ahead[LOADER_AHEAD];
    int n = 0;
    for (int k = j + 1; n < LOADER_AHEAD && k < (later + 1) * parts; k++, n++)
        ahead[n] = micro_batch_job(r, idx + (size_t)(k / parts) * (size_t)r->cfg->batch, step + k / parts, k % parts,
                                   &ahead_rng[n]);
    loader_load(r->loader, &job, ahead, n);
}

/* Where micro-batch j of a step of one process comes from (stepper_run's StepLoad). */
typedef struct {
    Run *r;
    const uint32_t *idx;
    int later, parts;
    long step;
} PartLoad;

/* Dropout masks follow each image's place in the global batch: K ranks or K micro-batches
 * draw what one process with the whole batch draws. */
static void place_micro_batch(Run *r, long step, int j)
{
    Net *net = r->net;
    net->dropout_seed = r->cfg->seed;
    net->step = (uint64_t)step;
    net->first_image = (uint64_t)(r->comm->rank * (r->cfg->batch / r->comm->size) + j * micro_batch_size(r->cfg));
}

static void load_part(void *ctx, int j)
{
    PartLoad *p = ctx;
    place_micro_batch(p->r, p->step, j);
    load_micro_batch(p->r, p->idx, p->later, p->step, j, p->parts);
}

/* A step of one process without --noise-scale: one read back (engine/train/step.h). With
 * deferred reads a non-finite loss no longer ends the micro-batches early, but the step
 * returns the same loss (summed up to the first non-finite one) and diverges as before. */
static double train_step_alone(Run *r, const uint32_t *idx, int later, long step, double lr, int *correct)
{
    const int m = micro_batch_size(r->cfg), parts = r->cfg->batch / m;
    PartLoad p = {r, idx, later, parts, step};
    StepResult res;
    Error err;
    if (stepper_run(&r->stepper, parts, m, r->cfg->batch, lr, load_part, &p, &res, &err) != 0) {
        /* a pass that issued other operations than its capture: the engine's bug, not the run's */
        fprintf(stderr, "bigbatch: internal error: %s\n", err.msg);
        exit(1);
    }
    *correct = (int)res.hits;
    if (!res.finite) return isnan(res.loss_images) ? NAN : res.loss_images;
    r->step_skipped = res.skipped;
    return res.loss_images / r->cfg->batch;
}

/* One iteration; returns the mean loss over the global batch (the same on every rank).
 * Each rank takes its share of the batch (its slice of idx), in micro-batches (one when
 * micro_batch is 0) whose gradients add up, across micro-batches and ranks, to the
 * gradient of the mean loss over the whole batch. later: the steps after this one in the
 * epoch whose batches (after idx in r->order) the loader may crop ahead. *stop: in, this rank asks to
 * stop; out, some rank did. Several ranks and --noise-scale read host values mid-step (the
 * losses and |g|^2 summed over ranks, each micro-batch's gradient norm), so they run this flow,
 * which waits for the device; one process otherwise runs train_step_alone. */
static double train_step(Run *r, const TrainConfig *cfg, const uint32_t *idx, int later, long step,
                         double lr, int *correct, bool *stop)
{
    if (r->comm->size == 1 && !cfg->noise_scale) return train_step_alone(r, idx, later, step, lr, correct);
    Net *net = r->net;
    Backend *bk = net->bk;
    const Comm *comm = r->comm;
    const int B = cfg->batch, share = B / comm->size;
    const int m = micro_batch_size(cfg), parts = share / m;
    net_zero_grad(net);
    net->loss_scale = loss_scaler_net_scale(&r->scaler, B);
    double sums[4] = {0, 0, 0, *stop}; /* loss x images, hits, micro-batch |g|^2, stop */
    bool finite = true;
    for (int j = 0; j < parts; j++) {
        place_micro_batch(r, step, j);
        /* stage 1: data */
        load_micro_batch(r, idx, later, step, j, parts);
        /* stage 2-3: forward and backward, accumulating into the gradient */
        if (cfg->noise_scale) bk_copy(bk, net->n_weights, net->grad_block.data, r->grad_before.data);
        /* The last micro-batch's backward hands finished layers to the allreduce, which sums
         * them in place while backward goes on; not with --noise-scale, which reads this
         * micro-batch's own gradient after backward: then all of it is summed after. */
        bool last = j == parts - 1 && comm->size > 1;
        if (last) grad_reducer_begin(&r->reducer, net->grad_block.data, net->n_weights);
        net->after_layer_backward = last && !cfg->noise_scale ? reduce_finished : NULL;
        net->after_layer_ctx = r;
        /* alone, a loss that is not finite ends the step: no peer waits for its gradients */
        double loss = net_train_pass(net, r->replicas, m, comm->size == 1);
        net->after_layer_backward = NULL;
        sums[1] += net->correct;
        sums[0] += loss * m;
        if (!isfinite(loss)) {
            finite = false;
            if (comm->size == 1) break;
        }
        if (cfg->noise_scale) { /* |g_j|^2 of this micro-batch's own mean gradient */
            bk_axpy(bk, net->n_weights, -1, net->grad_block.data, r->grad_before.data);
            double scale = (double)B / m;
            sums[2] += bk_sum_squares(bk, net->n_weights, r->grad_before.data) * scale * scale / parts;
        }
    }
    /* stage 4: gradient reduction across ranks (one process: nothing to do) */
    if (comm->size > 1) {
        grad_reducer_finish(&r->reducer);
        comm_allreduce_sum_double(comm, sums, 4);
        finite = isfinite(sums[0]);
    }
    *correct = (int)sums[1];
    *stop = sums[3] > 0;
    if (!finite) return isnan(sums[0]) ? NAN : sums[0];
    /* stage 5: update, from the gradients at the loss's own scale (every rank decides alike:
     * the gradients are the same sums on each) */
    const double scale = r->scaler.scale;
    const double *check = loss_scaler_unscale(&r->scaler, net, stepper_check(&r->stepper));
    double sum_sq = 0;
    if (check) bk_download(bk, &sum_sq, check, sizeof sum_sq);
    r->step_skipped = !loss_scaler_update(&r->scaler, isfinite(sum_sq));
    if (r->step_skipped) return sums[0] / B;
    if (cfg->noise_scale)
        noise_scale_add(&r->noise, sums[2] / (comm->size * scale * scale), m,
                        bk_sum_squares(bk, net->n_weights, net->grad_block.data), B);
    optimizer_step(r->opt, net, lr, NULL);
    return sums[0] / B;
}

static int load_data(Run *r, const TrainConfig *cfg, const ModelInfo *info, Error *err)
{
    DataOptions dopt = {0};
    dopt.name = cfg->data;
    dopt.root = cfg->data_root;
    dopt.image_size = cfg->image_size;
    dopt.partial_batches = cfg->partial_batches;
    dopt.seed = cfg->seed;
    dopt.quiet = cfg->quiet;
    dopt.synth_c = info->in_c;
    dopt.synth_h = info->in_h;
    dopt.synth_w = info->in_w;
    dopt.synth_classes = info->classes > 100 ? 100 : info->classes;
    if (info->in_h > 64) { /* full-size nets: a small synthetic set, enough for a few steps, */
        /* or the --train-subset asked for (a batch above 256 needs that many images) */
        dopt.synth_train = cfg->train_subset > 256 ? cfg->train_subset : 256;
        dopt.synth_test = 64;
    }
    if (dataset_load(&dopt, &r->ds, err) != 0) return -1;
    ImageSet *tr = &r->ds.train, *te = &r->ds.test;
    if (augment_for_training(tr, info->name, cfg->data, info->in_c, info->in_h, info->in_w,
                             cfg->augment == AUGMENT_RRC, cfg->seed, &r->aug, err) != 0)
        return -1;
    imageset_keep_spread(tr, cfg->train_subset);
    imageset_keep_spread(te, cfg->test_subset);
    if (cfg->batch > tr->count) {
        error_set(err, "--batch %d is larger than the training set (%d images)", cfg->batch, tr->count);
        return -1;
    }
    bool is_cifar_like = dataset_find(cfg->data)->image_folder;
    r->use_aug = cfg->augment < 0 ? is_cifar_like : cfg->augment != AUGMENT_OFF;
    r->centre = (Augment){info->in_h, info->in_w, false, 0, false, false, cfg->seed};
    return 0;
}

int train_config_check(const TrainConfig *cfg, Error *err)
{
    if (!model_find(cfg->model)) {
        error_set(err, "unknown model '%s' (bigbatch models lists them)", cfg->model);
        return -1;
    }
    if (dataset_check_name(cfg->data, err) != 0 || opt_name_check(cfg->opt.name, err) != 0) return -1;
    if (backend_device_check(cfg->device, err) != 0) {
        error_prefix(err, "--device");
        return -1;
    }
    if (backend_precision_check(cfg->precision, err) != 0) {
        error_prefix(err, "--precision");
        return -1;
    }
    if (cfg->image_size && !dataset_find(cfg->data)->image_folder) {
        error_set(err, "--image-size applies to image folders (imagefolder, cifar10), not %s", cfg->data);
        return -1;
    }
    if (cfg->image_size < 0 || cfg->image_size > 4096) {
        error_set(err, "--image-size %d is not in 8..4096", cfg->image_size);
        return -1;
    }
    if (cfg->batch < 1 || cfg->epochs < 1 || cfg->eval_batch < 0) {
        error_set(err, "--batch, --epochs and --eval-batch must be positive");
        return -1;
    }
    const int ranks = config_ranks(cfg);
    if (cfg->batch % ranks != 0) {
        error_set(err, "--batch %d is not divisible by the %d ranks", cfg->batch, ranks);
        return -1;
    }
    if (cfg->micro_batch > 0 && (cfg->batch / ranks) % cfg->micro_batch != 0) {
        if (ranks > 1)
            error_set(err, "each rank's share of the batch (%d / %d ranks = %d) is not divisible by --micro-batch %d",
                      cfg->batch, ranks, cfg->batch / ranks, cfg->micro_batch);
        else
            error_set(err, "--batch %d is not divisible by --micro-batch %d", cfg->batch, cfg->micro_batch);
        return -1;
    }
    /* the small batch of the two-batch estimator: a micro-batch, else each rank's share */
    const int small = micro_batch_size(cfg);
    if (cfg->cuda_graph && (ranks > 1 || cfg->noise_scale)) {
        error_set(err, "--cuda-graph on needs one process without --noise-scale (they read host values mid-step)");
        return -1;
    }
    if (cfg->noise_scale && small >= cfg->batch) {
        error_set(err, "--noise-scale needs --micro-batch (or --workers-emulated) smaller than --batch, or 2+ ranks");
        return -1;
    }
    ScheduleConfig sched = cfg->sched;
    sched.base_lr = lr_scale_rule(cfg->lr, cfg->lr_scaling, cfg->batch, cfg->base_batch);
    return schedule_validate(&sched, err);
}

/* ---- setup: everything a run owns lives in Run, and run_free frees it ---- */

/* The backend, the model and the data set. Rank 0 loads first: it may write the image
 * cache the others then read. */
static int run_load(Run *r, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    r->bk = backend_open(cfg->device, cfg->threads, err);
    if (!r->bk) return -1;
    if (backend_set_precision(r->bk, cfg->precision, err) != 0) {
        error_prefix(err, "--precision");
        return -1;
    }
    r->net = model_build(cfg->model, r->bk, 0, cfg->seed, err);
    if (r->comm->rank != 0) comm_barrier(r->comm);
    int loaded = r->net ? load_data(r, cfg, model_find(cfg->model), err) : -1;
    if (r->comm->rank == 0) comm_barrier(r->comm);
    if (loaded != 0) return -1;
    if (r->ds.classes > r->net->classes) {
        error_set(err, "%s has %d classes but model %s has %d outputs", cfg->data, r->ds.classes,
                  cfg->model, r->net->classes);
        return -1;
    }
    return 0;
}

/* The run's length in steps, and the schedule checked against it (train_config_check has
 * checked the schedule alone). */
static int run_schedule(Run *r, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    r->steps_per_epoch = r->ds.train.count / cfg->batch; /* the last partial batch is dropped */
    r->total_steps = r->steps_per_epoch * cfg->epochs;   /* the schedule's horizon */
    r->last_step = (cfg->steps > 0 && cfg->steps < r->total_steps ? cfg->steps : r->total_steps) - 1;
    return schedule_validate_run(&cfg->sched, r->steps_per_epoch, r->total_steps, err);
}

/* Parameters are laid out in layer order, so after layer i's backward the gradient
 * block is final from its first parameter (or the next layer's) to the end. */
static void ready_offsets(Run *r)
{
    const Net *net = r->net;
    r->ready_from = xcalloc((size_t)net->n_layers + 1, sizeof *r->ready_from, "ready offsets");
    r->ready_from[net->n_layers] = net->n_weights;
    for (int i = net->n_layers - 1; i >= 0; i--) {
        const Layer *l = &net->layers[i];
        r->ready_from[i] = r->ready_from[i + 1];
        for (int k = 0; k < l->n_param; k++) {
            size_t off = (size_t)(net->params[l->param[k]].grad.data - net->grad_block.data);
            if (off < r->ready_from[i]) r->ready_from[i] = off;
        }
    }
}

/* The net's plan for the largest batch it runs, the gradient reducer and
 * the per-run scratch. */
static void run_buffers(Run *r)
{
    const TrainConfig *cfg = r->cfg;
    const int micro = micro_batch_size(cfg);
    net_plan(r->net, micro > cfg->eval_batch ? micro : cfg->eval_batch);
    grad_reducer_init(&r->reducer, r->comm, r->bk, (size_t)(cfg->bucket_mb * 1e6), cfg->plain_allreduce);
    if (cfg->sync_bn && r->comm->size > 1) {
        r->net->bn_allreduce = bn_allreduce;
        r->net->bn_allreduce_ctx = (void *)r->comm;
    }
    ready_offsets(r);
    noise_scale_init(&r->noise, 0.95);
    if (cfg->noise_scale) tensor_alloc(&r->grad_before, r->bk, 1, 1, 1, (int)r->net->n_weights);
    r->order = xmalloc(sizeof *r->order * (size_t)r->ds.train.count, "order");
    const int tests = r->ds.test.count;
    r->eval_idx = xmalloc(sizeof *r->eval_idx * (size_t)(tests > 0 ? tests : 1), "eval indices");
    for (int i = 0; i < tests; i++) r->eval_idx[i] = (uint32_t)i;
}

/* The position a checkpoint gives lies within this run's schedule (one saved with the same
 * flags always does): step = epoch x steps an epoch + epoch_step, and the epoch's sums fit its
 * steps. A file edited by hand, or saved by a run with other flags, is refused by key. */
static int check_resumed_position(const Run *r, Error *err)
{
    const TrainPosition *p = &r->pos;
    const char *path = r->cfg->resume;
    const long spe = r->steps_per_epoch;
    if (p->epoch > r->cfg->epochs) {
        error_set(err, "%s: metadata 'epoch' is %d, beyond this run's %d epochs", path, p->epoch, r->cfg->epochs);
        return -1;
    }
    if (p->epoch_step > spe || p->step != (long)p->epoch * spe + p->epoch_step) {
        error_set(err, "%s: metadata 'step' %ld and 'epoch_step' %ld do not fit epoch %d of %ld steps (flags other "
                  "than the checkpoint's?)", path, p->step, p->epoch_step, p->epoch, spe);
        return -1;
    }
    if (p->epoch_hits > p->epoch_step * (long)r->cfg->batch) {
        error_set(err, "%s: metadata 'epoch_hits' %ld is more than the %ld images of the epoch so far", path,
                  p->epoch_hits, p->epoch_step * (long)r->cfg->batch);
        return -1;
    }
    return 0;
}

/* --resume: the net, the optimizer and the position from a checkpoint of the same seed. */
static int run_resume(Run *r, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    if (checkpoint_load(cfg->resume, r->net, r->opt, &r->pos, err) != 0 ||
        checkpoint_check_finite(cfg->resume, r->net, r->opt, err) != 0)
        return -1;
    if (r->pos.seed != cfg->seed) {
        error_set(err, "%s: checkpoint was trained with --seed %llu, not %llu", cfg->resume, r->pos.seed,
                  cfg->seed);
        return -1;
    }
    return check_resumed_position(r, err);
}

/* Everything the run needs, owned by r (run_free frees it whether this succeeds or not):
 * backend, model, data, optimizer, plan, reducer, loader, and the resumed position. */
static int run_setup(Run *r, const TrainConfig *cfg, Observer *obs, Error *err)
{
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->single.size = 1;
    r->comm = cfg->comm ? cfg->comm : &r->single;
    r->obs = r->comm->rank == 0 ? obs : NULL;
    r->pos.seed = cfg->seed;
    r->pos.first_loss = NAN;
    r->last_train_loss = NAN;
    r->last_lr = cfg->sched.base_lr;
    if (train_config_check(cfg, err) != 0 || run_load(r, err) != 0 || run_schedule(r, err) != 0) return -1;
    loss_scaler_init(&r->scaler, backend_precision_scales_loss(cfg->precision), cfg->loss_scale);
    r->net->label_smoothing = (real)cfg->label_smoothing;
    r->opt = optimizer_create(&cfg->opt, r->net, err);
    if (!r->opt) return -1;
    run_buffers(r);
    /* a graph replays one net's pass: --cuda-graph runs without per-thread replicas */
    r->replicas = cfg->cuda_graph ? NULL : replicas_open(r->net, micro_batch_size(cfg), err);
    if (!r->replicas && err->msg[0]) return -1;
    stepper_init(&r->stepper, r->net, r->replicas, r->opt, &r->scaler, cfg->batch / r->comm->size / micro_batch_size(cfg));
    r->stepper.use_graph = cfg->cuda_graph;
    if (cfg->cuda_graph && net_has_layer(r->net, "dropout")) {
        /* the masks' key (the step) is a host value that changes every step */
        error_set(err, "--cuda-graph on: model %s has dropout, whose masks change every step; use --cuda-graph off",
                  cfg->model);
        return -1;
    }
    r->loader = loader_create(r->net, r->ds.mean, r->ds.std, cfg->loader_threads, err);
    if (!r->loader) return -1;
    /* two ranks on one GPU: NCCL refuses them, MPI on the host sums for them */
    r->shared_gpu = comm_ranks_share_gpu(r->comm, r->bk);
    r->device_sum = r->shared_gpu ? NULL : comm_device_collective(r->comm, r->bk, err);
    if (!r->device_sum && err->msg[0]) return -1;
    grad_reducer_use(&r->reducer, r->device_sum);
    if (r->net->bn_allreduce) r->net->bn_device_sum = r->device_sum;
    if (cfg->resume && run_resume(r, err) != 0) return -1;
    snprintf(r->pos.model, sizeof r->pos.model, "%s", cfg->model);
    snprintf(r->pos.optimizer, sizeof r->pos.optimizer, "%.15s", cfg->opt.name);
    /* Every rank starts from rank 0's weights (the same seed gives the same, but a rank
     * must never train a model of its own). */
    bcast_tensor(r->comm, &r->net->param_block);
    share_buffers(r);
    return 0;
}

/* How several ranks' sums travel, for the first line; nothing for CPU ranks (MPI on the host). */
static const char *sums_path(const Run *r)
{
    if (r->device_sum) return " (sums on the devices)";
    if (r->shared_gpu) return " (ranks share a GPU: sums through MPI from page-locked host memory)";
    if (backend_on_gpu(r->bk))
        return " (NCCL unavailable, said on stderr: sums through MPI from host memory)";
    return "";
}

/* The summary line to the observer; the clock starts. */
static void run_announce(Run *r)
{
    const TrainConfig *cfg = r->cfg;
    char summary[384];
    char ranks[160] = "";
    if (r->comm->size > 1)
        snprintf(ranks, sizeof ranks, " x %d ranks of %d images%s", r->comm->size, cfg->batch / r->comm->size,
                 sums_path(r));
    snprintf(summary, sizeof summary, "%s on %s: %d train / %d test images, %zu parameters, %s, %d threads%s%s",
             cfg->model, cfg->data, r->ds.train.count, r->ds.test.count, r->net->n_weights, REAL_NAME,
             cfg->threads, ranks,
             !r->use_aug ? "" : r->aug.rrc ? ", augmentation: random-resized crop+flip" : ", augmentation: crop+flip");
    if (r->obs && r->obs->on_start) r->obs->on_start(r->obs, cfg, backend_device_name(r->bk), summary);
    r->t0 = now_seconds();
    r->last_save = r->t0;
}

/* ---- one epoch ---- */

/* One epoch's course. A resumed epoch carries on the sums of its first part. An evaluation
 * within the epoch that reached --stop-at-acc ends the epoch, and its numbers are the
 * epoch's (one evaluation per step in the tables). */
typedef struct {
    int epoch;          /* 0-based */
    double loss_sum;    /* of the epoch's batch losses */
    long hits;          /* of its training images */
    long done;          /* iterations of this process in the epoch */
    double t0, eval_time;
    bool target_eval;
    double target_loss, target_acc;
} Epoch;

/* How one epoch ended: the next one follows, the run ends, or it failed (err says why). */
typedef enum { EPOCH_NEXT, EPOCH_LAST, EPOCH_FAILED } EpochEnd;

static bool diverging(const Run *r, double loss)
{
    double factor = r->cfg->diverge_factor;
    return !isfinite(loss) || (factor > 0 && isfinite(r->pos.first_loss) && loss > factor * r->pos.first_loss);
}

/* --eval-every within an epoch (its end evaluates anyway); the time is not the epoch's
 * training time. True when it reached --stop-at-acc, which ends the epoch. */
static bool eval_within_epoch(Run *r, Epoch *ep)
{
    double te = now_seconds(), eval_loss, eval_acc;
    evaluate(r, &eval_loss, &eval_acc);
    ep->eval_time += now_seconds() - te;
    if (target_reached(r->cfg, eval_acc)) {
        ep->target_eval = true;
        ep->target_loss = eval_loss;
        ep->target_acc = eval_acc;
        return true;
    }
    if (r->obs && r->obs->on_eval) r->obs->on_eval(r->obs, ep->epoch + 1, r->pos.step, eval_loss, eval_acc);
    return false;
}

/* Saves where the run stands (rank 0 only). --save-handoff: to <save>.step<N>, then tells the
 * observer, whose sweep renames it to <save> once the rows before it are in its database. */
static int save_checkpoint(Run *r, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    r->last_save = now_seconds();
    if (r->comm->rank != 0) return 0;
    size_t len = strlen(cfg->save) + 32;
    char *path = xmalloc(len, "checkpoint path");
    if (cfg->save_handoff) snprintf(path, len, "%s.step%ld", cfg->save, r->pos.step);
    else snprintf(path, len, "%s", cfg->save);
    int rc = checkpoint_save(path, r->net, r->opt, &r->pos, err);
    if (rc == 0 && cfg->save_handoff && r->obs && r->obs->on_checkpoint)
        r->obs->on_checkpoint(r->obs, path, r->pos.step, r->pos.epoch);
    free(path);
    return rc;
}

static bool stop_asked(const Run *r)
{
    return r->cfg->checkpoint_now && *r->cfg->checkpoint_now;
}

/* A checkpoint is due: --save-seconds have passed, or a signal asked for one. */
static bool save_due(const Run *r)
{
    const TrainConfig *cfg = r->cfg;
    if (!cfg->save) return false;
    return stop_asked(r) || (cfg->save_seconds > 0 && now_seconds() - r->last_save >= cfg->save_seconds);
}

/* The epoch's iterations from the position on, until its end, --steps, divergence
 * (res->diverged) or a target reached within it; -1 when the observer stops the run. */
static int run_steps(Run *r, Epoch *ep, TrainResult *res, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    Observer *obs = r->obs;
    TrainPosition *pos = &r->pos;
    for (long s = pos->epoch_step; s < r->steps_per_epoch; s++) {
        if (cfg->steps > 0 && pos->step >= cfg->steps) break;
        int correct = 0;
        double lr = schedule_lr(&cfg->sched, pos->step, r->steps_per_epoch, r->total_steps);
        r->last_lr = lr;
        r->opt->collect_stats = stats_wanted(cfg, pos->step, r->last_step);
        bool stop = obs && obs->stop;
        /* the loader crops the next steps' batches ahead, those in this epoch and the run */
        long later = r->steps_per_epoch - 1 - s;
        if (cfg->steps > 0 && cfg->steps - 1 - pos->step < later) later = cfg->steps - 1 - pos->step;
        if (later > LOADER_AHEAD) later = LOADER_AHEAD;
        const uint32_t *idx = r->order + s * cfg->batch;
        double loss = train_step(r, cfg, idx, (int)later, pos->step, lr, &correct, &stop);
        if (obs && obs->on_step) obs->on_step(obs, ep->epoch + 1, pos->step, loss, lr, r->step_skipped);
        if (isnan(r->pos.first_loss)) r->pos.first_loss = loss;
        if (r->opt->collect_stats && isfinite(loss) && !r->step_skipped && obs && obs->on_layer_stats)
            obs->on_layer_stats(obs, pos->step, r->net, r->opt->stats);
        pos->step++;
        pos->epoch_step = s + 1;
        ep->done++;
        if (stop) {
            error_set(err, "stopped after step %ld by the run's observer", pos->step);
            return -1;
        }
        if (diverging(r, loss)) {
            res->diverged = true;
            if (obs && obs->on_diverged) obs->on_diverged(obs, pos->step, loss);
            r->last_train_loss = loss;
            return 0;
        }
        ep->loss_sum += loss;
        ep->hits += correct;
        pos->epoch_loss_sum = ep->loss_sum;
        pos->epoch_hits = ep->hits;
        if (cfg->eval_every > 0 && pos->step % cfg->eval_every == 0 && s + 1 < r->steps_per_epoch &&
            eval_within_epoch(r, ep))
            return 0;
        if (obs && obs->on_progress) {
            double dt = now_seconds() - ep->t0 - ep->eval_time;
            obs->on_progress(obs, ep->epoch + 1, s + 1, r->steps_per_epoch, ep->loss_sum / (s + 1),
                             dt > 0 ? ep->done * cfg->batch / dt : 0);
        }
        /* mid-epoch only: an epoch's end saves after its record (epoch_done_save) */
        if (s + 1 < r->steps_per_epoch && save_due(r)) {
            if (save_checkpoint(r, err) != 0) return -1;
            res->stopped = stop_asked(r);
            if (res->stopped) return 0;
        }
    }
    return 0;
}

/* The epoch's line: its training numbers and the evaluation at its end. */
static void epoch_metrics(Run *r, const Epoch *ep, EpochMetrics *m)
{
    const TrainConfig *cfg = r->cfg;
    double train_time = now_seconds() - ep->t0 - ep->eval_time;
    *m = (EpochMetrics){0};
    m->epoch = ep->epoch + 1;
    m->step = r->pos.step;
    long counted = r->pos.epoch_step; /* iterations of this epoch, before and after a resume */
    m->train_loss = counted ? ep->loss_sum / counted : NAN;
    m->train_acc = counted ? (double)ep->hits / ((double)counted * cfg->batch) : NAN;
    if (ep->target_eval) {
        m->test_loss = ep->target_loss;
        m->test_acc = ep->target_acc;
    } else {
        evaluate(r, &m->test_loss, &m->test_acc);
    }
    m->loss_gap = m->test_loss - m->train_loss;
    m->lr = r->last_lr; /* at the epoch's last iteration */
    m->noise_scale = cfg->noise_scale ? noise_scale_bsimple(&r->noise) : NAN;
    m->images_per_sec = train_time > 0 ? ep->done * cfg->batch / train_time : 0;
    m->elapsed = now_seconds() - r->t0;
}

/* A finished epoch: the position moves to the next one's start, and --save-every saves it. */
static int epoch_done_save(Run *r, int epoch, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    TrainPosition *pos = &r->pos;
    pos->epoch = epoch + 1;
    pos->epoch_step = 0;
    pos->epoch_loss_sum = 0;
    pos->epoch_hits = 0;
    bool every = cfg->save && cfg->save_every > 0 && pos->epoch % cfg->save_every == 0;
    if ((every || save_due(r)) && epoch < cfg->epochs - 1 && save_checkpoint(r, err) != 0) return -1;
    return 0;
}

/* Judged on real data only (synthetic labels are random, so its runs sit at chance by design),
 * and not for runs cut short by --steps: probes of a few steps (Table 2's ratios) learn nothing
 * by intent. */
static bool judges_collapse(const Run *r) { return r->ds.root[0] != 0 && r->cfg->steps == 0; }

/* --collapse-patience: true when this many epochs in a row have ended at the chance level.
 * Off by default: slow starts recover (a run can sit at chance for epochs, then learn). */
static bool collapse_stop(Run *r, const EpochMetrics *m)
{
    bool chance = judges_collapse(r) && collapse_at_chance(r->ds.classes, m->train_loss, m->test_acc);
    r->chance_epochs = chance ? r->chance_epochs + 1 : 0;
    return r->cfg->collapse_patience > 0 && r->chance_epochs >= r->cfg->collapse_patience;
}

/* One epoch (or what is left of it after a resume): its steps, its evaluation and metrics,
 * and its checkpoint. */
static EpochEnd run_epoch(Run *r, int epoch, TrainResult *res, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    epoch_order(r, cfg->seed, epoch, r->order);
    Epoch ep = {.epoch = epoch, .loss_sum = r->pos.epoch_loss_sum, .hits = r->pos.epoch_hits,
                .t0 = now_seconds(), .target_loss = NAN, .target_acc = NAN};
    if (run_steps(r, &ep, res, err) != 0) return EPOCH_FAILED;
    if (res->diverged || res->stopped) return EPOCH_LAST;
    bool epoch_done = r->pos.epoch_step >= r->steps_per_epoch;
    if (ep.done == 0 && !epoch_done) return EPOCH_LAST; /* --steps reached exactly at an epoch boundary */
    EpochMetrics m;
    epoch_metrics(r, &ep, &m);
    if (r->obs && r->obs->on_epoch) r->obs->on_epoch(r->obs, &m);
    double stop_after_epoch = r->obs && r->obs->stop;
    comm_allreduce_sum_double(r->comm, &stop_after_epoch, 1); /* every rank stops together */
    if (stop_after_epoch > 0) {
        error_set(err, "stopped after epoch %d by the run's observer", m.epoch);
        return EPOCH_FAILED;
    }
    r->last_train_loss = m.train_loss;
    res->test_acc = m.test_acc;
    res->test_loss = m.test_loss;
    if (collapse_stop(r, &m)) {
        res->collapsed = true;
        return EPOCH_LAST;
    }
    if (epoch_done && epoch_done_save(r, epoch, err) != 0) return EPOCH_FAILED;
    if (cfg->steps > 0 && r->pos.step >= cfg->steps) return EPOCH_LAST;
    res->stopped = stop_asked(r) && epoch + 1 < cfg->epochs; /* saved above (save_due) */
    if (res->stopped) return EPOCH_LAST;
    if (target_reached(cfg, m.test_acc)) {
        res->reached_target = true;
        return EPOCH_LAST;
    }
    return EPOCH_NEXT;
}

/* ---- the end ---- */

/* The result, and the final checkpoint; status is the epochs' (0 or -1), returned, or -1
 * when the checkpoint cannot be written. */
static int run_finish(Run *r, int status, TrainResult *res, Error *err)
{
    const TrainConfig *cfg = r->cfg;
    if (!res->diverged && status == 0 && isnan(r->last_train_loss)) {
        /* Nothing left to train (resumed at the end): report the model as it is. */
        evaluate(r, &res->test_loss, &res->test_acc);
    }
    res->train_loss = r->last_train_loss;
    res->steps = r->pos.step;
    res->skipped_steps = r->scaler.skipped;
    res->loss_scale = r->scaler.scale;
    res->scales_loss = r->scaler.dynamic;
    res->allreduce_s = res->allreduce_exposed_s = 0;
    if (r->comm->size > 1) grad_reducer_times(&r->reducer, &res->allreduce_s, &res->allreduce_exposed_s);
    if (res->diverged) {
        res->test_acc = NAN;
        res->test_loss = NAN;
    } else if (status == 0 && judges_collapse(r)) {
        res->collapsed = res->collapsed || collapse_at_chance(r->ds.classes, res->train_loss, res->test_acc);
    }
    if (status != 0 || !cfg->save || res->diverged || res->stopped) return status;
    share_buffers(r);
    return save_checkpoint(r, err);
}

int train_run(const TrainConfig *cfg, Observer *obs, TrainResult *res, Error *err)
{
    memset(res, 0, sizeof *res);
    TrainConfig resolved = *cfg;
    if (resolved.eval_batch == 0) { /* at most one pass's images: the net is planned for no more */
        const int pass = micro_batch_size(cfg);
        resolved.eval_batch = pass < 500 ? pass : 500;
    }
    resolved.sched.base_lr = lr_scale_rule(cfg->lr, cfg->lr_scaling, cfg->batch, cfg->base_batch);
    Run r;
    int status = run_setup(&r, &resolved, obs, err);
    if (status == 0) {
        run_announce(&r);
        EpochEnd end = EPOCH_NEXT;
        for (int epoch = r.pos.epoch; epoch < resolved.epochs && end == EPOCH_NEXT; epoch++)
            end = run_epoch(&r, epoch, res, err);
        status = run_finish(&r, end == EPOCH_FAILED ? -1 : 0, res, err);
    }
    run_free(&r);
    return status;
}
