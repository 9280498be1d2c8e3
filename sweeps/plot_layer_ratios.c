/* `bigbatch plot`: ||w||/||g|| per layer at the first iteration (plots/layer-ratios.gp). */
#include "plot_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

typedef struct {
    Ratios *series; /* the distinct ratios, each with its cells */
    int n;
    int nparams;     /* the most tensors of a series */
    bool same_names; /* every series names the same tensors */
} LayerRatios;

/* A cell's step-0 ratios: its first complete run's; else any run's (step 0 comes before a
 * divergence). r->n = 0 when none has them. */
static int cell_ratios(Plot *p, const Cell *c, Ratios *r, Error *err)
{
    const char *id = first_complete(c);
    if (id && load_ratios(p, id, r, err)) return -1;
    for (int k = 0; k < c->runs && r->n == 0; k++)
        if (load_ratios(p, c->run_list[k].id, r, err)) return -1;
    return 0;
}

/* Cell i into the series with its ratios (r, taken or freed); false past MAX_SERIES. */
static bool add_member(LayerRatios *l, Ratios *r, int i)
{
    int s = 0;
    while (s < l->n && !same_ratios(&l->series[s], r)) s++;
    if (s == l->n && l->n == MAX_SERIES) {
        ratios_free(r);
        return false;
    }
    if (s == l->n) l->series[l->n++] = *r;
    else ratios_free(r);
    Ratios *t = &l->series[s];
    t->members = xrealloc(t->members, sizeof *t->members * (size_t)(t->n_members + 1), "layer ratio members");
    t->members[t->n_members++] = i;
    return true;
}

static void count_params(LayerRatios *l)
{
    l->same_names = true;
    for (int s = 0; s < l->n; s++) {
        const Ratios *r = &l->series[s];
        if (r->n > l->nparams) l->nparams = r->n;
        if (r->n != l->series[0].n) l->same_names = false;
        for (int i = 0; l->same_names && i < r->n; i++) l->same_names = !strcmp(r->name[i], l->series[0].name[i]);
    }
}

static int collect(Plot *p, void *state, Error *err)
{
    LayerRatios *l = state;
    int left_out = 0;
    l->series = xcalloc(MAX_SERIES, sizeof *l->series, "layer ratios");
    for (int i = 0; i < p->set->n_cells; i++) {
        Ratios r = {0};
        if (cell_ratios(p, &p->set->cells[i], &r, err)) {
            ratios_free(&r);
            return -1;
        }
        if (r.n > 0) left_out += !add_member(l, &r, i);
    }
    if (l->n == 0) {
        fprintf(p->warn, "bigbatch plot: layer-ratios skipped: no run of %s has layer statistics "
                         "(set layer-stats = yes or layer-stats-every = N in [train])\n",
                p->exp->name);
        return 0;
    }
    if (left_out)
        fprintf(p->warn, "bigbatch plot: layer-ratios: %d cells beyond the first %d distinct ones left out\n", left_out,
                MAX_SERIES);
    count_params(l);
    return 1;
}

static int write_data(Plot *p, void *state, FILE *dat, Error *err)
{
    (void)err;
    const LayerRatios *l = state;
    for (int s = 0; s < l->n; s++) {
        const Ratios *r = &l->series[s];
        char t[320];
        members_title(p->set, r, t, sizeof t);
        fprintf(dat, "%s# series %d: %s; cells:", s ? "\n\n" : "", s + 1, t);
        for (int m = 0; m < r->n_members; m++) fprintf(dat, " [%s]", p->set->cells[r->members[m]].label);
        fputc('\n', dat);
        for (int i = 0; i < r->n; i++) {
            fprintf(dat, "%d %.6g %s ", i, r->ratio[i], r->kind[i]);
            data_label(dat, r->name[i]);
            fputc('\n', dat);
        }
    }
    return 0;
}

static void frame(const Plot *p, const void *state, FigureFrame *f)
{
    (void)p;
    const LayerRatios *l = state;
    snprintf(f->subtitle, sizeof f->subtitle, "%s",
             "||w|| / ||g|| per parameter tensor at the first iteration (the LARS paper's Table 2)");
    f->xlabel = "parameter tensor, in network order";
    f->ylabel = "||w|| / ||g|| (log scale)";
    f->width = l->nparams > 24 ? 1200 : 960;
    f->height = 680;
}

static void write_vars(const Plot *p, const void *state, FILE *vars)
{
    const LayerRatios *l = state;
    char **titles = xcalloc((size_t)l->n, sizeof *titles, "plot titles");
    for (int s = 0; s < l->n; s++) {
        char t[320];
        members_title(p->set, &l->series[s], t, sizeof t);
        titles[s] = xstrdup(t);
    }
    fprintf(vars, "nseries = %d\n", l->n);
    gp_array(vars, "stitle", titles, l->n);
    for (int s = 0; s < l->n; s++) free(titles[s]);
    free(titles);
    int nnames = l->same_names && l->nparams <= 40 ? l->nparams : 0;
    fprintf(vars, "nparams = %d\nnnames = %d\n", l->nparams, nnames);
    gp_array(vars, "pname", l->series[0].name, nnames);
}

static void release(void *state)
{
    LayerRatios *l = state;
    for (int s = 0; s < l->n; s++) ratios_free(&l->series[s]);
    free(l->series);
}

const FigureParts FIG_LAYER_RATIOS = {
    .columns = "parameter index (network order), ||w||/||g|| at step 0, kind, name",
    .state_size = sizeof(LayerRatios),
    .collect = collect,
    .write_data = write_data,
    .frame = frame,
    .write_vars = write_vars,
    .release = release,
};
