/* Figures drawn into a folder, and a folder's files (figure_dir.h). */
#include "figure_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

void names_free(Names *l)
{
    for (int i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool name_ends_with(const char *name, const char *tail)
{
    size_t n = strlen(name), k = strlen(tail);
    return n >= k && !strcmp(name + n - k, tail);
}

int list_files(const char *dir, const char *const *tails, Names *out, Error *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d) {
        error_set(err, "%s: cannot open: %s", dir, strerror(errno));
        return -1;
    }
    for (struct dirent *e; (e = readdir(d));) {
        bool match = false;
        for (int i = 0; tails[i] && !match; i++) match = e->d_name[0] != '.' && name_ends_with(e->d_name, tails[i]);
        if (!match) continue;
        out->items = xrealloc(out->items, sizeof *out->items * (size_t)(out->n + 1), "file list");
        out->items[out->n++] = xstrdup(e->d_name);
    }
    closedir(d);
    qsort(out->items, (size_t)out->n, sizeof *out->items, cmp_str);
    return 0;
}

int figures_draw_into(const FigureDraw *f, const char *dir, FILE *warn, Error *err)
{
    PlotOptions po;
    plot_options_defaults(&po);
    po.file = f->file;
    po.scale = f->scale;
    po.db = f->db;
    po.out = dir;
    po.png = f->png;
    po.plots_dir = f->plots_dir;
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet) {
        error_set(err, "/dev/null: cannot open: %s", strerror(errno));
        return -1;
    }
    int drawn = plot_run(&po, quiet, warn, err);
    fclose(quiet);
    return drawn;
}
