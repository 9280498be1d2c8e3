/* `bigbatch plot`: accuracy against the batch size (plots/accuracy-vs-batch.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A panel's value axis: the points' range with a margin, and a band below it for the
 * diverged ones. */
typedef struct {
    double lo, hi, span;
    bool any_div;
} YRange;

static YRange y_range(const Experiment *exp, const Point *a, int na, const Point *b, int nb)
{
    YRange y = {INFINITY, -INFINITY, 0, false};
    for (int i = 0; i < na + nb; i++) {
        const Point *q = i < na ? &a[i] : &b[i - na];
        y.any_div |= q->diverged;
        if (q->diverged) continue;
        if (q->value - q->std < y.lo) y.lo = q->value - q->std;
        if (q->value + q->std > y.hi) y.hi = q->value + q->std;
    }
    if (!isfinite(y.lo)) {
        y.lo = 0;
        y.hi = metric_is_acc(exp->metric) ? 100 : 1;
    }
    y.span = y.hi - y.lo > 0 ? y.hi - y.lo : (fabs(y.hi) > 0 ? fabs(y.hi) * 0.1 : 1);
    return y;
}

/* Diverged points sit in a band below the lowest value. */
static void write_y_range(FILE *v, const char *pre, const YRange *y)
{
    fprintf(v, "%sylo = %.10g\n%syhi = %.10g\n%sydiv = %.10g\n%sydivtop = %.10g\n%sdivband = %d\n", pre,
            y->lo - (y->any_div ? 0.3 : 0.1) * y->span, pre, y->hi + 0.1 * y->span, pre, y->lo - 0.2 * y->span, pre,
            y->lo - 0.1 * y->span, pre, y->any_div);
}

/* ---- the points ------------------------------------------------------------------------- */

typedef struct {
    StrList series, pseries;
    Point *pts, *paper;  /* ours per group; the paper's per series and batch */
    int n, n_paper, n_div, n_collapsed;
    bool beside;         /* the paper's numbers in a panel of their own */
    YRange ours_y, paper_y;
} Accuracy;

/* A group's point: its best cell, or diverged; false when nothing ended or no batch. */
static bool group_point(const Plot *p, const Group *gr, Accuracy *a)
{
    const Experiment *exp = p->exp;
    if (!gr->best && !group_diverged(gr)) return false; /* nothing ended yet */
    const Cell *c = gr->best ? gr->best : &p->set->cells[gr->first];
    double b, scale = metric_scale(exp->metric);
    if (!plot_is_number(cells_value_in(exp, c->cell, "batch"), &b) || b <= 0) return false;
    char key[256];
    cell_keys(exp, c->cell, true, false, "batch", key, sizeof key);
    Point *pt = &a->pts[a->n++];
    pt->series = strlist_add(&a->series, key);
    pt->batch = b;
    pt->diverged = !gr->best;
    pt->value = gr->best ? gr->best->mean * scale : NAN;
    pt->std = gr->best && isfinite(gr->best->std) ? gr->best->std * scale : 0;
    if (gr->best) cell_keys(exp, c->cell, false, true, NULL, pt->note, sizeof pt->note);
    if (!pt->note[0]) snprintf(pt->note, sizeof pt->note, "%s", pt->diverged ? "diverged" : "-");
    pt->collapsed = gr->best && gr->best->collapsed > 0;
    a->n_div += pt->diverged;
    a->n_collapsed += pt->collapsed;
    return true;
}

/* A paper row's series key (our series axes), or false when a fixed key of ours differs. */
static bool paper_row_key(const Experiment *exp, const char *const *row, int bcol, char *key, size_t len)
{
    bool match = true;
    key[0] = 0;
    for (int c = 0; c + 1 < exp->n_paper_cols && match; c++) {
        const char *col = exp->paper_cols[c];
        const ExpKey *k = cells_find_key(exp, col);
        if (c == bcol || !k || follows_axis(exp, col, "batch")) continue;
        if (k->role == KEY_FIXED) match = cells_same_value(k->values[0], row[c]);
        else if (is_group_grid_key(exp, col)) plot_append(key, len, "%s%s=%s", key[0] ? " " : "", col, row[c]);
    }
    return match;
}

/* One paper row into its series' point at its batch: the paper's best there. */
static void paper_row(const Plot *p, const char *const *row, int bcol, Accuracy *a)
{
    const Experiment *exp = p->exp;
    const char *val = row[exp->n_paper_cols - 1];
    double b, x = NAN, scale = metric_scale(exp->metric);
    bool div = !strcmp(val, "diverged");
    char key[256];
    if (!plot_is_number(row[bcol], &b) || b <= 0 || (!div && !plot_is_number(val, &x))) return;
    if (!paper_row_key(exp, row, bcol, key, sizeof key)) return;
    int s = strlist_add(&a->pseries, key);
    Point *q = NULL; /* one point per series and batch: the paper's best */
    for (int i = 0; i < a->n_paper && !q; i++)
        if (a->paper[i].series == s && a->paper[i].batch == b) q = &a->paper[i];
    if (!q) {
        q = &a->paper[a->n_paper++];
        *q = (Point){.series = s, .batch = b, .value = NAN, .diverged = true};
    }
    if (!div && scale == 100 && x > 1.5) x /= 100; /* an accuracy filed in percent */
    if (!div && (q->diverged || cells_better(p->set, x * scale, q->value))) {
        q->value = x * scale;
        q->diverged = false;
    }
}

/* The paper's rows with a batch column, grouped by their values of our series axes. At a
 * scale its numbers do not apply to ([paper] scales: another network and dataset) they are
 * drawn beside ours, in a panel with its own axes, not on ours. */
static void paper_points(const Plot *p, Accuracy *a)
{
    const Experiment *exp = p->exp;
    a->beside = !experiment_paper_applies(exp);
    int bcol = -1;
    for (int c = 0; c + 1 < exp->n_paper_cols; c++)
        if (!strcmp(exp->paper_cols[c], "batch")) bcol = c;
    for (int r = 0; bcol >= 0 && r < exp->n_paper_rows; r++) paper_row(p, (const char *const *)exp->paper_rows[r], bcol, a);
    qsort(a->paper, (size_t)a->n_paper, sizeof *a->paper, cmp_point);
}

static int collect(Plot *p, void *state, Error *err)
{
    (void)err;
    Accuracy *a = state;
    const Experiment *exp = p->exp;
    const char *kind = "accuracy-vs-batch";
    if (!batch_axis_ok(p, kind)) return 0;
    int n_groups;
    Group *groups = collect_groups(p->set, &n_groups);
    a->pts = xcalloc((size_t)n_groups, sizeof *a->pts, "plot points");
    a->paper = xcalloc((size_t)(exp->n_paper_rows > 0 ? exp->n_paper_rows : 1), sizeof *a->paper, "plot points");
    for (int g = 0; g < n_groups; g++) group_point(p, &groups[g], a);
    free(groups);
    if (a->n == 0) {
        fprintf(p->warn, "bigbatch plot: %s skipped: no cell of %s has ended yet\n", kind, exp->name);
        return 0;
    }
    qsort(a->pts, (size_t)a->n, sizeof *a->pts, cmp_point);
    paper_points(p, a);
    const int n_shared = a->beside ? 0 : a->n_paper; /* paper points on our axes */
    a->ours_y = y_range(exp, a->pts, a->n, a->paper, n_shared);
    a->paper_y = y_range(exp, a->paper, a->n_paper, NULL, 0);
    return 1;
}

/* ---- the files -------------------------------------------------------------------------- */

static int write_data(Plot *p, void *state, FILE *dat, Error *err)
{
    (void)p, (void)err;
    const Accuracy *a = state;
    for (int s = 0; s < a->series.n; s++) {
        fprintf(dat, "%s# series %d: %s\n", s ? "\n\n" : "", s + 1, a->series.v[s][0] ? a->series.v[s] : "ours");
        for (int i = 0; i < a->n; i++) {
            const Point *q = &a->pts[i];
            if (q->series != s) continue;
            fprintf(dat, "%.10g %.6g %.6g %s ", q->batch, q->value, q->std,
                    q->diverged ? "diverged" : q->collapsed ? "collapsed" : "ok");
            data_label(dat, q->note);
            fputc('\n', dat);
        }
    }
    return 0;
}

static void write_paper(const Plot *p, const void *state, FILE *f)
{
    (void)p;
    const Accuracy *a = state;
    for (int s = 0; s < a->pseries.n; s++) {
        fprintf(f, "%s# paper series %d: %s\n", s ? "\n\n" : "", s + 1, a->pseries.v[s]);
        for (int i = 0; i < a->n_paper; i++)
            if (a->paper[i].series == s)
                fprintf(f, "%.10g %.6g %s\n", a->paper[i].batch, a->paper[i].value, a->paper[i].diverged ? "diverged" : "ok");
    }
}

static bool two_panels(const Accuracy *a) { return a->beside && a->n_paper > 0; }

static void frame(const Plot *p, const void *state, FigureFrame *f)
{
    const Experiment *exp = p->exp;
    char tl[256];
    if (exp->n_tuned)
        snprintf(f->subtitle, sizeof f->subtitle, "%s against the batch size; each point the best over %s",
                 metric_label(exp->metric), tuned_list(exp, tl, sizeof tl));
    else snprintf(f->subtitle, sizeof f->subtitle, "%s against the batch size", metric_label(exp->metric));
    f->xlabel = key_label("batch");
    f->ylabel = metric_label(exp->metric);
    f->width = two_panels(state) ? 1500 : 960;
    f->height = 680;
}

/* Our series' titles, and the panel titles. */
static void write_titles(const Plot *p, const Accuracy *a, FILE *vars)
{
    char buf[512];
    fprintf(vars, "beside = %d\n", two_panels(a));
    snprintf(buf, sizeof buf, "ours (%s scale)", p->exp->scale);
    gp_var(vars, "ourstitle", buf);
    if (p->exp->paper_what) snprintf(buf, sizeof buf, "the paper: %s", p->exp->paper_what);
    else snprintf(buf, sizeof buf, "the paper's numbers (its own network and data)");
    gp_var(vars, "papertitle", buf);
    char **titles = xcalloc((size_t)a->series.n, sizeof *titles, "plot titles");
    for (int s = 0; s < a->series.n; s++) titles[s] = a->series.v[s][0] ? a->series.v[s] : "ours";
    fprintf(vars, "nseries = %d\n", a->series.n);
    gp_array(vars, "stitle", titles, a->series.n);
    free(titles);
}

/* A paper series takes the colour of ours with the same values; unmatched ones (in their own
 * panel: another network's name) take colours in order, so the i-th series of each panel
 * (alexnet-cifar, alexnet) share one. */
static void write_paper_series(const Accuracy *a, FILE *vars)
{
    int np = a->pseries.n;
    char **ptitles = xcalloc((size_t)(np > 0 ? np : 1), sizeof *ptitles, "plot titles");
    double *pcolor = xcalloc((size_t)(np > 0 ? np : 1), sizeof *pcolor, "plot colors");
    for (int s = 0, unmatched = 0; s < np; s++) {
        char buf[512];
        snprintf(buf, sizeof buf, a->pseries.v[s][0] ? "paper (%s)" : "paper%s", a->pseries.v[s]);
        ptitles[s] = xstrdup(buf);
        int ours = strlist_find(&a->series, a->pseries.v[s]);
        pcolor[s] = ours >= 0 ? ours + 1 : two_panels(a) ? ++unmatched : a->series.n + ++unmatched;
    }
    fprintf(vars, "npaper = %d\n", np);
    gp_array(vars, "ptitle", ptitles, np);
    gp_num_array(vars, "pcolor", pcolor, np);
    for (int s = 0; s < np; s++) free(ptitles[s]);
    free(ptitles);
    free(pcolor);
}

static void write_vars(const Plot *p, const void *state, FILE *vars)
{
    const Accuracy *a = state;
    write_titles(p, a, vars);
    write_paper_series(a, vars);
    write_batch_tics(vars, "", a->pts, a->n, a->paper, a->beside ? 0 : a->n_paper);
    write_batch_tics(vars, "p", a->paper, a->n_paper, NULL, 0);
    write_y_range(vars, "", &a->ours_y);
    write_y_range(vars, "p", &a->paper_y);
    fprintf(vars, "ndiverged = %d\nncollapsed = %d\n", a->n_div, a->n_collapsed);
}

static void release(void *state)
{
    Accuracy *a = state;
    strlist_free(&a->series);
    strlist_free(&a->pseries);
    free(a->pts);
    free(a->paper);
}

static const FigureSide PAPER = {"-paper.dat", "accuracy-vs-batch (the paper's rows)", "batch, metric, ok|diverged",
                                 write_paper};

const FigureParts FIG_ACCURACY = {
    .columns = "batch, metric (mean over repeats), std, ok|collapsed (some seed at chance)|diverged, the best cell's "
               "tuned values",
    .state_size = sizeof(Accuracy),
    .collect = collect,
    .write_data = write_data,
    .side = &PAPER,
    .frame = frame,
    .write_vars = write_vars,
    .release = release,
};
