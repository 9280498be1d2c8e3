/* Scaling model of synchronous data-parallel training (`bigbatch scale`).
 *
 * One iteration on N nodes processes the global batch B:
 *   compute = (B / N) / images_per_sec_per_node
 *   comm    = 2 (N-1)/N * grad_bytes / bandwidth + 2 (N-1) * latency    (ring allreduce; 0 at N = 1)
 *   iter    = compute + comm - overlap * min(compute, comm)
 * so overlap 0 serialises the two and overlap 1 gives max(compute, comm).
 * An epoch is images / B iterations, kept fractional: a framework that drops the
 * last partial batch runs floor(images / B) iterations and one that keeps it runs
 * ceil(images / B); both differ from the fraction by less than one iteration.
 *   epoch = (images / B) * iter,  total = epochs * epoch
 *   efficiency = speedup / N = (compute at N = 1) / (N * iter) = compute / iter
 * A node is the unit on the network: a server with several accelerators is one node
 * whose throughput is the sum of theirs, and the reduction inside it is taken as free.
 * Everything here is a pure function except scale_model_params, which builds a model. */
#ifndef BB_SCALE_H
#define BB_SCALE_H

#include "../../engine/base/util.h"

typedef struct {
    double images_per_sec_per_node;
    double grad_bytes;    /* bytes each node contributes to the allreduce per iteration */
    double latency_s;     /* per message, per ring step */
    double bandwidth_Bps; /* bytes per second per link */
    double overlap;       /* 0..1: fraction of the shorter of compute/comm hidden */
    long dataset_images;
    int global_batch;
    double epochs;
} ScaleInput;

typedef struct {
    int nodes;
    double per_node_batch; /* global_batch / nodes, fractional when it does not divide */
    double compute_s, comm_s, iter_s;
    double iters_per_epoch; /* dataset_images / global_batch */
    double epoch_s, total_s;
    double efficiency;     /* speedup over one node / nodes */
    double images_per_sec; /* whole cluster */
} ScalePoint;

#define SCALE_IMAGENET_IMAGES 1281167L /* ILSVRC-2012 training set */

/* 0 if the input is usable; otherwise -1 with err naming the field. */
int scale_check(const ScaleInput *in, Error *err);
/* Ring allreduce time of `bytes` over `nodes` nodes; 0 for one node. */
double scale_ring_allreduce_s(double bytes, int nodes, double latency_s, double bandwidth_Bps);
void scale_predict(const ScaleInput *in, int nodes, ScalePoint *out);
/* Per-node throughput for which scale_predict(in, nodes) takes total_s in all
 * (in->images_per_sec_per_node is ignored). -1 when no throughput can: the
 * communication alone already takes longer. */
double scale_solve_throughput(const ScaleInput *in, int nodes, double total_s);

/* Parses a comma-separated list of node counts (each >= 1) into nodes[0..max).
 * Returns how many, or -1 with err naming `flag`. */
int scale_parse_nodes(const char *flag, const char *s, int *nodes, int max, Error *err);

/* Trainable parameters of a model of `bigbatch models`, built through model_build
 * (the gradient is that many numbers). 0 on success, -1 with err for an unknown name. */
int scale_model_params(const char *model, double *params, Error *err);

/* A published large-batch run and the assumptions needed to predict it (published_runs.h
 * reads them from results/published-runs.ini). The per-device throughput is calibrated:
 * scale_solve_throughput on a smaller published run of the same model (cal_*), on the same
 * network, times device_factor when the target run used a different device. All runs are
 * ImageNet-1k (1,281,167 images). */
typedef struct {
    char *id;             /* the file's [section] */
    char *label;          /* short, for the summary table */
    char *title;          /* who, model, epochs, batch */
    char *source;         /* the paper, its version and where in it */
    char *model;          /* a `bigbatch models` name: its parameter count is the gradient */
    double grad_bytes_per_param; /* 4: fp32 gradients, 2: fp16 */
    char *grad_note;
    char *hardware;       /* what the nodes are, and where that comes from */
    int nodes, devices_per_node, batch;
    double epochs;
    double latency_s, bandwidth_Bps;
    char *network;        /* what the network is, and how sure */
    char *calibration;    /* where cal_* come from, and how sure */
    int cal_nodes, cal_devices_per_node, cal_batch;
    double cal_epochs, cal_time_s;
    double device_factor;
    char *factor_note;    /* NULL when device_factor is 1 */
    double reported_s;
    char *reported;       /* the published time, its source and mark */
} ScalePaperRun;

typedef struct {
    double grad_bytes;
    double device_img_s;        /* calibrated per-device throughput x device_factor */
    ScalePoint point;           /* the prediction at run->nodes */
    double ratio;               /* predicted / reported time */
    double needed_device_img_s; /* per-device throughput that would give the reported time; -1 if none */
} ScalePaperResult;

/* Predicts a run from its model's parameter count and an overlap. -1 with err when
 * the calibration has no solution. */
int scale_paper_eval(const ScalePaperRun *run, double params, double overlap, ScalePaperResult *out,
                     Error *err);

#endif
