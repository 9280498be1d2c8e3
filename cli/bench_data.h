/* bench --loader's batches: each timed step takes its batch from the batch loader
 * (engine/data/loader.h) as training does, from synthetic 8-bit images or from a data set on
 * disk (a packed JPEG store: decoded, random-resized-cropped and flipped on the loader's
 * threads), so the step's time includes what a device waits for its input (data_wait). */
#ifndef BB_CLI_BENCH_DATA_H
#define BB_CLI_BENCH_DATA_H
#include <stdbool.h>
#include <stdint.h>

#include "../engine/data/data.h"
#include "../engine/data/loader.h"

/* Where the images come from: root NULL: synthetic (two batches' worth, 256 x 256 for the
 * full-size nets and cropped within, the input's size for the others, padded as training pads
 * them); else the `--data imagefolder` data set at root, its training split, with
 * torchvision's random-resized crop when rrc (a packed store only). */
typedef struct {
    const char *root;
    bool rrc;
    int batch, threads; /* threads 0: the loader's default */
    uint64_t seed;
} BenchDataOptions;

typedef struct {
    Dataset ds;
    Augment aug;
    uint32_t *order; /* count + batch entries, i % count: a step's batch is batch of them in a row */
    int batch;
    Rng rng[1 + LOADER_AHEAD]; /* the draws of the step loaded now and of those after it */
    long step;                 /* the next step to load */
    Loader *loader;
} BenchData;

/* 0, or -1 with err (the data set's error, or what does not fit the net). After net_plan. */
int bench_data_open(BenchData *d, Net *net, const BenchDataOptions *opt, Error *err);
/* The next step's batch into the net, those after it to the loader's pool. */
void bench_data_load(BenchData *d);
void bench_data_close(BenchData *d);

#endif
