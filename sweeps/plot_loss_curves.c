/* `bigbatch plot`: train and test loss per epoch (plots/loss-curves.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- loss-curves ------------------------------------------------------------------------ */

/* Per epoch, the mean over the cell's complete runs: writes the block, returns the rows, and
 * the last epoch's gap and epoch in *gap and *last. */
static int write_loss_block(Plot *p, FILE *dat, const Cell *c, double *gap, int *last, Error *err)
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

int fig_loss_curves(Plot *p, Error *err)
{
    const char *kind = "loss-curves";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    int n_groups, n = 0, rc = 0, max_epoch = 0, left_out = 0;
    Group *groups = collect_groups(set, &n_groups);
    char **titles = xcalloc(MAX_SERIES, sizeof *titles, "plot titles");
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
        int rows = write_loss_block(p, dat, gr->best, &gap, &last, err);
        if (rows < 0) goto fail;
        if (rows == 0) fprintf(dat, "NaN NaN NaN NaN 0\n"); /* keeps one block per title */
        if (last > max_epoch) max_epoch = last;
        title[0] = 0;
        plot_append(title, sizeof title, "%s", key[0] ? key : "ours");
        if (tuned[0]) plot_append(title, sizeof title, " (%s)", tuned);
        plot_append(title, sizeof title, "%s: gap %.3g", gr->best->complete > 1 ? " mean" : "", gap);
        titles[n++] = xstrdup(title);
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
    write_common_vars(p, vars, kind, sub, "epoch", "loss (cross-entropy)", 960, 720);
    fprintf(vars, "nseries = %d\nmaxepoch = %d\n", n, max_epoch);
    gp_array(vars, "stitle", titles, n);
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
    for (int i = 0; i < n; i++) free(titles[i]);
    free(titles);
    free(groups);
    return rc;
}
