/* The parts of `bigbatch plot` (plot.c runs them): the shared state, the helpers that
 * write data files and run gnuplot (plot_common.c), and one function per figure kind
 * (plot_<kind>.c), each writing DIR/<kind>.dat and DIR/<kind>.vars.gp for plots/<kind>.gp. */
#ifndef BB_PLOT_PARTS_H
#define BB_PLOT_PARTS_H
#include <stdbool.h>
#include <stdio.h>

#include "cells.h"
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
FILE *open_out(const Plot *p, const char *kind, const char *suffix, char *path, size_t len, Error *err);
int close_out(FILE *f, const char *path, Error *err);
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
void plot_tail_lines(const char *msg, char *out, size_t len);
int plot_render(Plot *p, const char *kind, Error *err);
void write_common_vars(const Plot *p, FILE *v, const char *kind, const char *subtitle, const char *xlabel,
                       const char *ylabel, int width, int height);
void data_header(const Plot *p, FILE *f, const char *kind, const char *columns);
int plot_finish(Plot *p, const char *kind, FILE *dat, const char *dat_path, FILE *vars, const char *vars_path,
                Error *err);
int cmp_point(const void *a, const void *b);
bool batch_axis_ok(const Plot *p, const char *kind);
/* The batch sizes of pts and more as gnuplot tics: <prefix>xticks, <prefix>xmin, <prefix>xmax. */
void write_batch_tics(FILE *v, const char *prefix, const Point *pts, int n, const Point *more, int n_more);

/* One per figure kind: 1 drawn, 0 skipped (no data: warned), -1 with err. */
int fig_accuracy(Plot *p, Error *err);
int fig_heatmap(Plot *p, Error *err);
int fig_layer_ratios(Plot *p, Error *err);
int fig_loss_curves(Plot *p, Error *err);
int fig_steps(Plot *p, Error *err);

#endif
