/* Experiment files (experiments/FORMAT.md): an INI file that names a grid of `bigbatch train`
 * runs, the scale it runs at and the paper's numbers to compare with. Loading checks the
 * whole file, every run included, so that a sweep touches nothing when a file is bad. */
#ifndef BB_EXPERIMENT_H
#define BB_EXPERIMENT_H
#include <stdbool.h>
#include <stdint.h>

#include "run_config.h"
#include "../engine/base/util.h"

typedef enum { KEY_FIXED, KEY_GRID, KEY_ZIP, KEY_DERIVED } KeyRole;

typedef struct {
    char *name;
    KeyRole role;
    char *zip_with;   /* KEY_ZIP: the grid axis */
    int n_values;
    char **values;    /* FIXED/DERIVED: 1 (DERIVED: the expression); numbers normalized (%.10g),
                       * switches "true" or "false" */
    int line;         /* where the values come from (the scale's section when it overrides) */
    bool is_flag;     /* false: a variable used by [derived] */
    bool is_switch;   /* a flag without a value (--nesterov) */
} ExpKey;

typedef struct {
    char *path, *name, *title, *source, *description, *scaled, *scale, *metric; /* "" when absent */
    char *findings;              /* what the results show and what they do not (docs/results.md) */
    char *reference_points;      /* a reference-convergence-points file (results/mlperf-rcps.ini) the
                                    report checks epochs to the target against; "" when absent */
    char *reference_batch;       /* the [grid] or [zip] key holding the points' batch a cell stands
                                    for (a proxy's batch is smaller); "": the cell's batch */
    int repeats;
    int n_tuned;
    char **tuned;
    int n_figures;
    char **figures;              /* what `bigbatch plot` draws (names of figures.h) */
    double target;               /* steps-to-target: the metric value to reach; NAN when absent */
    int n_keys;
    ExpKey *keys;                /* file order; keys only in the scale's section come last */
    int n_paper_cols;
    char **paper_cols;           /* last = metric name */
    int n_paper_rows;
    char ***paper_rows;          /* [row][col] strings, numbers normalized */
    int n_paper_notes;
    char **paper_notes;
    int n_paper_scales;
    char **paper_scales;         /* [paper] scales: where the rows compare with ours (none: all) */
    char *paper_what;            /* [paper] what: the paper's network and data, for figures; NULL */
    char *text;                  /* the whole file as read */
} Experiment;

typedef struct {
    int seq, repeat;             /* 0-based order in the expansion; repeat index */
    int n_flags;
    char **flag_names;           /* train flags, sorted by name, incl. seed */
    char **flag_values;          /* a true switch has value "true"; false switches are left out */
    char **flag_opts;            /* "--name" for each flag (what runspec_train_argv points to) */
    char *config_json;           /* {"batch":"512","lr":"0.1",...}: sorted, numbers normalized */
    char *cell_json;             /* grid, zip and derived keys (flags and variables), file order,
                                  * without seed/repeat: the cell this run repeats */
    char *label;                 /* "batch=512 lr=0.1": the non-fixed flag keys */
    char id[17];                 /* 16 hex digits: FNV-1a 64-bit of config_json */
} RunSpec;

extern const char *const EXPERIMENT_METRICS[]; /* NULL-terminated: test_acc, test_loss, ... */

/* Reads, checks and expands (to check every run) the file at one scale: smoke, proxy (NULL)
 * or full. 0, or -1 with err naming FILE:LINE and the key. */
int experiment_load(const char *path, const char *scale, Experiment *exp, Error *err);
/* Loads the file at every scale (smoke, proxy, full), as --dry-run checks it: a value only one
 * scale uses is checked too. 0, or -1 with err "at --scale S: FILE:LINE: ...". */
int experiment_check_scales(const char *path, Error *err);
/* The same from text in memory; `path` only names it in errors. */
int experiment_load_string(const char *path, const char *text, const char *scale, Experiment *exp,
                           Error *err);
void experiment_free(Experiment *exp);
/* Every run: repeat-major (each cell once, then each cell again with the next seed), cells in
 * grid order (first axis slowest). Checks each run's flags with train_flags_parse and
 * train_config_check. */
int experiment_expand(const Experiment *exp, RunSpec **runs, int *n_runs, Error *err);
void runspecs_free(RunSpec *runs, int n);
/* Frees what one run spec holds and zeroes it (the array stays). */
void runspec_clear(RunSpec *r);
/* argv for execv of `bigbatch train`: {bin, "train", "--k", "v", ..., extra..., NULL}; free()
 * the array only: the strings point into r, bin and extra. */
char **runspec_train_argv(const RunSpec *r, const char *bin, const char *const *extra, int n_extra);
/* smoke, proxy or full. */
bool experiment_scale_known(const char *scale);
/* Whether the paper's rows are comparable at the loaded scale ([paper] scales = ...). */
bool experiment_paper_applies(const Experiment *exp);

#endif
