/* Models built by name: the papers' full-size networks and CPU-sized proxies. */
#ifndef BB_MODELS_H
#define BB_MODELS_H
#include "net.h"
#include "../base/util.h"

typedef struct {
    const char *name;
    const char *summary;
    int in_c, in_h, in_w, classes;
    void (*build)(Net *net, int classes); /* adds the layers to a net of this input shape */
} ModelInfo;

/* All models, in display order (one table: every list of model names reads it); *count
 * receives their number. */
const ModelInfo *model_list(int *count);
/* The model of that name, or NULL (also for a NULL name). */
const ModelInfo *model_find(const char *name);
/* The names, in display order, `sep` between them; returns buf. */
char *model_names(char *buf, size_t len, const char *sep);
/* Builds, finalizes and initializes (from seed) the named model with `classes`
 * outputs (0: the model's default). NULL with err set ("unknown model 'x' (known:
 * ...)") for an unknown name, before bk is touched (it may then be NULL). */
Net *model_build(const char *name, Backend *bk, int classes, uint64_t seed, Error *err);
/* The same net with its parameters left as allocated (not initialised): for counting
 * parameters and FLOPs, which read shapes only (bigbatch models answers at once). */
Net *model_build_shapes(const char *name, Backend *bk, int classes, Error *err);

#endif
