/* `bigbatch plot`: the metric over two tuned axes (plots/heatmap.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct {
    const char *ax[2];
    StrList xs, ys, panels;
    Slot *slots;
    int n;
    double lo, hi; /* the colour range */
} Heatmap;

/* The slot of a cell (its panel and place on the axes), made when new; NULL past the panels. */
static Slot *cell_slot(const Experiment *exp, const Cell *c, Heatmap *h)
{
    char key[256];
    panel_key(exp, c->cell, h->ax, key, sizeof key);
    int pi = strlist_find(&h->panels, key);
    if (pi < 0) {
        if (h->panels.n == MAX_PANELS) return NULL;
        pi = strlist_add(&h->panels, key);
    }
    const char *vx = cells_value_in(exp, c->cell, h->ax[0]), *vy = cells_value_in(exp, c->cell, h->ax[1]);
    int xi = strlist_find(&h->xs, vx ? vx : "-"), yi = strlist_find(&h->ys, vy ? vy : "-");
    for (int j = 0; j < h->n; j++)
        if (h->slots[j].panel == pi && h->slots[j].xi == xi && h->slots[j].yi == yi) return &h->slots[j];
    Slot *s = &h->slots[h->n++];
    *s = (Slot){pi, xi, yi, NULL, false, true};
    return s;
}

/* Each cell into its slot; the cells past the panels counted and warned of. */
static void fill_slots(const Plot *p, Heatmap *h)
{
    const CellSet *set = p->set;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        Slot *s = cell_slot(p->exp, c, h);
        if (!s) continue;
        if (plot_trained(c) && (!s->cell || cells_better(set, c->mean, s->cell->mean))) s->cell = c;
        if (c->diverged > 0) s->diverged = true;
    }
    int n_left = 0;
    char key[256];
    for (int i = 0; i < set->n_cells; i++) {
        panel_key(p->exp, set->cells[i].cell, h->ax, key, sizeof key);
        n_left += strlist_find(&h->panels, key) < 0;
    }
    if (n_left) fprintf(p->warn, "bigbatch plot: heatmap: %d cells beyond the first %d panels left out\n", n_left, MAX_PANELS);
}

/* The colour range over the trained slots; false when no slot ended at all. */
static bool colour_range(const Plot *p, Heatmap *h)
{
    double scale = metric_scale(p->exp->metric), lo = INFINITY, hi = -INFINITY;
    bool any = false;
    for (int i = 0; i < h->n; i++) {
        any |= !h->slots[i].cell && h->slots[i].diverged;
        if (!h->slots[i].cell) continue;
        double v = h->slots[i].cell->mean * scale;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        any = true;
    }
    if (!isfinite(lo)) lo = 0, hi = 1;
    if (hi <= lo) {
        double d = fabs(hi) > 0 ? fabs(hi) * 0.05 : 0.5;
        lo -= d;
        hi += d;
    }
    h->lo = lo;
    h->hi = hi;
    return any;
}

static int collect(Plot *p, void *state, Error *err)
{
    (void)err;
    Heatmap *h = state;
    const Experiment *exp = p->exp;
    if (heatmap_axes(exp, p->set, h->ax) < 2) {
        fprintf(p->warn, "bigbatch plot: heatmap skipped: %s has fewer than two axes to cross\n", exp->name);
        return 0;
    }
    axis_values(p->set, h->ax[0], &h->xs);
    axis_values(p->set, h->ax[1], &h->ys);
    h->slots = xcalloc((size_t)p->set->n_cells, sizeof *h->slots, "heatmap cells");
    fill_slots(p, h);
    if (!colour_range(p, h)) {
        fprintf(p->warn, "bigbatch plot: heatmap skipped: no cell of %s has ended yet\n", exp->name);
        return 0;
    }
    return 1;
}

static void write_slot(const Plot *p, const Heatmap *h, const Slot *s, FILE *dat)
{
    double scale = metric_scale(p->exp->metric);
    char label[64];
    const char *status = s->cell ? "ok" : s->diverged ? "diverged" : "missing";
    if (s->cell) snprintf(label, sizeof label, metric_is_acc(p->exp->metric) ? "%.1f" : "%.3g", s->cell->mean * scale);
    else snprintf(label, sizeof label, "%s", s->diverged ? "div" : "-");
    fprintf(dat, "%d %d %.6g ", s->xi, s->yi, s->cell ? s->cell->mean * scale : NAN);
    data_label(dat, label);
    fprintf(dat, " %s %d    # %s=%s %s=%s\n", status, s->cell && s->cell->best, h->ax[0], h->xs.v[s->xi], h->ax[1],
            h->ys.v[s->yi]);
}

static int write_data(Plot *p, void *state, FILE *dat, Error *err)
{
    (void)err;
    const Heatmap *h = state;
    for (int pi = 0; pi < h->panels.n; pi++) {
        fprintf(dat, "%s# panel %d: %s\n", pi ? "\n\n" : "", pi + 1, h->panels.v[pi][0] ? h->panels.v[pi] : "all cells");
        for (int yi = 0; yi < h->ys.n; yi++)
            for (int xi = 0; xi < h->xs.n; xi++)
                for (int i = 0; i < h->n; i++) {
                    const Slot *s = &h->slots[i];
                    if (s->panel == pi && s->xi == xi && s->yi == yi) write_slot(p, h, s, dat);
                }
    }
    return 0;
}

static int grid_cols(const Heatmap *h) { return h->panels.n < 3 ? h->panels.n : (h->panels.n == 4 ? 2 : 3); }
static int grid_rows(const Heatmap *h) { return (h->panels.n + grid_cols(h) - 1) / grid_cols(h); }

static void frame(const Plot *p, const void *state, FigureFrame *f)
{
    const Heatmap *h = state;
    snprintf(f->subtitle, sizeof f->subtitle, "%s over %s and %s; grey: diverged%s", metric_label(p->exp->metric),
             h->ax[0], h->ax[1], p->exp->n_tuned ? "; framed: the best of its group" : "");
    int cols = grid_cols(h), rows = grid_rows(h);
    f->xlabel = key_label(h->ax[0]);
    f->ylabel = key_label(h->ax[1]);
    f->width = cols * 560 > 800 ? cols * 560 : 800;
    f->height = rows * 480 + 80 > 600 ? rows * 480 + 80 : 600;
}

static void write_vars(const Plot *p, const void *state, FILE *vars)
{
    const Heatmap *h = state;
    gp_var(vars, "cblabel", metric_label(p->exp->metric));
    fprintf(vars, "npanels = %d\nrows = %d\ncols = %d\n", h->panels.n, grid_rows(h), grid_cols(h));
    char **pt = xcalloc((size_t)h->panels.n, sizeof *pt, "plot titles");
    for (int i = 0; i < h->panels.n; i++) pt[i] = h->panels.v[i][0] ? h->panels.v[i] : "all cells";
    gp_array(vars, "ptitle", pt, h->panels.n);
    free(pt);
    fprintf(vars, "nx = %d\nny = %d\n", h->xs.n, h->ys.n);
    gp_array(vars, "xlab", h->xs.v, h->xs.n);
    gp_array(vars, "ylab", h->ys.v, h->ys.n);
    fprintf(vars, "cbmin = %.10g\ncbmax = %.10g\nbetter_high = %d\n", h->lo, h->hi, p->set->higher_is_better);
}

static void release(void *state)
{
    Heatmap *h = state;
    strlist_free(&h->xs);
    strlist_free(&h->ys);
    strlist_free(&h->panels);
    free(h->slots);
}

const FigureParts FIG_HEATMAP = {
    .columns = "x index, y index, metric, label, ok|diverged|missing, best of its group (1/0)",
    .state_size = sizeof(Heatmap),
    .collect = collect,
    .write_data = write_data,
    .frame = frame,
    .write_vars = write_vars,
    .release = release,
};
