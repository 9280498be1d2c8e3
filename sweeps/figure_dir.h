/* An experiment's figures drawn into a folder of their own, and the sorted list of a folder's
 * files: shared by docs/results.md (results_docs.c) and the HTML pages (report_html.c). */
#ifndef BB_FIGURE_DIR_H
#define BB_FIGURE_DIR_H
#include <stdbool.h>
#include <stdio.h>

#include "../engine/base/util.h"

typedef struct {
    char **items;
    int n;
} Names;

void names_free(Names *l);
bool name_ends_with(const char *name, const char *tail);
/* The files in `dir` whose names end with one of `tails` (NULL-terminated; "" for any), no
 * dot files, sorted. 0, or -1 with err. */
int list_files(const char *dir, const char *const *tails, Names *out, Error *err);

typedef struct {
    const char *file, *scale, *db; /* the experiment file, its scale and database */
    const char *plots_dir;         /* gnuplot scripts; NULL: as `bigbatch plot` finds them */
    bool png;                      /* PNG beside the SVG */
} FigureDraw;

/* Draws the figures of the file into dir (created), gnuplot's own output discarded and
 * warnings to `warn`: the number drawn, or -1 with err. */
int figures_draw_into(const FigureDraw *f, const char *dir, FILE *warn, Error *err);

#endif
