/* `bigbatch plot`: the metric over two tuned axes (plots/heatmap.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- heatmap ---------------------------------------------------------------------------- */

/* The values of one key over the cells: file order, sorted when all are numbers. */
static void axis_values(const CellSet *set, const char *key, StrList *out)
{
    for (int i = 0; i < set->n_cells; i++) {
        const char *v = cells_value_in(set->exp, set->cells[i].cell, key);
        strlist_add(out, v ? v : "-");
    }
    for (int i = 0; i < out->n; i++)
        if (!plot_is_number(out->v[i], NULL)) return;
    for (int i = 0; i < out->n; i++)
        for (int j = i + 1; j < out->n; j++)
            if (strtod(out->v[j], NULL) < strtod(out->v[i], NULL)) {
                char *t = out->v[i];
                out->v[i] = out->v[j];
                out->v[j] = t;
            }
}

/* The two axes: the first two tuned axes; else batch, else the first other grid key. */
static int heatmap_axes(const Experiment *exp, const CellSet *set, const char *ax[2])
{
    int n = 0;
    for (int t = 0; t < exp->n_tuned && n < 2; t++) ax[n++] = exp->tuned[t];
    const cJSON *first = set->cells[0].cell;
    if (n < 2 && cells_is_group_axis(exp, "batch") && cJSON_GetObjectItemCaseSensitive(first, "batch") &&
        (n == 0 || strcmp(ax[0], "batch")))
        ax[n++] = "batch";
    for (const cJSON *it = first->child; it && n < 2; it = it->next) {
        const ExpKey *k = cells_find_key(exp, it->string);
        if (k && k->role == KEY_GRID && (n == 0 || strcmp(ax[0], it->string))) ax[n++] = it->string;
    }
    return n;
}

/* A heatmap panel: the values of the grid keys other than the two axes. */
static void panel_key(const Experiment *exp, const cJSON *cell, const char *const ax[2], char *buf, size_t len)
{
    buf[0] = 0;
    for (const cJSON *it = cell->child; it; it = it->next) {
        const ExpKey *k = cells_find_key(exp, it->string);
        if (!k || k->role != KEY_GRID || !cJSON_IsString(it) || !strcmp(it->string, ax[0]) || !strcmp(it->string, ax[1]))
            continue;
        plot_append(buf, len, "%s%s=%s", buf[0] ? " " : "", it->string, it->valuestring);
    }
}

typedef struct {
    int panel, xi, yi;
    const Cell *cell;   /* the best trained cell of the slot, or NULL */
    bool diverged, any;
} Slot;

int fig_heatmap(Plot *p, Error *err)
{
    const char *kind = "heatmap";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    const char *ax[2];
    if (heatmap_axes(exp, set, ax) < 2) {
        fprintf(p->warn, "bigbatch plot: heatmap skipped: %s has fewer than two axes to cross\n", exp->name);
        return 0;
    }
    StrList xs = {0}, ys = {0}, panels = {0};
    axis_values(set, ax[0], &xs);
    axis_values(set, ax[1], &ys);
    Slot *slots = xcalloc((size_t)set->n_cells, sizeof *slots, "heatmap cells");
    int n = 0, rc = 0;
    char key[256], dat_path[1200], vars_path[1200];
    FILE *dat = NULL, *vars = NULL;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        panel_key(exp, c->cell, ax, key, sizeof key);
        int pi = strlist_find(&panels, key);
        if (pi < 0) {
            if (panels.n == MAX_PANELS) continue;
            pi = strlist_add(&panels, key);
        }
        const char *vx = cells_value_in(exp, c->cell, ax[0]), *vy = cells_value_in(exp, c->cell, ax[1]);
        int xi = strlist_find(&xs, vx ? vx : "-"), yi = strlist_find(&ys, vy ? vy : "-");
        Slot *s = NULL;
        for (int j = 0; j < n && !s; j++)
            if (slots[j].panel == pi && slots[j].xi == xi && slots[j].yi == yi) s = &slots[j];
        if (!s) {
            s = &slots[n++];
            *s = (Slot){pi, xi, yi, NULL, false, true};
        }
        if (plot_trained(c) && (!s->cell || cells_better(set, c->mean, s->cell->mean))) s->cell = c;
        if (c->diverged > 0) s->diverged = true;
    }
    int n_left = 0;
    for (int i = 0; i < set->n_cells; i++) {
        panel_key(exp, set->cells[i].cell, ax, key, sizeof key);
        n_left += strlist_find(&panels, key) < 0;
    }
    if (n_left) fprintf(p->warn, "bigbatch plot: heatmap: %d cells beyond the first %d panels left out\n", n_left, MAX_PANELS);
    double scale = metric_scale(exp->metric), lo = INFINITY, hi = -INFINITY;
    int n_ok = 0;
    for (int i = 0; i < n; i++) {
        if (!slots[i].cell) continue;
        double v = slots[i].cell->mean * scale;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        n_ok++;
    }
    bool any_div = false;
    for (int i = 0; i < n; i++) any_div |= !slots[i].cell && slots[i].diverged;
    if (n_ok == 0 && !any_div) {
        fprintf(p->warn, "bigbatch plot: heatmap skipped: no cell of %s has ended yet\n", exp->name);
        goto out;
    }
    if (!isfinite(lo)) lo = 0, hi = 1;
    if (hi <= lo) {
        double d = fabs(hi) > 0 ? fabs(hi) * 0.05 : 0.5;
        lo -= d;
        hi += d;
    }
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "x index, y index, metric, label, ok|diverged|missing, best of its group (1/0)");
    for (int pi = 0; pi < panels.n; pi++) {
        fprintf(dat, "%s# panel %d: %s\n", pi ? "\n\n" : "", pi + 1, panels.v[pi][0] ? panels.v[pi] : "all cells");
        for (int yi = 0; yi < ys.n; yi++)
            for (int xi = 0; xi < xs.n; xi++)
                for (int i = 0; i < n; i++) {
                    const Slot *s = &slots[i];
                    if (s->panel != pi || s->xi != xi || s->yi != yi) continue;
                    char label[64];
                    const char *status = s->cell ? "ok" : s->diverged ? "diverged" : "missing";
                    if (s->cell) snprintf(label, sizeof label, metric_is_acc(exp->metric) ? "%.1f" : "%.3g", s->cell->mean * scale);
                    else snprintf(label, sizeof label, "%s", s->diverged ? "div" : "-");
                    fprintf(dat, "%d %d %.6g ", xi, yi, s->cell ? s->cell->mean * scale : NAN);
                    data_label(dat, label);
                    fprintf(dat, " %s %d    # %s=%s %s=%s\n", status, s->cell && s->cell->best, ax[0], xs.v[xi], ax[1], ys.v[yi]);
                }
    }
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) goto fail;
    char sub[512];
    snprintf(sub, sizeof sub, "%s over %s and %s; grey: diverged%s", metric_label(exp->metric), ax[0], ax[1],
             exp->n_tuned ? "; framed: the best of its group" : "");
    int cols = panels.n < 3 ? panels.n : (panels.n == 4 ? 2 : 3), rows = (panels.n + cols - 1) / cols;
    int width = cols * 560 > 800 ? cols * 560 : 800, height = rows * 480 + 80 > 600 ? rows * 480 + 80 : 600;
    write_common_vars(p, vars, kind, sub, key_label(ax[0]), key_label(ax[1]), width, height);
    gp_var(vars, "cblabel", metric_label(exp->metric));
    fprintf(vars, "npanels = %d\nrows = %d\ncols = %d\n", panels.n, rows, cols);
    char **pt = xcalloc((size_t)panels.n, sizeof *pt, "plot titles");
    for (int i = 0; i < panels.n; i++) pt[i] = panels.v[i][0] ? panels.v[i] : "all cells";
    gp_array(vars, "ptitle", pt, panels.n);
    free(pt);
    fprintf(vars, "nx = %d\nny = %d\n", xs.n, ys.n);
    gp_array(vars, "xlab", xs.v, xs.n);
    gp_array(vars, "ylab", ys.v, ys.n);
    fprintf(vars, "cbmin = %.10g\ncbmax = %.10g\nbetter_high = %d\n", lo, hi, p->set->higher_is_better);
    rc = plot_finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    strlist_free(&xs);
    strlist_free(&ys);
    strlist_free(&panels);
    free(slots);
    return rc;
}
