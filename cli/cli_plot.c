/* `bigbatch plot`: the command line of the figures (sweeps/plot.c, plots/README.md). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../sweeps/experiment.h"
#include "../sweeps/figures.h"
#include "../sweeps/flags/flag_table.h"
#include "../sweeps/plot.h"
#include "cli.h"

static void plot_defaults(void *target) { plot_options_defaults(target); }

static int set_scale(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)target;
    if (experiment_scale_known(v)) return 0;
    error_set(err, "%s: '%s' is not one of smoke, proxy, full", c->flag, v);
    return -1;
}

static int set_format(void *target, const FlagCall *c, const char *v, Error *err)
{
    PlotOptions *o = target;
    if (strcmp(v, "png") && strcmp(v, "svg") && strcmp(v, "both")) {
        error_set(err, "%s: '%s' is not png, svg or both", c->flag, v);
        return -1;
    }
    o->png = strcmp(v, "svg") != 0;
    o->svg = strcmp(v, "png") != 0;
    return 0;
}

static const char HEAD[] =
    "usage: bigbatch plot FILE [--scale S] [--db PATH] [--out DIR] [--format png|svg|both]\n"
    "\n"
    "Draws the figures an experiment file names (`figures = KIND, ...`, the kinds below;\n"
    "every kind when it names none) from its results database with gnuplot: DIR/<kind>.png\n"
    "and .svg, beside the data they show (DIR/<kind>.dat) and the titles and labels\n"
    "(DIR/<kind>.vars.gp) that plots/<kind>.gp reads. A kind without data is skipped with a\n"
    "warning. Exit status 0 when some figure was drawn, 1 when none (or on an error), 2 for\n"
    "bad options. plots/README.md: the kinds.\n"
    "\n";

#define AT(member) offsetof(PlotOptions, member)

static const Flag FLAGS[] = {
    {"scale", "S", "smoke | proxy | full: the sweep to draw", "%s", F_STR(AT(scale)), .set = set_scale},
    {"db", "PATH", "results database [results/<experiment>.db]", NULL, F_STR(AT(db))},
    {"out", "DIR", "where the figures go [results/figures/<experiment>]", NULL, F_STR(AT(out))},
    {"format", "F", "png, svg or both [both]", NULL, .set = set_format},
    {"plots", "DIR", "the gnuplot scripts [plots/ beside the binary's directory, else ./plots]", NULL,
     F_STR(AT(plots_dir))},
    {"gnuplot", "PROG", "the gnuplot program (Debian: gnuplot-nox)", "%s", F_STR(AT(gnuplot))},
    FLAG_HELP_ROW,
};

static const FlagTable TABLE = {"plot", FLAGS, FLAG_COUNT(FLAGS), sizeof(PlotOptions), plot_defaults, HEAD, NULL, 16,
                                NULL, NULL, "the experiment file", 1, 1};

void plot_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* The table's help, then the figure kinds (a table of their own, figures.h). */
static void plot_usage(FILE *f)
{
    char kinds[256];
    flag_table_usage(&TABLE, f);
    fprintf(f, "\nkinds: %s\n", figure_names(kinds, sizeof kinds, ", "));
}

/* 0, 1 for --help, -1 after saying what is wrong. */
static int parse_plot(int argc, char **argv, PlotOptions *o)
{
    Error err = {{0}};
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, o, &rest, &err);
    if (rc < 0) fprintf(stderr, "bigbatch plot: %s\n", err.msg);
    if (rc == 0) o->file = argv[rest];
    return rc;
}

int cli_plot(int argc, char **argv)
{
    PlotOptions o;
    plot_options_defaults(&o);
    int parsed = parse_plot(argc, argv, &o);
    if (parsed == 1) {
        plot_usage(stdout);
        return 0;
    }
    if (parsed < 0) return 2;
    Error err = {{0}};
    int drawn = plot_run(&o, stdout, stderr, &err);
    if (drawn < 0) {
        fprintf(stderr, "bigbatch plot: %s\n", err.msg);
        return 1;
    }
    if (drawn == 0) {
        fprintf(stderr, "bigbatch plot: no figure drawn (nothing to show yet)\n");
        return 1;
    }
    return 0;
}
