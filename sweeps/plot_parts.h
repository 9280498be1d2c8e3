/* The parts of `bigbatch plot` (plot.c runs them): the shared state, the helpers
 * (plot_common.c), the one skeleton that draws every figure (plot_figure.c: its files and
 * gnuplot), and what is particular to each kind (plot_<kind>.c: a FigureParts of callbacks
 * that read its data and write its blocks and variables for plots/<kind>.gp). */
#ifndef BB_PLOT_PARTS_H
#define BB_PLOT_PARTS_H
#include <stdbool.h>
#include <stdio.h>

#include "cells.h"
#include "figures.h"
#include "plot.h"

#define MAX_SERIES 16 /* lines of a loss-curves or layer-ratios figure (colours repeat after 8) */
#define MAX_PANELS 12 /* panels of a heatmap */
#define NOTE_CHARS 160

typedef struct Plot {
    const PlotOptions *o;
    CellsData d;
    const Experiment *exp;
    const CellSet *set;
    char out_dir[1024];
    char scripts[1024];
    char figtitle[600];
    FILE *out, *warn;
} Plot;

typedef struct {
    char **v;
    int n;
} StrList;

/* A group: the cells with the same values of the group axes (cells.h). */
typedef struct {
    int first;        /* its first cell */
    const Cell *best; /* the trained cell with the best metric (report's "best"), or NULL */
    int n_cells;
    int n_diverged;   /* cells with some diverged run */
} Group;

typedef struct {
    int series;
    double batch;
    double value, std;  /* scaled; NAN when diverged */
    bool diverged;
    bool collapsed;     /* some seed of the cell ended at the chance level */
    int extra;          /* steps-to-target: the epoch */
    char note[160];     /* the cell: best tuned values */
} Point;

/* plot_common.c */
int strlist_add(StrList *l, const char *s);
int strlist_find(const StrList *l, const char *s);
void strlist_free(StrList *l);
void plot_append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int plot_join_path(char *buf, size_t len, const char *dir, const char *name, const char *suffix, Error *err);
int plot_mkdir_p(const char *path, Error *err);
void gp_string(FILE *f, const char *s);
int gp_string_buf(char *buf, size_t len, const char *s);
void data_label(FILE *f, const char *s);
void gp_var(FILE *f, const char *name, const char *value);
void gp_wrapped_var(FILE *f, const char *name, const char *value, int max_chars);
void gp_array(FILE *f, const char *name, char *const *items, int n);
void gp_num_array(FILE *f, const char *name, const double *x, int n);
bool plot_is_number(const char *s, double *x);
bool metric_is_acc(const char *metric);
double metric_scale(const char *metric);
const char *metric_label(const char *metric);
const char *metric_epoch_column(const char *metric);
const char *key_label(const char *key);
const char *tuned_list(const Experiment *exp, char *buf, size_t len);
bool follows_axis(const Experiment *exp, const char *key, const char *axis);
bool is_group_grid_key(const Experiment *exp, const char *key);
void cell_keys(const Experiment *exp, const cJSON *cell, bool group_only, bool tuned_only, const char *skip,
               char *buf, size_t len);
bool plot_trained(const Cell *c);
Group *collect_groups(const CellSet *set, int *n_groups);
bool group_diverged(const Group *g);
const char *first_complete(const Cell *c);
int plot_run_capture(char *const argv[], char *msg, size_t msg_len, Error *err);
int check_gnuplot(const char *gnuplot, Error *err);
int cmp_point(const void *a, const void *b);
bool batch_axis_ok(const Plot *p, const char *kind);
/* The batch sizes of pts and more as gnuplot tics: <prefix>xticks, <prefix>xmin, <prefix>xmax. */
void write_batch_tics(FILE *v, const char *prefix, const Point *pts, int n, const Point *more, int n_more);

/* ---- one figure: the skeleton (plot_figure.c) and the parts of each kind ---------------- */

/* The frame every script reads (figtitle, subtitle, labels, size): the kind fills it. */
typedef struct {
    char subtitle[512];
    const char *xlabel, *ylabel;
    int width, height;
} FigureFrame;

/* A second data file beside DIR/<kind>.dat: DIR/<kind><suffix>. */
typedef struct {
    const char *suffix;
    const char *title;   /* its header's name of the figure */
    const char *columns; /* its header's columns */
    void (*write)(const Plot *p, const void *s, FILE *f);
} FigureSide;

/* What one kind adds to the skeleton. Its state (state_size bytes, zeroed) is filled by
 * collect and read by the writers; release frees what it holds. */
typedef struct FigureParts {
    const char *columns; /* the .dat header's columns */
    size_t state_size;
    int (*collect)(Plot *p, void *s, Error *err); /* 1 data, 0 skipped (warned), -1 with err */
    int (*write_data)(Plot *p, void *s, FILE *dat, Error *err); /* the blocks: 0, or -1 with err */
    const FigureSide *side;                                      /* or NULL */
    void (*frame)(const Plot *p, const void *s, FigureFrame *f);
    void (*write_vars)(const Plot *p, const void *s, FILE *vars); /* after the frame's variables */
    void (*release)(void *s);
} FigureParts;

/* Draws one kind: its data read, DIR/<kind>.dat (and side file) and DIR/<kind>.vars.gp
 * written, gnuplot run once per format. 1 drawn, 0 skipped (no data: warned), -1 with err. */
int figure_draw(Plot *p, const FigureKind *kind, Error *err);

extern const FigureParts FIG_ACCURACY, FIG_HEATMAP, FIG_LAYER_RATIOS, FIG_LOSS_CURVES, FIG_STEPS;

#endif
