/* A tensor owns its memory. Shape is NCHW; a vector or matrix uses the trailing
 * dimensions (n=1 ...). `cap` is the element capacity, so activations planned for
 * the largest batch can be reused for a smaller final batch without reallocating. */
#ifndef BB_TENSOR_H
#define BB_TENSOR_H
#include <stddef.h>

#include "real.h"

typedef struct {
    real *data;
    int n, c, h, w;
    size_t cap;
} Tensor;

void tensor_alloc(Tensor *t, int n, int c, int h, int w); /* zero-filled */
void tensor_free(Tensor *t);
size_t tensor_count(const Tensor *t);           /* n*c*h*w */
static inline size_t tensor_per_item(const Tensor *t) { return (size_t)t->c * t->h * t->w; }
void tensor_zero(Tensor *t);
/* Change the batch dimension within capacity (for the last, shorter batch). */
void tensor_set_batch(Tensor *t, int n);

#endif
