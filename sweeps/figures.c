/* The table of figure kinds (figures.h); each kind's parts are in its plot_<kind>.c. */
#include "figures.h"

#include "plot_parts.h"
#include "../engine/base/name_table.h"

static const FigureKind FIGURES[] = {
    {"accuracy-vs-batch", &FIG_ACCURACY}, {"heatmap", &FIG_HEATMAP},       {"layer-ratios", &FIG_LAYER_RATIOS},
    {"loss-curves", &FIG_LOSS_CURVES},    {"steps-to-target", &FIG_STEPS},
};
enum { N_FIGURES = (int)(sizeof FIGURES / sizeof FIGURES[0]) };
static const NameTable NAMES = NAME_TABLE(FIGURES);

const FigureKind *figure_list(int *count)
{
    *count = N_FIGURES;
    return FIGURES;
}

const FigureKind *figure_find(const char *name)
{
    return name_table_find(NAMES, name);
}

char *figure_names(char *buf, size_t len, const char *sep)
{
    return name_table_join(NAMES, buf, len, sep, sep);
}
