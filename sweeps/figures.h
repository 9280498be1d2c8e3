/* The figure kinds of `bigbatch plot`, one table: the `figures` key of experiment files,
 * `bigbatch plot --help`, the default (every kind) and the drawing read it. */
#ifndef BB_FIGURES_H
#define BB_FIGURES_H
#include <stddef.h>

#include "../engine/base/util.h"

struct FigureParts; /* plot_parts.h */

typedef struct {
    const char *name; /* also the name of its script, plots/<name>.gp, and of its files */
    const struct FigureParts *parts; /* what is its own; the one skeleton (plot_figure.c) draws it */
} FigureKind;

/* All kinds, in the order they are drawn; *count receives their number. */
const FigureKind *figure_list(int *count);
/* The kind of that name, or NULL (also for a NULL name). */
const FigureKind *figure_find(const char *name);
/* The names, `sep` between them; returns buf. */
char *figure_names(char *buf, size_t len, const char *sep);

#endif
