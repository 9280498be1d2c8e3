/* Fragile single-seed cells (fragile.h). */
#include "fragile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double fragile_seed_spread(const CellSet *set)
{
    double spread = NAN;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        double lo = INFINITY, hi = -INFINITY;
        int n = 0;
        for (int r = 0; r < c->runs; r++) {
            const CellRun *run = &c->run_list[r];
            if (strcmp(run->status, "complete") || !isfinite(run->value)) continue;
            lo = fmin(lo, run->value);
            hi = fmax(hi, run->value);
            n++;
        }
        if (n >= 2 && !(hi - lo <= spread)) spread = hi - lo;
    }
    return spread;
}

/* The way a cell ended as a whole: 0 with a result, 1 collapsed, 2 diverged, 3 neither yet. */
static int outcome(const Cell *c)
{
    if (c->complete && c->collapsed == c->complete) return 1;
    if (c->complete) return 0;
    return c->diverged ? 2 : 3;
}

/* True when o equals c on every axis of the grid but `axis` (derived and zipped values follow
 * the axes, so they are not compared). */
static bool differs_only_in(const Experiment *exp, const Cell *c, const Cell *o, const char *axis)
{
    for (const cJSON *it = c->cell->child; it; it = it->next) {
        if (!strcmp(it->string, axis)) continue;
        if (!cells_is_group_axis(exp, it->string) && !cells_is_tuned(exp, it->string)) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->cell, it->string);
        if (!cJSON_IsString(v) || !cJSON_IsString(it) || !cells_same_value(v->valuestring, it->valuestring))
            return false;
    }
    return true;
}

static double axis_value(const Cell *c, const char *axis)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cell, axis);
    return cJSON_IsString(v) ? strtod(v->valuestring, NULL) : NAN;
}

/* The nearest cells below and above c along a numeric axis, all else equal (NULL: none). */
static void neighbours(const CellSet *set, const Cell *c, const char *axis, const Cell **below, const Cell **above)
{
    *below = *above = NULL;
    double x = axis_value(c, axis);
    for (int i = 0; i < set->n_cells && isfinite(x); i++) {
        const Cell *o = &set->cells[i];
        double y = axis_value(o, axis);
        if (o == c || !isfinite(y) || !differs_only_in(set->exp, c, o, axis)) continue;
        if (y < x && (!*below || y > axis_value(*below, axis))) *below = o;
        if (y > x && (!*above || y < axis_value(*above, axis))) *above = o;
    }
}

static bool steep(const Cell *c, const Cell *o, double spread)
{
    if (!o || outcome(o) == 3) return false;
    if (outcome(o) != outcome(c)) return true;
    return outcome(c) == 0 && spread > 0 && fabs(o->mean - c->mean) > spread;
}

bool fragile_cell(const CellSet *set, const Cell *c, double spread)
{
    if (outcome(c) == 3) return false;
    for (int t = 0; t < set->exp->n_tuned; t++) {
        const Cell *below, *above;
        neighbours(set, c, set->exp->tuned[t], &below, &above);
        if (steep(c, below, spread) || steep(c, above, spread)) return true;
    }
    return false;
}
