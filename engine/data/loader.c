/* The batch loader (loader.h). Two slots of page-locked host memory take turns: while the
 * device computes on the batch uploaded from one, the thread crops the next into the other.
 * A slot goes FREE -> QUEUED (a job for the thread) -> READY (cropped) -> IN_FLIGHT (its
 * upload issued; an event marks when the device has read it) -> FREE again once that event
 * has completed, which the main thread checks before it refills the slot. The device's pixel
 * buffer is one: uploads and normalizations run in stream order. */
#include "loader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SLOT_FREE, SLOT_QUEUED, SLOT_READY, SLOT_IN_FLIGHT } SlotState;

typedef struct {
    SlotState state;
    uint8_t *pixels;   /* host staging (bk_host_alloc), batch_cap images */
    int32_t *labels;   /* host staging */
    uint32_t *idx;     /* the job's image indices, copied */
    const ImageSet *set;
    const Augment *aug;
    Rng rng;           /* the draws' start; unused without has_rng */
    bool has_rng;
    uint64_t epoch;
    int n;
    BkEvent *uploaded; /* recorded after the slot's upload */
} Slot;

struct Loader {
    Net *net;
    Backend *bk;
    float *mean, *std;       /* per channel */
    int c;
    size_t hw, image_bytes;  /* of one cropped input image */
    BkBuffer *device_pixels; /* batch_cap images of uint8 on the device */
    Slot slot[2];
    int queued;              /* the slot whose job the thread has (QUEUED or READY), or -1 */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a slot's state, or quit */
    bool quit;
    /* Threads of each crop: on a device the host's cores are free (the backend's thread
     * count), on the CPU they compute, so one. */
    int crop_threads;
    double crop_seconds;     /* under lock */
    long cropped;            /* under lock */
    double wait_seconds;
};

/* Crops the slot's job and counts the time it took, which it returns. */
static double crop(Loader *L, Slot *s)
{
    const double t0 = now_seconds();
    batch_crop(s->set, s->idx, s->n, s->aug, s->has_rng ? &s->rng : NULL, s->epoch, s->pixels, s->labels,
               L->crop_threads);
    const double took = now_seconds() - t0;
    pthread_mutex_lock(&L->lock);
    L->crop_seconds += took;
    L->cropped++;
    pthread_mutex_unlock(&L->lock);
    return took;
}

/* The thread: crops each queued slot; nothing else touches a QUEUED slot. */
static void *loader_thread(void *arg)
{
    Loader *L = arg;
    pthread_mutex_lock(&L->lock);
    for (;;) {
        while (!L->quit && (L->queued < 0 || L->slot[L->queued].state != SLOT_QUEUED))
            pthread_cond_wait(&L->changed, &L->lock);
        if (L->quit) break;
        Slot *s = &L->slot[L->queued];
        pthread_mutex_unlock(&L->lock);
        crop(L, s);
        pthread_mutex_lock(&L->lock);
        s->state = SLOT_READY;
        pthread_cond_broadcast(&L->changed);
    }
    pthread_mutex_unlock(&L->lock);
    return NULL;
}

/* The slot may be refilled once the device has read what was uploaded from it. */
static void settle(Slot *s)
{
    if (s->state == SLOT_IN_FLIGHT) bk_event_wait(s->uploaded);
    s->state = SLOT_FREE;
}

static void take_job(Loader *L, Slot *s, const BatchJob *job)
{
    if (job->n < 0 || job->n > L->net->batch_cap) {
        fprintf(stderr, "bigbatch: internal error: batch %d above the planned %d\n", job->n, L->net->batch_cap);
        abort();
    }
    memcpy(s->idx, job->idx, (size_t)job->n * sizeof *s->idx);
    s->set = job->set;
    s->aug = job->aug;
    s->n = job->n;
    s->epoch = job->epoch;
    s->has_rng = job->rng != NULL;
    if (job->rng) s->rng = *job->rng;
}

static bool same_job(const Slot *s, const BatchJob *job)
{
    return s->set == job->set && s->aug == job->aug && s->n == job->n && s->epoch == job->epoch && s->has_rng == (job->rng != NULL) &&
           (!job->rng || (s->rng.state == job->rng->state && s->rng.inc == job->rng->inc)) &&
           !memcmp(s->idx, job->idx, (size_t)job->n * sizeof *s->idx);
}

/* The queued slot once the thread has cropped it (the wait is counted), or NULL. */
static Slot *collect(Loader *L)
{
    if (L->queued < 0) return NULL;
    Slot *s = &L->slot[L->queued];
    double t0 = now_seconds();
    pthread_mutex_lock(&L->lock);
    while (s->state != SLOT_READY) pthread_cond_wait(&L->changed, &L->lock);
    L->queued = -1;
    pthread_mutex_unlock(&L->lock);
    L->wait_seconds += now_seconds() - t0;
    return s;
}

static void upload(Loader *L, Slot *s)
{
    Net *net = L->net;
    uint8_t *dev = bk_buffer_address(L->device_pixels);
    bk_upload_async(L->bk, dev, s->pixels, (size_t)s->n * L->image_bytes);
    bk_upload_async(L->bk, net->labels, s->labels, (size_t)s->n * sizeof *s->labels);
    bk_normalize_pixels(L->bk, (size_t)s->n, L->c, L->hw, dev, L->mean, L->std, net->input.data);
    bk_event_record(L->bk, s->uploaded);
    s->state = SLOT_IN_FLIGHT;
}

void loader_load(Loader *L, const BatchJob *job, const BatchJob *next)
{
    Slot *s = collect(L);
    if (s && !same_job(s, job)) { /* the plan changed: the cropped batch is not this one */
        s->state = SLOT_FREE;
        s = NULL;
    }
    if (!s) { /* nothing cropped ahead: crop here (the first batch, or after a change of plan) */
        s = L->slot[0].state == SLOT_IN_FLIGHT ? &L->slot[1] : &L->slot[0];
        settle(s);
        take_job(L, s, job);
        L->wait_seconds += crop(L, s);
    }
    upload(L, s);
    if (!next) return;
    Slot *o = &L->slot[s == &L->slot[0]];
    settle(o);
    take_job(L, o, next);
    pthread_mutex_lock(&L->lock);
    o->state = SLOT_QUEUED;
    L->queued = (int)(o - L->slot);
    pthread_cond_broadcast(&L->changed);
    pthread_mutex_unlock(&L->lock);
}

double loader_wait_seconds(const Loader *L) { return L->wait_seconds; }

double loader_crop_seconds(Loader *L)
{
    pthread_mutex_lock(&L->lock);
    const double s = L->crop_seconds;
    pthread_mutex_unlock(&L->lock);
    return s;
}

long loader_batches_cropped(Loader *L)
{
    pthread_mutex_lock(&L->lock);
    const long n = L->cropped;
    pthread_mutex_unlock(&L->lock);
    return n;
}

Loader *loader_create(Net *net, const float *mean, const float *std, Error *err)
{
    Loader *L = xcalloc(1, sizeof *L, "batch loader");
    L->net = net;
    L->bk = net->bk;
    L->c = net->input.c;
    L->hw = (size_t)net->input.h * (size_t)net->input.w;
    L->image_bytes = (size_t)L->c * L->hw;
    L->crop_threads = strcmp(backend_device_name(L->bk), "cpu") != 0 ? backend_threads(L->bk) : 1;
    if (L->crop_threads < 1) L->crop_threads = 1;
    L->mean = xmalloc(sizeof *L->mean * (size_t)L->c, "batch loader");
    L->std = xmalloc(sizeof *L->std * (size_t)L->c, "batch loader");
    memcpy(L->mean, mean, sizeof *L->mean * (size_t)L->c);
    memcpy(L->std, std, sizeof *L->std * (size_t)L->c);
    const size_t cap = (size_t)(net->batch_cap > 0 ? net->batch_cap : 1);
    L->device_pixels = bk_buffer_alloc(L->bk, cap * L->image_bytes);
    for (int i = 0; i < 2; i++) {
        Slot *s = &L->slot[i];
        s->pixels = bk_host_alloc(L->bk, cap * L->image_bytes);
        s->labels = bk_host_alloc(L->bk, cap * sizeof *s->labels);
        s->idx = xmalloc(cap * sizeof *s->idx, "batch loader");
        s->uploaded = bk_event_create(L->bk);
    }
    L->queued = -1;
    int rc = pthread_mutex_init(&L->lock, NULL);
    if (rc == 0 && (rc = pthread_cond_init(&L->changed, NULL)) != 0) pthread_mutex_destroy(&L->lock);
    if (rc == 0 && (rc = pthread_create(&L->thread, NULL, loader_thread, L)) != 0) {
        pthread_cond_destroy(&L->changed);
        pthread_mutex_destroy(&L->lock);
    }
    if (rc != 0) {
        error_set(err, "cannot start the batch loader's thread: %s", strerror(rc));
        L->quit = true; /* no thread to stop */
        loader_destroy(L);
        return NULL;
    }
    return L;
}

void loader_destroy(Loader *L)
{
    if (!L) return;
    if (!L->quit) {
        pthread_mutex_lock(&L->lock);
        L->quit = true;
        pthread_cond_broadcast(&L->changed);
        pthread_mutex_unlock(&L->lock);
        pthread_join(L->thread, NULL);
        pthread_cond_destroy(&L->changed);
        pthread_mutex_destroy(&L->lock);
    }
    bk_synchronize(L->bk); /* no upload still reads the staging */
    for (int i = 0; i < 2; i++) {
        Slot *s = &L->slot[i];
        bk_host_free(L->bk, s->pixels);
        bk_host_free(L->bk, s->labels);
        free(s->idx);
        bk_event_destroy(s->uploaded);
    }
    bk_buffer_free(L->device_pixels);
    free(L->mean);
    free(L->std);
    free(L);
}
