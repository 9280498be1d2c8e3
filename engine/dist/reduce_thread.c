/* Gradient buckets summed by a thread of their own (reduce_thread.h). */
#include "reduce_thread.h"

#ifdef BB_NO_MPI
ReduceThread *reduce_thread_start(void) { return NULL; }
void reduce_thread_submit(ReduceThread *t, real *buf, size_t n) { (void)t, (void)buf, (void)n; }
void reduce_thread_wait(ReduceThread *t) { (void)t; }
void reduce_thread_stop(ReduceThread *t) { (void)t; }
double reduce_thread_busy_seconds(ReduceThread *t) { (void)t; return 0; }
#else
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../base/util.h"

#define MPI_REAL_T (sizeof(real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT)

typedef struct {
    real *buf;
    size_t n;
} Bucket;

struct ReduceThread {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work, done;  /* a bucket was queued or stop set / a bucket was summed */
    MPI_Comm comm;
    Bucket *queue;
    size_t cap, head, tail;     /* [head, tail) waits; head == tail: idle */
    bool stop;
    double busy;                /* seconds in sum_bucket */
};

/* MPI counts are int: a bucket larger than 2^30 values goes in parts. */
static void sum_bucket(MPI_Comm comm, Bucket b)
{
    for (size_t done = 0; done < b.n;) {
        int part = b.n - done > (size_t)1 << 30 ? 1 << 30 : (int)(b.n - done);
        MPI_Allreduce(MPI_IN_PLACE, b.buf + done, part, MPI_REAL_T, MPI_SUM, comm);
        done += (size_t)part;
    }
}

static void *run(void *arg)
{
    ReduceThread *t = arg;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (t->head == t->tail && !t->stop) pthread_cond_wait(&t->work, &t->lock);
        if (t->head == t->tail) break; /* stopped, and nothing is left */
        Bucket b = t->queue[t->head];
        pthread_mutex_unlock(&t->lock);
        double t0 = now_seconds();
        sum_bucket(t->comm, b);
        double took = now_seconds() - t0;
        pthread_mutex_lock(&t->lock);
        t->busy += took;
        t->head++;
        pthread_cond_broadcast(&t->done);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

ReduceThread *reduce_thread_start(void)
{
    int level;
    if (MPI_Query_thread(&level) != MPI_SUCCESS || level < MPI_THREAD_MULTIPLE) return NULL;
    ReduceThread *t = xcalloc(1, sizeof *t, "allreduce thread");
    if (MPI_Comm_dup(MPI_COMM_WORLD, &t->comm) != MPI_SUCCESS) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work, NULL);
    pthread_cond_init(&t->done, NULL);
    if (pthread_create(&t->thread, NULL, run, t) != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->work);
        pthread_cond_destroy(&t->done);
        MPI_Comm_free(&t->comm);
        free(t);
        return NULL;
    }
    return t;
}

void reduce_thread_submit(ReduceThread *t, real *buf, size_t n)
{
    pthread_mutex_lock(&t->lock);
    if (t->head == t->tail) t->head = t->tail = 0; /* idle: start the queue over */
    if (t->tail == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->queue = xrealloc(t->queue, t->cap * sizeof *t->queue, "allreduce queue");
    }
    t->queue[t->tail++] = (Bucket){buf, n};
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
}

void reduce_thread_wait(ReduceThread *t)
{
    pthread_mutex_lock(&t->lock);
    while (t->head != t->tail) pthread_cond_wait(&t->done, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

double reduce_thread_busy_seconds(ReduceThread *t)
{
    pthread_mutex_lock(&t->lock);
    double s = t->busy;
    pthread_mutex_unlock(&t->lock);
    return s;
}

void reduce_thread_stop(ReduceThread *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_signal(&t->work);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->work);
    pthread_cond_destroy(&t->done);
    MPI_Comm_free(&t->comm);
    free(t->queue);
    free(t);
}
#endif
