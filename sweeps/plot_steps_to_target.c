/* `bigbatch plot`: steps to reach the target against the batch size (plots/steps-to-target.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "critical_batch.h"
#include "steps_target.h"

/* S = S_min (1 + B_crit / B) fitted to one series' points (sorted by series, then batch). */
static CriticalFit series_fit(const Point *pts, int n, int series)
{
    double *b = xcalloc((size_t)n, sizeof *b, "fit points"), *st = xcalloc((size_t)n, sizeof *st, "fit points");
    int k = 0;
    for (int i = 0; i < n; i++)
        if (pts[i].series == series) b[k] = pts[i].batch, st[k++] = pts[i].value;
    CriticalFit f = critical_batch_fit(b, st, k);
    free(b);
    free(st);
    return f;
}

static void series_title(const char *name, const CriticalFit *f, char *out, size_t len)
{
    const char *shown = name[0] ? name : "ours";
    if (f->ok) snprintf(out, len, "%s (fit: B_crit %.4g, S_min %.4g)", shown, f->b_crit, f->s_min);
    else snprintf(out, len, "%s", shown);
}

typedef struct {
    StrList series, missed; /* missed: the groups where no cell reached the target */
    Point *pts;
    int n, n_missed_cells;
    char target_text[64];
    char note[NOTE_CHARS + 64], all_missed[4096];
} Steps;

/* The point of a cell's series and batch, made (diverged: no steps yet) when new. */
static Point *batch_point(Steps *st, int s, double b)
{
    for (int k = 0; k < st->n; k++)
        if (st->pts[k].series == s && st->pts[k].batch == b) return &st->pts[k];
    Point *q = &st->pts[st->n++];
    *q = (Point){.series = s, .batch = b, .value = NAN, .diverged = true};
    return q;
}

/* One cell's steps into its point: the fewest over the tuned axes. */
static int cell_steps(Plot *p, const Cell *c, Steps *st, Error *err)
{
    const Experiment *exp = p->exp;
    double b;
    char key[256];
    if (!plot_is_number(cells_value_in(exp, c->cell, "batch"), &b) || b <= 0) return 0;
    cell_keys(exp, c->cell, true, false, "batch", key, sizeof key);
    const char *id = first_complete(c);
    long step = 0;
    int epoch = 0, found = 1;
    if (id && (found = steps_target_run(&p->d, id, &step, &epoch, err)) < 0) return -1;
    if (!id && c->diverged == 0) return 0; /* not run yet */
    Point *q = batch_point(st, strlist_add(&st->series, key), b);
    if (found != 0) {
        st->n_missed_cells++;
        return 0;
    }
    if (q->diverged || step < q->value) {
        q->value = (double)step;
        q->diverged = false;
        q->extra = epoch;
        cell_keys(exp, c->cell, false, true, NULL, q->note, sizeof q->note);
    }
    return 0;
}

/* Groups where no cell reached the target: left out of the points, named in the note. */
static void drop_missed(Steps *st)
{
    int k = 0;
    for (int i = 0; i < st->n; i++) {
        if (!st->pts[i].diverged) {
            st->pts[k++] = st->pts[i];
            continue;
        }
        const char *name = st->series.v[st->pts[i].series];
        char g[300];
        snprintf(g, sizeof g, "%s%sbatch=%.10g", name, name[0] ? " " : "", st->pts[i].batch);
        strlist_add(&st->missed, g);
    }
    st->n = k;
}

static void note_missed(const Plot *p, Steps *st)
{
    for (int i = 0; i < st->missed.n; i++)
        plot_append(st->all_missed, sizeof st->all_missed, "%s%s", i ? ", " : "", st->missed.v[i]);
    if (!st->missed.n) return;
    snprintf(st->note, sizeof st->note, "never reached %s: %.*s%s", st->target_text, NOTE_CHARS - 20, st->all_missed,
             strlen(st->all_missed) > NOTE_CHARS - 20 ? "..." : "");
    fprintf(p->warn, "bigbatch plot: steps-to-target: %s never reached %s %s (%d of %d cells did not)\n",
            st->all_missed, p->exp->metric, st->target_text, st->n_missed_cells, p->set->n_cells);
}

static int collect(Plot *p, void *state, Error *err)
{
    Steps *st = state;
    const Experiment *exp = p->exp;
    if (isnan(exp->target)) {
        fprintf(p->warn, "bigbatch plot: steps-to-target skipped: %s sets no target ([experiment] target = X)\n",
                exp->name);
        return 0;
    }
    if (!batch_axis_ok(p, "steps-to-target")) return 0;
    st->pts = xcalloc((size_t)p->set->n_cells, sizeof *st->pts, "plot points");
    for (int i = 0; i < p->set->n_cells; i++)
        if (cell_steps(p, &p->set->cells[i], st, err)) return -1;
    drop_missed(st);
    snprintf(st->target_text, sizeof st->target_text, metric_is_acc(exp->metric) ? "%.4g%%" : "%.4g",
             exp->target * metric_scale(exp->metric));
    note_missed(p, st);
    if (st->n == 0) {
        fprintf(p->warn, "bigbatch plot: steps-to-target skipped: no cell of %s reached %s %s\n", exp->name, exp->metric,
                st->target_text);
        return 0;
    }
    qsort(st->pts, (size_t)st->n, sizeof *st->pts, cmp_point);
    return 1;
}

/* One series' block: each point with perfect scaling from its first and the fit. */
static void write_series(const Steps *st, int s, const CriticalFit *fit, int block, FILE *dat)
{
    const Point *first = NULL;
    for (int i = 0; i < st->n; i++) {
        const Point *q = &st->pts[i];
        if (q->series != s) continue;
        if (!first) {
            first = q;
            fprintf(dat, "%s# series %d: %s\n", block ? "\n\n" : "", block + 1, st->series.v[s][0] ? st->series.v[s] : "ours");
        }
        fprintf(dat, "%.10g %.10g %.6g %d ", q->batch, q->value, first->value * first->batch / q->batch, q->extra);
        if (fit->ok) fprintf(dat, "%.6g ", critical_batch_steps(fit, q->batch));
        else fprintf(dat, "NaN ");
        data_label(dat, q->note[0] ? q->note : "-");
        fputc('\n', dat);
    }
}

static bool has_points(const Steps *st, int s)
{
    for (int i = 0; i < st->n; i++)
        if (st->pts[i].series == s) return true;
    return false;
}

static int write_data(Plot *p, void *state, FILE *dat, Error *err)
{
    (void)p, (void)err;
    const Steps *st = state;
    if (st->missed.n) fprintf(dat, "# never reached the target (left out): %s\n", st->all_missed);
    for (int s = 0, block = 0; s < st->series.n; s++) {
        if (!has_points(st, s)) continue;
        CriticalFit fit = series_fit(st->pts, st->n, s);
        write_series(st, s, &fit, block++, dat);
    }
    return 0;
}

static void frame(const Plot *p, const void *state, FigureFrame *f)
{
    const Steps *st = state;
    char tl[256];
    snprintf(f->subtitle, sizeof f->subtitle, "steps until %s reaches %s (the first evaluation that does)%s%s",
             p->exp->metric, st->target_text, p->exp->n_tuned ? "; the fewest over " : "",
             p->exp->n_tuned ? tuned_list(p->exp, tl, sizeof tl) : "");
    f->xlabel = key_label("batch");
    f->ylabel = "training steps to the target (log scale)";
    f->width = 960;
    f->height = 720;
}

static void write_vars(const Plot *p, const void *state, FILE *vars)
{
    (void)p;
    const Steps *st = state;
    StrList shown = {0}; /* the legend: one title per series drawn (with its fit) */
    for (int s = 0; s < st->series.n; s++) {
        if (!has_points(st, s)) continue;
        CriticalFit fit = series_fit(st->pts, st->n, s);
        char title[400];
        series_title(st->series.v[s], &fit, title, sizeof title);
        strlist_add(&shown, title);
    }
    fprintf(vars, "nseries = %d\n", shown.n);
    gp_array(vars, "stitle", shown.v, shown.n);
    strlist_free(&shown);
    write_batch_tics(vars, "", st->pts, st->n, NULL, 0);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < st->n; i++) {
        lo = fmin(lo, st->pts[i].value);
        hi = fmax(hi, st->pts[i].value);
    }
    fprintf(vars, "ylo = %.10g\nyhi = %.10g\n", fmax(lo, 1) / 2, fmax(hi, 1) * 2); /* the reference stays inside */
    gp_var(vars, "note", st->note);
}

static void release(void *state)
{
    Steps *st = state;
    strlist_free(&st->series);
    strlist_free(&st->missed);
    free(st->pts);
}

const FigureParts FIG_STEPS = {
    .columns = "batch, steps to the target, perfect scaling from the smallest batch, epoch, the fit S_min (1 + B_crit / B) "
               "(McCandlish et al.; NaN: the curve does not bend), the cell's tuned values",
    .state_size = sizeof(Steps),
    .collect = collect,
    .write_data = write_data,
    .frame = frame,
    .write_vars = write_vars,
    .release = release,
};
