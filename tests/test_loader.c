/* The batch loader (engine/data/loader.h) against the host: whatever the order of requests (a
 * batch cropped ahead and taken, two ahead, a change of plan that discards them, a batch with
 * nothing ahead, a centre crop without draws) and whatever the pool's threads, the net's input
 * and labels after loader_load are bit for bit batch_assemble's on the host with the same
 * images and random state. */
#include <criterion/criterion.h>
#include <string.h>

#include "../engine/data/data.h"
#include "../engine/data/loader.h"
#include "../engine/net/models.h"
#include "tensor_access.h"

enum { IMAGES = 48, BATCH = 16 };

typedef struct {
    ImageSet set;
    Augment aug, centre;
    float mean[3], std[3];
    Backend *bk;
    Net *net;
    Loader *loader;
} Fixture;

static void fixture_open(Fixture *f, int threads, int pool)
{
    memset(f, 0, sizeof *f);
    Error err = {{0}};
    /* stored at 36 x 36: the 32 x 32 input is a random crop within, padded by 2 beyond */
    cr_assert_eq(synthetic_make(&f->set, IMAGES, 3, 36, 36, 10, 5, 1, &err), 0, "%s", err.msg);
    f->aug = (Augment){.out_h = 32, .out_w = 32, .random_crop = true, .crop_pad = 2, .flip = true};
    f->centre = (Augment){.out_h = 32, .out_w = 32};
    const float mean[3] = {0.49f, 0.48f, 0.45f}, std[3] = {0.25f, 0.24f, 0.26f};
    memcpy(f->mean, mean, sizeof mean);
    memcpy(f->std, std, sizeof std);
    f->bk = backend_create(threads);
    f->net = model_build("resnet20", f->bk, 0, 1, &err);
    cr_assert_not_null(f->net, "%s", err.msg);
    net_plan(f->net, BATCH);
    f->loader = loader_create(f->net, f->mean, f->std, pool, &err);
    cr_assert_not_null(f->loader, "%s", err.msg);
}

static void fixture_close(Fixture *f)
{
    loader_destroy(f->loader);
    net_destroy(f->net);
    backend_destroy(f->bk);
    imageset_free(&f->set);
}

/* The net holds job's batch exactly as the host assembles it. */
static void expect_batch(Fixture *f, const BatchJob *job, const char *what)
{
    Rng rng = job->rng ? *job->rng : (Rng){0};
    const size_t count = (size_t)job->n * 3 * 32 * 32;
    real *want = malloc(count * sizeof *want);
    int32_t want_labels[BATCH], got_labels[BATCH];
    batch_assemble(job->set, job->idx, job->n, f->mean, f->std, job->aug, job->rng ? &rng : NULL, job->epoch, want,
                   want_labels);
    real *got = malloc(count * sizeof *got);
    bk_download(f->bk, got, f->net->input.data, count * sizeof *got);
    bk_download(f->bk, got_labels, f->net->labels, (size_t)job->n * sizeof *got_labels);
    cr_assert_arr_eq(got, want, count * sizeof *got, "%s: the input differs from the host's", what);
    cr_assert_arr_eq(got_labels, want_labels, (size_t)job->n * sizeof *got_labels, "%s: labels differ", what);
    free(want);
    free(got);
}

static void load_and_check(Fixture *f, const BatchJob *job, const BatchJob *next, const char *what)
{
    loader_load(f->loader, job, next, next != NULL);
    expect_batch(f, job, what);
}

/* job with two batches ahead (next, after). */
static void load2_and_check(Fixture *f, const BatchJob *job, const BatchJob *next, const BatchJob *after,
                            const char *what)
{
    const BatchJob ahead[2] = {*next, *after};
    loader_load(f->loader, job, ahead, 2);
    expect_batch(f, job, what);
}

static void every_order(int threads, int pool)
{
    Fixture f;
    fixture_open(&f, threads, pool);
    uint32_t order[IMAGES];
    for (int i = 0; i < IMAGES; i++) order[i] = (uint32_t)((i * 29 + 7) % IMAGES);
    Rng r[6];
    for (int k = 0; k < 6; k++) rng_seed(&r[k], 3, 100 + (uint64_t)k);
    BatchJob a = {&f.set, order, BATCH, &f.aug, &r[0], 0};
    BatchJob b = {&f.set, order + 16, BATCH, &f.aug, &r[1], 0};
    BatchJob c = {&f.set, order + 32, BATCH, &f.aug, &r[2], 0};
    BatchJob d = {&f.set, order + 8, 12, &f.aug, &r[3], 0};
    BatchJob same_images_other_draws = {&f.set, order + 8, 12, &f.aug, &r[4], 0};
    BatchJob centre = {&f.set, order + 3, 5, &f.centre, NULL, 0};
    load_and_check(&f, &a, &b, "first batch, cropped here");
    load_and_check(&f, &b, &c, "cropped ahead");
    load_and_check(&f, &c, NULL, "cropped ahead, nothing after");
    load_and_check(&f, &d, &same_images_other_draws, "nothing cropped ahead");
    load_and_check(&f, &d, &centre, "a change of plan: the queued batch has these images, other draws");
    load_and_check(&f, &centre, &centre, "centre crop, cropped ahead");
    load_and_check(&f, &centre, &a, "the same job twice");
    load_and_check(&f, &a, &b, "again");
    load_and_check(&f, &c, NULL, "a change of plan to other images");
    load2_and_check(&f, &a, &b, &c, "two ahead, nothing queued");
    load2_and_check(&f, &b, &c, &d, "two ahead, the first queued taken");
    load2_and_check(&f, &c, &d, &centre, "two ahead, both kept but the last");
    load2_and_check(&f, &d, &same_images_other_draws, &a, "two ahead, the second replaced");
    load_and_check(&f, &same_images_other_draws, NULL, "one ahead queued, none wanted after");
    load2_and_check(&f, &b, &c, &a, "after nothing ahead");
    load_and_check(&f, &b, &a, "the plan changes under two queued batches");
    load2_and_check(&f, &a, &centre, &centre, "the same job twice ahead");
    load2_and_check(&f, &centre, &centre, &d, "taken, then the same again");
    load_and_check(&f, &centre, NULL, "and again");
    cr_assert_geq(loader_wait_seconds(f.loader), 0);
    cr_assert_eq(loader_threads(f.loader), pool ? pool : 1, "threads of the pool");
    fixture_close(&f);
}

Test(loader, every_order_of_requests_gives_the_hosts_batch) { every_order(1, 0); }
Test(loader, the_same_with_two_threads) { every_order(2, 0); }
Test(loader, the_same_with_a_pool_of_three) { every_order(1, 3); }
Test(loader, the_same_with_more_threads_than_images) { every_order(2, 40); }

/* Destroying a loader with two batches still being cropped ahead is clean: the batch already
 * loaded stays in the net bit for bit (destroy waits for its upload and nothing is written
 * after), the pool's threads are joined before the data set they crop from is freed (the
 * sanitizer build sees a use after free otherwise), and a loader made afterwards on the same
 * net (of 1, 2 or 3 threads) loads the host's batch. Repeated so the threads are caught at
 * each stage of their crops. */
Test(loader, destroyed_with_a_batch_in_flight)
{
    Fixture f;
    fixture_open(&f, 1, 3);
    uint32_t order[IMAGES];
    for (int i = 0; i < IMAGES; i++) order[i] = (uint32_t)i;
    Error err = {{0}};
    for (int round = 0; round < 8; round++) {
        ImageSet ahead; /* the in-flight batch's own data set, freed right after destroy */
        cr_assert_eq(synthetic_make(&ahead, IMAGES, 3, 36, 36, 10, 5, 2 + round, &err), 0, "%s", err.msg);
        Rng r, s;
        rng_seed(&r, 1, (uint64_t)round);
        rng_seed(&s, 2, (uint64_t)round);
        BatchJob a = {&f.set, order, BATCH, &f.aug, &r, 0}, b[2] = {{&ahead, order + 16, BATCH, &f.aug, &s, 0},
                                                                   {&ahead, order + 32, BATCH, &f.aug, &s, 1}};
        loader_load(f.loader, &a, b, 2);
        loader_destroy(f.loader);
        imageset_free(&ahead);
        expect_batch(&f, &a, "the batch loaded before destroy");
        f.loader = loader_create(f.net, f.mean, f.std, 1 + round % 3, &err);
        cr_assert_not_null(f.loader, "%s", err.msg);
        cr_assert_eq(loader_batches_cropped(f.loader), 0, "a new loader starts with nothing cropped");
        load_and_check(&f, &a, NULL, "a new loader after one destroyed mid-crop");
    }
    fixture_close(&f);
}
