#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void tensor_alloc(Tensor *t, int n, int c, int h, int w)
{
    t->n = n;
    t->c = c;
    t->h = h;
    t->w = w;
    t->cap = (size_t)n * c * h * w;
    /* 64-byte alignment for the BLAS kernels; size rounded up as aligned_alloc wants. */
    size_t bytes = (t->cap * sizeof(real) + 63) & ~(size_t)63;
    t->data = aligned_alloc(64, bytes ? bytes : 64);
    if (!t->data) {
        fprintf(stderr, "bigbatch: out of memory allocating a %dx%dx%dx%d tensor\n", n, c, h, w);
        exit(3);
    }
    memset(t->data, 0, bytes);
}

void tensor_free(Tensor *t)
{
    free(t->data);
    t->data = NULL;
    t->cap = 0;
}

size_t tensor_count(const Tensor *t) { return (size_t)t->n * t->c * t->h * t->w; }

void tensor_zero(Tensor *t) { memset(t->data, 0, tensor_count(t) * sizeof(real)); }

void tensor_set_batch(Tensor *t, int n)
{
    if ((size_t)n * tensor_per_item(t) > t->cap) {
        fprintf(stderr, "bigbatch: internal error: batch %d exceeds the planned capacity\n", n);
        abort();
    }
    t->n = n;
}
