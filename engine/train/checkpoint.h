/* Checkpoints as safetensors files (https://huggingface.co/docs/safetensors):
 * an 8-byte little-endian header length, a JSON header, then raw little-endian
 * tensor data. Parameters and buffers keep their PyTorch names (conv1.weight,
 * bn1.running_mean) so torch/safetensors can read them; optimizer state is stored
 * as "optimizer.<param>.<slot>" and the training position in __metadata__. */
#ifndef BB_CHECKPOINT_H
#define BB_CHECKPOINT_H
#include "../net/net.h"
#include "../optim/optimizer.h"
#include "../base/util.h"

typedef struct {
    long step;           /* iterations done */
    int epoch;           /* epochs fully done */
    long epoch_step;     /* iterations done inside the current epoch */
    double epoch_loss_sum; /* sum of the batch losses of those iterations, so a */
    long epoch_hits;       /* resumed epoch reports the same train loss/accuracy */
    double first_loss;     /* the divergence test's reference, the run's first step's loss:
                              a resumed run judges by it too (NAN: not yet, or an older file) */
    unsigned long long seed;
    char model[64];
    char optimizer[16];
} TrainPosition;

/* Writes to path.tmp and renames, so a crash never leaves a half-written file. */
int checkpoint_save(const char *path, const Net *net, const Optimizer *opt,
                    const TrainPosition *pos, Error *err);
/* Loads into an already built net and optimizer of the same model; every tensor
 * must be present with the right shape (the error names the missing one). */
int checkpoint_load(const char *path, Net *net, Optimizer *opt, TrainPosition *pos, Error *err);
/* The model and optimizer a checkpoint was saved with (its __metadata__), without loading it. */
int checkpoint_describe(const char *path, char *model, size_t model_len, char *optname, size_t opt_len, Error *err);
/* Where a checkpoint stands (step, epoch, epoch_step; the rest zero), from its metadata, once
 * its header and its size agree (the tensors tile the data): a sweep decides from it which
 * rows of an interrupted run to keep. */
int checkpoint_position(const char *path, TrainPosition *pos, Error *err);
/* Refuses (naming path and the tensor) a loaded state holding a NaN or an infinity: a resume
 * must not go on from it. `compare` loads such checkpoints on purpose, so the load allows them. */
int checkpoint_check_finite(const char *path, const Net *net, const Optimizer *opt, Error *err);

#endif
