/* `bigbatch scale`: time per epoch and time to train on N nodes from the scaling
 * model of scale.h, and (--papers) the model against published large-batch runs. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sweeps/flags/cli_args.h"
#include "../sweeps/flags/flag_table.h"
#include "../engine/net/models.h"
#include "../engine/optim/optimizer.h"
#include "scale/published_runs.h"
#include "scale/scale.h"
#include "cli.h"

#define MAX_NODES 64

typedef struct {
    const char *model;
    double grad_mb; /* < 0: from the model */
    double throughput; /* < 0: not given */
    bool measure, papers;
    int measure_batch, measure_steps, threads;
    int nodes[MAX_NODES], n_nodes;
    long batch, images;
    double epochs, latency_us, bandwidth_gbps, overlap;
    const char *non_papers_flag; /* a flag that --papers does not take */
    const char *published;       /* --published FILE; NULL: results/published-runs.ini */
    bool model_given;            /* --model on the command line */
} ScaleConfig;

static void scale_defaults(void *target)
{
    ScaleConfig *c = target;
    memset(c, 0, sizeof *c);
    c->model = "resnet50";
    c->grad_mb = -1;
    c->throughput = -1;
    c->measure_batch = 32;
    c->measure_steps = 5;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    c->threads = cpus > 0 ? (int)cpus : 1;
    for (int i = 0; i <= 10; i++) c->nodes[i] = 1 << i;
    c->n_nodes = 11;
    c->batch = 8192;
    c->images = SCALE_IMAGENET_IMAGES;
    c->epochs = 90;
    c->latency_us = 5;
    c->bandwidth_gbps = 100;
    c->overlap = 0.5;
}

/* A flag of the model's own setup, which --papers refuses (each run has its own). */
static int not_papers(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)v, (void)err;
    ((ScaleConfig *)target)->non_papers_flag = c->f->name;
    return 0;
}

static int set_model(void *target, const FlagCall *c, const char *v, Error *err)
{
    ((ScaleConfig *)target)->model_given = true;
    if (!model_find(v)) {
        Net *none = model_build(v, NULL, 0, 1, err); /* the "unknown model" text */
        if (none) net_destroy(none);
        error_prefix(err, c->flag);
        return -1;
    }
    return not_papers(target, c, v, err);
}

static int set_nodes(void *target, const FlagCall *c, const char *v, Error *err)
{
    ScaleConfig *s = target;
    s->n_nodes = scale_parse_nodes(c->flag, v, s->nodes, MAX_NODES, err);
    return s->n_nodes < 0 ? -1 : not_papers(target, c, v, err);
}

static const char HEAD[] =
    "usage: bigbatch scale [--model NAME | --grad-mb X] (--throughput IMG_S | --measure) [options]\n"
    "       bigbatch scale --papers [--overlap F] [--published FILE]\n"
    "\n"
    "Predicts time per epoch and time to train of synchronous data-parallel SGD on N nodes:\n"
    "  compute = (batch / N) / throughput          per-node throughput in images/s\n"
    "  comm    = 2(N-1)/N x gradient bytes / bandwidth + 2(N-1) x latency   (ring allreduce)\n"
    "  iter    = compute + comm - overlap x min(compute, comm)\n"
    "  epoch   = images / batch iterations (fractional), train = epochs x epoch\n"
    "  efficiency = speedup over one node / N = compute / iter\n"
    "--papers checks the model against published runs (You et al., Goyal et al., ...).\n"
    "\n"
    "options:\n";

#define AT(member) offsetof(ScaleConfig, member)
/* a number >= lo, or > lo when open; the error quotes the value */
#define ABOVE(lo, open) F_RANGE_Q(lo, INFINITY, open, false, open ? "is not a number > " #lo : "is not a number >= " #lo)

static const Flag FLAGS[] = {
    {"model", "NAME", "gradient = the model's parameters x 4 bytes (fp32)", "%s", F_STR(AT(model)), .set = set_model},
    {"grad-mb", "X", "gradient size in MB (10^6 bytes); overrides the model's", NULL, F_DBL(AT(grad_mb)), ABOVE(0, false),
     .set = not_papers},
    {"throughput", "IMG_S", "training images/s of one node", NULL, F_DBL(AT(throughput)), ABOVE(0, true),
     .set = not_papers},
    {"measure", NULL,
     "measure this machine's throughput of --model instead: synthetic\n"
     "data, forward + backward + SGD step, as `bigbatch bench`",
     NULL, F_SWITCH(AT(measure)), .set = not_papers},
    {"measure-batch", "N", "batch of the measurement", "%d", F_INT(AT(measure_batch), 1, BB_MAX_BATCH), .set = not_papers},
    {"measure-steps", "N", "timed steps of the measurement, after 2 untimed", "%d",
     F_INT(AT(measure_steps), 1, 1 << 20), .set = not_papers},
    {"threads", "N", "threads of the measurement", "%d: the number of CPUs", .dflt_doc = "the number of CPUs",
     F_INT(AT(threads), 1, BB_MAX_THREADS), .set = not_papers},
    {"nodes", "N1,N2,...", "node counts [1,2,4,...,1024]", NULL, .set = set_nodes},
    {"batch", "B", "global batch (Goyal et al.'s 8K: divides over up to 1024 nodes)", "%ld",
     F_LONG(AT(batch), 1, 1L << 30), .set = not_papers},
    {"epochs", "E", "", "%g", F_DBL(AT(epochs)), ABOVE(0, true), .set = not_papers},
    {"images", "N", "training set size (ImageNet-1k)", "%ld", F_LONG(AT(images), 1, 1L << 40), .set = not_papers},
    {"latency-us", "X", "network latency per message in microseconds", "%g", F_DBL(AT(latency_us)), ABOVE(0, false),
     .set = not_papers},
    {"bandwidth-gbps", "X", "network bandwidth per link in Gbit/s (10^9 bits/s)", "%g", F_DBL(AT(bandwidth_gbps)),
     ABOVE(0, true), .set = not_papers},
    {"overlap", "F", "fraction of the shorter of compute and comm hidden, 0..1", "%g", F_DBL(AT(overlap)),
     F_RANGE_Q(0, 1, false, false, "is not in [0, 1]")},
    {"papers", NULL, "published runs: setup, assumptions, predicted vs reported time", NULL, F_SWITCH(AT(papers))},
    {"published", "FILE",
     "the published runs, each number with its source\n"
     "[results/published-runs.ini, here or beside the binary's ../]",
     NULL, F_STR(AT(published))},
    FLAG_HELP_ROW,
};

static const FlagTable TABLE = {"scale", FLAGS, FLAG_COUNT(FLAGS), sizeof(ScaleConfig), scale_defaults, HEAD, NULL, 0,
                                NULL, NULL, NULL, 0, 0};

void scale_flags_usage(FILE *out) { flag_table_usage(&TABLE, out); }
void scale_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* 0 ok, 1 --help, -1 bad flag. */
static int parse_scale_flags(int argc, char **argv, ScaleConfig *c)
{
    Error err = {{0}};
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, c, &rest, &err);
    if (rc < 0) fprintf(stderr, "bigbatch scale: %s\n", err.msg);
    if (rc != 0) return rc;
    const bool model_given = c->model_given;
    if (c->papers) {
        if (c->non_papers_flag) {
            fprintf(stderr, "bigbatch scale: --%s: --papers uses each run's own setup; only --overlap "
                            "applies to it\n", c->non_papers_flag);
            return -1;
        }
        return 0;
    }
    if (c->measure && c->throughput > 0) {
        fprintf(stderr, "bigbatch scale: --throughput and --measure are two ways to give the same number\n");
        return -1;
    }
    if (!c->measure && c->throughput < 0) {
        fprintf(stderr, "bigbatch scale: --throughput IMG_S or --measure is required (bigbatch scale --help)\n");
        return -1;
    }
    if (c->grad_mb >= 0 && model_given && !c->measure) {
        fprintf(stderr, "bigbatch scale: --grad-mb: give either --model or --grad-mb (both only "
                        "with --measure, which measures the model)\n");
        return -1;
    }
    return 0;
}

/* "3.4 s", "12.5 min", "2.1 h", "3.0 d" */
static const char *fmt_duration(double s, char *buf, size_t len)
{
    if (!isfinite(s)) snprintf(buf, len, "-");
    else if (s < 1) snprintf(buf, len, "%.0f ms", 1e3 * s);
    else if (s < 120) snprintf(buf, len, "%.1f s", s);
    else if (s < 120 * 60) snprintf(buf, len, "%.1f min", s / 60);
    else if (s < 48 * 3600) snprintf(buf, len, "%.1f h", s / 3600);
    else snprintf(buf, len, "%.1f d", s / 86400);
    return buf;
}

/* 25557032 -> "25,557,032" */
static const char *fmt_count(double x, char *buf, size_t len)
{
    char raw[40];
    snprintf(raw, sizeof raw, "%.0f", x);
    size_t n = strlen(raw), o = 0;
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        buf[o++] = raw[i];
        if ((n - i - 1) % 3 == 0 && i + 1 < n) buf[o++] = ',';
    }
    buf[o] = 0;
    return buf;
}

/* Training images/s of `model` on this machine: synthetic batch, the step of
 * `bigbatch bench` (zero_grad, forward, backward, SGD with momentum). */
static int measure_throughput(const ScaleConfig *c, double *img_s, Error *err)
{
    Backend *bk = backend_create(c->threads);
    Net *net = model_build(c->model, bk, 0, 1, err);
    if (!net) {
        backend_destroy(bk);
        return -1;
    }
    OptConfig oc;
    opt_config_defaults(&oc);
    oc.momentum = 0.9;
    oc.weight_decay = 5e-4;
    Optimizer *opt = optimizer_create(&oc, net, err);
    if (!opt) {
        net_destroy(net);
        backend_destroy(bk);
        return -1;
    }
    int batch = c->measure_batch;
    net_plan(net, batch);
    net_upload_random_batch(net, batch, 1, 0x5ca1e);
    double t0 = 0;
    for (int s = -2; s < c->measure_steps; s++) {
        if (s == 0) t0 = now_seconds();
        net_zero_grad(net);
        net_forward(net, batch, true);
        net_backward(net, batch);
        optimizer_step(opt, net, 0.01, NULL);
    }
    *img_s = (double)batch * c->measure_steps / (now_seconds() - t0);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
    return 0;
}

static int run_table(const ScaleConfig *c)
{
    Error err = {{0}};
    double params = 0;
    if (c->grad_mb < 0 && scale_model_params(c->model, &params, &err)) {
        fprintf(stderr, "bigbatch scale: --model: %s\n", err.msg);
        return 2;
    }
    double throughput = c->throughput;
    if (c->measure) {
        fprintf(stderr, "bigbatch scale: measuring %s at batch %d on %d threads...\n", c->model,
                c->measure_batch, c->threads);
        if (measure_throughput(c, &throughput, &err)) {
            fprintf(stderr, "bigbatch scale: --measure: %s\n", err.msg);
            return 1;
        }
    }
    ScaleInput in = {
        .images_per_sec_per_node = throughput,
        .grad_bytes = c->grad_mb >= 0 ? c->grad_mb * 1e6 : params * 4,
        .latency_s = c->latency_us * 1e-6,
        .bandwidth_Bps = c->bandwidth_gbps * 1e9 / 8,
        .overlap = c->overlap,
        .dataset_images = c->images,
        .global_batch = (int)c->batch,
        .epochs = c->epochs,
    };
    if (scale_check(&in, &err)) {
        fprintf(stderr, "bigbatch scale: %s\n", err.msg);
        return 2;
    }
    char b1[64], b2[64];
    if (c->grad_mb >= 0) printf("gradient       %.3f MB (--grad-mb)\n", in.grad_bytes / 1e6);
    else printf("gradient       %.3f MB: %s has %s parameters x 4 bytes (fp32)\n", in.grad_bytes / 1e6,
                c->model, fmt_count(params, b1, sizeof b1));
    if (c->measure)
        printf("throughput     %.1f images/s per node: %s measured on this machine (batch %d, %d "
               "threads, %d steps); taken as independent of the per-node batch\n",
               throughput, c->model, c->measure_batch, c->threads, c->measure_steps);
    else printf("throughput     %g images/s per node (--throughput)\n", throughput);
    printf("network        ring allreduce, %g Gbit/s per link, %g us per message; overlap %g\n",
           c->bandwidth_gbps, c->latency_us, c->overlap);
    printf("training       %s images, global batch %ld, %.2f iterations/epoch (fractional; "
           "floor or ceil differ by < 1), %g epochs\n\n",
           fmt_count((double)c->images, b2, sizeof b2), c->batch, (double)c->images / c->batch, c->epochs);
    printf("%7s %11s %12s %10s %12s %11s %11s %10s %12s\n", "nodes", "batch/node", "compute_ms",
           "comm_ms", "iter_ms", "epoch", "train", "efficiency", "images/s");
    bool uneven = false;
    for (int i = 0; i < c->n_nodes; i++) {
        int n = c->nodes[i];
        if (n > c->batch) {
            printf("%7d  fewer than one image per node: more nodes than images in the batch\n", n);
            continue;
        }
        ScalePoint p;
        scale_predict(&in, n, &p);
        char per[32];
        if (c->batch % n == 0) snprintf(per, sizeof per, "%ld", c->batch / n);
        else {
            snprintf(per, sizeof per, "%.2f*", p.per_node_batch);
            uneven = true;
        }
        char e[32], t[32];
        printf("%7d %11s %12.2f %10.2f %12.2f %11s %11s %9.1f%% %12.1f\n", n, per, 1e3 * p.compute_s,
               1e3 * p.comm_s, 1e3 * p.iter_s, fmt_duration(p.epoch_s, e, sizeof e),
               fmt_duration(p.total_s, t, sizeof t), 100 * p.efficiency, p.images_per_sec);
    }
    if (uneven)
        printf("\n* the batch does not divide evenly over these nodes; the row uses batch/nodes "
               "images per node (the slowest node would have one more)\n");
    return 0;
}

static int print_papers(const ScaleConfig *c, const ScalePaperRun *runs, int n);

static int run_papers(const ScaleConfig *c)
{
    char *path = c->published ? xstrdup(c->published) : find_project_file("results/published-runs.ini");
    if (!path) {
        fprintf(stderr, "bigbatch scale: --papers: results/published-runs.ini is neither here nor beside the "
                        "binary (../results): give --published FILE\n");
        return 1;
    }
    PublishedRuns published;
    Error load_err = {{0}};
    int loaded = published_runs_load(path, &published, &load_err);
    free(path);
    if (loaded != 0) {
        fprintf(stderr, "bigbatch scale: --papers: %s\n", load_err.msg);
        return 1;
    }
    int rc = print_papers(c, published.runs, published.count);
    published_runs_free(&published);
    return rc;
}

static int print_papers(const ScaleConfig *c, const ScalePaperRun *runs, int n)
{
    ScalePaperResult res[64];
    /* build each model once: the gradient is its parameter count */
    const char *built[64];
    double built_params[64];
    int n_built = 0;
    printf("The scaling model against published ImageNet runs (overlap %g)\n"
           "iteration = compute + comm - overlap x min(compute, comm); comm = ring allreduce\n"
           "2(N-1)/N x gradient / bandwidth + 2(N-1) x latency; a node is a server, its GPUs add up.\n"
           "Per-device throughput is calibrated on a smaller published run (the model solved for\n"
           "throughput at that run's size), so each prediction tests the scaling, not a benchmark.\n"
           "Marks: [abstract] abstract page, [article] secondary article (as recorded in papers.md),\n"
           "[assumption] ours. Every run and its sources: results/published-runs.ini.\n",
           c->overlap);
    for (int i = 0; i < n && i < 64; i++) {
        const ScalePaperRun *r = &runs[i];
        double params = -1;
        for (int k = 0; k < n_built; k++)
            if (!strcmp(built[k], r->model)) params = built_params[k];
        Error err = {{0}};
        if (params < 0) {
            if (scale_model_params(r->model, &params, &err)) {
                fprintf(stderr, "bigbatch scale: %s\n", err.msg);
                return 1;
            }
            built[n_built] = r->model;
            built_params[n_built++] = params;
        }
        if (scale_paper_eval(r, params, c->overlap, &res[i], &err)) {
            fprintf(stderr, "bigbatch scale: %s\n", err.msg);
            return 1;
        }
        const ScalePaperResult *p = &res[i];
        char b1[64], b2[64];
        printf("\n[%d] %s\n", i + 1, r->title);
        printf("    source      %s\n", r->source);
        printf("    hardware    %s\n", r->hardware);
        printf("    network     %s\n", r->network);
        printf("    gradient    %.1f MB: %s, %s parameters x %g bytes, %s\n", p->grad_bytes / 1e6,
               r->model, fmt_count(params, b1, sizeof b1), r->grad_bytes_per_param, r->grad_note);
        printf("    calibrated  %s\n", r->calibration);
        if (r->factor_note) printf("                x %.3f: %s\n", r->device_factor, r->factor_note);
        printf("    throughput  %.1f images/s per device, %.1f per node\n", p->device_img_s,
               p->device_img_s * r->devices_per_node);
        printf("    iteration   %d nodes x %.0f images: compute %.1f ms, comm %.1f ms, iteration %.1f "
               "ms, %.2f iterations/epoch, efficiency %.1f%%\n",
               r->nodes, p->point.per_node_batch, 1e3 * p->point.compute_s, 1e3 * p->point.comm_s,
               1e3 * p->point.iter_s, p->point.iters_per_epoch, 100 * p->point.efficiency);
        printf("    predicted   %s   reported %s   predicted/reported %.2f\n",
               fmt_duration(p->point.total_s, b2, sizeof b2), r->reported, p->ratio);
        if (p->needed_device_img_s > 0)
            printf("    to match    %.1f images/s per device (%.2f x the calibrated rate)\n",
                   p->needed_device_img_s, p->needed_device_img_s / p->device_img_s);
        else printf("    to match    impossible: the allreduce alone takes longer than reported\n");
    }
    printf("\n%-36s %8s %7s %10s %10s %6s %9s\n", "run", "devices", "batch", "predicted", "reported",
           "ratio", "comm/iter");
    for (int i = 0; i < n && i < 64; i++) {
        const ScalePaperRun *r = &runs[i];
        char pb[32], rb[32];
        printf("%-36s %8d %7d %10s %10s %6.2f %8.0f%%\n", r->label, r->nodes * r->devices_per_node,
               r->batch, fmt_duration(res[i].point.total_s, pb, sizeof pb),
               fmt_duration(r->reported_s, rb, sizeof rb), res[i].ratio,
               100 * res[i].point.comm_s / res[i].point.iter_s);
    }
    return 0;
}

int cli_scale(int argc, char **argv)
{
    ScaleConfig cfg;
    scale_defaults(&cfg);
    int parsed = parse_scale_flags(argc, argv, &cfg);
    if (parsed == 1) {
        scale_flags_usage(stdout);
        return 0;
    }
    if (parsed < 0) return 2;
    return cfg.papers ? run_papers(&cfg) : run_table(&cfg);
}
