/* The values of the LARS/LARC switches (opt_config.h's enums), each written once here: the
 * name flags and experiment files use, and what it does. The flag parsing, the line a run
 * prints about its preset and the presets' table (docs/engine.md) all read this table. */
#ifndef BB_OPT_SWITCHES_H
#define BB_OPT_SWITCHES_H
#include <stddef.h>

typedef enum { OPT_SWITCH_POLICY, OPT_SWITCH_DENOM, OPT_SWITCH_MOMENTUM, OPT_SWITCH_GUARD, N_OPT_SWITCHES } OptSwitchKind;

typedef struct {
    const char *name;    /* as a flag's value, such as g-wd */
    const char *meaning; /* what it does: "||g||+wd||w||+eps" */
} OptSwitchValue;

/* The value v of a switch (its enum's), or NULL out of range. */
const OptSwitchValue *opt_switch_value(OptSwitchKind k, int v);
/* The value named `name`, or -1. */
int opt_switch_find(OptSwitchKind k, const char *name);
/* The names, ", " between them (an error's list); returns buf. */
char *opt_switch_names(OptSwitchKind k, char *buf, size_t len);
/* "name (meaning)" of value v into buf; returns buf. */
char *opt_switch_text(OptSwitchKind k, int v, char *buf, size_t len);

#endif
