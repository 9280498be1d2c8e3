/* The optimizers `train --opt` accepts, one table: the flag's help, train_config_check,
 * experiment files and the error for an unknown name read it. (optimizer.c builds them;
 * this table names them and says which family each is.) */
#ifndef BB_OPT_NAMES_H
#define BB_OPT_NAMES_H
#include <stdbool.h>
#include <stddef.h>

#include "../base/util.h"

/* The update rule a name selects (engine/cpu/optim_*.c implement them). */
typedef enum { OPT_RULE_SGD, OPT_RULE_LARS, OPT_RULE_ADAMW, OPT_RULE_LAMB } OptRule;

typedef struct {
    const char *name;
    bool lars_switches; /* one engine (optim_lars.c): --lars-variant and the LARS/LARC switches apply */
    OptRule rule;
    bool adam_moments;  /* slots exp_avg and exp_avg_sq, betas in [0, 1) */
    bool reads_norms;   /* the update reads ||w|| and ||g|| every step (layer-wise rates) */
} OptName;

/* All optimizers, in the order help texts list them; *count receives their number. */
const OptName *opt_name_list(int *count);
/* The optimizer of that name, or NULL (also for a NULL name). */
const OptName *opt_name_find(const char *name);
/* The names, `sep` between them and `last_sep` before the last; returns buf. */
char *opt_names(char *buf, size_t len, const char *sep, const char *last_sep);
/* 0 for a known name; else -1 with err "unknown optimizer 'x' (known: a, b, c)". */
int opt_name_check(const char *name, Error *err);

#endif
