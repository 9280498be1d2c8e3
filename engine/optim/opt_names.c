/* The table of optimizer names (opt_names.h). */
#include "opt_names.h"

#include "../base/name_table.h"

static const OptName OPTIMIZERS[] = {
    {"sgd", false, OPT_RULE_SGD, false, false},
    {"lars", true, OPT_RULE_LARS, false, true},
    {"larc", true, OPT_RULE_LARS, false, true},
    {"adamw", false, OPT_RULE_ADAMW, true, false},
    {"lamb", false, OPT_RULE_LAMB, true, true},
};
enum { N_OPTIMIZERS = (int)(sizeof OPTIMIZERS / sizeof OPTIMIZERS[0]) };
static const NameTable NAMES = NAME_TABLE(OPTIMIZERS);

const OptName *opt_name_list(int *count)
{
    *count = N_OPTIMIZERS;
    return OPTIMIZERS;
}

const OptName *opt_name_find(const char *name)
{
    return name_table_find(NAMES, name);
}

char *opt_names(char *buf, size_t len, const char *sep, const char *last_sep)
{
    return name_table_join(NAMES, buf, len, sep, last_sep);
}

int opt_name_check(const char *name, Error *err)
{
    return opt_name_find(name) ? 0 : name_table_unknown(NAMES, "optimizer", name, "known: ", ", ", err);
}
