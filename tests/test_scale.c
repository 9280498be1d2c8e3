/* The scaling model (cli/scale/scale.c) on hand-computed cases, and the published
 * runs it is checked against. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli/scale/published_runs.h"
#include "../cli/scale/scale.h"

static ScaleInput base(void)
{
    ScaleInput in = {
        .images_per_sec_per_node = 50, .grad_bytes = 100e6, .latency_s = 1e-5,
        .bandwidth_Bps = 1e9, .overlap = 0, .dataset_images = 1000, .global_batch = 100,
        .epochs = 3,
    };
    return in;
}

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

Test(scale, one_node_has_no_communication)
{
    ScaleInput in = base();
    ScalePoint p;
    scale_predict(&in, 1, &p);
    cr_expect_eq(p.comm_s, 0);
    cr_expect(close_to(p.compute_s, 2.0), "compute %g", p.compute_s); /* 100 images / 50 per s */
    cr_expect(close_to(p.iter_s, 2.0));
    cr_expect(close_to(p.efficiency, 1.0));
    cr_expect_eq(scale_ring_allreduce_s(1e9, 1, 1, 1), 0);
}

Test(scale, ring_allreduce_hand_computed)
{
    /* 4 nodes, 100 MB, 1 GB/s, 10 us: 2*3/4 * 0.1 s + 6 * 10 us = 0.15006 s */
    cr_expect(close_to(scale_ring_allreduce_s(100e6, 4, 1e-5, 1e9), 0.15006),
              "%.9g", scale_ring_allreduce_s(100e6, 4, 1e-5, 1e9));
    /* 2 nodes: each sends and receives half twice: 1 x bytes / bw + 2 latencies */
    cr_expect(close_to(scale_ring_allreduce_s(8e6, 2, 2e-6, 4e9), 2e-3 + 4e-6));
    ScaleInput in = base();
    ScalePoint p;
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.comm_s, 0.15006));
    cr_expect(close_to(p.compute_s, 0.5)); /* 25 images per node */
    cr_expect(close_to(p.per_node_batch, 25));
}

Test(scale, overlap_bounds)
{
    ScaleInput in = base();
    ScalePoint p;
    /* compute-bound: compute 0.5 s, comm 0.15006 s */
    in.overlap = 0;
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.iter_s, 0.5 + 0.15006), "sum: %g", p.iter_s);
    in.overlap = 1;
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.iter_s, 0.5), "max: %g", p.iter_s);
    in.overlap = 0.5;
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.iter_s, 0.5 + 0.5 * 0.15006));
    /* comm-bound: 1 GB gradient, comm 1.50006 s > compute */
    in.grad_bytes = 1e9;
    in.overlap = 1;
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.iter_s, 1.50006), "max: %g", p.iter_s);
    in.overlap = 0;
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.iter_s, 2.00006));
    cr_expect(close_to(p.efficiency, 0.5 / 2.00006));
}

Test(scale, efficiency_falls_with_nodes_when_comm_costs)
{
    ScaleInput in = base();
    in.global_batch = 4096;
    in.overlap = 0.5;
    ScalePoint p;
    scale_predict(&in, 1, &p);
    double prev = p.efficiency;
    cr_expect(close_to(prev, 1));
    for (int n = 2; n <= 1024; n *= 2) {
        scale_predict(&in, n, &p);
        cr_expect(p.efficiency < prev, "N=%d: %g not below %g", n, p.efficiency, prev);
        cr_expect(close_to(p.efficiency, (4096.0 / 50) / n / p.iter_s));
        /* speedup / N, and the cluster rate is batch / iteration */
        cr_expect(close_to(p.images_per_sec, 4096 / p.iter_s));
        prev = p.efficiency;
    }
    /* a free network scales perfectly */
    in.grad_bytes = 0;
    in.latency_s = 0;
    for (int n = 1; n <= 1024; n *= 2) {
        scale_predict(&in, n, &p);
        cr_expect(close_to(p.efficiency, 1), "N=%d: %g", n, p.efficiency);
        cr_expect(close_to(p.images_per_sec, 50.0 * n));
    }
}

Test(scale, epoch_and_total)
{
    ScaleInput in = base(); /* 1000 images, batch 100, 3 epochs, 50 img/s per node */
    ScalePoint p;
    scale_predict(&in, 1, &p);
    cr_expect(close_to(p.iters_per_epoch, 10));
    cr_expect(close_to(p.epoch_s, 20), "epoch %g", p.epoch_s);
    cr_expect(close_to(p.total_s, 60), "total %g", p.total_s);
    /* iterations per epoch stay fractional: 1050 / 100 = 10.5 */
    in.dataset_images = 1050;
    scale_predict(&in, 1, &p);
    cr_expect(close_to(p.iters_per_epoch, 10.5));
    cr_expect(close_to(p.total_s, 3 * 10.5 * 2));
    /* on 4 nodes: 3 epochs x 10.5 iterations x (0.5 + 0.15006) s */
    scale_predict(&in, 4, &p);
    cr_expect(close_to(p.total_s, 31.5 * 0.65006), "total %g", p.total_s);
    /* ImageNet at batch 8192, 138 img/s per node, one node: 90 x 1281167 / 138 s */
    ScaleInput im = {138, 0, 0, 1e9, 0.5, SCALE_IMAGENET_IMAGES, 8192, 90};
    scale_predict(&im, 1, &p);
    cr_expect(close_to(p.total_s, 90.0 * 1281167 / 138), "%g", p.total_s);
}

Test(scale, solve_throughput_inverts_predict)
{
    ScaleInput in = base();
    ScalePoint p;
    double overlaps[] = {0, 0.3, 1};
    for (int k = 0; k < 3; k++) {
        in.overlap = overlaps[k];
        /* compute-bound, 4 nodes */
        in.grad_bytes = 100e6;
        in.images_per_sec_per_node = 50;
        scale_predict(&in, 4, &p);
        double t = scale_solve_throughput(&in, 4, p.total_s);
        cr_expect(close_to(t, 50), "overlap %g: %g", in.overlap, t);
        /* comm-bound (compute 0.5 s, comm 1.5 s): unique unless overlap hides compute fully */
        in.grad_bytes = 1e9;
        scale_predict(&in, 4, &p);
        t = scale_solve_throughput(&in, 4, p.total_s);
        if (in.overlap < 1) cr_expect(close_to(t, 50), "overlap %g: %g", in.overlap, t);
    }
    /* faster than the allreduce alone: impossible */
    in.overlap = 0.5;
    in.grad_bytes = 1e9;
    cr_expect_eq(scale_solve_throughput(&in, 4, 1.0), -1);
    /* one node: throughput = images / time */
    cr_expect(close_to(scale_solve_throughput(&in, 1, 60), 3 * 1000 / 60.0));
}

Test(scale, check_rejects_bad_input)
{
    Error err;
    ScaleInput in = base();
    cr_expect_eq(scale_check(&in, &err), 0);
    in.overlap = 1.5;
    cr_expect_eq(scale_check(&in, &err), -1);
    cr_expect(strstr(err.msg, "overlap") != NULL, "%s", err.msg);
    in = base();
    in.bandwidth_Bps = 0;
    cr_expect_eq(scale_check(&in, &err), -1);
    cr_expect(strstr(err.msg, "bandwidth") != NULL);
    in = base();
    in.images_per_sec_per_node = -1;
    cr_expect_eq(scale_check(&in, &err), -1);
}

Test(scale, parse_nodes)
{
    int nodes[8];
    Error err;
    cr_expect_eq(scale_parse_nodes("--nodes", "1,2,4", nodes, 8, &err), 3);
    cr_expect(nodes[0] == 1 && nodes[1] == 2 && nodes[2] == 4);
    cr_expect_eq(scale_parse_nodes("--nodes", "1024", nodes, 8, &err), 1);
    cr_expect_eq(nodes[0], 1024);
    const char *bad[] = {"", "0", "1,,2", "3,", "a", "2,-4", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(scale_parse_nodes("--nodes", bad[i], nodes, 8, &err), -1, "'%s'", bad[i]);
        cr_expect(strstr(err.msg, "--nodes") != NULL, "%s", err.msg);
    }
    cr_expect_eq(scale_parse_nodes("--nodes", "1,2,3", nodes, 2, &err), -1);
}

Test(scale, model_params_from_the_model_code)
{
    double params = 0;
    Error err;
    cr_assert_eq(scale_model_params("resnet50", &params, &err), 0, "%s", err.msg);
    cr_expect_eq(params, 25557032); /* `bigbatch models`, torchvision's count */
    cr_expect_eq(scale_model_params("lenet", &params, &err), 0);
    cr_expect_eq(params, 61706);
    cr_expect_eq(scale_model_params("nonet", &params, &err), -1);
    cr_expect(strstr(err.msg, "unknown model 'nonet'") != NULL, "%s", err.msg);
}

Test(scale, published_runs)
{
    PublishedRuns pub;
    Error load_err;
    cr_assert_eq(published_runs_load("results/published-runs.ini", &pub, &load_err), 0, "%s", load_err.msg);
    const ScalePaperRun *runs = pub.runs;
    int n = pub.count;
    cr_assert_geq(n, 3);
    bool goyal = false;
    for (int i = 0; i < n; i++) {
        const ScalePaperRun *r = &runs[i];
        double params = strcmp(r->model, "resnet50") == 0 ? 25557032 : 60965224;
        ScalePaperResult res;
        Error err;
        cr_assert_eq(scale_paper_eval(r, params, 0.5, &res, &err), 0, "%s", err.msg);
        /* the model reproduces the order of magnitude of every run */
        cr_expect(res.ratio > 0.5 && res.ratio < 2, "%s: ratio %g", r->label, res.ratio);
        cr_expect(close_to(res.ratio, res.point.total_s / r->reported_s));
        /* the calibration run is reproduced exactly by its own throughput */
        ScaleInput cal = {res.device_img_s / r->device_factor * r->cal_devices_per_node,
                          params * r->grad_bytes_per_param, r->latency_s, r->bandwidth_Bps, 0.5,
                          SCALE_IMAGENET_IMAGES, r->cal_batch, r->cal_epochs};
        ScalePoint p;
        scale_predict(&cal, r->cal_nodes, &p);
        cr_expect(fabs(p.total_s - r->cal_time_s) < 1e-6 * r->cal_time_s, "%s: %g vs %g", r->label,
                  p.total_s, r->cal_time_s);
        if (strstr(r->title, "Goyal")) {
            goyal = true;
            /* 29 h for 90 epochs on 8 P100: 90 x 1281167 / (29 x 3600) / 8 images/s per GPU */
            cr_expect(close_to(res.device_img_s, 90.0 * 1281167 / (29 * 3600) / 8), "%g", res.device_img_s);
            /* 32 servers of 8 GPUs, 256 images each; 102.2 MB over the assumed 100 Gbit/s, 2 us */
            cr_expect(close_to(res.point.compute_s, 256 / (8 * res.device_img_s)));
            cr_expect(close_to(res.point.comm_s, 2 * 31.0 / 32 * 25557032 * 4 / 12.5e9 + 62 * 2e-6));
            cr_expect(fabs(res.point.total_s - 3600) < 0.1 * 3600, "%g s", res.point.total_s);
        }
    }
    cr_expect(goyal);
    published_runs_free(&pub);
}

/* A published-runs file written to a temporary path; returns the path (static buffer). */
static const char *runs_file(const char *text)
{
    static char path[] = "/tmp/bb-published-XXXXXX";
    strcpy(path, "/tmp/bb-published-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

#define ONE_RUN                                                                                       \
    "[r]\nlabel = L\ntitle = T\nsource = S, arXiv 1\nmodel = resnet50\ngrad_bytes_per_param = 4\n"     \
    "grad_note = fp32\nhardware = H\nnodes = 2\ndevices_per_node = 8\nbatch = 512\nepochs = 90\n"       \
    "latency_us = 2\nbandwidth_gbit_s = 100\nnetwork = N\ncalibration = C\ncal_nodes = 1\n"             \
    "cal_devices_per_node = 8\ncal_batch = 256\ncal_epochs = 90\ncal_time_min = 1740\ndevice_factor = 1\n" \
    "reported_min = 60\nreported = 1 hour\n"

/* Loads `text`; expects failure with every piece of `want` in the message (or success for NULL). */
static void expect_load(const char *text, const char *want)
{
    const char *path = runs_file(text);
    PublishedRuns pub;
    Error err = {{0}};
    int rc = published_runs_load(path, &pub, &err);
    unlink(path);
    if (!want) {
        cr_assert_eq(rc, 0, "%s", err.msg);
        cr_expect_eq(pub.count, 1);
        cr_expect_str_eq(pub.runs[0].title, "T and more");
        cr_expect(close_to(pub.runs[0].bandwidth_Bps, 12.5e9));
        cr_expect(close_to(pub.runs[0].latency_s, 2e-6));
        cr_expect(close_to(pub.runs[0].cal_time_s, 1740 * 60.0));
        cr_expect_eq(pub.runs[0].factor_note, NULL);
        published_runs_free(&pub);
        return;
    }
    cr_expect_eq(rc, -1, "accepted: %s", text);
    cr_expect(strstr(err.msg, "/tmp/bb-published-") != NULL, "no file in: %s", err.msg);
    cr_expect(strstr(err.msg, want) != NULL, "'%s' not in: %s", want, err.msg);
}

Test(scale, published_runs_file_errors)
{
    char text[4096];
    expect_load(ONE_RUN "title = again\n", "'title': is given twice");
    snprintf(text, sizeof text, "%s", ONE_RUN);
    *strstr(text, "title = T\n") = ';'; /* title commented out */
    expect_load(text, "run [r] lacks key 'title'");
    expect_load(ONE_RUN "cpus = 4\n", "'cpus': is not a key of a run");
    expect_load("nodes = 2\n" ONE_RUN, "outside any [run] section");
    snprintf(text, sizeof text, "%s", ONE_RUN);
    memcpy(strstr(text, "nodes = 2"), "nodes = x", 9);
    expect_load(text, "'nodes': 'x' is not a number above 0");
    snprintf(text, sizeof text, "%s", ONE_RUN);
    memcpy(strstr(text, "batch = 512"), "batch = 5.5", 11);
    expect_load(text, "'batch': '5.5' is not a whole number");
    expect_load(ONE_RUN "[r]\nlabel = M\n", "section [r] is given twice");
    snprintf(text, sizeof text, "%s", ONE_RUN);
    char *e = strstr(text, "epochs = 90\n");
    memmove(e + 16, e + 12, strlen(e + 12) + 1);
    memcpy(e, "epochs = 90\n  4\n", 16);
    expect_load(text, "continues only a text key");
    expect_load("", "no runs");
    snprintf(text, sizeof text, "%s", ONE_RUN);
    char *t = strstr(text, "title = T\n");
    memmove(t + 21, t + 10, strlen(t + 10) + 1);
    memcpy(t, "title = T\n  and more\n", 21);
    expect_load(text, NULL);
}
