/* Optimizer construction by name and the shared state bookkeeping. */
#include "optimizer.h"

#include <stdlib.h>
#include <string.h>

void sgd_update(Optimizer *opt, Net *net, double lr);

void opt_config_defaults(OptConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->name, sizeof cfg->name, "sgd");
}

Optimizer *optimizer_create(const OptConfig *cfg, const Net *net, Error *err)
{
    if (strcmp(cfg->name, "sgd") != 0) {
        error_set(err, "unknown optimizer '%s' (known: sgd)", cfg->name);
        return NULL;
    }
    if (cfg->nesterov && (cfg->momentum <= 0 || cfg->dampening != 0)) {
        error_set(err, "--nesterov needs --momentum > 0 and zero dampening");
        return NULL;
    }
    Optimizer *opt = xcalloc(1, sizeof *opt, "optimizer");
    opt->cfg = *cfg;
    opt->update = sgd_update;
    opt->n_params = net->n_params;
    opt->n_slots = cfg->momentum > 0 ? 1 : 0;
    opt->slot_names[0] = "momentum_buffer";
    opt->slots = xcalloc((size_t)net->n_params * (opt->n_slots ? opt->n_slots : 1), sizeof *opt->slots,
                         "optimizer slots");
    for (int p = 0; p < net->n_params; p++) {
        const Param *pr = &net->params[p];
        for (int s = 0; s < opt->n_slots; s++)
            tensor_alloc(optimizer_slot(opt, p, s), pr->n, pr->c, pr->h, pr->w);
    }
    return opt;
}

void optimizer_destroy(Optimizer *opt)
{
    if (!opt) return;
    for (int i = 0; i < opt->n_params * opt->n_slots; i++) tensor_free(&opt->slots[i]);
    free(opt->slots);
    free(opt);
}

void optimizer_step(Optimizer *opt, Net *net, double lr)
{
    opt->update(opt, net, lr);
    opt->updates++;
}
