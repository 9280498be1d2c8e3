/* `bigbatch plot`: the figures of an experiment from its results database. For each kind of
 * figure the experiment file names (`figures`), the data go to plain text files in the output
 * directory (<kind>.dat, and <kind>.vars.gp: titles, labels and series names as gnuplot
 * variables), and gnuplot draws them with plots/<kind>.gp into <kind>.png and <kind>.svg.
 * plots/README.md describes each kind. */
#ifndef BB_PLOT_H
#define BB_PLOT_H
#include <stdbool.h>
#include <stdio.h>

#include "../engine/base/util.h"

typedef struct {
    const char *file;       /* the experiment file */
    const char *scale;      /* smoke | proxy | full */
    const char *db;         /* NULL: results/<experiment>.db */
    const char *out;        /* output directory (created) */
    bool png, svg;          /* formats to render */
    const char *plots_dir;  /* the gnuplot scripts; NULL: <binary>/../plots, else ./plots */
    const char *gnuplot;    /* the gnuplot program */
} PlotOptions;

void plot_options_defaults(PlotOptions *o);

/* Draws every figure kind of the file (every kind when the file names none). Paths written
 * go to `out`, warnings (a kind without data, skipped) to `warn`. Returns the number of
 * figures drawn (0 when every kind was skipped), or -1 with err: a bad file, no database,
 * no sweep at that scale, gnuplot missing or failing, a file that cannot be written. */
int plot_run(const PlotOptions *o, FILE *out, FILE *warn, Error *err);

#endif
