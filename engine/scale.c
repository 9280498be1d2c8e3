/* The scaling model of scale.h and the published runs it is checked against. */
#include "scale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "models.h"

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

/* ---- Published runs ------------------------------------------------------------
 * Sources are sections of ../shared/papers.md; marks as there: [abstract] from an
 * abstract page, [article] from a secondary article, plus [recollection] (a detail of
 * the paper not in papers.md, from memory) and [assumption] (ours). */

#define OPA_BPS (100e9 / 8) /* Intel Omni-Path, 100 Gbit/s */

static const ScalePaperRun RUNS[] = {
    {
        .label = "You AlexNet-BN, 1024 x 2 Xeon 8160",
        .title = "You et al. 2017 (1709.05011): AlexNet-BN, 100 epochs, batch 32768",
        .model = "alexnet-bn", .grad_bytes_per_param = 4, .grad_note = "fp32",
        .hardware = "1024 nodes x 2 Xeon Platinum 8160. arXiv abstract: '1024 CPUs'; ICPP'18 "
                    "abstract: '2,048 Xeon Platinum 8160' (papers.md 1b, 7.2.1) [abstract]; read "
                    "as 1024 two-socket nodes [assumption]",
        .nodes = 1024, .devices_per_node = 1, .batch = 32768, .epochs = 100,
        .latency_s = 2e-6, .bandwidth_Bps = OPA_BPS,
        .network = "Omni-Path 100 Gbit/s, 2 us (Stampede2's fabric; papers.md names no "
                   "network) [assumption]",
        .calibration = "AlexNet-BN, batch 32K, 100 epochs in 24 min on 512 KNL (first arXiv "
                       "version, papers.md 7.2.3) [article]",
        .cal_nodes = 512, .cal_devices_per_node = 1, .cal_batch = 32768, .cal_epochs = 100,
        .cal_time_s = 24 * 60,
        .device_factor = 48.0 / 68.0,
        .factor_note = "KNL -> 2 x 8160 node by peak fp32: 48 vs 68 cores, both 1.4 GHz x 64 "
                       "flop/cycle (AVX-512) [assumption]",
        .reported_s = 11 * 60,
        .reported = "11 min (arXiv and ICPP'18 abstracts, papers.md 1b, 7.2.1) [abstract]",
    },
    {
        .label = "You ResNet-50, 2048 KNL",
        .title = "You et al. 2017 (1709.05011): ResNet-50, 90 epochs, batch 32768",
        .model = "resnet50", .grad_bytes_per_param = 4, .grad_note = "fp32",
        .hardware = "2048 Xeon Phi 7250 (KNL), one per node (papers.md 1b, 7.2.1) [abstract]",
        .nodes = 2048, .devices_per_node = 1, .batch = 32768, .epochs = 90,
        .latency_s = 2e-6, .bandwidth_Bps = OPA_BPS,
        .network = "Omni-Path 100 Gbit/s, 2 us (Stampede2's fabric; papers.md names no "
                   "network) [assumption]",
        .calibration = "ResNet-50, batch 32K, 90 epochs in 1 h on 512 KNL (papers.md 7.2.3 news "
                       "article, 7.2.4 community table '512 KNLs -> 2048 KNLs, 1 hour -> 20 "
                       "mins') [article]",
        .cal_nodes = 512, .cal_devices_per_node = 1, .cal_batch = 32768, .cal_epochs = 90,
        .cal_time_s = 3600,
        .device_factor = 1,
        .reported_s = 20 * 60,
        .reported = "20 min (arXiv and ICPP'18 abstracts, papers.md 1b, 7.2.1) [abstract]",
    },
    {
        .label = "Goyal ResNet-50, 256 P100",
        .title = "Goyal et al. 2017 (1706.02677): ResNet-50, 90 epochs, batch 8192",
        .model = "resnet50", .grad_bytes_per_param = 4, .grad_note = "fp32",
        .hardware = "256 P100 = 32 Big Basin servers x 8 (papers.md 6.2, 7.3) [abstract; "
                    "servers from a transcription]; a node is a server",
        .nodes = 32, .devices_per_node = 8, .batch = 8192, .epochs = 90,
        .latency_s = 5e-6, .bandwidth_Bps = 50e9 / 8,
        .network = "50 Gbit/s Ethernet, 5 us (the paper's hardware section; not in papers.md) "
                   "[recollection]",
        .calibration = "He et al. baseline: batch 256 on one server of 8 P100, 90 epochs in "
                       "29 h (papers.md 6.6, Sony's table) [article]",
        .cal_nodes = 1, .cal_devices_per_node = 8, .cal_batch = 256, .cal_epochs = 90,
        .cal_time_s = 29 * 3600,
        .device_factor = 1,
        .reported_s = 3600,
        .reported = "1 hour (abstract, papers.md 6.2) [abstract, verified]",
    },
    {
        .label = "Akiba ResNet-50, 1024 P100",
        .title = "Akiba et al. 2017 (1711.04325): ResNet-50, 90 epochs, batch 32768",
        .model = "resnet50", .grad_bytes_per_param = 2,
        .grad_note = "fp16 allreduce [recollection]",
        .hardware = "1024 P100 (papers.md 6.6, 7.2.4) [abstract]; as 128 servers x 8 "
                    "[recollection]",
        .nodes = 128, .devices_per_node = 8, .batch = 32768, .epochs = 90,
        .latency_s = 2e-6, .bandwidth_Bps = 56e9 / 8,
        .network = "InfiniBand FDR 56 Gbit/s, 2 us (not in papers.md) [recollection]",
        .calibration = "He et al. baseline on 8 P100, 29 h (papers.md 6.6) [article]; Caffe, "
                       "where Akiba et al. used Chainer",
        .cal_nodes = 1, .cal_devices_per_node = 8, .cal_batch = 256, .cal_epochs = 90,
        .cal_time_s = 29 * 3600,
        .device_factor = 1,
        .reported_s = 15 * 60,
        .reported = "15 min (papers.md 6.6 Sony's table, 1711.04325 abstract) [abstract]",
    },
    {
        .label = "Jia ResNet-50, 2048 P40",
        .title = "Jia et al. 2018 (Tencent, 1807.11205): ResNet-50, 90 epochs, batch 65536",
        .model = "resnet50", .grad_bytes_per_param = 2,
        .grad_note = "fp16 (papers.md: 'mixed precision'; fp16 allreduce [assumption])",
        .hardware = "2048 P40 (papers.md 6.6) [abstract]; as 256 servers x 8 [assumption]",
        .nodes = 256, .devices_per_node = 8, .batch = 65536, .epochs = 90,
        .latency_s = 2e-6, .bandwidth_Bps = 100e9 / 8,
        .network = "InfiniBand 100 Gbit/s, 2 us (not in papers.md) [recollection]",
        .calibration = "He et al. baseline on 8 P100, 29 h (papers.md 6.6) [article]",
        .cal_nodes = 1, .cal_devices_per_node = 8, .cal_batch = 256, .cal_epochs = 90,
        .cal_time_s = 29 * 3600,
        .device_factor = 11.8 / 10.6,
        .factor_note = "P100 -> P40 by peak fp32, 11.8 vs 10.6 TFLOPS; ignores the P40's lower "
                       "memory bandwidth and any gain from mixed precision [assumption]",
        .reported_s = 6.6 * 60,
        .reported = "6.6 min (Tencent abstract, papers.md 6.6) [abstract]",
    },
};

const ScalePaperRun *scale_paper_runs(int *count)
{
    *count = (int)(sizeof RUNS / sizeof RUNS[0]);
    return RUNS;
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
