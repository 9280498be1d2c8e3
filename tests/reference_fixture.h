/* Test-only reader for the PyTorch reference fixtures written by
 * tests/make_reference.py (the safetensors layout: 8-byte little-endian header
 * length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {..}},
 * then raw little-endian data). Only F32 and I32 tensors are supported. */
#ifndef BB_REFERENCE_FIXTURE_H
#define BB_REFERENCE_FIXTURE_H
#include <stddef.h>
#include <stdint.h>

#define FX_MAX_DIMS 8

typedef enum { FX_F32, FX_I32 } FxDtype;

typedef struct {
    char name[128];
    FxDtype dtype;
    int ndim;
    int64_t shape[FX_MAX_DIMS];
    size_t count;      /* product of shape */
    const float *f32;  /* FX_F32 data (aligned copy), else NULL */
    const int32_t *i32; /* FX_I32 data (aligned copy), else NULL */
} FxTensor;

typedef struct {
    FxTensor *tensors;
    int n_tensors;
    char (*meta_keys)[64];
    char (*meta_values)[128];
    int n_meta;
    void *storage; /* one allocation holding every tensor's data */
} Fixture;

/* Returns 0 on success; on failure, -1 with a message in err. */
int fixture_load(Fixture *fx, const char *path, char *err, size_t err_len);
void fixture_free(Fixture *fx);
const FxTensor *fixture_get(const Fixture *fx, const char *name);
/* A metadata string, or NULL. */
const char *fixture_meta(const Fixture *fx, const char *key);

#endif
