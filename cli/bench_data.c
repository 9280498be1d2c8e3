/* bench --loader's batches (bench_data.h): the images, their augmentation and the order the
 * steps take them in, through the batch loader as in training. */
#include <stdlib.h>
#include <string.h>

#include "bench_data.h"

/* Two batches of synthetic images, normalized with fixed statistics (they are noise). */
static int open_synthetic(BenchData *d, const Net *net, int classes, const BenchDataOptions *opt, Error *err)
{
    /* Caffe's ImageNet: 256 stored, a random crop of the input within; small inputs: padded
     * and cropped back, as training does (augment_for_training) */
    const Tensor *in = &net->input;
    const bool full_size = in->h > 64 && in->h <= 256 && in->w <= 256;
    const int h = full_size ? 256 : in->h, w = full_size ? 256 : in->w;
    if (synthetic_make(&d->ds.train, 2 * opt->batch, in->c, h, w, classes, opt->seed, 1, err) != 0) return -1;
    if (augment_for_training(&d->ds.train, net->model, "synthetic", in->c, in->h, in->w, false, opt->seed, &d->aug, err))
        return -1;
    for (int k = 0; k < 3; k++) {
        d->ds.mean[k] = 0.5f;
        d->ds.std[k] = 0.25f;
    }
    return 0;
}

/* The training split of the image folder or packed store at opt->root, as train reads it
 * (--data imagefolder), augmented as training is (augment_for_training). */
static int open_folder(BenchData *d, const Net *net, const BenchDataOptions *opt, Error *err)
{
    const Tensor *in = &net->input;
    DataOptions dopt = {.name = "imagefolder", .root = opt->root, .seed = opt->seed, .quiet = true};
    if (dataset_load(&dopt, &d->ds, err) != 0) return -1;
    if (augment_for_training(&d->ds.train, net->model, opt->root, in->c, in->h, in->w, opt->rrc, opt->seed, &d->aug,
                             err) != 0)
        return -1;
    if (d->ds.classes > net->classes) {
        error_set(err, "--data-root %s: %d classes, the model has %d outputs", opt->root, d->ds.classes, net->classes);
        return -1;
    }
    return 0;
}

int bench_data_open(BenchData *d, Net *net, const BenchDataOptions *opt, Error *err)
{
    memset(d, 0, sizeof *d);
    d->batch = opt->batch;
    const int classes = net->classes > 100 ? 100 : net->classes; /* as train on synthetic data */
    if ((opt->root ? open_folder(d, net, opt, err) : open_synthetic(d, net, classes, opt, err)) != 0) {
        dataset_free(&d->ds);
        return -1;
    }
    /* the steps walk the set in order, wrapping around: batch i % count from any start */
    const int count = d->ds.train.count;
    d->order = xmalloc(sizeof *d->order * ((size_t)count + (size_t)opt->batch), "bench order");
    for (int i = 0; i < count + opt->batch; i++) d->order[i] = (uint32_t)(i % count);
    d->loader = loader_create(net, d->ds.mean, d->ds.std, opt->threads, err);
    if (!d->loader) {
        bench_data_close(d);
        return -1;
    }
    return 0;
}

/* Step s's batch: images from (s * batch) % count on; a store's draws by the pass over the set
 * (its epoch), so each pass crops afresh. */
static BatchJob bench_job(BenchData *d, long step)
{
    Rng *rng = &d->rng[step % (1 + LOADER_AHEAD)];
    rng_seed(rng, 0xbe7c, (uint64_t)step);
    const long count = d->ds.train.count, first = step * d->batch;
    const uint64_t epoch = d->ds.train.store ? (uint64_t)(first / count) : 0;
    return (BatchJob){&d->ds.train, d->order + first % count, d->batch, &d->aug, rng, epoch};
}

void bench_data_load(BenchData *d)
{
    BatchJob now = bench_job(d, d->step), ahead[LOADER_AHEAD];
    for (int k = 0; k < LOADER_AHEAD; k++) ahead[k] = bench_job(d, d->step + 1 + k);
    loader_load(d->loader, &now, ahead, LOADER_AHEAD);
    d->step++;
}

void bench_data_close(BenchData *d)
{
    loader_destroy(d->loader);
    free(d->order);
    dataset_free(&d->ds);
}
