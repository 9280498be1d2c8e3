/* The one table of the LARS/LARC switches' values (opt_switches.h). */
#include "opt_switches.h"

#include <stdio.h>
#include <string.h>

#include "opt_config.h"

/* Each list in the order of its enum (opt_config.h). */
static const OptSwitchValue POLICIES[] = {
    [LARC_SCALE] = {"scale", "lr*r, no clip"},
    [LARC_CLIP_NVCAFFE] = {"clip", "min(lr, r), NVCaffe"},
    [LARC_CLIP_APEX] = {"apex-clip", "lr*min(r/lr, 1)"},
};
static const OptSwitchValue DENOMS[] = {
    [LARS_DENOM_G_WD] = {"g-wd", "||g||+wd||w||+eps"},
    [LARS_DENOM_G] = {"g", "||g||+eps"},
    [LARS_DENOM_DECAYED] = {"decayed", "||g+wd w||+eps"},
    [LARS_DENOM_UPDATE] = {"update", "||update after momentum||+eps"},
};
static const OptSwitchValue MOMENTA[] = {
    [LARS_LR_INSIDE] = {"inside", "v=m v+lr r g'; w-=v"},
    [LARS_LR_AFTER] = {"after", "b=m b+r g'; w-=lr b"},
    [LARS_TRUST_AFTER] = {"trust-after", "b=m b+g'; w-=lr r b"},
};
static const OptSwitchValue GUARDS[] = {
    [LARS_GUARD_RATIO_ONE] = {"one", "r=1 at a zero norm"},
    [LARS_GUARD_APEX] = {"apex", "r=1, gradient untouched and no wd that step"},
};

#define LIST(a) {a, (int)(sizeof a / sizeof a[0])}
static const struct {
    const OptSwitchValue *values;
    int n;
} SWITCHES[N_OPT_SWITCHES] = {
    [OPT_SWITCH_POLICY] = LIST(POLICIES),
    [OPT_SWITCH_DENOM] = LIST(DENOMS),
    [OPT_SWITCH_MOMENTUM] = LIST(MOMENTA),
    [OPT_SWITCH_GUARD] = LIST(GUARDS),
};

const OptSwitchValue *opt_switch_value(OptSwitchKind k, int v)
{
    return k < N_OPT_SWITCHES && v >= 0 && v < SWITCHES[k].n ? &SWITCHES[k].values[v] : NULL;
}

int opt_switch_find(OptSwitchKind k, const char *name)
{
    for (int v = 0; k < N_OPT_SWITCHES && v < SWITCHES[k].n; v++)
        if (!strcmp(SWITCHES[k].values[v].name, name)) return v;
    return -1;
}

char *opt_switch_names(OptSwitchKind k, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int v = 0; k < N_OPT_SWITCHES && v < SWITCHES[k].n && used < len; v++) {
        int n = snprintf(buf + used, len - used, "%s%s", v ? ", " : "", SWITCHES[k].values[v].name);
        if (n > 0) used += (size_t)n;
    }
    return buf;
}

char *opt_switch_text(OptSwitchKind k, int v, char *buf, size_t len)
{
    const OptSwitchValue *x = opt_switch_value(k, v);
    if (x) snprintf(buf, len, "%s (%s)", x->name, x->meaning);
    else snprintf(buf, len, "?");
    return buf;
}
