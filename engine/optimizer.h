/* The optimizer interface: one update over all parameters of a net, given the
 * global learning rate of this iteration. Per-parameter state lives in named
 * slots (e.g. "momentum_buffer") so checkpoints can save any optimizer's state. */
#ifndef BB_OPTIMIZER_H
#define BB_OPTIMIZER_H
#include <stdbool.h>

#include "net.h"
#include "util.h"

typedef struct {
    char name[16];        /* "sgd" */
    double momentum;      /* 0 = plain SGD */
    double dampening;
    bool nesterov;
    double weight_decay;  /* coupled: wd * w added to the gradient (L2) */
} OptConfig;

typedef struct Optimizer Optimizer;
struct Optimizer {
    OptConfig cfg;
    int n_slots;
    const char *slot_names[4];
    Tensor *slots;        /* n_params * n_slots, slot s of param p at [p * n_slots + s] */
    int n_params;
    long updates;         /* number of updates applied */
    void (*update)(Optimizer *opt, Net *net, double lr);
};

void opt_config_defaults(OptConfig *cfg);
Optimizer *optimizer_create(const OptConfig *cfg, const Net *net, Error *err);
void optimizer_destroy(Optimizer *opt);
void optimizer_step(Optimizer *opt, Net *net, double lr);
static inline Tensor *optimizer_slot(Optimizer *opt, int param, int slot)
{
    return &opt->slots[param * opt->n_slots + slot];
}

#endif
