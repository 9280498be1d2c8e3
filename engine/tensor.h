/* A tensor is a shape plus an address in backend memory. The backend owns the memory
 * (engine/backend.h: bk_buffer_*); `data` is an address in the backend's space, the way a
 * CUDA device pointer is: code outside engine/cpu/ (or engine/cuda/) passes it to backend
 * operations and never reads or writes through it. Host code moves values across the
 * boundary with tensor_upload / tensor_download (or bk_upload / bk_download) at named
 * points only: a batch in, checkpoints, statistics, `compare`. The guarded build
 * (make BACKEND=guarded) makes any other access fault.
 *
 * Shape is NCHW; a vector or matrix uses the trailing dimensions (n=1 ...). `cap` is the
 * element capacity, so activations planned for the largest batch can be reused for a
 * smaller final batch. A view (a parameter inside the net's parameter block) has the
 * block's `buffer` and does not own it. */
#ifndef BB_TENSOR_H
#define BB_TENSOR_H
#include <stdbool.h>
#include <stddef.h>

#include "real.h"

typedef struct Backend Backend;
typedef struct BkBuffer BkBuffer;

typedef struct {
    real *data;       /* backend address (not dereferenceable outside the backend) */
    BkBuffer *buffer; /* the allocation it lives in; owned unless `view` */
    int n, c, h, w;
    size_t cap;
    bool view;
} Tensor;

void tensor_alloc(Tensor *t, Backend *bk, int n, int c, int h, int w); /* zero-filled */
void tensor_free(Tensor *t);
/* A view of `count` elements of `block` from element `offset`, shaped n x c x h x w. */
Tensor tensor_view(const Tensor *block, size_t offset, int n, int c, int h, int w);
size_t tensor_count(const Tensor *t);           /* n*c*h*w */
static inline size_t tensor_per_item(const Tensor *t) { return (size_t)t->c * t->h * t->w; }
void tensor_zero(Tensor *t);
/* Change the batch dimension within capacity (for the last, shorter batch). */
void tensor_set_batch(Tensor *t, int n);
Backend *tensor_backend(const Tensor *t);
/* Host <-> backend copies of the tensor's first tensor_count(t) elements. */
void tensor_upload(Tensor *t, const real *host);
void tensor_download(const Tensor *t, real *host);
/* A host copy (xmalloc'd; the caller frees it). */
real *tensor_to_host(const Tensor *t);

#endif
