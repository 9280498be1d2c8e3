/* `bigbatch plot`: train and test loss per epoch (plots/loss-curves.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- loss-curves ------------------------------------------------------------------------ */

/* Per epoch, the mean over the cell's complete runs: writes the block, returns the rows, and
 * the last epoch's gap and epoch in *gap and *last; widens [*lo, *hi] to its losses. */
static int write_loss_block(Plot *p, FILE *dat, const Cell *c, double *gap, int *last, double *lo, double *hi,
                            Error *err)
{
    size_t len = (size_t)c->runs * 20 + 3;
    char *ids = xmalloc(len, "run ids");
    ids[0] = 0;
    plot_append(ids, len, "[");
    for (int r = 0, k = 0; r < c->runs; r++)
        if (c->run_list[r].complete) plot_append(ids, len, "%s\"%s\"", k++ ? "," : "", c->run_list[r].id);
    plot_append(ids, len, "]");
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

/* With two or more group axes whose first has 2..4 values (loss-gap: opt x batch), one panel
 * per value of the first, colours by the rest, the same in every panel; else one panel. */
int fig_loss_curves(Plot *p, Error *err)
{
    const char *kind = "loss-curves";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    int n_groups, n = 0, rc = 0, max_epoch = 0, left_out = 0;
    Group *groups = collect_groups(set, &n_groups);
    char **titles = xcalloc(MAX_SERIES, sizeof *titles, "plot titles");
    char **short_titles = xcalloc(MAX_SERIES, sizeof *short_titles, "plot titles");
    double panel_of[MAX_SERIES], color_of[MAX_SERIES], lo = INFINITY, hi = -INFINITY;
    StrList panels = {0}, colors = {0};
    bool splittable = true;
    const char *axis = NULL;
    char dat_path[1200], vars_path[1200], diverged[NOTE_CHARS] = "";
    FILE *dat = NULL, *vars = NULL;
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "epoch, train loss, test loss, loss gap (test - train), runs averaged");
    for (int g = 0; g < n_groups; g++) {
        const Group *gr = &groups[g];
        char key[256], tuned[160], title[400];
        cell_keys(exp, set->cells[gr->first].cell, true, false, NULL, key, sizeof key);
        if (!gr->best) {
            if (group_diverged(gr)) plot_append(diverged, sizeof diverged, "%s%s", diverged[0] ? ", " : "", key[0] ? key : "all");
            continue;
        }
        if (n == MAX_SERIES) {
            left_out++;
            continue;
        }
        cell_keys(exp, gr->best->cell, false, true, NULL, tuned, sizeof tuned);
        fprintf(dat, "%s# series %d: %s %s\n", n ? "\n\n" : "", n + 1, key, tuned);
        double gap;
        int last = 0;
        int rows = write_loss_block(p, dat, gr->best, &gap, &last, &lo, &hi, err);
        if (rows < 0) goto fail;
        if (rows == 0) fprintf(dat, "NaN NaN NaN NaN 0\n"); /* keeps one block per title */
        if (last > max_epoch) max_epoch = last;
        series_title(title, sizeof title, key[0] ? key : "ours", tuned, gr->best->complete, gap);
        titles[n] = xstrdup(title);
        /* the same title without the panel axis, and where the series goes when split */
        const cJSON *cell = set->cells[gr->first].cell;
        if (!axis) axis = first_group_axis(exp, cell);
        const cJSON *av = axis ? cJSON_GetObjectItemCaseSensitive(cell, axis) : NULL;
        char rest[256];
        cell_keys(exp, cell, true, false, axis, rest, sizeof rest);
        if (!cJSON_IsString(av) || !rest[0]) splittable = false;
        panel_of[n] = 1 + strlist_add(&panels, cJSON_IsString(av) ? av->valuestring : "");
        color_of[n] = 1 + strlist_add(&colors, rest);
        series_title(title, sizeof title, rest, tuned, gr->best->complete, gap);
        short_titles[n++] = xstrdup(title);
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: loss-curves skipped: no cell of %s has completed\n", exp->name);
        goto out;
    }
    if (left_out) fprintf(p->warn, "bigbatch plot: loss-curves: %d groups beyond the first %d left out\n", left_out, MAX_SERIES);
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) goto fail;
    char sub[512], tl[256];
    snprintf(sub, sizeof sub, "loss per epoch, solid: train, dashed: test%s%s; gap: test - train, last epoch",
             exp->n_tuned ? "; best over " : "", exp->n_tuned ? tuned_list(exp, tl, sizeof tl) : "");
    bool split = splittable && panels.n >= 2 && panels.n <= 4;
    write_common_vars(p, vars, kind, sub, "epoch", "loss (cross-entropy)", split ? 160 + 560 * panels.n : 960,
                      split ? 680 : 720);
    fprintf(vars, "nseries = %d\nmaxepoch = %d\n", n, max_epoch);
    fprintf(vars, "npanels = %d\nnkeylines = %d\n", split ? panels.n : 1, colors.n + 2);
    gp_array(vars, "stitle", split ? short_titles : titles, n);
    if (split) {
        char **ptitles = xcalloc((size_t)panels.n, sizeof *ptitles, "panel titles");
        for (int i = 0; i < panels.n; i++) {
            char t[300];
            snprintf(t, sizeof t, "%s=%s", axis, panels.v[i]);
            ptitles[i] = xstrdup(t);
        }
        gp_array(vars, "ptitle", ptitles, panels.n);
        for (int i = 0; i < panels.n; i++) free(ptitles[i]);
        free(ptitles);
        gp_num_array(vars, "spanel", panel_of, n);
        gp_num_array(vars, "scolor", color_of, n);
        /* one y range for every panel, so that their losses compare at a glance */
        double pad = isfinite(hi - lo) ? 0.04 * (hi - lo) : 0;
        fprintf(vars, "ymin = %.6g\nymax = %.6g\n", lo - pad, hi + pad);
    }
    char note[NOTE_CHARS + 16] = "";
    if (diverged[0]) snprintf(note, sizeof note, "diverged: %s", diverged);
    gp_var(vars, "note", note);
    rc = plot_finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) {
        fclose(dat);
        if (rc == 0) remove(dat_path);
    }
    if (vars) fclose(vars);
    for (int i = 0; i < n; i++) {
        free(titles[i]);
        free(short_titles[i]);
    }
    free(titles);
    free(short_titles);
    strlist_free(&panels);
    strlist_free(&colors);
    free(groups);
    return rc;
}
