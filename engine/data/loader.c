/* The batch loader (loader.h). LOADER_AHEAD + 1 slots of page-locked host memory: while the
 * device computes on the batch uploaded from one, the pool crops the next ones into the others.
 * A slot goes FREE -> QUEUED (its job in the queue, its pieces taken by the pool's threads
 * oldest batch first) -> IN_FLIGHT (all pieces cropped, its upload issued; an event marks when
 * the device has read it) -> FREE again once that event has completed, which the main thread
 * checks before it refills the slot. The device's pixel buffer is one: uploads and
 * normalizations run in stream order.
 *
 * The main thread alone changes slot states, jobs and the queue (under the lock, as the
 * threads read them); the threads change only a slot's taken and done counts. A piece is a
 * contiguous run of the batch's images with its own start of the draws (augment_skip), so
 * the pixels do not depend on which thread crops which piece. */
#include "loader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { SLOTS = LOADER_AHEAD + 1, PIECES_PER_THREAD = 4 /* small enough pieces to even out slow images */ };

typedef enum { SLOT_FREE, SLOT_QUEUED, SLOT_IN_FLIGHT } SlotState;

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
    int pieces;        /* the work items of the batch; cut to `taken` when it is dropped */
    int taken, done;   /* under lock: pieces a thread has started, finished */
    bool dropped;      /* a change of plan: finished pieces count for nothing */
    BkEvent *uploaded; /* recorded after the slot's upload */
} Slot;

struct Loader {
    Net *net;
    Backend *bk;
    float *mean, *std;       /* per channel */
    int c;
    size_t hw, image_bytes;  /* of one cropped input image */
    BkBuffer *device_pixels; /* batch_cap images of uint8 on the device */
    Slot slot[SLOTS];
    int queue[SLOTS];        /* slots with jobs, oldest first */
    int queued;
    int current;             /* the slot uploaded last (-1: none) */
    pthread_t *threads;
    int n_threads, started;
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a piece to take, or quit */
    pthread_cond_t finished; /* a piece done */
    bool quit;
    double crop_seconds;     /* under lock: thread-seconds */
    long cropped;            /* under lock */
    double wait_seconds;
};

/* Under lock: the oldest queued batch's next piece, or NULL. */
static Slot *next_piece(Loader *L, int *piece)
{
    for (int q = 0; q < L->queued; q++) {
        Slot *s = &L->slot[L->queue[q]];
        if (s->taken < s->pieces) {
            *piece = s->taken++;
            return s;
        }
    }
    return NULL;
}

/* Images [from, to) of the slot's batch: the draws start where a crop of the whole batch
 * would have them (augment_skip; a store's are Philox's per image and skip nothing). */
static void crop_piece(const Loader *L, const Slot *s, int from, int to)
{
    Rng rng = s->rng;
    if (s->has_rng) augment_skip(s->set, s->aug, &rng, from);
    batch_crop(s->set, s->idx + from, to - from, s->aug, s->has_rng ? &rng : NULL, s->epoch,
               s->pixels + (size_t)from * L->image_bytes, s->labels + from, 1);
}

/* A thread of the pool: crops pieces until it is told to quit. */
static void *pool_thread(void *arg)
{
    Loader *L = arg;
    pthread_mutex_lock(&L->lock);
    for (;;) {
        int piece = 0;
        Slot *s = NULL;
        while (!L->quit && !(s = next_piece(L, &piece))) pthread_cond_wait(&L->work, &L->lock);
        if (L->quit) break;
        /* the piece's images from the count of pieces now, under the lock: drop_from cuts
         * s->pieces while pieces are in hand, and a count read later would give this piece
         * another range, overlapping its neighbours' (a data race, and up to a whole batch
         * cropped on one thread while drop_from waits for it) */
        const int from = (int)((long)s->n * piece / s->pieces), to = (int)((long)s->n * (piece + 1) / s->pieces);
        pthread_mutex_unlock(&L->lock);
        const double t0 = now_seconds();
        crop_piece(L, s, from, to);
        const double took = now_seconds() - t0;
        pthread_mutex_lock(&L->lock);
        L->crop_seconds += took;
        if (++s->done == s->pieces && !s->dropped) L->cropped++;
        pthread_cond_broadcast(&L->finished);
    }
    pthread_mutex_unlock(&L->lock);
    return NULL;
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
    const int most = PIECES_PER_THREAD * L->n_threads;
    s->pieces = job->n < most ? job->n : most;
    s->taken = s->done = 0;
    s->dropped = false;
}

static bool same_job(const Slot *s, const BatchJob *job)
{
    return s->set == job->set && s->aug == job->aug && s->n == job->n && s->epoch == job->epoch && s->has_rng == (job->rng != NULL) &&
           (!job->rng || (s->rng.state == job->rng->state && s->rng.inc == job->rng->inc)) &&
           !memcmp(s->idx, job->idx, (size_t)job->n * sizeof *s->idx);
}

/* A slot neither queued nor the one uploaded last, once the device has read what was
 * uploaded from it. There is one: at most LOADER_AHEAD are queued. */
static Slot *free_slot(Loader *L)
{
    for (int i = 0; i < SLOTS; i++) {
        Slot *s = &L->slot[i];
        if (s->state == SLOT_QUEUED || i == L->current) continue;
        if (s->state == SLOT_IN_FLIGHT) bk_event_wait(s->uploaded);
        s->state = SLOT_FREE;
        return s;
    }
    fprintf(stderr, "bigbatch: internal error: no free loader slot\n");
    abort();
}

static void enqueue(Loader *L, const BatchJob *job)
{
    Slot *s = free_slot(L);
    take_job(L, s, job);
    pthread_mutex_lock(&L->lock);
    s->state = SLOT_QUEUED;
    L->queue[L->queued++] = (int)(s - L->slot);
    pthread_cond_broadcast(&L->work);
    pthread_mutex_unlock(&L->lock);
}

/* The queued jobs from position q on are not wanted: no thread takes another of their pieces,
 * and their slots are free once the pieces in hand are done. */
static void drop_from(Loader *L, int q)
{
    pthread_mutex_lock(&L->lock);
    for (int k = q; k < L->queued; k++) {
        Slot *s = &L->slot[L->queue[k]];
        s->pieces = s->taken;
        s->dropped = true;
        while (s->done < s->taken) pthread_cond_wait(&L->finished, &L->lock);
        s->state = SLOT_FREE;
    }
    if (q < L->queued) L->queued = q;
    pthread_mutex_unlock(&L->lock);
}

/* The oldest queued slot once all its pieces are cropped, out of the queue. */
static Slot *collect(Loader *L)
{
    Slot *s = &L->slot[L->queue[0]];
    pthread_mutex_lock(&L->lock);
    while (s->done < s->pieces) pthread_cond_wait(&L->finished, &L->lock);
    memmove(L->queue, L->queue + 1, (size_t)(L->queued - 1) * sizeof *L->queue);
    L->queued--;
    pthread_mutex_unlock(&L->lock);
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
    L->current = (int)(s - L->slot);
}

void loader_load(Loader *L, const BatchJob *job, const BatchJob *ahead, int n_ahead)
{
    const double t0 = now_seconds();
    if (L->queued > 0 && !same_job(&L->slot[L->queue[0]], job)) drop_from(L, 0); /* the plan changed */
    if (L->queued == 0) enqueue(L, job); /* nothing cropped ahead: the first batch, or a new plan */
    Slot *s = collect(L);
    L->wait_seconds += now_seconds() - t0;
    upload(L, s);
    if (n_ahead > LOADER_AHEAD) n_ahead = LOADER_AHEAD;
    if (n_ahead < 0) n_ahead = 0;
    for (int k = 0; k < n_ahead; k++) {
        if (k < L->queued && same_job(&L->slot[L->queue[k]], &ahead[k])) continue;
        drop_from(L, k);
        enqueue(L, &ahead[k]);
    }
    drop_from(L, n_ahead); /* queued jobs past the plan are not wanted */
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

int loader_threads(const Loader *L) { return L->n_threads; }

int loader_default_threads(const Backend *bk)
{
    const int n = strcmp(backend_device_name(bk), "cpu") != 0 ? backend_threads(bk) : 1;
    return n > 0 ? n : 1;
}

/* The lock, its conditions and the threads; 0 or an errno value (threads started are counted). */
static int start_pool(Loader *L)
{
    int rc = pthread_mutex_init(&L->lock, NULL);
    if (rc != 0) return rc;
    if ((rc = pthread_cond_init(&L->work, NULL)) != 0) {
        pthread_mutex_destroy(&L->lock);
        return rc;
    }
    if ((rc = pthread_cond_init(&L->finished, NULL)) != 0) {
        pthread_cond_destroy(&L->work);
        pthread_mutex_destroy(&L->lock);
        return rc;
    }
    L->threads = xcalloc((size_t)L->n_threads, sizeof *L->threads, "batch loader");
    while (L->started < L->n_threads && (rc = pthread_create(&L->threads[L->started], NULL, pool_thread, L)) == 0)
        L->started++;
    return rc;
}

static void stop_pool(Loader *L)
{
    pthread_mutex_lock(&L->lock);
    L->quit = true;
    pthread_cond_broadcast(&L->work);
    pthread_mutex_unlock(&L->lock);
    for (int i = 0; i < L->started; i++) pthread_join(L->threads[i], NULL);
    pthread_cond_destroy(&L->finished);
    pthread_cond_destroy(&L->work);
    pthread_mutex_destroy(&L->lock);
}

Loader *loader_create(Net *net, const float *mean, const float *std, int threads, Error *err)
{
    Loader *L = xcalloc(1, sizeof *L, "batch loader");
    L->net = net;
    L->bk = net->bk;
    L->c = net->input.c;
    L->hw = (size_t)net->input.h * (size_t)net->input.w;
    L->image_bytes = (size_t)L->c * L->hw;
    L->n_threads = threads > 0 ? threads : loader_default_threads(L->bk);
    L->current = -1;
    L->mean = xmalloc(sizeof *L->mean * (size_t)L->c, "batch loader");
    L->std = xmalloc(sizeof *L->std * (size_t)L->c, "batch loader");
    memcpy(L->mean, mean, sizeof *L->mean * (size_t)L->c);
    memcpy(L->std, std, sizeof *L->std * (size_t)L->c);
    const size_t cap = (size_t)(net->batch_cap > 0 ? net->batch_cap : 1);
    L->device_pixels = bk_buffer_alloc(L->bk, cap * L->image_bytes);
    for (int i = 0; i < SLOTS; i++) {
        Slot *s = &L->slot[i];
        s->pixels = bk_host_alloc(L->bk, cap * L->image_bytes);
        s->labels = bk_host_alloc(L->bk, cap * sizeof *s->labels);
        s->idx = xmalloc(cap * sizeof *s->idx, "batch loader");
        s->uploaded = bk_event_create(L->bk);
    }
    const int rc = start_pool(L);
    if (rc != 0) {
        error_set(err, "cannot start the batch loader's threads (%d of %d started): %s", L->started, L->n_threads,
                  strerror(rc));
        if (!L->threads) L->quit = true; /* no lock to stop with */
        loader_destroy(L);
        return NULL;
    }
    return L;
}

void loader_destroy(Loader *L)
{
    if (!L) return;
    if (!L->quit) stop_pool(L); /* first: the threads read the data sets */
    bk_synchronize(L->bk);      /* no upload still reads the staging */
    for (int i = 0; i < SLOTS; i++) {
        Slot *s = &L->slot[i];
        bk_host_free(L->bk, s->pixels);
        bk_host_free(L->bk, s->labels);
        free(s->idx);
        bk_event_destroy(s->uploaded);
    }
    bk_buffer_free(L->device_pixels);
    free(L->threads);
    free(L->mean);
    free(L->std);
    free(L);
}
