/* `bigbatch bench`: training throughput of one model on synthetic data, and the
 * OpenBLAS sgemm rate its convolutions are measured against. Prints one
 * machine-readable line of key=value pairs (bench/run_bench.py parses it).
 *
 * A step is what the training loop does per iteration minus data loading:
 * stepper_run (engine/train/step.h), as train runs a step of one process; with --loader each step
 * also takes its batch from the batch loader (engine/data/loader.h), as training does, from
 * synthetic images or a packed JPEG store (cli/bench_data.h), and the time it waited for the
 * loader's threads is reported. Images/s come from unprofiled steps;
 * the convolution rate comes from a separate set of steps with net->profile on (per-layer
 * timers), so the timers never touch img_s. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cblas.h>
#include <omp.h>

#include "../sweeps/flags/cli_args.h"
#include "../sweeps/flags/flag_table.h"
#include "../engine/optim/loss_scale.h"
#include "../engine/net/models.h"
#include "../engine/optim/optimizer.h"
#include "../engine/dist/replicas.h"
#include "../engine/train/step.h"
#include "../engine/base/rng.h"
#include "bench_data.h"
#include "cli.h"

typedef struct {
    const char *model;
    const char *device; /* backend_open's name */
    const char *precision; /* backend_set_precision's */
    int batch, steps, warmup, profile_steps, threads, loader_threads;
    unsigned long long seed;
    double lr;
    bool sgemm, list_params, layers, loader;
    int data, augment;     /* indices of DATA_NAMES and AUGMENT_NAMES */
    int cuda_graph;        /* 1: --cuda-graph on (engine/train/step.h) */
    const char *data_root; /* --data imagefolder's folder or packed store */
    int sgemm_n, sgemm_repeats;
} BenchConfig;

/* the sgemm measurement: square matrices of this side, the median of this many calls */
#define SGEMM_N 1024
#define SGEMM_REPEATS 7
#define TEXT(x) #x
#define NUMBER(x) TEXT(x)

static void bench_defaults(void *target)
{
    BenchConfig *c = target;
    memset(c, 0, sizeof *c);
    c->batch = 128;
    c->steps = 20;
    c->warmup = 3;
    c->profile_steps = 10;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = cpus > 0 ? (int)cpus : 1;
    c->seed = 1;
    c->device = "cpu";
    c->precision = "fp32";
    c->lr = 0.01;
    c->sgemm_n = SGEMM_N;
    c->sgemm_repeats = SGEMM_REPEATS;
}

static const char HEAD[] =
    "usage: bigbatch bench --model NAME [options]\n"
    "       bigbatch bench --sgemm [--threads N]\n"
    "       mpirun -np K bigbatch bench --allreduce MB [--bucket-mb X] [--repeats N]\n"
    "       bigbatch bench --model NAME --list-params\n"
    "\n"
    "Training throughput of one model on synthetic data (normal inputs, random labels;\n"
    "no dataset files). A step is net_zero_grad, forward (train), backward and an SGD\n"
    "update (momentum 0.9, weight decay 5e-4): the training loop minus data loading;\n"
    "with --loader, plus loading as training does (from synthetic 8-bit images, or\n"
    "from a packed JPEG store with --data imagefolder --data-root DIR [--augment rrc]).\n"
    "After --warmup steps, --steps timed steps give img_s; then --profile-steps more\n"
    "steps with per-layer timers give the convolutions' rate. Prints one line:\n"
    "\n"
    "  model=M batch=B threads=T [split=S] img_s=X ms_per_step=Y peak_rss_mb=Z conv_gflops=G\n"
    "  conv_fraction=F [data_wait=W crop_ms=C loader_threads=L [augment=A]]   (with --loader)\n"
    "  [peak_device_mb=D device=\"NAME\"]\n"
    "  (on a GPU)\n"
    "\n"
    "  split          how 2+ CPU threads share a step: \"images\", each thread a replica of the\n"
    "                 net over its own images for the whole step (nets without batch norm\n"
    "                 whose activations are small and outweigh the weights), or \"layers\",\n"
    "                 every operation split across the threads\n"
    "  peak_rss_mb    getrusage(RUSAGE_SELF).ru_maxrss of the whole process\n"
    "  peak_device_mb the most GPU memory held at once: buffers and workspaces\n"
    "  conv_gflops    convolution FLOPs (forward, backward-data, backward-weights: 3x the\n"
    "                 forward count; 2x for a convolution of the net input, which has no\n"
    "                 backward-data) over the time spent in convolution layers\n"
    "  conv_fraction  convolution time / total time of the profiled steps\n"
    "  data_wait      the fraction of the timed steps' time spent waiting for the batch\n"
    "                 loader's threads (0: the device never waited on cropping)\n"
    "  crop_ms        the loader's thread-milliseconds to crop and flip one batch (its pool\n"
    "                 has --threads threads on a GPU, one on the CPU), the mean over every\n"
    "                 batch it cropped (a packed store's: decoding included)\n"
    "  augment        with --data imagefolder: on or rrc\n"
    "\n"
    "options:\n";

#define AT(member) offsetof(BenchConfig, member)

/* --loader's images and their augmentation: --data's and --augment's values, as train's */
enum { BENCH_SYNTHETIC, BENCH_IMAGEFOLDER };
static const char *const DATA_NAMES[] = {"synthetic", "imagefolder", NULL};
enum { BENCH_AUGMENT_ON, BENCH_AUGMENT_RRC };
static const char *const AUGMENT_NAMES[] = {"on", "rrc", NULL};

static const Flag FLAGS[] = {
    {"model", "NAME", "model (bigbatch models lists them)", NULL, F_STR(AT(model))},
    {"batch", "N", "batch size", "%d", F_INT(AT(batch), 1, BB_MAX_BATCH)},
    {"steps", "N", "timed steps", "%d", F_INT(AT(steps), 1, INT_MAX)},
    {"warmup", "N", "untimed steps first", "%d", F_INT(AT(warmup), 0, INT_MAX)},
    {"profile-steps", "N", "profiled steps for conv_gflops; 0 skips them", "%d", F_INT(AT(profile_steps), 0, INT_MAX)},
    {"threads", "N", "threads", "%d: the number of CPUs", .dflt_doc = "the number of CPUs",
     F_INT(AT(threads), 1, BB_MAX_THREADS)},
    {"device", "NAME", "cpu, or cuda / cuda:N in a make GPU=1 build", "%s", F_STR(AT(device))},
    {"precision", "P",
     "fp32, tf32 on a GPU (tensor cores), or bf16 / fp16 (mixed;\n"
     "tensor cores on CUDA, emulated on the CPU)",
     "%s", F_STR(AT(precision))},
    {"cuda-graph", "on|off",
     "replay each step's forward and backward from a graph captured after\n"
     "the first step (not in the profiled steps).\n"
     "Written and checked on the CPU, not yet run on a GPU [off]",
     NULL, F_CHOICE(AT(cuda_graph), FLAG_OFF_ON, "on, off")},
    {"lr", "X", "learning rate of the updates", "%g", F_DBL(AT(lr)), F_RANGE_Q(0, INFINITY, false, false, "is not a number >= 0")},
    {"seed", "N", "seed of the parameters and the synthetic batch", "%llu", F_ULL(AT(seed), 0)},
    {"layers", NULL,
     "also print the profiled time of every layer (on stderr), then\n"
     "of the gradients' zeroing (zero_grad) and the update (update)",
     NULL, F_SWITCH(AT(layers))},
    {"loader", NULL,
     "each step loads its batch as training does: synthetic 8-bit\n"
     "images (256 x 256 for the full-size nets, cropped at random;\n"
     "the input's size padded by 4 for the others) or --data's,\n"
     "cropped and flipped on the loader's threads, normalized on\n"
     "the device",
     NULL, F_SWITCH(AT(loader))},
    {"loader-threads", "N", "the loader's pool [1 on the CPU, --threads on a GPU]", NULL,
     F_INT(AT(loader_threads), 1, BB_MAX_THREADS)},
    {"data", "NAME",
     "--loader's images: synthetic, or imagefolder (train's: the training\n"
     "split of --data-root, a packed store decoded on the loader's threads)\n"
     "[synthetic]",
     NULL, F_CHOICE(AT(data), DATA_NAMES, "synthetic or imagefolder")},
    {"data-root", "DIR", "--data imagefolder's folder (bigbatch data pack's --out)", NULL, F_STR(AT(data_root))},
    {"augment", "on|rrc",
     "--loader's augmentation: on, random crop + flip (a store: shorter\n"
     "side resized to input/0.875 first); rrc, torchvision's\n"
     "RandomResizedCrop + flip (a packed store only) [on]",
     NULL, F_CHOICE(AT(augment), AUGMENT_NAMES, "on or rrc")},
    {"list-params", NULL, "print each parameter's name and shape (n c h w) and exit", NULL, F_SWITCH(AT(list_params))},
    {"sgemm", NULL,
     "instead: OpenBLAS cblas_sgemm rate on square " NUMBER(SGEMM_N) " matrices\n"
     "(median of " NUMBER(SGEMM_REPEATS) "), on 1 thread and on --threads threads:\n"
     "sgemm_gflops_1thread=X sgemm_gflops_Nthreads=Y threads=N",
     NULL, F_SWITCH(AT(sgemm))},
    FLAG_HELP_ROW,
};

static const FlagTable TABLE = {"bench", FLAGS, FLAG_COUNT(FLAGS), sizeof(BenchConfig), bench_defaults, HEAD, NULL, 0,
                                NULL, NULL, NULL, 0, 0};

void bench_flags_usage(FILE *out) { flag_table_usage(&TABLE, out); }
void bench_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* The checks across flags: 0, or -1 with err. */
static int check_bench_flags(const BenchConfig *c, Error *err)
{
    if (!c->sgemm && !c->model) {
        error_set(err, "--model or --sgemm is required (bigbatch bench --help)");
        return -1;
    }
    if (c->sgemm && c->model) {
        error_set(err, "--sgemm and --model are separate measurements");
        return -1;
    }
    if (!c->loader && (c->data != BENCH_SYNTHETIC || c->augment != BENCH_AUGMENT_ON)) {
        error_set(err, "--data and --augment choose --loader's images: add --loader");
        return -1;
    }
    if ((c->data == BENCH_IMAGEFOLDER) != (c->data_root != NULL)) {
        error_set(err, c->data_root ? "--data-root needs --data imagefolder"
                                    : "--data imagefolder needs --data-root (a packed store: bigbatch data pack)");
        return -1;
    }
    if (c->augment == BENCH_AUGMENT_RRC && c->data != BENCH_IMAGEFOLDER) {
        error_set(err, "--augment rrc needs a packed store (--data imagefolder --data-root DIR)");
        return -1;
    }
    if (c->model && !model_find(c->model)) {
        char known[256];
        error_set(err, "--model: unknown model '%s' (known: %s)", c->model, model_names(known, sizeof known, ", "));
        return -1;
    }
    return 0;
}

/* 0 ok, 1 --help, -1 bad flag (said on stderr). */
static int parse_bench_flags(int argc, char **argv, BenchConfig *c)
{
    Error err = {{0}};
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, c, &rest, &err);
    if (rc == 0) rc = check_bench_flags(c, &err);
    if (rc < 0) fprintf(stderr, "bigbatch bench: %s\n", err.msg);
    return rc;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median GFLOP/s of `repeats` n x n x n sgemm calls after two untimed ones. */
static double sgemm_rate(int n, int repeats, const float *a, const float *b, float *c)
{
    double *rates = xmalloc(sizeof *rates * (size_t)repeats, "sgemm rates");
    for (int r = -2; r < repeats; r++) {
        double t = now_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        t = now_seconds() - t;
        if (r >= 0) rates[r] = 2.0 * n * n * (double)n / t / 1e9;
    }
    qsort(rates, (size_t)repeats, sizeof *rates, cmp_double);
    double med = repeats % 2 ? rates[repeats / 2] : 0.5 * (rates[repeats / 2 - 1] + rates[repeats / 2]);
    free(rates);
    return med;
}

static int bench_sgemm(const BenchConfig *cfg)
{
    Backend *bk = backend_create(cfg->threads); /* the engine's OpenMP/OpenBLAS thread setup */
    int n = cfg->sgemm_n;
    size_t count = (size_t)n * n;
    float *a = xmalloc(sizeof *a * count, "sgemm A");
    float *b = xmalloc(sizeof *b * count, "sgemm B");
    float *c = xmalloc(sizeof *c * count, "sgemm C");
    Rng rng;
    rng_seed(&rng, cfg->seed, 0xb1a5);
    for (size_t i = 0; i < count; i++) {
        a[i] = (float)(2 * rng_uniform(&rng) - 1);
        b[i] = (float)(2 * rng_uniform(&rng) - 1);
        c[i] = 0;
    }
    /* One thread: the rate each thread gets inside the engine's parallel regions,
     * where OpenBLAS runs single-threaded. */
    openblas_set_num_threads(1);
    omp_set_num_threads(1);
    double one = sgemm_rate(n, cfg->sgemm_repeats, a, b, c);
    openblas_set_num_threads(cfg->threads);
    omp_set_num_threads(cfg->threads);
    double many = sgemm_rate(n, cfg->sgemm_repeats, a, b, c);
    printf("sgemm_gflops_1thread=%.2f sgemm_gflops_Nthreads=%.2f threads=%d n=%d\n", one, many,
           cfg->threads, n);
    free(a);
    free(b);
    free(c);
    backend_destroy(bk);
    return 0;
}

static void fill_synthetic(Net *net, int batch, uint64_t seed) { net_upload_random_batch(net, batch, seed, 0xbe7c); }

/* One row of the profile: a layer's, or a part of the step outside the layers (no backward). */
static void print_profile_row(const char *name, const char *kind, double fwd, double bwd, double rate, int steps,
                              double elapsed)
{
    fprintf(stderr, "%-24s %-10s %9.3f %9.3f %6.1f%% ", name, kind, 1e3 * fwd / steps, 1e3 * bwd / steps,
            100 * (fwd + bwd) / elapsed);
    if (rate > 0) fprintf(stderr, "%9.2f\n", rate);
    else fprintf(stderr, "%9s\n", "-");
}

/* Per-layer profile of the profiled steps, per step, on stderr; then the gradients' zeroing and
 * the optimizer's update, which no layer's time includes. */
static void print_layers(const Net *net, const StepTimes *times, int batch, int steps, double elapsed)
{
    fprintf(stderr, "%-24s %-10s %9s %9s %7s %9s\n", "layer", "kind", "fwd_ms", "bwd_ms", "step%",
            "GFLOP/s");
    double total = 0;
    for (int i = 0; i < net->n_layers; i++) {
        const Layer *l = &net->layers[i];
        double t = l->fwd_seconds + l->bwd_seconds;
        total += t;
        double mult = l->in[0] == NET_INPUT && !net->want_input_grad ? 2.0 : 3.0;
        double rate = l->flops > 0 && t > 0 ? mult * l->flops * batch * steps / t / 1e9 : 0;
        print_profile_row(l->name, l->ops->kind, l->fwd_seconds, l->bwd_seconds, rate, steps, elapsed);
    }
    print_profile_row("zero_grad", "step", times->zero_seconds, 0, 0, steps, elapsed);
    print_profile_row("update", "step", times->update_seconds, 0, 0, steps, elapsed);
    total += times->zero_seconds + times->update_seconds;
    fprintf(stderr, "%-24s %-10s %9s %9s %6.1f%%  (timers, replicas' gradient sums: the rest of %.2f ms/step)\n",
            "all of the above", "", "", "", 100 * total / elapsed, 1e3 * elapsed / steps);
}

/* bench_data_load for the step's one micro-batch (stepper_run's StepLoad). */
static void load_bench_batch(void *ctx, int j)
{
    (void)j;
    if (ctx) bench_data_load(ctx);
}

/* One training step, as train runs one (engine/train/step.h); with stepper->times its zeroing
 * and update are timed. fp16 scales its loss as training does. */
static double step(Stepper *stepper, BenchData *data, int batch, double lr)
{
    StepResult res;
    Error err;
    if (stepper_run(stepper, 1, batch, batch, lr, load_bench_batch, data, &res, &err) != 0) {
        fprintf(stderr, "bigbatch bench: internal error: %s\n", err.msg);
        exit(1);
    }
    return stepper->host[1]; /* the pass's mean loss, from the step's read back */
}

static int bench_model(const BenchConfig *cfg)
{
    Error err = {{0}};
    Backend *bk = backend_open(cfg->device, cfg->threads, &err);
    if (!bk) {
        fprintf(stderr, "bigbatch bench: --device: %s\n", err.msg);
        return 2;
    }
    if (backend_set_precision(bk, cfg->precision, &err) != 0) {
        fprintf(stderr, "bigbatch bench: --precision: %s\n", err.msg);
        backend_destroy(bk);
        return 2;
    }
    Net *net = model_build(cfg->model, bk, 0, cfg->seed, &err);
    if (!net) {
        fprintf(stderr, "bigbatch bench: %s\n", err.msg);
        backend_destroy(bk);
        return 1;
    }
    if (cfg->list_params) {
        printf("model=%s parameters=%zu\n", cfg->model, net->n_weights);
        for (int i = 0; i < net->n_params; i++) {
            const Param *p = &net->params[i];
            printf("%s %d %d %d %d\n", p->name, p->n, p->c, p->h, p->w);
        }
        net_destroy(net);
        backend_destroy(bk);
        return 0;
    }
    OptConfig oc;
    opt_config_defaults(&oc);
    oc.momentum = 0.9;
    oc.weight_decay = 5e-4;
    Optimizer *opt = optimizer_create(&oc, net, &err);
    if (!opt) {
        fprintf(stderr, "bigbatch bench: %s\n", err.msg);
        net_destroy(net);
        backend_destroy(bk);
        return 1;
    }
    net_plan(net, cfg->batch);
    fill_synthetic(net, cfg->batch, cfg->seed);
    /* a graph replays one net's pass: no per-thread replicas with --cuda-graph on */
    Replicas *replicas = cfg->cuda_graph ? NULL : replicas_open(net, cfg->batch, &err);
    BenchData bench_data, *data = NULL;
    const bool replicas_failed = err.msg[0] != 0;
    const BenchDataOptions dopt = {cfg->data_root, cfg->augment == BENCH_AUGMENT_RRC, cfg->batch, cfg->loader_threads,
                                   cfg->seed};
    if (replicas_failed || (cfg->loader && bench_data_open(&bench_data, net, &dopt, &err) != 0)) {
        fprintf(stderr, "bigbatch bench: %s%s\n", replicas_failed ? "" : "--loader: ", err.msg);
        replicas_close(replicas);
        optimizer_destroy(opt);
        net_destroy(net);
        backend_destroy(bk);
        return 1;
    }
    if (cfg->loader) data = &bench_data;

    LossScaler scaler;
    loss_scaler_init(&scaler, backend_precision_scales_loss(cfg->precision), 0);
    Stepper stepper;
    stepper_init(&stepper, net, replicas, opt, &scaler, 1);
    stepper.use_graph = cfg->cuda_graph;
    double loss = 0;
    for (int s = 0; s < cfg->warmup; s++) loss = step(&stepper, data, cfg->batch, cfg->lr);
    bk_synchronize(bk); /* the timed steps start on an idle GPU */
    const double unix0 = unix_time_seconds();
    double t0 = now_seconds(), wait0 = data ? loader_wait_seconds(data->loader) : 0;
    for (int s = 0; s < cfg->steps; s++) loss = step(&stepper, data, cfg->batch, cfg->lr);
    bk_synchronize(bk); /* a GPU may still run the last update */
    double elapsed = now_seconds() - t0;
    const double unix1 = unix0 + elapsed;
    double waited = data ? loader_wait_seconds(data->loader) - wait0 : 0;

    /* Profiled steps: per-layer timers, for the convolutions' share and rate. */
    double conv_flops = 0, conv_seconds = 0, prof_elapsed = 0;
    if (cfg->profile_steps > 0) {
        for (int i = 0; i < net->n_layers; i++) net->layers[i].fwd_seconds = net->layers[i].bwd_seconds = 0;
        net->profile = true;
        StepTimes times = {0, 0};
        stepper.times = &times;
        stepper.use_graph = false; /* the layers' timers wait for the device: not in a graph */
        double p0 = now_seconds();
        for (int s = 0; s < cfg->profile_steps; s++) loss = step(&stepper, data, cfg->batch, cfg->lr);
        stepper.times = NULL;
        prof_elapsed = now_seconds() - p0;
        net->profile = false;
        if (cfg->layers) print_layers(net, &times, cfg->batch, cfg->profile_steps, prof_elapsed);
        for (int i = 0; i < net->n_layers; i++) {
            const Layer *l = &net->layers[i];
            if (strcmp(l->ops->kind, "conv") != 0) continue;
            /* forward + backward-weights, + backward-data unless the input is the net's */
            bool has_dx = l->in[0] != NET_INPUT || net->want_input_grad;
            conv_flops += (has_dx ? 3.0 : 2.0) * l->flops * cfg->batch * cfg->profile_steps;
            conv_seconds += l->fwd_seconds + l->bwd_seconds;
        }
    }
    if (!isfinite(loss)) fprintf(stderr, "bigbatch bench: warning: loss became %g\n", loss);

    double img_s = (double)cfg->batch * cfg->steps / elapsed;
    double conv_gflops = conv_seconds > 0 ? conv_flops / conv_seconds / 1e9 : 0;
    double conv_fraction = prof_elapsed > 0 ? conv_seconds / prof_elapsed : 0;
    printf("model=%s batch=%d threads=%d", cfg->model, cfg->batch, cfg->threads);
    const bool cpu = !backend_on_gpu(bk); /* a GPU splits no steps by threads */
    if (cpu && cfg->threads > 1) printf(" split=%s", replicas ? "images" : "layers");
    printf(" img_s=%.1f ms_per_step=%.3f peak_rss_mb=%.1f conv_gflops=%.2f conv_fraction=%.3f", img_s,
           1e3 * elapsed / cfg->steps, peak_rss_mb(), conv_gflops, conv_fraction);
    if (data) {
        const long cropped = loader_batches_cropped(data->loader);
        printf(" data_wait=%.4f crop_ms=%.2f loader_threads=%d", elapsed > 0 ? waited / elapsed : 0,
               cropped > 0 ? 1e3 * loader_crop_seconds(data->loader) / (double)cropped : 0,
               loader_threads(data->loader));
        if (cfg->data == BENCH_IMAGEFOLDER) printf(" augment=%s", AUGMENT_NAMES[cfg->augment]);
    }
    if (strcmp(cfg->precision, "fp32") != 0) printf(" precision=%s", cfg->precision);
    /* the timed steps' wall-clock window, for a GPU utilisation sampler (bench/gpu_check.sh) */
    if (!cpu) printf(" timed_unix=%.3f-%.3f", unix0, unix1);
    if (scaler.dynamic) printf(" skipped=%ld loss_scale=%g", scaler.skipped, scaler.scale);
    if (backend_peak_bytes(bk) > 0)
        printf(" peak_device_mb=%.1f device=\"%s\"", backend_peak_bytes(bk) / 1048576.0, backend_device_name(bk));
    printf("\n");
    fflush(stdout);
    if (data) bench_data_close(data);
    stepper_free(&stepper);
    replicas_close(replicas);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
    return 0;
}

int cli_bench(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--allreduce")) return bench_allreduce(argc, argv);
    BenchConfig cfg;
    bench_defaults(&cfg);
    int parsed = parse_bench_flags(argc, argv, &cfg);
    if (parsed == 1) {
        bench_flags_usage(stdout);
        return 0;
    }
    if (parsed < 0) return 2;
    return cfg.sgemm ? bench_sgemm(&cfg) : bench_model(&cfg);
}
