/* `bigbatch plot`: train and test loss per epoch (plots/loss-curves.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The ids of a cell's complete runs as a JSON list (for json_each); the caller frees it. */
static char *complete_ids(const Cell *c)
{
    size_t len = (size_t)c->runs * 20 + 3;
    char *ids = xmalloc(len, "run ids");
    ids[0] = 0;
    plot_append(ids, len, "[");
    for (int r = 0, k = 0; r < c->runs; r++)
        if (c->run_list[r].complete) plot_append(ids, len, "%s\"%s\"", k++ ? "," : "", c->run_list[r].id);
    plot_append(ids, len, "]");
    return ids;
}

/* Per epoch, the mean over the cell's complete runs: writes the block, returns the rows, and
 * the last epoch's gap and epoch in *gap and *last; widens [*lo, *hi] to its losses. */
static int write_loss_block(Plot *p, FILE *dat, const Cell *c, double *gap, int *last, double *lo, double *hi,
                            Error *err)
{
    char *ids = complete_ids(c);
    sqlite3_stmt *st;
    if (store_prepare(&p->d.store, &st,
                      "SELECT epoch, avg(train_loss), avg(test_loss), avg(loss_gap), count(*) FROM epochs"
                      " WHERE run_id IN (SELECT value FROM json_each(?1)) GROUP BY epoch ORDER BY epoch",
                      err)) {
        free(ids);
        return -1;
    }
    sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
    int rc, rows = 0;
    *gap = NAN;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        double v[3];
        for (int k = 0; k < 3; k++) v[k] = sqlite3_column_type(st, k + 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, k + 1);
        *last = sqlite3_column_int(st, 0);
        *gap = v[2];
        for (int k = 0; k < 2; k++)
            if (isfinite(v[k])) {
                if (v[k] < *lo) *lo = v[k];
                if (v[k] > *hi) *hi = v[k];
            }
        fprintf(dat, "%d %.6g %.6g %.6g %d\n", *last, v[0], v[1], v[2], sqlite3_column_int(st, 4));
        rows++;
    }
    sqlite3_finalize(st);
    free(ids);
    if (rc != SQLITE_DONE) {
        error_set(err, "%s: reading epochs: %s", p->d.path, sqlite3_errstr(rc));
        return -1;
    }
    return rows;
}

/* A legend entry: "<keys> (<tuned values>)[ mean]: gap <gap>". */
static void series_title(char *buf, size_t len, const char *keys, const char *tuned, int complete, double gap)
{
    buf[0] = 0;
    plot_append(buf, len, "%s", keys);
    if (tuned[0]) plot_append(buf, len, " (%s)", tuned);
    plot_append(buf, len, "%s: gap %.3g", complete > 1 ? " mean" : "", gap);
}

/* The first group axis of a cell (its JSON keys are in file order), or NULL. */
static const char *first_group_axis(const Experiment *exp, const cJSON *cell)
{
    for (const cJSON *it = cell->child; it; it = it->next)
        if (cJSON_IsString(it) && is_group_grid_key(exp, it->string)) return it->string;
    return NULL;
}

/* A line: a group's best cell. */
typedef struct {
    char key[256], tuned[160], rest[256]; /* its group, tuned values; the group less the panel axis */
    const Cell *best;
    double gap;                           /* at the last epoch (write_data) */
} Curve;

/* With two or more group axes whose first has 2..4 values (loss-gap: opt x batch), one panel
 * per value of the first, colours by the rest, the same in every panel; else one panel. */
typedef struct {
    Curve curves[MAX_SERIES];
    int n, max_epoch;
    double panel_of[MAX_SERIES], color_of[MAX_SERIES], lo, hi; /* lo, hi: every loss drawn */
    StrList panels, colors;
    bool splittable;
    const char *axis; /* the panel axis */
    char diverged[NOTE_CHARS];
} LossCurves;

/* A group with a trained cell as a curve, and where it goes when split. */
static void add_curve(const Experiment *exp, const CellSet *set, const Group *gr, LossCurves *l)
{
    Curve *c = &l->curves[l->n];
    cell_keys(exp, set->cells[gr->first].cell, true, false, NULL, c->key, sizeof c->key);
    cell_keys(exp, gr->best->cell, false, true, NULL, c->tuned, sizeof c->tuned);
    c->best = gr->best;
    const cJSON *cell = set->cells[gr->first].cell;
    if (!l->axis) l->axis = first_group_axis(exp, cell);
    const cJSON *av = l->axis ? cJSON_GetObjectItemCaseSensitive(cell, l->axis) : NULL;
    cell_keys(exp, cell, true, false, l->axis, c->rest, sizeof c->rest);
    if (!cJSON_IsString(av) || !c->rest[0]) l->splittable = false;
    l->panel_of[l->n] = 1 + strlist_add(&l->panels, cJSON_IsString(av) ? av->valuestring : "");
    l->color_of[l->n] = 1 + strlist_add(&l->colors, c->rest);
    l->n++;
}

static int collect(Plot *p, void *state, Error *err)
{
    (void)err;
    LossCurves *l = state;
    const Experiment *exp = p->exp;
    int n_groups, left_out = 0;
    Group *groups = collect_groups(p->set, &n_groups);
    l->lo = INFINITY, l->hi = -INFINITY, l->splittable = true;
    for (int g = 0; g < n_groups; g++) {
        const Group *gr = &groups[g];
        char key[256];
        if (!gr->best) {
            cell_keys(exp, p->set->cells[gr->first].cell, true, false, NULL, key, sizeof key);
            if (group_diverged(gr))
                plot_append(l->diverged, sizeof l->diverged, "%s%s", l->diverged[0] ? ", " : "", key[0] ? key : "all");
        } else if (l->n == MAX_SERIES) left_out++;
        else add_curve(exp, p->set, gr, l);
    }
    free(groups);
    if (l->n == 0) {
        fprintf(p->warn, "bigbatch plot: loss-curves skipped: no cell of %s has completed\n", exp->name);
        return 0;
    }
    if (left_out) fprintf(p->warn, "bigbatch plot: loss-curves: %d groups beyond the first %d left out\n", left_out, MAX_SERIES);
    return 1;
}

static int write_data(Plot *p, void *state, FILE *dat, Error *err)
{
    LossCurves *l = state;
    for (int i = 0; i < l->n; i++) {
        Curve *c = &l->curves[i];
        fprintf(dat, "%s# series %d: %s %s\n", i ? "\n\n" : "", i + 1, c->key, c->tuned);
        int last = 0;
        int rows = write_loss_block(p, dat, c->best, &c->gap, &last, &l->lo, &l->hi, err);
        if (rows < 0) return -1;
        if (rows == 0) fprintf(dat, "NaN NaN NaN NaN 0\n"); /* keeps one block per title */
        if (last > l->max_epoch) l->max_epoch = last;
    }
    return 0;
}

static bool split(const LossCurves *l) { return l->splittable && l->panels.n >= 2 && l->panels.n <= 4; }

static void frame(const Plot *p, const void *state, FigureFrame *f)
{
    const LossCurves *l = state;
    char tl[256];
    snprintf(f->subtitle, sizeof f->subtitle, "loss per epoch, solid: train, dashed: test%s%s; gap: test - train, last epoch",
             p->exp->n_tuned ? "; best over " : "", p->exp->n_tuned ? tuned_list(p->exp, tl, sizeof tl) : "");
    f->xlabel = "epoch";
    f->ylabel = "loss (cross-entropy)";
    f->width = split(l) ? 160 + 560 * l->panels.n : 960;
    f->height = split(l) ? 680 : 720;
}

/* The legend: the whole titles, or without the panel axis when split. */
static void write_titles(const LossCurves *l, FILE *vars)
{
    char **titles = xcalloc(MAX_SERIES, sizeof *titles, "plot titles");
    for (int i = 0; i < l->n; i++) {
        const Curve *c = &l->curves[i];
        char title[400];
        if (split(l)) series_title(title, sizeof title, c->rest, c->tuned, c->best->complete, c->gap);
        else series_title(title, sizeof title, c->key[0] ? c->key : "ours", c->tuned, c->best->complete, c->gap);
        titles[i] = xstrdup(title);
    }
    gp_array(vars, "stitle", titles, l->n);
    for (int i = 0; i < l->n; i++) free(titles[i]);
    free(titles);
}

/* The panels' titles, which panel and colour each line takes, one y range for them all. */
static void write_panels(const LossCurves *l, FILE *vars)
{
    char **ptitles = xcalloc((size_t)l->panels.n, sizeof *ptitles, "panel titles");
    for (int i = 0; i < l->panels.n; i++) {
        char t[300];
        snprintf(t, sizeof t, "%s=%s", l->axis, l->panels.v[i]);
        ptitles[i] = xstrdup(t);
    }
    gp_array(vars, "ptitle", ptitles, l->panels.n);
    for (int i = 0; i < l->panels.n; i++) free(ptitles[i]);
    free(ptitles);
    gp_num_array(vars, "spanel", l->panel_of, l->n);
    gp_num_array(vars, "scolor", l->color_of, l->n);
    /* one y range for every panel, so that their losses compare at a glance */
    double pad = isfinite(l->hi - l->lo) ? 0.04 * (l->hi - l->lo) : 0;
    fprintf(vars, "ymin = %.6g\nymax = %.6g\n", l->lo - pad, l->hi + pad);
}

static void write_vars(const Plot *p, const void *state, FILE *vars)
{
    (void)p;
    const LossCurves *l = state;
    fprintf(vars, "nseries = %d\nmaxepoch = %d\n", l->n, l->max_epoch);
    fprintf(vars, "npanels = %d\nnkeylines = %d\n", split(l) ? l->panels.n : 1, l->colors.n + 2);
    write_titles(l, vars);
    if (split(l)) write_panels(l, vars);
    char note[NOTE_CHARS + 16] = "";
    if (l->diverged[0]) snprintf(note, sizeof note, "diverged: %s", l->diverged);
    gp_var(vars, "note", note);
}

static void release(void *state)
{
    LossCurves *l = state;
    strlist_free(&l->panels);
    strlist_free(&l->colors);
}

const FigureParts FIG_LOSS_CURVES = {
    .columns = "epoch, train loss, test loss, loss gap (test - train), runs averaged",
    .state_size = sizeof(LossCurves),
    .collect = collect,
    .write_data = write_data,
    .frame = frame,
    .write_vars = write_vars,
    .release = release,
};
