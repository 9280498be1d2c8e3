/* --precision bf16 / fp16 on the CPU (engine/cpu/low_precision.c, round_lowp.h): the rounding
 * against known answers (fp16's from Python's struct 'e' format, IEEE half with ties to even;
 * bf16's by hand: the top 16 bits of the float, ties to even), what a product hands on, and a
 * bf16 and an fp16 model's losses beside fp32's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "../engine/cpu/round_lowp.h"
#include "../engine/optim/loss_scale.h"
#include "../engine/net/models.h"
#include "../engine/optim/optimizer.h"
#include "../engine/train/step.h"
#include "tensor_access.h"

typedef struct {
    float in, want;
} Case;

Test(low_precision, fp16_rounding_known_answers)
{
    /* python3: struct.unpack('<e', struct.pack('<e', x))[0] of each float32 x */
    static const Case cases[] = {
        {0x1.002p+0f, 0x1p+0f},                 /* tie: down to the even mantissa */
        {0x1.006p+0f, 0x1.008p+0f},             /* tie: up to the even mantissa */
        {0x1.00201p+0f, 0x1.004p+0f},           /* just past the tie: up */
        {0x1.ffcp+15f, 0x1.ffcp+15f},           /* 65504, the largest */
        {0x1.ffdep+15f, 0x1.ffcp+15f},          /* 65519: still 65504 */
        {0x1p-14f, 0x1p-14f},                   /* the smallest normal */
        {0x1.ffep-15f, 0x1p-14f},               /* the largest subnormal's neighbour rounds up into it */
        {0x1p-24f, 0x1p-24f},                   /* the smallest subnormal */
        {0x1p-25f, 0.0f},                       /* half of it: tie to even, zero */
        {0x1.0002p-25f, 0x1p-24f},              /* just past half */
        {0x1.8p-24f, 0x1p-23f},                 /* 1.5 quanta: tie to 2 */
        {-0x1.4p-23f, -0x1p-23f},               /* -2.5 quanta: tie to -2 */
        {0x1.5798eep-27f, 0.0f},                /* 1e-8 */
        {0x1.99999ap-4f, 0x1.998p-4f},          /* 0.1 */
        {-0x1.99999ap-4f, -0x1.998p-4f},
        {0x1.921fb6p+1f, 0x1.92p+1f},           /* pi */
        {0x1.a36e2ep-14f, 0x1.a38p-14f},        /* 1e-4 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = round_fp16(cases[i].in);
        cr_assert(lowp_bits(got) == lowp_bits(cases[i].want), "fp16(%a) = %a, want %a", (double)cases[i].in,
                  (double)got, (double)cases[i].want);
    }
    /* 65520 is the tie between 65504 and 2^16, which fp16 cannot hold: to inf, as on a GPU */
    cr_assert(isinf(round_fp16(65520.0f)) && round_fp16(65520.0f) > 0);
    cr_assert(isinf(round_fp16(-1e5f)) && round_fp16(-1e5f) < 0);
    cr_assert(isinf(round_fp16(INFINITY)));
    cr_assert(isnan(round_fp16(NAN)));
    cr_assert(signbit(round_fp16(-1e-9f)) && round_fp16(-1e-9f) == 0, "the sign of an underflow");
}

Test(low_precision, bf16_rounding_known_answers)
{
    static const Case cases[] = {
        {0x1.01p+0f, 0x1p+0f},              /* 1 + 2^-8: tie, down to the even mantissa */
        {0x1.03p+0f, 0x1.04p+0f},           /* 1 + 3 2^-8: tie, up to the even one */
        {0x1.01002p+0f, 0x1.02p+0f},        /* just past the tie */
        {0x1.921fb6p+1f, 0x1.92p+1f},       /* pi: 3.140625 */
        {0x1.99999ap-4f, 0x1.9ap-4f},       /* 0.1: 0x3DCD */
        {-0x1.99999ap-4f, -0x1.9ap-4f},
        {0x1p-126f, 0x1p-126f},             /* float's smallest normal is bf16's */
        {0x1.fffffep+127f, INFINITY},       /* float's largest rounds past bf16's: inf */
        {0x1.fep+127f, 0x1.fep+127f},       /* bf16's largest */
        {65520.0f, 65536.0f},               /* no fp16 overflow here */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = round_bf16(cases[i].in);
        cr_assert(lowp_bits(got) == lowp_bits(cases[i].want), "bf16(%a) = %a, want %a", (double)cases[i].in,
                  (double)got, (double)cases[i].want);
    }
    cr_assert(isnan(round_bf16(NAN)));
}

/* A fully connected layer in bf16: the product of the rounded operands (exact here: few
 * terms of 8-bit mantissas), rounded; its weight gradient added to the fp32 one as bf16. */
Test(low_precision, linear_rounds_its_operands_and_results)
{
    Error err;
    Backend *bk = backend_create(1);
    cr_assert_eq(backend_set_precision(bk, "bf16", &err), 0, "%s", err.msg);
    BkBuffer *buf = bk_buffer_alloc(bk, 8 * sizeof(real));
    real *d = bk_buffer_address(buf); /* x[2], w[1x2], y[1], dy[1], dw[2] */
    const real host[8] = {(real)0x1.003p+0, (real)0x1.001p+0, 1, 1, 0, 1, (real)0.25, (real)0.25};
    bk_upload(bk, d, host, sizeof host);
    bk_linear_forward(bk, 1, 2, 1, d, d + 2, NULL, d + 4);
    real y;
    bk_download(bk, &y, d + 4, sizeof y);
    /* bf16(1 + 3 2^-12) = 1 and bf16(1 + 2^-12) = 1: y = 2 */
    cr_assert_eq(y, 2, "y = %a", (double)y);
    /* dw = dy x = (1, 1) after rounding x; added to 0.25 in fp32 */
    bk_linear_backward(bk, 1, 2, 1, d, d + 2, d + 5, NULL, d + 6, NULL);
    real dw[2];
    bk_download(bk, dw, d + 6, sizeof dw);
    cr_assert(dw[0] == (real)1.25 && dw[1] == (real)1.25, "dw = %a %a", (double)dw[0], (double)dw[1]);
    bk_buffer_free(buf);
    backend_destroy(bk);
}

enum { BATCH = 32, STEPS = 12 };

typedef struct {
    Net *net;
    int step;
} Batch;

/* Two batches, learnt by heart (stepper_run's StepLoad). */
static void upload_batch(void *ctx, int j)
{
    (void)j;
    Batch *b = ctx;
    net_upload_random_batch(b->net, BATCH, 4, (uint64_t)(b->step % 2));
}

/* resnet8's step losses (SGD with momentum) on random batches in a precision; fp16 scales its
 * loss as train.c does. */
static void losses(const char *precision, double *out, long *skipped)
{
    Error err;
    Backend *bk = backend_create(2);
    cr_assert_eq(backend_set_precision(bk, precision, &err), 0, "%s", err.msg);
    Net *net = model_build("resnet8", bk, 0, 3, &err);
    cr_assert_not_null(net, "%s", err.msg);
    net_plan(net, BATCH);
    OptConfig cfg;
    opt_config_defaults(&cfg);
    cfg.momentum = 0.9;
    Optimizer *opt = optimizer_create(&cfg, net, &err);
    cr_assert_not_null(opt, "%s", err.msg);
    LossScaler ls;
    loss_scaler_init(&ls, backend_precision_scales_loss(precision), 0);
    Stepper st;
    stepper_init(&st, net, NULL, opt, &ls, 1);
    for (int s = 0; s < STEPS; s++) {
        Batch b = {net, s};
        StepResult res;
        Error err;
        cr_assert_eq(stepper_run(&st, 1, BATCH, BATCH, 0.1, upload_batch, &b, &res, &err), 0, "%s", err.msg);
        out[s] = res.loss_images / BATCH;
    }
    *skipped = ls.skipped;
    stepper_free(&st);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
}

/* bf16 keeps 8 bits, fp16 11: their losses stay within 1% and 0.2% of fp32's, and all fall. */
Test(low_precision, bf16_and_fp16_losses_follow_fp32, .timeout = 120)
{
    double ref[STEPS], bf[STEPS], hf[STEPS];
    long skipped;
    losses("fp32", ref, &skipped);
    losses("bf16", bf, &skipped);
    cr_assert_eq(skipped, 0);
    losses("fp16", hf, &skipped);
    cr_assert_eq(skipped, 0, "fp16 skipped %ld steps at 2^16", skipped);
    for (int s = 0; s < STEPS; s++) {
        cr_log_info("step %2d: fp32 %.5f bf16 %.5f fp16 %.5f", s, ref[s], bf[s], hf[s]);
        cr_assert(fabs(bf[s] - ref[s]) <= 0.01 * ref[s], "step %d: bf16 %.5f, fp32 %.5f", s, bf[s], ref[s]);
        cr_assert(fabs(hf[s] - ref[s]) <= 0.002 * ref[s], "step %d: fp16 %.5f, fp32 %.5f", s, hf[s], ref[s]);
        cr_assert(bf[s] != ref[s] || s == 0, "step %d: bf16's loss is fp32's to the bit", s);
    }
    cr_assert(ref[STEPS - 1] < 0.9 * ref[0] && bf[STEPS - 1] < 0.9 * bf[0] && hf[STEPS - 1] < 0.9 * hf[0],
              "no learning: fp32 %.4f -> %.4f, bf16 %.4f -> %.4f", ref[0], ref[STEPS - 1], bf[0], bf[STEPS - 1]);
}
