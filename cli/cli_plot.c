/* `bigbatch plot`: the command line of the figures (sweeps/plot.c, plots/README.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../sweeps/experiment.h"
#include "../sweeps/figures.h"
#include "../sweeps/plot.h"
#include "cli.h"

static void plot_usage(FILE *f)
{
    char kinds[256];
    fprintf(f, "usage: bigbatch plot FILE [--scale S] [--db PATH] [--out DIR] [--format png|svg|both]\n"
               "\n"
               "Draws the figures an experiment file names (`figures = KIND, ...`, the kinds below;\n"
               "every kind when it names none) from its results database with gnuplot: DIR/<kind>.png\n"
               "and .svg, beside the data they show (DIR/<kind>.dat) and the titles and labels\n"
               "(DIR/<kind>.vars.gp) that plots/<kind>.gp reads. A kind without data is skipped with a\n"
               "warning. Exit status 0 when some figure was drawn, 1 when none (or on an error), 2 for\n"
               "bad options. plots/README.md: the kinds.\n"
               "\n"
               "  --scale S        smoke | proxy | full: the sweep to draw [proxy]\n"
               "  --db PATH        results database [results/<experiment>.db]\n"
               "  --out DIR        where the figures go [results/figures/<experiment>]\n"
               "  --format F       png, svg or both [both]\n"
               "  --plots DIR      the gnuplot scripts [plots/ beside the binary's directory, else ./plots]\n"
               "  --gnuplot PROG   the gnuplot program [gnuplot] (Debian: gnuplot-nox)\n"
               "\n"
               "kinds: %s\n",
            figure_names(kinds, sizeof kinds, ", "));
}

enum { P_SCALE = 256, P_DB, P_OUT, P_FORMAT, P_PLOTS, P_GNUPLOT, P_HELP };

/* 0, 1 for --help, -1 after saying what is wrong. */
static int parse_plot(int argc, char **argv, PlotOptions *o)
{
    static const struct option opts[] = {
        {"scale", required_argument, 0, P_SCALE}, {"db", required_argument, 0, P_DB},
        {"out", required_argument, 0, P_OUT},     {"format", required_argument, 0, P_FORMAT},
        {"plots", required_argument, 0, P_PLOTS}, {"gnuplot", required_argument, 0, P_GNUPLOT},
        {"help", no_argument, 0, P_HELP},         {0, 0, 0, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case P_SCALE:
            if (!experiment_scale_known(optarg)) {
                fprintf(stderr, "bigbatch plot: --scale: '%s' is not one of smoke, proxy, full\n", optarg);
                return -1;
            }
            o->scale = optarg;
            break;
        case P_DB: o->db = optarg; break;
        case P_OUT: o->out = optarg; break;
        case P_FORMAT:
            if (strcmp(optarg, "png") && strcmp(optarg, "svg") && strcmp(optarg, "both")) {
                fprintf(stderr, "bigbatch plot: --format: '%s' is not png, svg or both\n", optarg);
                return -1;
            }
            o->png = strcmp(optarg, "svg") != 0;
            o->svg = strcmp(optarg, "png") != 0;
            break;
        case P_PLOTS: o->plots_dir = optarg; break;
        case P_GNUPLOT: o->gnuplot = optarg; break;
        case P_HELP: return 1;
        case ':': fprintf(stderr, "bigbatch plot: %s needs a value\n", flag); return -1;
        default: fprintf(stderr, "bigbatch plot: unknown option '%s' (bigbatch plot --help)\n", flag); return -1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "bigbatch plot: %s\n", optind >= argc ? "which experiment file? (bigbatch plot FILE)"
                                                              : "one experiment file, not several (bigbatch plot FILE)");
        return -1;
    }
    o->file = argv[optind];
    return 0;
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
