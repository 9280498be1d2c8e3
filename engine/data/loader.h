/* The batch loader: the next batch is cropped on the host while the device computes on this
 * one. A thread of its own runs batch_crop into page-locked host memory (bk_host_alloc), two
 * buffers taking turns; the main thread uploads the 8-bit pixels asynchronously and the
 * backend normalizes them on its device into the net's input (bk_normalize_pixels), so one
 * byte a pixel crosses the bus and a GPU never waits on the host's cropping in steady state.
 *
 * The caller says which batch it wants now and which it will want next; the loader keeps the
 * second in flight and hands it over when it is asked for (compared job by job: images,
 * augmentation and the random state), so a change of plan (an evaluation in between, the
 * end of the run) costs one batch cropped twice, never a wrong one. Inputs are bit for bit
 * those of cropping and normalizing on the host (batch_assemble). */
#ifndef BB_LOADER_H
#define BB_LOADER_H
#include "data.h"
#include "../net/net.h"

/* One batch: n images of set (idx, copied when the job is taken) with augmentation aug
 * (the caller keeps set and aug alive while the loader may use them) and its draws starting
 * from rng (NULL: aug draws nothing, as a centre crop). */
typedef struct {
    const ImageSet *set;
    const uint32_t *idx;
    int n;
    const Augment *aug;
    const Rng *rng;
    uint64_t epoch; /* a packed store's draws are Philox's at (seed, epoch, image) */
} BatchJob;

typedef struct Loader Loader;

/* A loader for the net's planned batch (net_plan first) and its input shape, normalizing with
 * the data set's per-channel mean and std. NULL with err set when the thread cannot start. */
Loader *loader_create(Net *net, const float *mean, const float *std, Error *err);
/* Puts `job`'s images into net->input and their labels into net->labels (in the backend's
 * stream, as net_upload_batch), then starts cropping `next` (NULL: nothing more is known). */
void loader_load(Loader *L, const BatchJob *job, const BatchJob *next);
/* Seconds loader_load has waited for the thread, in all (what a device would have idled). */
double loader_wait_seconds(const Loader *L);
/* Seconds spent cropping, in all (on the thread or in loader_load), and the batches cropped:
 * whether the cropping itself or the hand-over is slow. */
double loader_crop_seconds(Loader *L);
long loader_batches_cropped(Loader *L);
void loader_destroy(Loader *L);

#endif
