/* `bigbatch plot`: accuracy against the batch size (plots/accuracy-vs-batch.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- accuracy-vs-batch ------------------------------------------------------------------ */

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

int fig_accuracy(Plot *p, Error *err)
{
    const char *kind = "accuracy-vs-batch";
    if (!batch_axis_ok(p, kind)) return 0;
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    double scale = metric_scale(exp->metric);
    int n_groups;
    Group *groups = collect_groups(set, &n_groups);
    StrList series = {0}, pseries = {0};
    Point *pts = xcalloc((size_t)n_groups, sizeof *pts, "plot points");
    Point *paper = xcalloc((size_t)(exp->n_paper_rows > 0 ? exp->n_paper_rows : 1), sizeof *paper, "plot points");
    int n = 0, n_paper = 0, n_div = 0, n_collapsed = 0, rc = 0;
    FILE *dat = NULL, *vars = NULL;
    char dat_path[1200], vars_path[1200], key[256], buf[512];
    for (int g = 0; g < n_groups; g++) {
        const Group *gr = &groups[g];
        if (!gr->best && !group_diverged(gr)) continue; /* nothing ended yet */
        const Cell *c = gr->best ? gr->best : &set->cells[gr->first];
        double b;
        if (!plot_is_number(cells_value_in(exp, c->cell, "batch"), &b) || b <= 0) continue;
        cell_keys(exp, c->cell, true, false, "batch", key, sizeof key);
        Point *pt = &pts[n++];
        pt->series = strlist_add(&series, key);
        pt->batch = b;
        pt->diverged = !gr->best;
        pt->value = gr->best ? gr->best->mean * scale : NAN;
        pt->std = gr->best && isfinite(gr->best->std) ? gr->best->std * scale : 0;
        if (gr->best) cell_keys(exp, c->cell, false, true, NULL, pt->note, sizeof pt->note);
        if (!pt->note[0]) snprintf(pt->note, sizeof pt->note, "%s", pt->diverged ? "diverged" : "-");
        pt->collapsed = gr->best && gr->best->collapsed > 0;
        n_div += pt->diverged;
        n_collapsed += pt->collapsed;
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: %s skipped: no cell of %s has ended yet\n", kind, exp->name);
        goto out;
    }
    qsort(pts, (size_t)n, sizeof *pts, cmp_point);
    /* The paper's rows with a batch column, grouped by their values of our series axes. At a
     * scale its numbers do not apply to ([paper] scales: another network and dataset) they
     * are drawn beside ours, in a panel with its own axes, not on ours. */
    const bool beside = !experiment_paper_applies(exp);
    int bcol = -1;
    for (int c = 0; c + 1 < exp->n_paper_cols; c++)
        if (!strcmp(exp->paper_cols[c], "batch")) bcol = c;
    for (int r = 0; bcol >= 0 && r < exp->n_paper_rows; r++) {
        const char *const *row = (const char *const *)exp->paper_rows[r];
        const char *val = row[exp->n_paper_cols - 1];
        double b, x = NAN;
        bool div = !strcmp(val, "diverged");
        if (!plot_is_number(row[bcol], &b) || b <= 0 || (!div && !plot_is_number(val, &x))) continue;
        bool match = true;
        key[0] = 0;
        for (int c = 0; c + 1 < exp->n_paper_cols && match; c++) {
            const char *col = exp->paper_cols[c];
            const ExpKey *k = cells_find_key(exp, col);
            if (c == bcol || !k || follows_axis(exp, col, "batch")) continue;
            if (k->role == KEY_FIXED) match = cells_same_value(k->values[0], row[c]);
            else if (is_group_grid_key(exp, col)) plot_append(key, sizeof key, "%s%s=%s", key[0] ? " " : "", col, row[c]);
        }
        if (!match) continue;
        int s = strlist_add(&pseries, key);
        Point *q = NULL; /* one point per series and batch: the paper's best */
        for (int i = 0; i < n_paper && !q; i++)
            if (paper[i].series == s && paper[i].batch == b) q = &paper[i];
        if (!q) {
            q = &paper[n_paper++];
            *q = (Point){.series = s, .batch = b, .value = NAN, .diverged = true};
        }
        if (!div && scale == 100 && x > 1.5) x /= 100; /* an accuracy filed in percent */
        if (!div && (q->diverged || cells_better(set, x * scale, q->value))) {
            q->value = x * scale;
            q->diverged = false;
        }
    }
    qsort(paper, (size_t)n_paper, sizeof *paper, cmp_point);
    const int n_shared = beside ? 0 : n_paper; /* paper points on our axes */
    YRange ours_y = y_range(exp, pts, n, paper, n_shared), paper_y = y_range(exp, paper, n_paper, NULL, 0);

    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind,
                "batch, metric (mean over repeats), std, ok|collapsed (some seed at chance)|diverged, the best cell's "
                "tuned values");
    for (int s = 0; s < series.n; s++) {
        fprintf(dat, "%s# series %d: %s\n", s ? "\n\n" : "", s + 1, series.v[s][0] ? series.v[s] : "ours");
        for (int i = 0; i < n; i++) {
            if (pts[i].series != s) continue;
            fprintf(dat, "%.10g %.6g %.6g %s ", pts[i].batch, pts[i].value, pts[i].std,
                    pts[i].diverged ? "diverged" : pts[i].collapsed ? "collapsed" : "ok");
            data_label(dat, pts[i].note);
            fputc('\n', dat);
        }
    }
    char paper_path[1200];
    FILE *pf = open_out(p, kind, "-paper.dat", paper_path, sizeof paper_path, err);
    if (!pf) goto fail;
    data_header(p, pf, "accuracy-vs-batch (the paper's rows)", "batch, metric, ok|diverged");
    for (int s = 0; s < pseries.n; s++) {
        fprintf(pf, "%s# paper series %d: %s\n", s ? "\n\n" : "", s + 1, pseries.v[s]);
        for (int i = 0; i < n_paper; i++)
            if (paper[i].series == s)
                fprintf(pf, "%.10g %.6g %s\n", paper[i].batch, paper[i].value, paper[i].diverged ? "diverged" : "ok");
    }
    if (close_out(pf, paper_path, err)) goto fail;
    fprintf(p->out, "%s\n", paper_path);

    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) goto fail;
    char sub[512], tl[256];
    if (exp->n_tuned) snprintf(sub, sizeof sub, "%s against the batch size; each point the best over %s", metric_label(exp->metric),
                               tuned_list(exp, tl, sizeof tl));
    else snprintf(sub, sizeof sub, "%s against the batch size", metric_label(exp->metric));
    const bool two_panels = beside && n_paper > 0;
    write_common_vars(p, vars, kind, sub, key_label("batch"), metric_label(exp->metric), two_panels ? 1500 : 960, 680);
    fprintf(vars, "beside = %d\n", two_panels);
    snprintf(buf, sizeof buf, "ours (%s scale)", exp->scale);
    gp_var(vars, "ourstitle", buf);
    if (exp->paper_what) snprintf(buf, sizeof buf, "the paper: %s", exp->paper_what);
    else snprintf(buf, sizeof buf, "the paper's numbers (its own network and data)");
    gp_var(vars, "papertitle", buf);
    char **titles = xcalloc((size_t)series.n, sizeof *titles, "plot titles");
    for (int s = 0; s < series.n; s++) titles[s] = series.v[s][0] ? series.v[s] : "ours";
    fprintf(vars, "nseries = %d\n", series.n);
    gp_array(vars, "stitle", titles, series.n);
    free(titles);
    char **ptitles = xcalloc((size_t)(pseries.n > 0 ? pseries.n : 1), sizeof *ptitles, "plot titles");
    double *pcolor = xcalloc((size_t)(pseries.n > 0 ? pseries.n : 1), sizeof *pcolor, "plot colors");
    /* A paper series takes the colour of ours with the same values; unmatched ones (in their
     * own panel: another network's name) take colours in order, so the i-th series of each
     * panel (alexnet-cifar, alexnet) share one. */
    for (int s = 0, unmatched = 0; s < pseries.n; s++) {
        snprintf(buf, sizeof buf, pseries.v[s][0] ? "paper (%s)" : "paper%s", pseries.v[s]);
        ptitles[s] = xstrdup(buf);
        int ours = strlist_find(&series, pseries.v[s]);
        pcolor[s] = ours >= 0 ? ours + 1 : two_panels ? ++unmatched : series.n + ++unmatched;
    }
    fprintf(vars, "npaper = %d\n", pseries.n);
    gp_array(vars, "ptitle", ptitles, pseries.n);
    gp_num_array(vars, "pcolor", pcolor, pseries.n);
    for (int s = 0; s < pseries.n; s++) free(ptitles[s]);
    free(ptitles);
    free(pcolor);
    write_batch_tics(vars, "", pts, n, paper, n_shared);
    write_batch_tics(vars, "p", paper, n_paper, NULL, 0);
    write_y_range(vars, "", &ours_y);
    write_y_range(vars, "p", &paper_y);
    fprintf(vars, "ndiverged = %d\nncollapsed = %d\n", n_div, n_collapsed);
    rc = plot_finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    strlist_free(&series);
    strlist_free(&pseries);
    free(pts);
    free(paper);
    free(groups);
    return rc;
}
