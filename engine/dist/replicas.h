/* Training on T threads split by images for the whole step. Each thread runs forward and
 * backward over its own share of the batch through its own replica of the net (the same
 * layers and parameters, its own activations and gradients, a one-thread backend), and the
 * replicas' gradients are then added in thread order. Every layer's values stay in the cache
 * of the core that computed them: the per-layer split (each operation across all threads)
 * moves the small layers' values between the cores and joins the threads twice a layer, which
 * cost LeNet a fifth of its second thread (docs/performance.md). It needs nets whose training
 * treats each image on its own: batch norm's statistics tie a batch together. */
#ifndef BB_REPLICAS_H
#define BB_REPLICAS_H
#include <stdbool.h>

#include "../net/net.h"
#include "../base/util.h"

typedef struct Replicas Replicas;

/* Whether net trains by replicas for batches of up to batch_cap images: its backend has 2+
 * threads, no layer ties a batch's images together in training, and the values its layers
 * output for one thread's images are within its core's caches' reach (1M) and at least twice the
 * weights: each replica zeroes, writes and adds a whole gradient a step, which costs more than
 * it saves where the weights outweigh the activations kept local, and activations far beyond
 * the caches gain nothing from staying on one core (replicas.c has the measurements). */
bool replicas_suit(const Net *net, int batch_cap);
/* One replica per thread of net's backend, each for up to ceil(batch_cap / threads) images.
 * NULL when the net does not suit them, or with err set when a replica could not be built. */
Replicas *replicas_open(Net *net, int batch_cap, Error *err);
/* replicas_open without the size rule (tests): NULL only where they cannot work (a layer that
 * ties images together, a backend without one-thread backends) or with err set. */
Replicas *replicas_build(Net *net, int batch_cap, Error *err);
void replicas_close(Replicas *r);

/* Forward (training) and backward over images [0, n) of net->input and net->labels, adding
 * the loss's gradient into net->grad_block: by the replicas when r is given, else by the net
 * itself. Returns the mean loss and sets net->loss and net->correct. With skip_diverged, a
 * loss that is not finite skips the backward (its gradient is not used). Layers' profile
 * times (net->profile) are the first replica's. net->after_layer_backward runs for every
 * layer, in backward order: by replicas once their gradients are added. */
double net_train_pass(Net *net, Replicas *r, int n, bool skip_diverged);

#endif
