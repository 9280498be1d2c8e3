/* The batch loader: the next batches are cropped on the host while the device computes on this
 * one. A pool of threads of its own runs batch_crop into page-locked host memory
 * (bk_host_alloc), the images of a batch split among them; the main thread uploads the 8-bit
 * pixels asynchronously and the backend normalizes them on its device into the net's input
 * (bk_normalize_pixels), so one byte a pixel crosses the bus and a GPU never waits on the
 * host's cropping in steady state.
 *
 * The caller says which batch it wants now and which it will want after it (up to
 * LOADER_AHEAD); the loader keeps those in flight and hands each over when it is asked for
 * (compared job by job: images, augmentation and the random state), so a change of plan (an
 * evaluation in between, the end of the run) costs the batches cropped ahead, never a wrong
 * one. Inputs are bit for bit those of cropping and normalizing on the host (batch_assemble),
 * whatever the number of threads: every image's draws are a function of the job alone. */
#ifndef BB_LOADER_H
#define BB_LOADER_H
#include "data.h"
#include "../net/net.h"

/* Batches cropped ahead of the one being loaded. Two: one would do at a steady pace (the pool
 * crops batch s+1 while the device computes s); the second absorbs a slow batch (large JPEGs,
 * a busy host) and a step shorter than the rest (an update without statistics) without the
 * device waiting, for one more batch of page-locked memory (38 MB at 256 x 224 x 224 x 3). */
enum { LOADER_AHEAD = 2 };

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

/* The threads of a loader_create with threads 0: on a device the host's cores are free (the
 * backend's thread count); on the CPU they compute the step, so one. */
int loader_default_threads(const Backend *bk);
/* A loader for the net's planned batch (net_plan first) and its input shape, normalizing with
 * the data set's per-channel mean and std, cropping on `threads` threads (0: the default
 * above). NULL with err set when a thread cannot start. */
Loader *loader_create(Net *net, const float *mean, const float *std, int threads, Error *err);
/* Puts `job`'s images into net->input and their labels into net->labels (in the backend's
 * stream, as net_upload_batch), then has the n_ahead jobs of `ahead` cropped, in order (those
 * past LOADER_AHEAD are ignored; n_ahead 0: nothing more is known). */
void loader_load(Loader *L, const BatchJob *job, const BatchJob *ahead, int n_ahead);
/* Seconds loader_load has waited for the pool, in all (what a device would have idled). */
double loader_wait_seconds(const Loader *L);
/* Thread-seconds spent cropping, in all, and the batches cropped: whether the cropping itself
 * or the hand-over is slow. */
double loader_crop_seconds(Loader *L);
long loader_batches_cropped(Loader *L);
int loader_threads(const Loader *L);
/* Stops the threads (a batch being cropped finishes its images in hand first) and joins them. */
void loader_destroy(Loader *L);

#endif
