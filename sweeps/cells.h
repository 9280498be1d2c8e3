/* The cells of an experiment as stored in its results database: the runs of each grid cell
 * with their repeats summarized, grouped by the axes that are not tuned, and the best cell of
 * each group over the tuned axes (as the papers chose the best LR and warmup per batch).
 * Shared by `bigbatch report` and `bigbatch plot`. */
#ifndef BB_CELLS_H
#define BB_CELLS_H
#include <cjson/cJSON.h>
#include <stdbool.h>

#include "experiment.h"
#include "store.h"
#include "../engine/base/util.h"

typedef struct {
    char id[17];
    bool complete;      /* status complete or collapsed, with a value of the metric */
    char status[12];    /* runs.status */
    char device[64];    /* runs.device: "cpu", "cuda:0 NVIDIA H200"; "" when not recorded */
    double value;       /* the metric (NAN without one) */
} CellRun;

typedef struct Cell {
    cJSON *cell;        /* {"batch": "512", ...} in file order */
    char *label;
    int runs, complete, diverged, failed, waiting;
    int collapsed;      /* of the complete ones: ended at the chance level (engine/train/collapse.h) */
    int pruned;         /* stopped at a rung by sweep --prune (prune.h): no final result */
    int pruned_epoch;   /* the last epoch of its pruned runs */
    double pruned_sum;  /* their metric at that evaluation, summed */
    double sum, sum_sq; /* over complete runs, collapsed ones included: a seed's outcome */
    double mean, std;
    bool best;          /* the best of its group over the tuned axes */
    CellRun *run_list;  /* the cell's runs (repeats) in sweep order; `runs` of them */
} Cell;

typedef struct {
    const Experiment *exp;
    Cell *cells;
    int n_cells;
    bool higher_is_better;
} CellSet;

/* An experiment file read at one scale with its database opened read-only, its cells loaded
 * and the best of each group marked. */
typedef struct {
    Experiment exp;
    Store store;
    char path[1024];    /* the database */
    long long exp_id;   /* experiments.id */
    CellSet set;        /* set.exp points to exp: do not copy the struct */
} CellsData;

const ExpKey *cells_find_key(const Experiment *exp, const char *name);
bool cells_is_tuned(const Experiment *exp, const char *name);
/* The axes that define a group for "best over the tuned axes": grid and zipped keys that are
 * neither tuned nor zipped with a tuned axis. */
bool cells_is_group_axis(const Experiment *exp, const char *name);
/* Equal as numbers when both are numbers, else as text. */
bool cells_same_value(const char *a, const char *b);
/* The value of key `name` in a cell, or the experiment's fixed value; NULL when neither. */
const char *cells_value_in(const Experiment *exp, const cJSON *cell, const char *name);
/* The paper's number for a cell (group_only: for its group, tuned columns ignored): the last
 * column of the first [paper] row whose key columns all match; NULL when none. */
const char *cells_paper_value(const Experiment *exp, const cJSON *cell, bool group_only);
/* SQL for a run's value of the metric, over `runs r`. */
const char *cells_metric_sql(const char *metric);
bool cells_same_group(const CellSet *set, const Cell *a, const Cell *b);
bool cells_better(const CellSet *set, double a, double b);

/* Reads the file, opens the database (db NULL: results/<experiment>.db), finds the sweep at
 * that scale and loads and ranks its cells. 0, or -1 with err (and nothing left open). */
int cells_open(CellsData *d, const char *file, const char *scale, const char *db, Error *err);
void cells_close(CellsData *d);

#endif
