/* Tests read and write tensors only across the backend boundary, as the engine does: these
 * helpers upload or download through engine/backend.h, so the suite passes on the guarded
 * backend (make test BACKEND=guarded) and would on any other. */
#ifndef BB_TESTS_TENSOR_ACCESS_H
#define BB_TESTS_TENSOR_ACCESS_H
#include <stdint.h>
#include <stdlib.h>

#include "../engine/backend.h"
#include "../engine/tensor.h"

static inline real tensor_get(const Tensor *t, size_t i)
{
    real v;
    bk_download(tensor_backend(t), &v, t->data + i, sizeof v);
    return v;
}

static inline void tensor_set(Tensor *t, size_t i, real v)
{
    bk_upload(tensor_backend(t), t->data + i, &v, sizeof v);
}

/* t's values from float32 fixture values (converted to real). */
static inline void upload_f32(Tensor *t, const float *values)
{
    size_t count = tensor_count(t);
    real *v = malloc((count ? count : 1) * sizeof *v);
    for (size_t i = 0; i < count; i++) v[i] = (real)values[i];
    tensor_upload(t, v);
    free(v);
}

/* The labels of a batch (backend memory) from host values. */
static inline void labels_set(Backend *bk, int32_t *labels, const int32_t *values, int n)
{
    bk_upload(bk, labels, values, (size_t)n * sizeof *values);
}

#endif
