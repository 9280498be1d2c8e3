/* A thread that sums gradient buckets across the ranks with blocking MPI_Allreduce, on a
 * communicator of its own, while the main thread goes on with backward.
 *
 * Why a thread: Open MPI's nonblocking MPI_Iallreduce (libnbc) runs simpler algorithms than
 * its blocking one (coll/tuned) and progresses only when the caller polls, so buckets sent
 * with it made the bucketed allreduce up to 1.5x slower than one plain MPI_Allreduce. Here
 * each bucket gets the tuned algorithm and progresses on its own. Needs MPI_THREAD_MULTIPLE
 * (the main thread may call MPI meanwhile: BN statistics with --sync-bn); the buckets' own
 * communicator keeps their collectives apart from the main thread's. */
#ifndef BB_REDUCE_THREAD_H
#define BB_REDUCE_THREAD_H
#include <stddef.h>

#include "../real.h"

typedef struct ReduceThread ReduceThread;

/* Collective over the job's ranks (the communicator is duplicated): NULL when MPI does not
 * provide MPI_THREAD_MULTIPLE or the thread cannot start; the caller then polls nonblocking
 * requests instead. */
ReduceThread *reduce_thread_start(void);
/* Queues buf[0, n) (host memory no one else touches until reduce_thread_wait) to be summed
 * in place, in submission order. */
void reduce_thread_submit(ReduceThread *t, real *buf, size_t n);
/* Returns when every bucket submitted so far is summed. */
void reduce_thread_wait(ReduceThread *t);
/* Seconds the thread has spent summing buckets, since it started. */
double reduce_thread_busy_seconds(ReduceThread *t);
/* Stops the thread (after the queued buckets) and frees its communicator. */
void reduce_thread_stop(ReduceThread *t);

#endif
