/* Models built by name: the papers' full-size networks and CPU-sized proxies. */
#ifndef BB_MODELS_H
#define BB_MODELS_H
#include "net.h"
#include "util.h"

typedef struct {
    const char *name;
    const char *summary;
    int in_c, in_h, in_w, classes;
} ModelInfo;

/* All models, in display order; *count receives their number. */
const ModelInfo *model_list(int *count);
const ModelInfo *model_find(const char *name);
/* Builds, finalizes and initializes (from seed) the named model with `classes`
 * outputs (0: the model's default). NULL with err set for an unknown name. */
Net *model_build(const char *name, Backend *bk, int classes, uint64_t seed, Error *err);

#endif
