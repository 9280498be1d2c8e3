/* One training step on one process, as the GPU wants it (issue 58): the micro-batches'
 * forward and backward passes, fp16's inf/NaN check and unscaling, and the optimizer's update
 * are issued without the host waiting for any of them, and the step then reads back one block:
 * each pass's [mean loss, hits] (copied there on the device after it) and the check. train's
 * single-process steps and bench's steps run through it. Several ranks, and --noise-scale, need
 * host values mid-step (the losses summed over ranks, a micro-batch's gradient norm): train.c
 * keeps its own flow for them. */
#ifndef BB_STEP_H
#define BB_STEP_H
#include <stdbool.h>

#include "../dist/replicas.h"
#include "../net/net.h"
#include "../optim/loss_scale.h"
#include "../optim/optimizer.h"

/* bench --profile: the step's time outside the layers, the backend synchronized around each
 * part (zeroing the gradients; the check, unscaling, update and the download). */
typedef struct {
    double zero_seconds, update_seconds;
} StepTimes;

typedef struct {
    Net *net;
    Replicas *replicas;  /* the passes by per-thread replicas (CPU), or NULL */
    Optimizer *opt;
    LossScaler *scaler;
    int parts_cap;       /* the most micro-batches a step has */
    BkBuffer *block;     /* backend memory: the check, then [mean loss, hits] per micro-batch */
    double *host;        /* the block's host copy, 1 + 2 * parts_cap doubles */
    StepTimes *times;    /* NULL, or bench --profile's */
    /* --cuda-graph on: from the second step on, each pass (forward and backward of a micro-batch,
     * which reads nothing that changes between steps but the loss scale) is replayed from a graph
     * captured once; the batch is already in the net's fixed input and label buffers. A pass of
     * another size runs eagerly; a new loss scale (fp16) captures again. Not with replicas. */
    bool use_graph;
    BkGraph *graph;
    int graph_m;         /* the captured pass's images */
    real graph_scale;    /* the loss scale it was captured at */
    int pass_m;          /* the images of the pass being issued */
    long steps;          /* steps run so far */
} Stepper;

/* Puts micro-batch j of the step into net->input and net->labels (and places its dropout
 * masks: net->first_image); called before pass j. */
typedef void (*StepLoad)(void *ctx, int j);

typedef struct {
    /* each micro-batch's mean loss times its images, and its hits, summed in order up to and
     * including the first non-finite loss */
    double loss_images, hits;
    bool finite;  /* every loss was finite */
    bool skipped; /* finite losses, but fp16's gradients were inf/NaN: nothing was applied */
} StepResult;

void stepper_init(Stepper *s, Net *net, Replicas *replicas, Optimizer *opt, LossScaler *scaler, int parts_cap);
void stepper_free(Stepper *s);
/* The check's place in the block (backend memory): train.c's own flow puts its check there. */
double *stepper_check(const Stepper *s);
/* One step of `parts` micro-batches of m images (batch = parts * m, the loss's mean) at the
 * learning rate lr. With every loss finite the loss scaler is updated, as GradScaler does, and
 * an fp16 step with inf/NaN gradients is skipped on the device and counted (out->skipped).
 * A step with a non-finite loss has diverged: its update may have been applied (the device
 * cannot tell it from the gradients alone), but the run stops there without saving, and the
 * scaler is left as it was. */
/* 0, or -1 with err when a graph could not be captured or a launch issued other operations than
 * the capture (use_graph): a programming error, the step is then incomplete. */
int stepper_run(Stepper *s, int parts, int m, int batch, double lr, StepLoad load, void *ctx, StepResult *out,
                Error *err);

#endif
