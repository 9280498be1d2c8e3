/* The scaling model of scale.h, and its prediction of a published run. */
#include "scale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "../../engine/net/models.h"

int scale_check(const ScaleInput *in, Error *err)
{
    if (!(in->images_per_sec_per_node > 0) || !isfinite(in->images_per_sec_per_node)) {
        error_set(err, "throughput: %g images/s per node is not > 0", in->images_per_sec_per_node);
        return -1;
    }
    if (!(in->grad_bytes >= 0) || !isfinite(in->grad_bytes)) {
        error_set(err, "gradient size: %g bytes is not >= 0", in->grad_bytes);
        return -1;
    }
    if (!(in->latency_s >= 0) || !isfinite(in->latency_s)) {
        error_set(err, "latency: %g s is not >= 0", in->latency_s);
        return -1;
    }
    if (!(in->bandwidth_Bps > 0) || !isfinite(in->bandwidth_Bps)) {
        error_set(err, "bandwidth: %g bytes/s is not > 0", in->bandwidth_Bps);
        return -1;
    }
    if (!(in->overlap >= 0 && in->overlap <= 1)) {
        error_set(err, "overlap: %g is not in [0, 1]", in->overlap);
        return -1;
    }
    if (in->dataset_images < 1 || in->global_batch < 1) {
        error_set(err, "dataset images (%ld) and batch (%d) must be >= 1", in->dataset_images,
                  in->global_batch);
        return -1;
    }
    if (!(in->epochs > 0) || !isfinite(in->epochs)) {
        error_set(err, "epochs: %g is not > 0", in->epochs);
        return -1;
    }
    return 0;
}

double scale_ring_allreduce_s(double bytes, int nodes, double latency_s, double bandwidth_Bps)
{
    if (nodes <= 1) return 0;
    double n = nodes;
    /* reduce-scatter then allgather: 2(N-1) steps, each moving bytes/N over every link */
    return 2 * (n - 1) / n * bytes / bandwidth_Bps + 2 * (n - 1) * latency_s;
}

void scale_predict(const ScaleInput *in, int nodes, ScalePoint *out)
{
    ScalePoint p = {0};
    p.nodes = nodes;
    p.per_node_batch = (double)in->global_batch / nodes;
    p.compute_s = p.per_node_batch / in->images_per_sec_per_node;
    p.comm_s = scale_ring_allreduce_s(in->grad_bytes, nodes, in->latency_s, in->bandwidth_Bps);
    p.iter_s = p.compute_s + p.comm_s - in->overlap * fmin(p.compute_s, p.comm_s);
    p.iters_per_epoch = (double)in->dataset_images / in->global_batch;
    p.epoch_s = p.iters_per_epoch * p.iter_s;
    p.total_s = in->epochs * p.epoch_s;
    /* one node needs global_batch / throughput per iteration and has nothing to send */
    p.efficiency = p.iter_s > 0 ? p.compute_s / p.iter_s : 0;
    p.images_per_sec = p.iter_s > 0 ? in->global_batch / p.iter_s : 0;
    *out = p;
}

double scale_solve_throughput(const ScaleInput *in, int nodes, double total_s)
{
    double iters = in->epochs * (double)in->dataset_images / in->global_batch;
    double iter = total_s / iters;
    double m = scale_ring_allreduce_s(in->grad_bytes, nodes, in->latency_s, in->bandwidth_Bps);
    double o = in->overlap, c;
    /* compute-bound (c >= m): iter = c + (1 - o) m */
    c = iter - (1 - o) * m;
    if (!(c >= m)) {
        /* comm-bound (c < m): iter = m + (1 - o) c; with o = 1 iter cannot exceed m */
        if (o >= 1 || !(iter > m)) return -1;
        c = (iter - m) / (1 - o);
        if (!(c > 0 && c < m)) return -1;
    }
    if (!(c > 0)) return -1;
    return (double)in->global_batch / nodes / c;
}

int scale_parse_nodes(const char *flag, const char *s, int *nodes, int max, Error *err)
{
    int count = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 1000000000L || (*end && *end != ',')) {
            error_set(err, "%s: '%s' is not a comma-separated list of node counts >= 1", flag, s);
            return -1;
        }
        if (count == max) {
            error_set(err, "%s: more than %d node counts", flag, max);
            return -1;
        }
        nodes[count++] = (int)v;
        if (!*end) return count;
        p = end + 1;
    }
}

int scale_model_params(const char *model, double *params, Error *err)
{
    Backend *bk = backend_create(1);
    Net *net = model_build(model, bk, 0, 1, err);
    if (!net) {
        backend_destroy(bk);
        return -1;
    }
    *params = (double)net->n_weights;
    net_destroy(net);
    backend_destroy(bk);
    return 0;
}

int scale_paper_eval(const ScalePaperRun *run, double params, double overlap, ScalePaperResult *out,
                     Error *err)
{
    ScalePaperResult r = {0};
    r.grad_bytes = params * run->grad_bytes_per_param;
    ScaleInput in = {
        .images_per_sec_per_node = 1, .grad_bytes = r.grad_bytes, .latency_s = run->latency_s,
        .bandwidth_Bps = run->bandwidth_Bps, .overlap = overlap,
        .dataset_images = SCALE_IMAGENET_IMAGES, .global_batch = run->cal_batch,
        .epochs = run->cal_epochs,
    };
    double cal_node = scale_solve_throughput(&in, run->cal_nodes, run->cal_time_s);
    if (cal_node <= 0) {
        error_set(err, "%s: no throughput reproduces the calibration run", run->title);
        return -1;
    }
    r.device_img_s = cal_node / run->cal_devices_per_node * run->device_factor;
    in.images_per_sec_per_node = r.device_img_s * run->devices_per_node;
    in.global_batch = run->batch;
    in.epochs = run->epochs;
    scale_predict(&in, run->nodes, &r.point);
    r.ratio = r.point.total_s / run->reported_s;
    double need = scale_solve_throughput(&in, run->nodes, run->reported_s);
    r.needed_device_img_s = need > 0 ? need / run->devices_per_node : -1;
    *out = r;
    return 0;
}
