/* `bigbatch plot`: ||w||/||g|| per layer at the first iteration (plots/layer-ratios.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- layer-ratios ----------------------------------------------------------------------- */

typedef struct {
    int n;
    char **name, **kind;
    double *ratio;
    int *members; /* cell indices with the same ratios */
    int n_members;
} Ratios;

static void ratios_free(Ratios *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->name[i]);
        free(r->kind[i]);
    }
    free(r->name);
    free(r->kind);
    free(r->ratio);
    free(r->members);
    memset(r, 0, sizeof *r);
}

/* The step-0 statistics of one run; r->n = 0 when it has none. */
static int load_ratios(Plot *p, const char *run_id, Ratios *r, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(&p->d.store, &st,
                      "SELECT name, kind, ratio FROM layer_stats WHERE run_id = ?1 AND step = 0 ORDER BY param", err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        r->name = xrealloc(r->name, sizeof *r->name * (size_t)(r->n + 1), "layer names");
        r->kind = xrealloc(r->kind, sizeof *r->kind * (size_t)(r->n + 1), "layer kinds");
        r->ratio = xrealloc(r->ratio, sizeof *r->ratio * (size_t)(r->n + 1), "layer ratios");
        const char *name = (const char *)sqlite3_column_text(st, 0), *k = (const char *)sqlite3_column_text(st, 1);
        r->name[r->n] = xstrdup(name ? name : "?");
        r->kind[r->n] = xstrdup(k ? k : "?");
        r->ratio[r->n] = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        r->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        error_set(err, "%s: reading layer_stats: %s", p->d.path, sqlite3_errstr(rc));
        return -1;
    }
    return 0;
}

static bool same_ratios(const Ratios *a, const Ratios *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        if (strcmp(a->name[i], b->name[i])) return false;
        double x = a->ratio[i], y = b->ratio[i];
        if (isnan(x) != isnan(y)) return false;
        if (!isnan(x) && fabs(x - y) > 1e-6 * fmax(fabs(x), fabs(y))) return false;
    }
    return true;
}

/* "k=v ..." of the keys that vary over the experiment and are shared by every member. */
static void members_title(const CellSet *set, const Ratios *r, char *buf, size_t len)
{
    buf[0] = 0;
    const cJSON *first = set->cells[r->members[0]].cell;
    for (const cJSON *it = first->child; it; it = it->next) {
        bool varies = false, shared = true;
        for (int i = 0; i < set->n_cells && !varies; i++) {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(set->cells[i].cell, it->string);
            varies = !cJSON_IsString(o) || strcmp(o->valuestring, it->valuestring);
        }
        for (int m = 1; m < r->n_members && shared; m++) {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(set->cells[r->members[m]].cell, it->string);
            shared = cJSON_IsString(o) && !strcmp(o->valuestring, it->valuestring);
        }
        if (varies && shared) plot_append(buf, len, "%s%s=%s", buf[0] ? " " : "", it->string, it->valuestring);
    }
    if (!buf[0]) snprintf(buf, len, "%s", r->n_members > 1 ? "every cell" : "ours");
    if (r->n_members > 1) plot_append(buf, len, " (%d cells, the same at step 0)", r->n_members);
}

int fig_layer_ratios(Plot *p, Error *err)
{
    const char *kind = "layer-ratios";
    const CellSet *set = p->set;
    Ratios *series = xcalloc(MAX_SERIES, sizeof *series, "layer ratios");
    int n = 0, left_out = 0, rc = 0;
    FILE *dat = NULL, *vars = NULL;
    char dat_path[1200], vars_path[1200];
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        Ratios r = {0};
        /* The first complete run; else any run of the cell (step 0 comes before a divergence). */
        const char *id = first_complete(c);
        if (id && load_ratios(p, id, &r, err)) goto fail;
        for (int k = 0; k < c->runs && r.n == 0; k++)
            if (load_ratios(p, c->run_list[k].id, &r, err)) goto fail;
        if (r.n == 0) continue;
        int s = 0;
        while (s < n && !same_ratios(&series[s], &r)) s++;
        if (s == n && n == MAX_SERIES) {
            left_out++;
            ratios_free(&r);
            continue;
        }
        if (s == n) series[n++] = r;
        else ratios_free(&r);
        series[s].members = xrealloc(series[s].members, sizeof *series[s].members * (size_t)(series[s].n_members + 1),
                                     "layer ratio members");
        series[s].members[series[s].n_members++] = i;
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: layer-ratios skipped: no run of %s has layer statistics "
                         "(set layer-stats = yes or layer-stats-every = N in [train])\n",
                p->exp->name);
        goto out;
    }
    if (left_out)
        fprintf(p->warn, "bigbatch plot: layer-ratios: %d cells beyond the first %d distinct ones left out\n", left_out,
                MAX_SERIES);
    int nparams = 0;
    bool same_names = true;
    for (int s = 0; s < n; s++) {
        if (series[s].n > nparams) nparams = series[s].n;
        if (series[s].n != series[0].n) same_names = false;
        for (int i = 0; same_names && i < series[s].n; i++) same_names = !strcmp(series[s].name[i], series[0].name[i]);
    }
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "parameter index (network order), ||w||/||g|| at step 0, kind, name");
    char **titles = xcalloc((size_t)n, sizeof *titles, "plot titles");
    for (int s = 0; s < n; s++) {
        char t[320];
        members_title(set, &series[s], t, sizeof t);
        titles[s] = xstrdup(t);
        fprintf(dat, "%s# series %d: %s; cells:", s ? "\n\n" : "", s + 1, t);
        for (int m = 0; m < series[s].n_members; m++) fprintf(dat, " [%s]", set->cells[series[s].members[m]].label);
        fputc('\n', dat);
        for (int i = 0; i < series[s].n; i++) {
            fprintf(dat, "%d %.6g %s ", i, series[s].ratio[i], series[s].kind[i]);
            data_label(dat, series[s].name[i]);
            fputc('\n', dat);
        }
    }
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) {
        for (int s = 0; s < n; s++) free(titles[s]);
        free(titles);
        goto fail;
    }
    write_common_vars(p, vars, kind,
                      "||w|| / ||g|| per parameter tensor at the first iteration (the LARS paper's Table 2)",
                      "parameter tensor, in network order", "||w|| / ||g|| (log scale)", nparams > 24 ? 1200 : 960,
                      680);
    fprintf(vars, "nseries = %d\n", n);
    gp_array(vars, "stitle", titles, n);
    for (int s = 0; s < n; s++) free(titles[s]);
    free(titles);
    fprintf(vars, "nparams = %d\nnnames = %d\n", nparams, same_names && nparams <= 40 ? nparams : 0);
    gp_array(vars, "pname", series[0].name, same_names && nparams <= 40 ? nparams : 0);
    rc = plot_finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    for (int s = 0; s < n; s++) ratios_free(&series[s]);
    free(series);
    return rc;
}
