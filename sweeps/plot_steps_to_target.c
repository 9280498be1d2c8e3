/* `bigbatch plot`: steps to reach the target against the batch size (plots/steps-to-target.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "critical_batch.h"
#include "steps_target.h"

/* ---- steps-to-target -------------------------------------------------------------------- */

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

int fig_steps(Plot *p, Error *err)
{
    const char *kind = "steps-to-target";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    if (isnan(exp->target)) {
        fprintf(p->warn, "bigbatch plot: steps-to-target skipped: %s sets no target ([experiment] target = X)\n",
                exp->name);
        return 0;
    }
    if (!batch_axis_ok(p, kind)) return 0;
    double scale = metric_scale(exp->metric);
    StrList series = {0}, missed = {0};
    Point *pts = xcalloc((size_t)set->n_cells, sizeof *pts, "plot points");
    int n = 0, rc = 0, n_missed_cells = 0;
    char key[256], dat_path[1200], vars_path[1200];
    FILE *dat = NULL, *vars = NULL;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        double b;
        if (!plot_is_number(cells_value_in(exp, c->cell, "batch"), &b) || b <= 0) continue;
        cell_keys(exp, c->cell, true, false, "batch", key, sizeof key);
        const char *id = first_complete(c);
        long step = 0;
        int epoch = 0, found = 1;
        if (id && (found = steps_target_run(&p->d, id, &step, &epoch, err)) < 0) goto fail;
        if (!id && c->diverged == 0) continue; /* not run yet */
        int s = strlist_add(&series, key);
        Point *q = NULL;
        for (int k = 0; k < n && !q; k++)
            if (pts[k].series == s && pts[k].batch == b) q = &pts[k];
        if (!q) {
            q = &pts[n++];
            *q = (Point){.series = s, .batch = b, .value = NAN, .diverged = true};
        }
        if (found != 0) {
            n_missed_cells++;
            continue;
        }
        if (q->diverged || step < q->value) { /* the fewest steps over the tuned axes */
            q->value = (double)step;
            q->diverged = false;
            q->extra = epoch;
            cell_keys(exp, c->cell, false, true, NULL, q->note, sizeof q->note);
        }
    }
    /* Groups where no cell reached the target: left out, named in the note. */
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!pts[i].diverged) {
            pts[k++] = pts[i];
            continue;
        }
        char g[300];
        snprintf(g, sizeof g, "%s%sbatch=%.10g", series.v[pts[i].series], series.v[pts[i].series][0] ? " " : "", pts[i].batch);
        strlist_add(&missed, g);
    }
    n = k;
    char target_text[64];
    snprintf(target_text, sizeof target_text, metric_is_acc(exp->metric) ? "%.4g%%" : "%.4g", exp->target * scale);
    char note[NOTE_CHARS + 64] = "", all_missed[4096] = "";
    for (int i = 0; i < missed.n; i++) plot_append(all_missed, sizeof all_missed, "%s%s", i ? ", " : "", missed.v[i]);
    if (missed.n) {
        snprintf(note, sizeof note, "never reached %s: %.*s%s", target_text, NOTE_CHARS - 20, all_missed,
                 strlen(all_missed) > NOTE_CHARS - 20 ? "..." : "");
        fprintf(p->warn, "bigbatch plot: steps-to-target: %s never reached %s %s (%d of %d cells did not)\n",
                all_missed, exp->metric, target_text, n_missed_cells, set->n_cells);
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: steps-to-target skipped: no cell of %s reached %s %s\n", exp->name,
                exp->metric, target_text);
        goto out;
    }
    qsort(pts, (size_t)n, sizeof *pts, cmp_point);
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind,
                "batch, steps to the target, perfect scaling from the smallest batch, epoch, the fit S_min (1 + B_crit / B) "
                "(McCandlish et al.; NaN: the curve does not bend), the cell's tuned values");
    if (missed.n) fprintf(dat, "# never reached the target (left out): %s\n", all_missed);
    int block = 0;
    StrList shown = {0};
    for (int s = 0; s < series.n; s++) {
        const Point *first = NULL;
        CriticalFit fit = series_fit(pts, n, s);
        for (int i = 0; i < n; i++) {
            if (pts[i].series != s) continue;
            if (!first) {
                first = &pts[i];
                fprintf(dat, "%s# series %d: %s\n", block ? "\n\n" : "", block + 1, series.v[s][0] ? series.v[s] : "ours");
                block++;
                char title[400];
                series_title(series.v[s], &fit, title, sizeof title);
                strlist_add(&shown, title);
            }
            fprintf(dat, "%.10g %.10g %.6g %d ", pts[i].batch, pts[i].value, first->value * first->batch / pts[i].batch,
                    pts[i].extra);
            if (fit.ok) fprintf(dat, "%.6g ", critical_batch_steps(&fit, pts[i].batch));
            else fprintf(dat, "NaN ");
            data_label(dat, pts[i].note[0] ? pts[i].note : "-");
            fputc('\n', dat);
        }
    }
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) {
        strlist_free(&shown);
        goto fail;
    }
    char sub[512], tl[256];
    snprintf(sub, sizeof sub, "steps until %s reaches %s (the first evaluation that does)%s%s", exp->metric, target_text,
             exp->n_tuned ? "; the fewest over " : "", exp->n_tuned ? tuned_list(exp, tl, sizeof tl) : "");
    write_common_vars(p, vars, kind, sub, key_label("batch"), "training steps to the target (log scale)", 960, 720);
    fprintf(vars, "nseries = %d\n", shown.n);
    gp_array(vars, "stitle", shown.v, shown.n);
    strlist_free(&shown);
    write_batch_tics(vars, "", pts, n, NULL, 0);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, pts[i].value);
        hi = fmax(hi, pts[i].value);
    }
    fprintf(vars, "ylo = %.10g\nyhi = %.10g\n", fmax(lo, 1) / 2, fmax(hi, 1) * 2); /* the reference stays inside */
    gp_var(vars, "note", note);
    rc = plot_finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    strlist_free(&series);
    strlist_free(&missed);
    free(pts);
    return rc;
}
