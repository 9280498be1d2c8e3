#include "edges.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static bool as_number(const char *s, double *v)
{
    if (!s || !*s) return false;
    char *end;
    *v = strtod(s, &end);
    return *end == 0 && isfinite(*v);
}

EdgeSide edges_side(const CellSet *set, const Cell *best, const char *axis)
{
    double v, lo = INFINITY, hi = -INFINITY;
    if (!as_number(cells_value_in(set->exp, best->cell, axis), &v)) return EDGE_NONE;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        if (!cells_same_group(set, best, c)) continue;
        double x;
        if (!as_number(cells_value_in(set->exp, c->cell, axis), &x)) return EDGE_NONE;
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    if (!(lo < hi)) return EDGE_NONE;
    return v <= lo ? EDGE_BOTTOM : v >= hi ? EDGE_TOP : EDGE_NONE;
}

int edges_describe(const CellSet *set, const Cell *best, char *out, size_t len)
{
    int n = 0;
    size_t used = 0;
    out[0] = 0;
    for (int t = 0; t < set->exp->n_tuned; t++) {
        EdgeSide s = edges_side(set, best, set->exp->tuned[t]);
        if (s == EDGE_NONE) continue;
        if (used < len)
            used += (size_t)snprintf(out + used, len - used, "%s%s at %s", n ? ", " : "", set->exp->tuned[t],
                                     s == EDGE_TOP ? "top" : "bottom");
        n++;
    }
    return n;
}

void edges_group_text(const CellSet *set, const Cell *c, char *out, size_t len)
{
    size_t used = 0;
    int n = 0;
    out[0] = 0;
    for (const cJSON *it = c->cell->child; it && used < len; it = it->next) {
        if (!cells_is_group_axis(set->exp, it->string)) continue;
        used += (size_t)snprintf(out + used, len - used, "%s%s = %s", n++ ? ", " : "", it->string,
                                 cJSON_IsString(it) ? it->valuestring : "?");
    }
}
