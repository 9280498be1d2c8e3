#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "base/util.h"

void tensor_alloc(Tensor *t, Backend *bk, int n, int c, int h, int w)
{
    t->n = n;
    t->c = c;
    t->h = h;
    t->w = w;
    t->cap = (size_t)n * c * h * w;
    t->view = false;
    t->buffer = bk_buffer_alloc(bk, t->cap * sizeof(real));
    t->data = bk_buffer_address(t->buffer);
}

void tensor_free(Tensor *t)
{
    if (!t->view && t->buffer) bk_buffer_free(t->buffer);
    t->buffer = NULL;
    t->data = NULL;
    t->cap = 0;
}

Tensor tensor_view(const Tensor *block, size_t offset, int n, int c, int h, int w)
{
    size_t count = (size_t)n * c * h * w;
    if (offset + count > block->cap) {
        fprintf(stderr, "bigbatch: internal error: view beyond its block\n");
        abort();
    }
    return (Tensor){block->data + offset, block->buffer, n, c, h, w, count, true};
}

size_t tensor_count(const Tensor *t) { return (size_t)t->n * t->c * t->h * t->w; }

Backend *tensor_backend(const Tensor *t) { return bk_buffer_backend(t->buffer); }

void tensor_zero(Tensor *t)
{
    if (t->buffer) bk_fill(tensor_backend(t), tensor_count(t), 0, t->data);
}

void tensor_set_batch(Tensor *t, int n)
{
    if ((size_t)n * tensor_per_item(t) > t->cap) {
        fprintf(stderr, "bigbatch: internal error: batch %d exceeds the planned capacity\n", n);
        abort();
    }
    t->n = n;
}

void tensor_upload(Tensor *t, const real *host)
{
    bk_upload(tensor_backend(t), t->data, host, tensor_count(t) * sizeof(real));
}

void tensor_download(const Tensor *t, real *host)
{
    bk_download(tensor_backend(t), host, t->data, tensor_count(t) * sizeof(real));
}

real *tensor_to_host(const Tensor *t)
{
    size_t count = tensor_count(t);
    real *host = xmalloc((count ? count : 1) * sizeof(real), "host copy of a tensor");
    if (count) tensor_download(t, host);
    return host;
}
