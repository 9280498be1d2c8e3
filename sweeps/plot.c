/* `bigbatch plot`: the figures of an experiment (see plot.h and plots/README.md).
 *
 * One skeleton (figure_draw, plot_figure.c) draws every kind: the kind's parts (plot_<kind>.c)
 * read the cells (cells.h) and the per-epoch and per-layer tables; it writes DIR/<kind>.dat
 * (the data, blocks separated by two blank lines, one block per line of the figure: gnuplot's
 * `index`) and DIR/<kind>.vars.gp (titles, labels and series names as gnuplot variables), then
 * runs `gnuplot -e "dir='DIR'; fmt='png'" plots/<kind>.gp` once per format. The scripts do all the styling, so a user restyles a
 * figure by editing plots/<kind>.gp and running that same command. */
#include "figures.h"
#include "plot_parts.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the command ------------------------------------------------------------------------ */

void plot_options_defaults(PlotOptions *o)
{
    memset(o, 0, sizeof *o);
    o->scale = "proxy";
    o->png = o->svg = true;
    o->gnuplot = "gnuplot";
}

static bool dir_has_scripts(const char *dir)
{
    char path[1200];
    int n = snprintf(path, sizeof path, "%s/accuracy-vs-batch.gp", dir);
    return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* --plots, else <directory of the binary>/../plots, else ./plots. */
static int find_scripts(Plot *p, Error *err)
{
    if (p->o->plots_dir) {
        snprintf(p->scripts, sizeof p->scripts, "%s", p->o->plots_dir);
        if (dir_has_scripts(p->scripts)) return 0;
        error_set(err, "--plots %s: no gnuplot scripts there (accuracy-vs-batch.gp, ...)", p->o->plots_dir);
        return -1;
    }
    char *beside = path_beside_binary("plots");
    if (beside) {
        int n = snprintf(p->scripts, sizeof p->scripts, "%s", beside);
        free(beside);
        if (n > 0 && (size_t)n < sizeof p->scripts && dir_has_scripts(p->scripts)) return 0;
    }
    snprintf(p->scripts, sizeof p->scripts, "plots");
    if (dir_has_scripts(p->scripts)) return 0;
    error_set(err, "the gnuplot scripts (plots/*.gp) are neither beside the binary (../plots) nor in ./plots: "
                   "give --plots DIR");
    return -1;
}

int plot_run(const PlotOptions *o, FILE *out, FILE *warn, Error *err)
{
    Plot p;
    memset(&p, 0, sizeof p);
    p.o = o;
    p.out = out;
    p.warn = warn;
    if (find_scripts(&p, err) || check_gnuplot(o->gnuplot, err)) return -1;
    {
        /* A clearer word than the store's when the database is not there at all. */
        Experiment exp;
        if (experiment_load(o->file, o->scale, &exp, err) != 0) return -1;
        char path[1024];
        int n = o->db ? snprintf(path, sizeof path, "%s", o->db) : snprintf(path, sizeof path, "results/%s.db", exp.name);
        bool missing = n > 0 && (size_t)n < sizeof path && access(path, F_OK) != 0;
        if (missing)
            error_set(err, "no results database %s (run bigbatch sweep %s --scale %s%s%s first)", path, o->file,
                      o->scale, o->db ? " --db " : "", o->db ? o->db : "");
        experiment_free(&exp);
        if (missing) return -1;
    }
    if (cells_open(&p.d, o->file, o->scale, o->db, err) != 0) return -1;
    p.exp = &p.d.exp;
    p.set = &p.d.set;
    int drawn = -1;
    int n = o->out ? snprintf(p.out_dir, sizeof p.out_dir, "%s", o->out)
                   : snprintf(p.out_dir, sizeof p.out_dir, "results/figures/%s", p.exp->name);
    if (n < 0 || (size_t)n >= sizeof p.out_dir) {
        error_set(err, "--out: path too long");
        goto out;
    }
    while (n > 1 && p.out_dir[n - 1] == '/') p.out_dir[--n] = 0;
    if (plot_mkdir_p(p.out_dir, err)) goto out;
    snprintf(p.figtitle, sizeof p.figtitle, "%s (%s scale)", p.exp->title[0] ? p.exp->title : p.exp->name,
             p.exp->scale);
    int n_all;
    const FigureKind *all = figure_list(&n_all);
    const bool named = p.exp->n_figures > 0; /* else every kind that has data */
    drawn = 0;
    for (int i = 0; i < (named ? p.exp->n_figures : n_all); i++) {
        const FigureKind *kind = named ? figure_find(p.exp->figures[i]) : &all[i];
        if (!kind) {
            fprintf(warn, "bigbatch plot: unknown figure kind '%s' skipped\n", p.exp->figures[i]);
            continue;
        }
        int rc = figure_draw(&p, kind, err);
        if (rc < 0) {
            drawn = -1;
            goto out;
        }
        drawn += rc;
    }
out:
    cells_close(&p.d);
    return drawn;
}
