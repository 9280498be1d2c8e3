/* The training step of one process (engine/train/step.h): the host reads the backend once per
 * step (the results block), in fp32 and fp16 alike unless statistics are logged, and the losses
 * and weights are those of the flow that downloaded each micro-batch's loss after its forward,
 * with the passes replayed from a graph (--cuda-graph) or not. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/net/models.h"
#include "../engine/train/step.h"
#include "tensor_access.h"

enum { M = 4, PARTS = 2, STEPS = 3 };

typedef struct {
    Net *net;
    int step;
} Batch;

/* Micro-batch j of step `step`: a random batch of its own. */
static void upload(void *ctx, int j)
{
    Batch *b = ctx;
    net_upload_random_batch(b->net, M, 7, (uint64_t)(b->step * PARTS + j));
}

typedef struct {
    Backend *bk;
    Net *net;
    Optimizer *opt;
    LossScaler ls;
} Trainer;

static Trainer trainer(const char *model, const char *precision)
{
    Error err;
    Trainer t;
    t.bk = backend_create(1);
    cr_assert_eq(backend_set_precision(t.bk, precision, &err), 0, "%s", err.msg);
    t.net = model_build(model, t.bk, 0, 3, &err);
    cr_assert_not_null(t.net, "%s", err.msg);
    net_plan(t.net, M);
    OptConfig cfg;
    opt_config_defaults(&cfg);
    cfg.momentum = 0.9;
    t.opt = optimizer_create(&cfg, t.net, &err);
    cr_assert_not_null(t.opt, "%s", err.msg);
    loss_scaler_init(&t.ls, backend_precision_scales_loss(precision), 0);
    return t;
}

static void trainer_free(Trainer *t)
{
    optimizer_destroy(t->opt);
    net_destroy(t->net);
    backend_destroy(t->bk);
}

/* STEPS steps through the stepper; asserts one host read each; the losses and final weights. */
static void by_stepper(const char *model, const char *precision, bool graph, double *losses, real *w)
{
    Trainer t = trainer(model, precision);
    Stepper st;
    stepper_init(&st, t.net, NULL, t.opt, &t.ls, PARTS);
    st.use_graph = graph;
    for (int s = 0; s < STEPS; s++) {
        Batch b = {t.net, s};
        StepResult res;
        const long before = backend_host_reads(t.bk);
        Error err;
        cr_assert_eq(stepper_run(&st, PARTS, M, M * PARTS, 0.05, upload, &b, &res, &err), 0, "%s", err.msg);
        cr_assert_eq(backend_host_reads(t.bk) - before, 1, "%s %s step %d: %ld host reads", model, precision, s,
                     backend_host_reads(t.bk) - before);
        cr_assert(res.finite && !res.skipped);
        losses[s] = res.loss_images / (M * PARTS);
    }
    tensor_download(&t.net->param_block, w);
    stepper_free(&st);
    trainer_free(&t);
}

/* The same steps as train.c ran them before: each micro-batch's loss downloaded after its
 * forward, then unscaling and the update applied unchecked (no step here has an inf). */
static void by_hand(const char *model, const char *precision, double *losses, real *w)
{
    Trainer t = trainer(model, precision);
    for (int s = 0; s < STEPS; s++) {
        net_zero_grad(t.net);
        t.net->loss_scale = loss_scaler_net_scale(&t.ls, M * PARTS);
        double sum = 0;
        for (int j = 0; j < PARTS; j++) {
            Batch b = {t.net, s};
            upload(&b, j);
            sum += net_forward(t.net, M, true) * M;
            net_backward(t.net, M);
        }
        loss_scaler_unscale(&t.ls, t.net, NULL);
        optimizer_step(t.opt, t.net, 0.05, NULL);
        losses[s] = sum / (M * PARTS);
    }
    tensor_download(&t.net->param_block, w);
    trainer_free(&t);
}

Test(step, one_host_read_per_step_and_the_same_bits_as_reading_each_loss, .timeout = 120)
{
    static const char *const models[] = {"lenet", "resnet8"};
    for (int k = 0; k < 2; k++) {
        Trainer probe = trainer(models[k], "fp32");
        const size_t n = probe.net->n_weights;
        trainer_free(&probe);
        double a[STEPS], b[STEPS];
        real *wa = malloc(n * sizeof(real)), *wb = malloc(n * sizeof(real));
        for (int graph = 0; graph < 2; graph++) {
            by_stepper(models[k], "fp32", graph, a, wa);
            by_hand(models[k], "fp32", b, wb);
            for (int s = 0; s < STEPS; s++)
                cr_assert(!memcmp(&a[s], &b[s], sizeof a[s]), "%s graph %d step %d: %.17g vs %.17g", models[k], graph,
                          s, a[s], b[s]);
            cr_assert(!memcmp(wa, wb, n * sizeof(real)), "%s graph %d: the weights differ", models[k], graph);
        }
        /* fp16: still one read (the check rides in the block), with or without a graph alike */
        by_stepper(models[k], "fp16", false, a, wa);
        by_stepper(models[k], "fp16", true, b, wb);
        cr_assert(!memcmp(a, b, sizeof a) && !memcmp(wa, wb, n * sizeof(real)), "%s fp16: the graph differs", models[k]);
        free(wa);
        free(wb);
    }
}

/* fp16 with a scale that overflows the gradients: the step is skipped on the device (the
 * weights stay), counted by the scaler, which halves, and not counted as an update. */
Test(step, an_overflowing_fp16_step_is_skipped_on_the_device_and_counted, .timeout = 60)
{
    Trainer t = trainer("lenet", "fp16");
    loss_scaler_init(&t.ls, true, 0x1p60);
    Stepper st;
    stepper_init(&st, t.net, NULL, t.opt, &t.ls, PARTS);
    real *w0 = malloc(t.net->n_weights * sizeof(real)), *w1 = malloc(t.net->n_weights * sizeof(real));
    tensor_download(&t.net->param_block, w0);
    Batch b = {t.net, 0};
    StepResult res;
    Error err;
    cr_assert_eq(stepper_run(&st, PARTS, M, M * PARTS, 0.05, upload, &b, &res, &err), 0, "%s", err.msg);
    tensor_download(&t.net->param_block, w1);
    cr_assert(res.finite && res.skipped);
    cr_assert_eq(t.ls.skipped, 1);
    cr_assert_eq(t.ls.scale, 0x1p59);
    cr_assert_eq(t.opt->updates, 0);
    cr_assert(!memcmp(w0, w1, t.net->n_weights * sizeof(real)), "a skipped step changed the weights");
    free(w0);
    free(w1);
    stepper_free(&st);
    trainer_free(&t);
}
