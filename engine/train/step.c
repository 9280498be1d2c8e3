/* One training step with one read back (step.h). */
#include "step.h"

#include <math.h>
#include <stdlib.h>

#include "../base/util.h"

void stepper_init(Stepper *s, Net *net, Replicas *replicas, Optimizer *opt, LossScaler *scaler, int parts_cap)
{
    const size_t doubles = 1 + 2 * (size_t)(parts_cap > 0 ? parts_cap : 1);
    *s = (Stepper){.net = net,
                   .replicas = replicas,
                   .opt = opt,
                   .scaler = scaler,
                   .parts_cap = parts_cap,
                   .block = bk_buffer_alloc(net->bk, doubles * sizeof(double)),
                   .host = xcalloc(doubles, sizeof(double), "step results")};
}

void stepper_free(Stepper *s)
{
    bk_graph_destroy(s->graph);
    bk_buffer_free(s->block);
    free(s->host);
}

double *stepper_check(const Stepper *s) { return bk_buffer_address(s->block); }

/* The clock after everything issued has finished, when timing (else 0). */
static double step_clock(const Stepper *s)
{
    if (!s->times) return 0;
    bk_synchronize(s->net->bk);
    return now_seconds();
}

/* What a graph captures: one pass of the net, its loss left in loss_result. */
static void issue_pass(void *ctx)
{
    Stepper *s = ctx;
    net_train_pass(s->net, NULL, s->pass_m, false);
}

/* One pass of m images: eagerly, or replayed from the graph (captured now when there is none, or
 * when the loss scale changed). The first step runs eagerly: it grows the backend's workspaces,
 * which a capture may not. */
static int run_pass(Stepper *s, int m, Error *err)
{
    Net *net = s->net;
    if (!s->use_graph || s->replicas || s->steps == 0 || (s->graph && s->graph_m != m)) {
        net_train_pass(net, s->replicas, m, false);
        return 0;
    }
    s->pass_m = m;
    if (s->graph && s->graph_scale == net->loss_scale) return bk_graph_launch(s->graph, err);
    bk_graph_destroy(s->graph);
    s->graph = bk_graph_capture(net->bk, issue_pass, s, err);
    s->graph_m = m;
    s->graph_scale = net->loss_scale;
    return s->graph ? 0 : -1;
}

/* The passes: each one's [mean loss, hits] into the block on the device, or, with replicas
 * (which read theirs on the host, where the CPU's download is free), into the host copy. */
static int run_passes(Stepper *s, int parts, int m, StepLoad load, void *ctx, Error *err)
{
    Net *net = s->net;
    double *slots = stepper_check(s) + 1;
    net->defer_loss = !s->replicas;
    for (int j = 0; j < parts; j++) {
        load(ctx, j);
        if (run_pass(s, m, err) != 0) {
            error_prefix(err, "--cuda-graph");
            net->defer_loss = false;
            return -1;
        }
        if (net->defer_loss)
            bk_copy_bytes(net->bk, slots + 2 * j, bk_buffer_address(net->loss_result), 2 * sizeof(double));
        else {
            s->host[1 + 2 * j] = net->loss;
            s->host[2 + 2 * j] = net->correct;
        }
    }
    net->defer_loss = false;
    return 0;
}

/* The losses summed as train.c always has (in double, micro-batch order, stopping at the first
 * non-finite one), from the host copy. */
static void sum_losses(const Stepper *s, int parts, int m, StepResult *out)
{
    *out = (StepResult){0, 0, true, false};
    for (int j = 0; j < parts && out->finite; j++) {
        const double loss = s->host[1 + 2 * j];
        out->loss_images += loss * m;
        out->hits += s->host[2 + 2 * j];
        out->finite = isfinite(loss);
    }
}

int stepper_run(Stepper *s, int parts, int m, int batch, double lr, StepLoad load, void *ctx, StepResult *out,
                Error *err)
{
    Net *net = s->net;
    double t0 = step_clock(s);
    net_zero_grad(net);
    if (s->times) s->times->zero_seconds += step_clock(s) - t0;
    net->loss_scale = loss_scaler_net_scale(s->scaler, batch);
    if (run_passes(s, parts, m, load, ctx, err) != 0) return -1;
    t0 = step_clock(s);
    const double *check = loss_scaler_unscale(s->scaler, net, stepper_check(s));
    optimizer_step(s->opt, net, lr, check);
    /* the step's one read: the check and, unless replicas kept them, the losses */
    const size_t doubles = s->replicas ? (check ? 1 : 0) : 1 + 2 * (size_t)parts;
    if (doubles) bk_download(net->bk, s->host, stepper_check(s), doubles * sizeof(double));
    if (s->times) s->times->update_seconds += step_clock(s) - t0;
    sum_losses(s, parts, m, out);
    const bool grads_finite = !check || isfinite(s->host[0]);
    if (!grads_finite) optimizer_step_skipped(s->opt); /* the device applied nothing */
    if (out->finite) out->skipped = !loss_scaler_update(s->scaler, grads_finite);
    s->steps++;
    return 0;
}
