/* `bigbatch plot`: the figures of an experiment (see plot.h and plots/README.md).
 *
 * Each figure kind is one function that reads the cells (cells.h) and the per-epoch and
 * per-layer tables, writes DIR/<kind>.dat (the data, blocks separated by two blank lines, one
 * block per line of the figure: gnuplot's `index`) and DIR/<kind>.vars.gp (titles, labels and
 * series names as gnuplot variables), then runs `gnuplot -e "dir='DIR'; fmt='png'"
 * plots/<kind>.gp` once per format. The scripts do all the styling, so a user restyles a
 * figure by editing plots/<kind>.gp and running that same command. */
#include "plot.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cells.h"

#define MAX_SERIES 12 /* lines of a loss-curves or layer-ratios figure */
#define MAX_PANELS 12 /* panels of a heatmap */
#define NOTE_CHARS 160

typedef struct {
    const PlotOptions *o;
    CellsData d;
    const Experiment *exp;
    const CellSet *set;
    char out_dir[1024];
    char scripts[1024];
    char figtitle[600];
    FILE *out, *warn;
} Plot;

/* ---- small helpers ---------------------------------------------------------------------- */

typedef struct {
    char **v;
    int n;
} StrList;

/* The index of s in l; appended when absent. */
static int strlist_add(StrList *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return i;
    l->v = xrealloc(l->v, sizeof *l->v * (size_t)(l->n + 1), "plot names");
    l->v[l->n] = xstrdup(s);
    return l->n++;
}

static int strlist_find(const StrList *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return i;
    return -1;
}

static void strlist_free(StrList *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Appends to a bounded buffer; the text is cut (never overflowing) when it does not fit. */
static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static int join_path(char *buf, size_t len, const char *dir, const char *name, const char *suffix, Error *err)
{
    int n = snprintf(buf, len, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= len) {
        error_set(err, "path too long: %s/%s%s", dir, name, suffix);
        return -1;
    }
    return 0;
}

static int mkdir_p(const char *path, Error *err)
{
    char dir[1024];
    int n = snprintf(dir, sizeof dir, "%s", path);
    if (n < 0 || (size_t)n >= sizeof dir) {
        error_set(err, "path too long: %s", path);
        return -1;
    }
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) goto fail;
        *p = '/';
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) goto fail;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        goto fail;
    }
    return 0;
fail:
    error_set(err, "cannot create directory %s: %s", dir, strerror(errno));
    return -1;
}

/* A gnuplot single-quoted string: '' stands for a quote, no other escapes; line breaks and
 * tabs become spaces. */
static void gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("''", f);
        else fputc(*s == '\n' || *s == '\t' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

static int gp_string_buf(char *buf, size_t len, const char *s)
{
    size_t k = 0;
    if (k + 1 >= len) return -1;
    buf[k++] = '\'';
    for (; *s; s++) {
        if (k + 3 >= len) return -1;
        if (*s == '\'') buf[k++] = '\'';
        buf[k++] = *s;
    }
    if (k + 2 > len) return -1;
    buf[k++] = '\'';
    buf[k] = 0;
    return 0;
}

/* A label in a data file: one double-quoted column, without quotes inside. */
static void data_label(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : *s == '\n' ? ' ' : *s, f);
    fputc('"', f);
}

static void gp_var(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s = ", name);
    gp_string(f, value);
    fputc('\n', f);
}

static void gp_array(FILE *f, const char *name, char *const *items, int n)
{
    fprintf(f, "array %s[%d] = [", name, n > 0 ? n : 1);
    if (n == 0) fputs("''", f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        gp_string(f, items[i]);
    }
    fputs("]\n", f);
}

static void gp_num_array(FILE *f, const char *name, const double *x, int n)
{
    fprintf(f, "array %s[%d] = [", name, n > 0 ? n : 1);
    if (n == 0) fputs("0", f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.10g", i ? ", " : "", x[i]);
    fputs("]\n", f);
}

static FILE *open_out(const Plot *p, const char *kind, const char *suffix, char *path, size_t len, Error *err)
{
    if (join_path(path, len, p->out_dir, kind, suffix, err)) return NULL;
    FILE *f = fopen(path, "w");
    if (!f) error_set(err, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, Error *err)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (bad) {
        error_set(err, "%s: writing failed", path);
        return -1;
    }
    return 0;
}

static bool is_number(const char *s, double *x)
{
    char *end;
    if (!s || !*s) return false;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno) return false;
    if (x) *x = v;
    return true;
}

static bool metric_is_acc(const char *metric) { return strstr(metric, "acc") != NULL; }

static double metric_scale(const char *metric) { return metric_is_acc(metric) ? 100.0 : 1.0; }

static const char *metric_label(const char *metric)
{
    if (!strcmp(metric, "test_acc")) return "test accuracy (%)";
    if (!strcmp(metric, "best_test_acc")) return "best test accuracy over the epochs (%)";
    if (!strcmp(metric, "test_loss")) return "test loss (cross-entropy)";
    if (!strcmp(metric, "train_loss")) return "training loss (cross-entropy)";
    if (!strcmp(metric, "loss_gap")) return "loss gap, test - train (cross-entropy)";
    return metric;
}

/* The epochs column a metric is read from for steps-to-target. */
static const char *metric_epoch_column(const char *metric)
{
    if (!strcmp(metric, "test_loss")) return "test_loss";
    if (!strcmp(metric, "train_loss")) return "train_loss";
    if (!strcmp(metric, "loss_gap")) return "loss_gap";
    return "test_acc";
}

static const char *key_label(const char *key)
{
    static const char *const names[][2] = {
        {"batch", "batch size (images)"},  {"lr", "learning rate"},
        {"warmup-epochs", "warmup (epochs)"}, {"weight-decay", "weight decay"},
        {"opt", "optimizer"},             {"eta", "LARS trust coefficient eta"},
        {"epochs", "epochs"},             {"label-smoothing", "label smoothing"},
        {"momentum", "momentum"},         {"base_lr", "base learning rate"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i][0], key)) return names[i][1];
    return key;
}

static const char *tuned_list(const Experiment *exp, char *buf, size_t len)
{
    buf[0] = 0;
    for (int t = 0; t < exp->n_tuned; t++) append(buf, len, "%s%s", t ? ", " : "", exp->tuned[t]);
    return buf;
}

/* The key is the axis, or a list zipped with it (one value per value of the axis). */
static bool follows_axis(const Experiment *exp, const char *key, const char *axis)
{
    if (!strcmp(key, axis)) return true;
    const ExpKey *k = cells_find_key(exp, key);
    return k && k->role == KEY_ZIP && k->zip_with && !strcmp(k->zip_with, axis);
}

/* A [grid] key that is a group axis: the keys that name a group (its zipped lists follow). */
static bool is_group_grid_key(const Experiment *exp, const char *key)
{
    const ExpKey *k = cells_find_key(exp, key);
    return k && k->role == KEY_GRID && cells_is_group_axis(exp, key);
}

/* "k=v k=v" of a cell's keys: group axes only, tuned axes only, or every key; the axis `skip`
 * and the lists zipped with it left out. */
static void cell_keys(const Experiment *exp, const cJSON *cell, bool group_only, bool tuned_only, const char *skip,
                      char *buf, size_t len)
{
    buf[0] = 0;
    for (const cJSON *it = cell->child; it; it = it->next) {
        if (!cJSON_IsString(it)) continue;
        if (skip && follows_axis(exp, it->string, skip)) continue;
        if (group_only && !is_group_grid_key(exp, it->string)) continue;
        if (tuned_only && !cells_is_tuned(exp, it->string)) continue;
        append(buf, len, "%s%s=%s", buf[0] ? " " : "", it->string, it->valuestring);
    }
}

static bool trained(const Cell *c) { return c->complete > 0 && c->diverged == 0; }

/* A group: the cells with the same values of the group axes (cells.h). */
typedef struct {
    int first;        /* its first cell */
    const Cell *best; /* the trained cell with the best metric (report's "best"), or NULL */
    int n_cells;
    int n_diverged;   /* cells with some diverged run */
} Group;

static Group *collect_groups(const CellSet *set, int *n_groups)
{
    Group *g = xcalloc((size_t)(set->n_cells > 0 ? set->n_cells : 1), sizeof *g, "plot groups");
    int n = 0;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        int k = 0;
        while (k < n && !cells_same_group(set, &set->cells[g[k].first], c)) k++;
        if (k == n) g[n++].first = i;
        g[k].n_cells++;
        if (c->diverged > 0) g[k].n_diverged++;
        if (trained(c) && (!g[k].best || cells_better(set, c->mean, g[k].best->mean))) g[k].best = c;
    }
    *n_groups = n;
    return g;
}

static bool group_diverged(const Group *g) { return !g->best && g->n_diverged > 0; }

/* The first complete run of a cell, else NULL. */
static const char *first_complete(const Cell *c)
{
    for (int r = 0; r < c->runs; r++)
        if (c->run_list[r].complete) return c->run_list[r].id;
    return NULL;
}

/* ---- running gnuplot -------------------------------------------------------------------- */

/* Runs argv with stdout and stderr captured (the start of it) in msg. The exit status, 127
 * when it could not be started, or -1 with err. */
static int run_capture(char *const argv[], char *msg, size_t msg_len, Error *err)
{
    int fds[2];
    if (pipe(fds) != 0) {
        error_set(err, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        error_set(err, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0) _exit(126);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    char chunk[4096];
    for (;;) {
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size_t take = (size_t)got;
        if (used + take + 1 > msg_len) take = msg_len > used + 1 ? msg_len - used - 1 : 0;
        memcpy(msg + used, chunk, take);
        used += take;
    }
    if (msg_len) msg[used < msg_len ? used : msg_len - 1] = 0;
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            error_set(err, "waiting for %s: %s", argv[0], strerror(errno));
            return -1;
        }
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int check_gnuplot(const char *gnuplot, Error *err)
{
    char msg[512];
    char *argv[] = {(char *)gnuplot, "--version", NULL};
    int rc = run_capture(argv, msg, sizeof msg, err);
    if (rc < 0) return -1;
    if (rc != 0 || strncmp(msg, "gnuplot", 7) != 0) {
        error_set(err, "gnuplot %s ('%s'): the figures need it; install gnuplot-nox "
                       "(apt-get install gnuplot-nox, or make deps)",
                  rc == 127 ? "not found" : "does not run", gnuplot);
        return -1;
    }
    return 0;
}

/* The last line of gnuplot's output (its error message). */
static void tail_lines(const char *msg, char *out, size_t len)
{
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    size_t start = n;
    while (start > 0 && msg[start - 1] != '\n') start--;
    snprintf(out, len, "%.*s", (int)(n - start), msg + start);
    for (char *p = out; *p; p++)
        if (*p == '\n') *p = ' ';
}

/* Draws one kind from its data files: one gnuplot run per format. */
static int render(Plot *p, const char *kind, Error *err)
{
    char script[1200], target[1200], dir[2100], expr[2300], msg[8192];
    if (join_path(script, sizeof script, p->scripts, kind, ".gp", err)) return -1;
    if (gp_string_buf(dir, sizeof dir, p->out_dir)) {
        error_set(err, "path too long: %s", p->out_dir);
        return -1;
    }
    const char *formats[] = {p->o->png ? "png" : NULL, p->o->svg ? "svg" : NULL};
    for (int f = 0; f < 2; f++) {
        if (!formats[f]) continue;
        int n = snprintf(expr, sizeof expr, "dir=%s; fmt='%s'", dir, formats[f]);
        if (n < 0 || (size_t)n >= sizeof expr) {
            error_set(err, "path too long: %s", p->out_dir);
            return -1;
        }
        char suffix[8];
        snprintf(suffix, sizeof suffix, ".%s", formats[f]);
        if (join_path(target, sizeof target, p->out_dir, kind, suffix, err)) return -1;
        if (unlink(target) != 0 && errno != ENOENT) {
            error_set(err, "%s: cannot replace: %s", target, strerror(errno));
            return -1;
        }
        char *argv[] = {(char *)p->o->gnuplot, "-e", expr, script, NULL};
        int rc = run_capture(argv, msg, sizeof msg, err);
        if (rc < 0) return -1;
        struct stat st;
        if (rc != 0 || stat(target, &st) != 0 || st.st_size == 0) {
            char tail[600];
            tail_lines(msg, tail, sizeof tail);
            error_set(err, "gnuplot %s %s failed (exit %d): %s", kind, formats[f], rc, tail[0] ? tail : "no output file");
            return -1;
        }
        fprintf(p->out, "%s\n", target);
    }
    return 0;
}

/* The variables every script uses. */
static void write_common_vars(const Plot *p, FILE *v, const char *kind, const char *subtitle, const char *xlabel,
                              const char *ylabel, int width, int height)
{
    fprintf(v, "# Written by `bigbatch plot` for plots/%s.gp, which loads it; draw again with\n"
               "#   gnuplot -e \"dir='%s'; fmt='png'\" plots/%s.gp\n",
            kind, p->out_dir, kind);
    gp_var(v, "figtitle", p->figtitle);
    gp_var(v, "subtitle", subtitle);
    gp_var(v, "xlabel", xlabel);
    gp_var(v, "ylabel", ylabel);
    fprintf(v, "width = %d\nheight = %d\n", width, height);
}

static void data_header(const Plot *p, FILE *f, const char *kind, const char *columns)
{
    fprintf(f, "# bigbatch plot %s: experiment %s, %s scale, metric %s, database %s\n", kind, p->exp->name,
            p->exp->scale, p->exp->metric, p->d.path);
    fprintf(f, "# blocks (gnuplot index) separated by two blank lines; columns: %s\n", columns);
}

/* Finishes a kind: closes its files and draws it. */
static int finish(Plot *p, const char *kind, FILE *dat, const char *dat_path, FILE *vars, const char *vars_path,
                  Error *err)
{
    int rc = close_out(dat, dat_path, err);
    if (close_out(vars, vars_path, rc ? &(Error){{0}} : err)) rc = -1;
    if (rc) return -1;
    fprintf(p->out, "%s\n", dat_path);
    if (render(p, kind, err)) return -1;
    return 1;
}

/* ---- series along the batch axis (accuracy-vs-batch, steps-to-target) -------------------- */

typedef struct {
    int series;
    double batch;
    double value, std;  /* scaled; NAN when diverged */
    bool diverged;
    int extra;          /* steps-to-target: the epoch */
    char note[160];     /* the cell: best tuned values */
} Point;

static int cmp_point(const void *a, const void *b)
{
    const Point *x = a, *y = b;
    if (x->series != y->series) return x->series < y->series ? -1 : 1;
    return x->batch < y->batch ? -1 : x->batch > y->batch;
}

static bool batch_axis_ok(const Plot *p, const char *kind)
{
    const ExpKey *k = cells_find_key(p->exp, "batch");
    if (!k || k->role == KEY_FIXED || !cells_is_group_axis(p->exp, "batch")) {
        fprintf(p->warn, "bigbatch plot: %s skipped: batch is not an axis of %s (a [grid] key that is not tuned)\n",
                kind, p->exp->name);
        return false;
    }
    return true;
}

/* x tics at every batch value shown, and the x range around them. */
static void write_batch_tics(FILE *v, const Point *pts, int n, const Point *more, int n_more)
{
    double lo = INFINITY, hi = -INFINITY;
    char tics[2048] = "";
    double seen[256];
    int n_seen = 0;
    for (int i = 0; i < n + n_more; i++) {
        double b = i < n ? pts[i].batch : more[i - n].batch;
        bool dup = false;
        for (int j = 0; j < n_seen && !dup; j++) dup = seen[j] == b;
        if (dup || n_seen == 256) continue;
        seen[n_seen++] = b;
        if (b < lo) lo = b;
        if (b > hi) hi = b;
    }
    for (int i = 0; i < n_seen; i++) /* sorted for the reader of the file */
        for (int j = i + 1; j < n_seen; j++)
            if (seen[j] < seen[i]) {
                double t = seen[i];
                seen[i] = seen[j];
                seen[j] = t;
            }
    for (int i = 0; i < n_seen; i++) append(tics, sizeof tics, "%s%.10g", i ? " " : "", seen[i]);
    gp_var(v, "xticks", tics);
    fprintf(v, "xmin = %.10g\nxmax = %.10g\n", lo / 1.5, hi * 1.5);
}

/* ---- accuracy-vs-batch ------------------------------------------------------------------ */

static int fig_accuracy(Plot *p, Error *err)
{
    const char *kind = "accuracy-vs-batch";
    if (!batch_axis_ok(p, kind)) return 0;
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    double scale = metric_scale(exp->metric);
    int n_groups;
    Group *groups = collect_groups(set, &n_groups);
    StrList series = {0}, pseries = {0};
    Point *pts = xcalloc((size_t)n_groups, sizeof *pts, "plot points");
    Point *paper = xcalloc((size_t)(exp->n_paper_rows > 0 ? exp->n_paper_rows : 1), sizeof *paper, "plot points");
    int n = 0, n_paper = 0, n_div = 0, rc = 0;
    FILE *dat = NULL, *vars = NULL;
    char dat_path[1200], vars_path[1200], key[256], buf[512];
    for (int g = 0; g < n_groups; g++) {
        const Group *gr = &groups[g];
        if (!gr->best && !group_diverged(gr)) continue; /* nothing ended yet */
        const Cell *c = gr->best ? gr->best : &set->cells[gr->first];
        double b;
        if (!is_number(cells_value_in(exp, c->cell, "batch"), &b) || b <= 0) continue;
        cell_keys(exp, c->cell, true, false, "batch", key, sizeof key);
        Point *pt = &pts[n++];
        pt->series = strlist_add(&series, key);
        pt->batch = b;
        pt->diverged = !gr->best;
        pt->value = gr->best ? gr->best->mean * scale : NAN;
        pt->std = gr->best && isfinite(gr->best->std) ? gr->best->std * scale : 0;
        if (gr->best) cell_keys(exp, c->cell, false, true, NULL, pt->note, sizeof pt->note);
        if (!pt->note[0]) snprintf(pt->note, sizeof pt->note, "%s", pt->diverged ? "diverged" : "-");
        n_div += pt->diverged;
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: %s skipped: no cell of %s has ended yet\n", kind, exp->name);
        goto out;
    }
    qsort(pts, (size_t)n, sizeof *pts, cmp_point);
    /* The paper's rows with a batch column, grouped by their values of our series axes. */
    int bcol = -1;
    for (int c = 0; c + 1 < exp->n_paper_cols && experiment_paper_applies(exp); c++) /* [paper] scales */
        if (!strcmp(exp->paper_cols[c], "batch")) bcol = c;
    for (int r = 0; bcol >= 0 && r < exp->n_paper_rows; r++) {
        const char *const *row = (const char *const *)exp->paper_rows[r];
        const char *val = row[exp->n_paper_cols - 1];
        double b, x = NAN;
        bool div = !strcmp(val, "diverged");
        if (!is_number(row[bcol], &b) || b <= 0 || (!div && !is_number(val, &x))) continue;
        bool match = true;
        key[0] = 0;
        for (int c = 0; c + 1 < exp->n_paper_cols && match; c++) {
            const char *col = exp->paper_cols[c];
            const ExpKey *k = cells_find_key(exp, col);
            if (c == bcol || !k || follows_axis(exp, col, "batch")) continue;
            if (k->role == KEY_FIXED) match = cells_same_value(k->values[0], row[c]);
            else if (is_group_grid_key(exp, col)) append(key, sizeof key, "%s%s=%s", key[0] ? " " : "", col, row[c]);
        }
        if (!match) continue;
        int s = strlist_add(&pseries, key);
        Point *q = NULL; /* one point per series and batch: the paper's best */
        for (int i = 0; i < n_paper && !q; i++)
            if (paper[i].series == s && paper[i].batch == b) q = &paper[i];
        if (!q) {
            q = &paper[n_paper++];
            *q = (Point){.series = s, .batch = b, .value = NAN, .diverged = true};
        }
        if (!div && scale == 100 && x > 1.5) x /= 100; /* an accuracy filed in percent */
        if (!div && (q->diverged || cells_better(set, x * scale, q->value))) {
            q->value = x * scale;
            q->diverged = false;
        }
    }
    qsort(paper, (size_t)n_paper, sizeof *paper, cmp_point);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n + n_paper; i++) {
        const Point *q = i < n ? &pts[i] : &paper[i - n];
        if (q->diverged) continue;
        if (q->value - q->std < lo) lo = q->value - q->std;
        if (q->value + q->std > hi) hi = q->value + q->std;
    }
    if (!isfinite(lo)) {
        lo = 0;
        hi = metric_is_acc(exp->metric) ? 100 : 1;
    }
    double span = hi - lo > 0 ? hi - lo : (fabs(hi) > 0 ? fabs(hi) * 0.1 : 1);
    bool any_div = n_div > 0;
    for (int i = 0; i < n_paper; i++) any_div |= paper[i].diverged;

    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "batch, metric (mean over repeats), std, ok|diverged, the best cell's tuned values");
    for (int s = 0; s < series.n; s++) {
        fprintf(dat, "%s# series %d: %s\n", s ? "\n\n" : "", s + 1, series.v[s][0] ? series.v[s] : "ours");
        for (int i = 0; i < n; i++) {
            if (pts[i].series != s) continue;
            fprintf(dat, "%.10g %.6g %.6g %s ", pts[i].batch, pts[i].value, pts[i].std, pts[i].diverged ? "diverged" : "ok");
            data_label(dat, pts[i].note);
            fputc('\n', dat);
        }
    }
    char paper_path[1200];
    FILE *pf = open_out(p, kind, "-paper.dat", paper_path, sizeof paper_path, err);
    if (!pf) goto fail;
    data_header(p, pf, "accuracy-vs-batch (the paper's rows)", "batch, metric, ok|diverged");
    for (int s = 0; s < pseries.n; s++) {
        fprintf(pf, "%s# paper series %d: %s\n", s ? "\n\n" : "", s + 1, pseries.v[s]);
        for (int i = 0; i < n_paper; i++)
            if (paper[i].series == s)
                fprintf(pf, "%.10g %.6g %s\n", paper[i].batch, paper[i].value, paper[i].diverged ? "diverged" : "ok");
    }
    if (close_out(pf, paper_path, err)) goto fail;
    fprintf(p->out, "%s\n", paper_path);

    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) goto fail;
    char sub[512], tl[256];
    if (exp->n_tuned) snprintf(sub, sizeof sub, "%s against the batch size; each point the best over %s", metric_label(exp->metric),
                               tuned_list(exp, tl, sizeof tl));
    else snprintf(sub, sizeof sub, "%s against the batch size", metric_label(exp->metric));
    write_common_vars(p, vars, kind, sub, key_label("batch"), metric_label(exp->metric), 960, 680);
    char **titles = xcalloc((size_t)series.n, sizeof *titles, "plot titles");
    for (int s = 0; s < series.n; s++) titles[s] = series.v[s][0] ? series.v[s] : "ours";
    fprintf(vars, "nseries = %d\n", series.n);
    gp_array(vars, "stitle", titles, series.n);
    free(titles);
    char **ptitles = xcalloc((size_t)(pseries.n > 0 ? pseries.n : 1), sizeof *ptitles, "plot titles");
    double *pcolor = xcalloc((size_t)(pseries.n > 0 ? pseries.n : 1), sizeof *pcolor, "plot colors");
    for (int s = 0; s < pseries.n; s++) {
        snprintf(buf, sizeof buf, pseries.v[s][0] ? "paper (%s)" : "paper%s", pseries.v[s]);
        ptitles[s] = xstrdup(buf);
        int ours = strlist_find(&series, pseries.v[s]);
        pcolor[s] = ours >= 0 ? ours + 1 : series.n + 1;
    }
    fprintf(vars, "npaper = %d\n", pseries.n);
    gp_array(vars, "ptitle", ptitles, pseries.n);
    gp_num_array(vars, "pcolor", pcolor, pseries.n);
    for (int s = 0; s < pseries.n; s++) free(ptitles[s]);
    free(ptitles);
    free(pcolor);
    write_batch_tics(vars, pts, n, paper, n_paper);
    /* Diverged points sit in a band below the lowest value. */
    fprintf(vars, "ylo = %.10g\nyhi = %.10g\nydiv = %.10g\nydivtop = %.10g\ndivband = %d\nndiverged = %d\n",
            lo - (any_div ? 0.3 : 0.1) * span, hi + 0.1 * span, lo - 0.2 * span, lo - 0.1 * span, any_div, n_div);
    rc = finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    strlist_free(&series);
    strlist_free(&pseries);
    free(pts);
    free(paper);
    free(groups);
    return rc;
}

/* ---- heatmap ---------------------------------------------------------------------------- */

/* The values of one key over the cells: file order, sorted when all are numbers. */
static void axis_values(const CellSet *set, const char *key, StrList *out)
{
    for (int i = 0; i < set->n_cells; i++) {
        const char *v = cells_value_in(set->exp, set->cells[i].cell, key);
        strlist_add(out, v ? v : "-");
    }
    for (int i = 0; i < out->n; i++)
        if (!is_number(out->v[i], NULL)) return;
    for (int i = 0; i < out->n; i++)
        for (int j = i + 1; j < out->n; j++)
            if (strtod(out->v[j], NULL) < strtod(out->v[i], NULL)) {
                char *t = out->v[i];
                out->v[i] = out->v[j];
                out->v[j] = t;
            }
}

/* The two axes: the first two tuned axes; else batch, else the first other grid key. */
static int heatmap_axes(const Experiment *exp, const CellSet *set, const char *ax[2])
{
    int n = 0;
    for (int t = 0; t < exp->n_tuned && n < 2; t++) ax[n++] = exp->tuned[t];
    const cJSON *first = set->cells[0].cell;
    if (n < 2 && cells_is_group_axis(exp, "batch") && cJSON_GetObjectItemCaseSensitive(first, "batch") &&
        (n == 0 || strcmp(ax[0], "batch")))
        ax[n++] = "batch";
    for (const cJSON *it = first->child; it && n < 2; it = it->next) {
        const ExpKey *k = cells_find_key(exp, it->string);
        if (k && k->role == KEY_GRID && (n == 0 || strcmp(ax[0], it->string))) ax[n++] = it->string;
    }
    return n;
}

/* A heatmap panel: the values of the grid keys other than the two axes. */
static void panel_key(const Experiment *exp, const cJSON *cell, const char *const ax[2], char *buf, size_t len)
{
    buf[0] = 0;
    for (const cJSON *it = cell->child; it; it = it->next) {
        const ExpKey *k = cells_find_key(exp, it->string);
        if (!k || k->role != KEY_GRID || !cJSON_IsString(it) || !strcmp(it->string, ax[0]) || !strcmp(it->string, ax[1]))
            continue;
        append(buf, len, "%s%s=%s", buf[0] ? " " : "", it->string, it->valuestring);
    }
}

typedef struct {
    int panel, xi, yi;
    const Cell *cell;   /* the best trained cell of the slot, or NULL */
    bool diverged, any;
} Slot;

static int fig_heatmap(Plot *p, Error *err)
{
    const char *kind = "heatmap";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    const char *ax[2];
    if (heatmap_axes(exp, set, ax) < 2) {
        fprintf(p->warn, "bigbatch plot: heatmap skipped: %s has fewer than two axes to cross\n", exp->name);
        return 0;
    }
    StrList xs = {0}, ys = {0}, panels = {0};
    axis_values(set, ax[0], &xs);
    axis_values(set, ax[1], &ys);
    Slot *slots = xcalloc((size_t)set->n_cells, sizeof *slots, "heatmap cells");
    int n = 0, rc = 0;
    char key[256], dat_path[1200], vars_path[1200];
    FILE *dat = NULL, *vars = NULL;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        panel_key(exp, c->cell, ax, key, sizeof key);
        int pi = strlist_find(&panels, key);
        if (pi < 0) {
            if (panels.n == MAX_PANELS) continue;
            pi = strlist_add(&panels, key);
        }
        const char *vx = cells_value_in(exp, c->cell, ax[0]), *vy = cells_value_in(exp, c->cell, ax[1]);
        int xi = strlist_find(&xs, vx ? vx : "-"), yi = strlist_find(&ys, vy ? vy : "-");
        Slot *s = NULL;
        for (int j = 0; j < n && !s; j++)
            if (slots[j].panel == pi && slots[j].xi == xi && slots[j].yi == yi) s = &slots[j];
        if (!s) {
            s = &slots[n++];
            *s = (Slot){pi, xi, yi, NULL, false, true};
        }
        if (trained(c) && (!s->cell || cells_better(set, c->mean, s->cell->mean))) s->cell = c;
        if (c->diverged > 0) s->diverged = true;
    }
    int n_left = 0;
    for (int i = 0; i < set->n_cells; i++) {
        panel_key(exp, set->cells[i].cell, ax, key, sizeof key);
        n_left += strlist_find(&panels, key) < 0;
    }
    if (n_left) fprintf(p->warn, "bigbatch plot: heatmap: %d cells beyond the first %d panels left out\n", n_left, MAX_PANELS);
    double scale = metric_scale(exp->metric), lo = INFINITY, hi = -INFINITY;
    int n_ok = 0;
    for (int i = 0; i < n; i++) {
        if (!slots[i].cell) continue;
        double v = slots[i].cell->mean * scale;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        n_ok++;
    }
    bool any_div = false;
    for (int i = 0; i < n; i++) any_div |= !slots[i].cell && slots[i].diverged;
    if (n_ok == 0 && !any_div) {
        fprintf(p->warn, "bigbatch plot: heatmap skipped: no cell of %s has ended yet\n", exp->name);
        goto out;
    }
    if (!isfinite(lo)) lo = 0, hi = 1;
    if (hi <= lo) {
        double d = fabs(hi) > 0 ? fabs(hi) * 0.05 : 0.5;
        lo -= d;
        hi += d;
    }
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "x index, y index, metric, label, ok|diverged|missing, best of its group (1/0)");
    for (int pi = 0; pi < panels.n; pi++) {
        fprintf(dat, "%s# panel %d: %s\n", pi ? "\n\n" : "", pi + 1, panels.v[pi][0] ? panels.v[pi] : "all cells");
        for (int yi = 0; yi < ys.n; yi++)
            for (int xi = 0; xi < xs.n; xi++)
                for (int i = 0; i < n; i++) {
                    const Slot *s = &slots[i];
                    if (s->panel != pi || s->xi != xi || s->yi != yi) continue;
                    char label[64];
                    const char *status = s->cell ? "ok" : s->diverged ? "diverged" : "missing";
                    if (s->cell) snprintf(label, sizeof label, metric_is_acc(exp->metric) ? "%.1f" : "%.3g", s->cell->mean * scale);
                    else snprintf(label, sizeof label, "%s", s->diverged ? "div" : "-");
                    fprintf(dat, "%d %d %.6g ", xi, yi, s->cell ? s->cell->mean * scale : NAN);
                    data_label(dat, label);
                    fprintf(dat, " %s %d    # %s=%s %s=%s\n", status, s->cell && s->cell->best, ax[0], xs.v[xi], ax[1], ys.v[yi]);
                }
    }
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) goto fail;
    char sub[512];
    snprintf(sub, sizeof sub, "%s over %s and %s; grey: diverged%s", metric_label(exp->metric), ax[0], ax[1],
             exp->n_tuned ? "; framed: the best of its group" : "");
    int cols = panels.n < 3 ? panels.n : (panels.n == 4 ? 2 : 3), rows = (panels.n + cols - 1) / cols;
    int width = cols * 560 > 800 ? cols * 560 : 800, height = rows * 480 + 80 > 600 ? rows * 480 + 80 : 600;
    write_common_vars(p, vars, kind, sub, key_label(ax[0]), key_label(ax[1]), width, height);
    gp_var(vars, "cblabel", metric_label(exp->metric));
    fprintf(vars, "npanels = %d\nrows = %d\ncols = %d\n", panels.n, rows, cols);
    char **pt = xcalloc((size_t)panels.n, sizeof *pt, "plot titles");
    for (int i = 0; i < panels.n; i++) pt[i] = panels.v[i][0] ? panels.v[i] : "all cells";
    gp_array(vars, "ptitle", pt, panels.n);
    free(pt);
    fprintf(vars, "nx = %d\nny = %d\n", xs.n, ys.n);
    gp_array(vars, "xlab", xs.v, xs.n);
    gp_array(vars, "ylab", ys.v, ys.n);
    fprintf(vars, "cbmin = %.10g\ncbmax = %.10g\nbetter_high = %d\n", lo, hi, p->set->higher_is_better);
    rc = finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    strlist_free(&xs);
    strlist_free(&ys);
    strlist_free(&panels);
    free(slots);
    return rc;
}

/* ---- layer-ratios ----------------------------------------------------------------------- */

typedef struct {
    int n;
    char **name, **kind;
    double *ratio;
    int *members; /* cell indices with the same ratios */
    int n_members;
} Ratios;

static void ratios_free(Ratios *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->name[i]);
        free(r->kind[i]);
    }
    free(r->name);
    free(r->kind);
    free(r->ratio);
    free(r->members);
    memset(r, 0, sizeof *r);
}

/* The step-0 statistics of one run; r->n = 0 when it has none. */
static int load_ratios(Plot *p, const char *run_id, Ratios *r, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(&p->d.store, &st,
                      "SELECT name, kind, ratio FROM layer_stats WHERE run_id = ?1 AND step = 0 ORDER BY param", err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        r->name = xrealloc(r->name, sizeof *r->name * (size_t)(r->n + 1), "layer names");
        r->kind = xrealloc(r->kind, sizeof *r->kind * (size_t)(r->n + 1), "layer kinds");
        r->ratio = xrealloc(r->ratio, sizeof *r->ratio * (size_t)(r->n + 1), "layer ratios");
        const char *name = (const char *)sqlite3_column_text(st, 0), *k = (const char *)sqlite3_column_text(st, 1);
        r->name[r->n] = xstrdup(name ? name : "?");
        r->kind[r->n] = xstrdup(k ? k : "?");
        r->ratio[r->n] = sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2);
        r->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        error_set(err, "%s: reading layer_stats: %s", p->d.path, sqlite3_errstr(rc));
        return -1;
    }
    return 0;
}

static bool same_ratios(const Ratios *a, const Ratios *b)
{
    if (a->n != b->n) return false;
    for (int i = 0; i < a->n; i++) {
        if (strcmp(a->name[i], b->name[i])) return false;
        double x = a->ratio[i], y = b->ratio[i];
        if (isnan(x) != isnan(y)) return false;
        if (!isnan(x) && fabs(x - y) > 1e-6 * fmax(fabs(x), fabs(y))) return false;
    }
    return true;
}

/* "k=v ..." of the keys that vary over the experiment and are shared by every member. */
static void members_title(const CellSet *set, const Ratios *r, char *buf, size_t len)
{
    buf[0] = 0;
    const cJSON *first = set->cells[r->members[0]].cell;
    for (const cJSON *it = first->child; it; it = it->next) {
        bool varies = false, shared = true;
        for (int i = 0; i < set->n_cells && !varies; i++) {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(set->cells[i].cell, it->string);
            varies = !cJSON_IsString(o) || strcmp(o->valuestring, it->valuestring);
        }
        for (int m = 1; m < r->n_members && shared; m++) {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(set->cells[r->members[m]].cell, it->string);
            shared = cJSON_IsString(o) && !strcmp(o->valuestring, it->valuestring);
        }
        if (varies && shared) append(buf, len, "%s%s=%s", buf[0] ? " " : "", it->string, it->valuestring);
    }
    if (!buf[0]) snprintf(buf, len, "%s", r->n_members > 1 ? "every cell" : "ours");
    if (r->n_members > 1) append(buf, len, " (%d cells, the same at step 0)", r->n_members);
}

static int fig_layer_ratios(Plot *p, Error *err)
{
    const char *kind = "layer-ratios";
    const CellSet *set = p->set;
    Ratios *series = xcalloc(MAX_SERIES, sizeof *series, "layer ratios");
    int n = 0, left_out = 0, rc = 0;
    FILE *dat = NULL, *vars = NULL;
    char dat_path[1200], vars_path[1200];
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        Ratios r = {0};
        /* The first complete run; else any run of the cell (step 0 comes before a divergence). */
        const char *id = first_complete(c);
        if (id && load_ratios(p, id, &r, err)) goto fail;
        for (int k = 0; k < c->runs && r.n == 0; k++)
            if (load_ratios(p, c->run_list[k].id, &r, err)) goto fail;
        if (r.n == 0) continue;
        int s = 0;
        while (s < n && !same_ratios(&series[s], &r)) s++;
        if (s == n && n == MAX_SERIES) {
            left_out++;
            ratios_free(&r);
            continue;
        }
        if (s == n) series[n++] = r;
        else ratios_free(&r);
        series[s].members = xrealloc(series[s].members, sizeof *series[s].members * (size_t)(series[s].n_members + 1),
                                     "layer ratio members");
        series[s].members[series[s].n_members++] = i;
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: layer-ratios skipped: no run of %s has layer statistics "
                         "(set layer-stats = yes or layer-stats-every = N in [train])\n",
                p->exp->name);
        goto out;
    }
    if (left_out)
        fprintf(p->warn, "bigbatch plot: layer-ratios: %d cells beyond the first %d distinct ones left out\n", left_out,
                MAX_SERIES);
    int nparams = 0;
    bool same_names = true;
    for (int s = 0; s < n; s++) {
        if (series[s].n > nparams) nparams = series[s].n;
        if (series[s].n != series[0].n) same_names = false;
        for (int i = 0; same_names && i < series[s].n; i++) same_names = !strcmp(series[s].name[i], series[0].name[i]);
    }
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "parameter index (network order), ||w||/||g|| at step 0, kind, name");
    char **titles = xcalloc((size_t)n, sizeof *titles, "plot titles");
    for (int s = 0; s < n; s++) {
        char t[320];
        members_title(set, &series[s], t, sizeof t);
        titles[s] = xstrdup(t);
        fprintf(dat, "%s# series %d: %s; cells:", s ? "\n\n" : "", s + 1, t);
        for (int m = 0; m < series[s].n_members; m++) fprintf(dat, " [%s]", set->cells[series[s].members[m]].label);
        fputc('\n', dat);
        for (int i = 0; i < series[s].n; i++) {
            fprintf(dat, "%d %.6g %s ", i, series[s].ratio[i], series[s].kind[i]);
            data_label(dat, series[s].name[i]);
            fputc('\n', dat);
        }
    }
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) {
        for (int s = 0; s < n; s++) free(titles[s]);
        free(titles);
        goto fail;
    }
    write_common_vars(p, vars, kind,
                      "||w|| / ||g|| per parameter tensor at the first iteration (the LARS paper's Table 2)",
                      "parameter tensor, in network order", "||w|| / ||g|| (log scale)", nparams > 24 ? 1200 : 960,
                      680);
    fprintf(vars, "nseries = %d\n", n);
    gp_array(vars, "stitle", titles, n);
    for (int s = 0; s < n; s++) free(titles[s]);
    free(titles);
    fprintf(vars, "nparams = %d\nnnames = %d\n", nparams, same_names && nparams <= 40 ? nparams : 0);
    gp_array(vars, "pname", series[0].name, same_names && nparams <= 40 ? nparams : 0);
    rc = finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    for (int s = 0; s < n; s++) ratios_free(&series[s]);
    free(series);
    return rc;
}

/* ---- loss-curves ------------------------------------------------------------------------ */

/* Per epoch, the mean over the cell's complete runs: writes the block, returns the rows, and
 * the last epoch's gap and epoch in *gap and *last. */
static int write_loss_block(Plot *p, FILE *dat, const Cell *c, double *gap, int *last, Error *err)
{
    size_t len = (size_t)c->runs * 20 + 3;
    char *ids = xmalloc(len, "run ids");
    ids[0] = 0;
    append(ids, len, "[");
    for (int r = 0, k = 0; r < c->runs; r++)
        if (c->run_list[r].complete) append(ids, len, "%s\"%s\"", k++ ? "," : "", c->run_list[r].id);
    append(ids, len, "]");
    sqlite3_stmt *st;
    if (store_prepare(&p->d.store, &st,
                      "SELECT epoch, avg(train_loss), avg(test_loss), avg(loss_gap), count(*) FROM epochs"
                      " WHERE run_id IN (SELECT value FROM json_each(?1)) GROUP BY epoch ORDER BY epoch",
                      err)) {
        free(ids);
        return -1;
    }
    sqlite3_bind_text(st, 1, ids, -1, SQLITE_STATIC);
    int rc, rows = 0;
    *gap = NAN;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        double v[3];
        for (int k = 0; k < 3; k++) v[k] = sqlite3_column_type(st, k + 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, k + 1);
        *last = sqlite3_column_int(st, 0);
        *gap = v[2];
        fprintf(dat, "%d %.6g %.6g %.6g %d\n", *last, v[0], v[1], v[2], sqlite3_column_int(st, 4));
        rows++;
    }
    sqlite3_finalize(st);
    free(ids);
    if (rc != SQLITE_DONE) {
        error_set(err, "%s: reading epochs: %s", p->d.path, sqlite3_errstr(rc));
        return -1;
    }
    return rows;
}

static int fig_loss_curves(Plot *p, Error *err)
{
    const char *kind = "loss-curves";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    int n_groups, n = 0, rc = 0, max_epoch = 0, left_out = 0;
    Group *groups = collect_groups(set, &n_groups);
    char **titles = xcalloc(MAX_SERIES, sizeof *titles, "plot titles");
    char dat_path[1200], vars_path[1200], diverged[NOTE_CHARS] = "";
    FILE *dat = NULL, *vars = NULL;
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind, "epoch, train loss, test loss, loss gap (test - train), runs averaged");
    for (int g = 0; g < n_groups; g++) {
        const Group *gr = &groups[g];
        char key[256], tuned[160], title[400];
        cell_keys(exp, set->cells[gr->first].cell, true, false, NULL, key, sizeof key);
        if (!gr->best) {
            if (group_diverged(gr)) append(diverged, sizeof diverged, "%s%s", diverged[0] ? ", " : "", key[0] ? key : "all");
            continue;
        }
        if (n == MAX_SERIES) {
            left_out++;
            continue;
        }
        cell_keys(exp, gr->best->cell, false, true, NULL, tuned, sizeof tuned);
        fprintf(dat, "%s# series %d: %s %s\n", n ? "\n\n" : "", n + 1, key, tuned);
        double gap;
        int last = 0;
        int rows = write_loss_block(p, dat, gr->best, &gap, &last, err);
        if (rows < 0) goto fail;
        if (rows == 0) fprintf(dat, "NaN NaN NaN NaN 0\n"); /* keeps one block per title */
        if (last > max_epoch) max_epoch = last;
        title[0] = 0;
        append(title, sizeof title, "%s", key[0] ? key : "ours");
        if (tuned[0]) append(title, sizeof title, " (%s)", tuned);
        append(title, sizeof title, "%s: gap %.3g", gr->best->complete > 1 ? " mean" : "", gap);
        titles[n++] = xstrdup(title);
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: loss-curves skipped: no cell of %s has completed\n", exp->name);
        goto out;
    }
    if (left_out) fprintf(p->warn, "bigbatch plot: loss-curves: %d groups beyond the first %d left out\n", left_out, MAX_SERIES);
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) goto fail;
    char sub[512], tl[256];
    snprintf(sub, sizeof sub, "loss per epoch, solid: train, dashed: test%s%s; gap: test - train, last epoch",
             exp->n_tuned ? "; best over " : "", exp->n_tuned ? tuned_list(exp, tl, sizeof tl) : "");
    write_common_vars(p, vars, kind, sub, "epoch", "loss (cross-entropy)", 960, 720);
    fprintf(vars, "nseries = %d\nmaxepoch = %d\n", n, max_epoch);
    gp_array(vars, "stitle", titles, n);
    char note[NOTE_CHARS + 16] = "";
    if (diverged[0]) snprintf(note, sizeof note, "diverged: %s", diverged);
    gp_var(vars, "note", note);
    rc = finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) {
        fclose(dat);
        if (rc == 0) remove(dat_path);
    }
    if (vars) fclose(vars);
    for (int i = 0; i < n; i++) free(titles[i]);
    free(titles);
    free(groups);
    return rc;
}

/* ---- steps-to-target -------------------------------------------------------------------- */

/* The step count at the end of the first epoch whose metric reaches the target: 0 and *step
 * set, 1 when never, -1 with err. */
static int steps_to_target(Plot *p, const char *run_id, long *step, int *epoch, Error *err)
{
    char sql[256];
    bool higher = p->set->higher_is_better;
    snprintf(sql, sizeof sql, "SELECT step, epoch FROM epochs WHERE run_id = ?1 AND %s %s ?2 ORDER BY epoch LIMIT 1",
             metric_epoch_column(p->exp->metric), higher ? ">=" : "<=");
    sqlite3_stmt *st;
    if (store_prepare(&p->d.store, &st, sql, err)) return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, p->exp->target);
    int rc = sqlite3_step(st), found = 1;
    if (rc == SQLITE_ROW) {
        *step = sqlite3_column_int64(st, 0);
        *epoch = sqlite3_column_int(st, 1);
        found = 0;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        error_set(err, "%s: reading epochs: %s", p->d.path, sqlite3_errstr(rc));
        return -1;
    }
    return found;
}

static int fig_steps(Plot *p, Error *err)
{
    const char *kind = "steps-to-target";
    const Experiment *exp = p->exp;
    const CellSet *set = p->set;
    if (isnan(exp->target)) {
        fprintf(p->warn, "bigbatch plot: steps-to-target skipped: %s sets no target ([experiment] target = X)\n",
                exp->name);
        return 0;
    }
    if (!batch_axis_ok(p, kind)) return 0;
    double scale = metric_scale(exp->metric);
    StrList series = {0}, missed = {0};
    Point *pts = xcalloc((size_t)set->n_cells, sizeof *pts, "plot points");
    int n = 0, rc = 0, n_missed_cells = 0;
    char key[256], dat_path[1200], vars_path[1200];
    FILE *dat = NULL, *vars = NULL;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        double b;
        if (!is_number(cells_value_in(exp, c->cell, "batch"), &b) || b <= 0) continue;
        cell_keys(exp, c->cell, true, false, "batch", key, sizeof key);
        const char *id = first_complete(c);
        long step = 0;
        int epoch = 0, found = 1;
        if (id && (found = steps_to_target(p, id, &step, &epoch, err)) < 0) goto fail;
        if (!id && c->diverged == 0) continue; /* not run yet */
        int s = strlist_add(&series, key);
        Point *q = NULL;
        for (int k = 0; k < n && !q; k++)
            if (pts[k].series == s && pts[k].batch == b) q = &pts[k];
        if (!q) {
            q = &pts[n++];
            *q = (Point){.series = s, .batch = b, .value = NAN, .diverged = true};
        }
        if (found != 0) {
            n_missed_cells++;
            continue;
        }
        if (q->diverged || step < q->value) { /* the fewest steps over the tuned axes */
            q->value = (double)step;
            q->diverged = false;
            q->extra = epoch;
            cell_keys(exp, c->cell, false, true, NULL, q->note, sizeof q->note);
        }
    }
    /* Groups where no cell reached the target: left out, named in the note. */
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!pts[i].diverged) {
            pts[k++] = pts[i];
            continue;
        }
        char g[300];
        snprintf(g, sizeof g, "%s%sbatch=%.10g", series.v[pts[i].series], series.v[pts[i].series][0] ? " " : "", pts[i].batch);
        strlist_add(&missed, g);
    }
    n = k;
    char target_text[64];
    snprintf(target_text, sizeof target_text, metric_is_acc(exp->metric) ? "%.4g%%" : "%.4g", exp->target * scale);
    char note[NOTE_CHARS + 64] = "", all_missed[4096] = "";
    for (int i = 0; i < missed.n; i++) append(all_missed, sizeof all_missed, "%s%s", i ? ", " : "", missed.v[i]);
    if (missed.n) {
        snprintf(note, sizeof note, "never reached %s: %.*s%s", target_text, NOTE_CHARS - 20, all_missed,
                 strlen(all_missed) > NOTE_CHARS - 20 ? "..." : "");
        fprintf(p->warn, "bigbatch plot: steps-to-target: %s never reached %s %s (%d of %d cells did not)\n",
                all_missed, exp->metric, target_text, n_missed_cells, set->n_cells);
    }
    if (n == 0) {
        fprintf(p->warn, "bigbatch plot: steps-to-target skipped: no cell of %s reached %s %s\n", exp->name,
                exp->metric, target_text);
        goto out;
    }
    qsort(pts, (size_t)n, sizeof *pts, cmp_point);
    if (!(dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err))) goto fail;
    data_header(p, dat, kind,
                "batch, steps to the target, perfect scaling from the smallest batch, epoch, the cell's tuned values");
    if (missed.n) fprintf(dat, "# never reached the target (left out): %s\n", all_missed);
    int block = 0;
    StrList shown = {0};
    for (int s = 0; s < series.n; s++) {
        const Point *first = NULL;
        for (int i = 0; i < n; i++) {
            if (pts[i].series != s) continue;
            if (!first) {
                first = &pts[i];
                fprintf(dat, "%s# series %d: %s\n", block ? "\n\n" : "", block + 1, series.v[s][0] ? series.v[s] : "ours");
                block++;
                strlist_add(&shown, series.v[s][0] ? series.v[s] : "ours");
            }
            fprintf(dat, "%.10g %.10g %.6g %d ", pts[i].batch, pts[i].value, first->value * first->batch / pts[i].batch,
                    pts[i].extra);
            data_label(dat, pts[i].note[0] ? pts[i].note : "-");
            fputc('\n', dat);
        }
    }
    if (!(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) {
        strlist_free(&shown);
        goto fail;
    }
    char sub[512], tl[256];
    snprintf(sub, sizeof sub, "steps until %s reaches %s (at the end of an epoch)%s%s", exp->metric, target_text,
             exp->n_tuned ? "; the fewest over " : "", exp->n_tuned ? tuned_list(exp, tl, sizeof tl) : "");
    write_common_vars(p, vars, kind, sub, key_label("batch"), "training steps to the target (log scale)", 960, 720);
    fprintf(vars, "nseries = %d\n", shown.n);
    gp_array(vars, "stitle", shown.v, shown.n);
    strlist_free(&shown);
    write_batch_tics(vars, pts, n, NULL, 0);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, pts[i].value);
        hi = fmax(hi, pts[i].value);
    }
    fprintf(vars, "ylo = %.10g\nyhi = %.10g\n", fmax(lo, 1) / 2, fmax(hi, 1) * 2); /* the reference stays inside */
    gp_var(vars, "note", note);
    rc = finish(p, kind, dat, dat_path, vars, vars_path, err);
    dat = vars = NULL;
    goto out;
fail:
    rc = -1;
out:
    if (dat) fclose(dat);
    if (vars) fclose(vars);
    strlist_free(&series);
    strlist_free(&missed);
    free(pts);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------ */

void plot_options_defaults(PlotOptions *o)
{
    memset(o, 0, sizeof *o);
    o->scale = "proxy";
    o->png = o->svg = true;
    o->gnuplot = "gnuplot";
}

static bool dir_has_scripts(const char *dir)
{
    char path[1200];
    int n = snprintf(path, sizeof path, "%s/accuracy-vs-batch.gp", dir);
    return n > 0 && (size_t)n < sizeof path && access(path, R_OK) == 0;
}

/* --plots, else <directory of the binary>/../plots, else ./plots. */
static int find_scripts(Plot *p, Error *err)
{
    if (p->o->plots_dir) {
        snprintf(p->scripts, sizeof p->scripts, "%s", p->o->plots_dir);
        if (dir_has_scripts(p->scripts)) return 0;
        error_set(err, "--plots %s: no gnuplot scripts there (accuracy-vs-batch.gp, ...)", p->o->plots_dir);
        return -1;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            int n = snprintf(p->scripts, sizeof p->scripts, "%s/../plots", exe);
            if (n > 0 && (size_t)n < sizeof p->scripts && dir_has_scripts(p->scripts)) return 0;
        }
    }
    snprintf(p->scripts, sizeof p->scripts, "plots");
    if (dir_has_scripts(p->scripts)) return 0;
    error_set(err, "the gnuplot scripts (plots/*.gp) are neither beside the binary (../plots) nor in ./plots: "
                   "give --plots DIR");
    return -1;
}

typedef int (*FigureFn)(Plot *p, Error *err);

static FigureFn figure_fn(const char *kind)
{
    if (!strcmp(kind, "accuracy-vs-batch")) return fig_accuracy;
    if (!strcmp(kind, "heatmap")) return fig_heatmap;
    if (!strcmp(kind, "layer-ratios")) return fig_layer_ratios;
    if (!strcmp(kind, "loss-curves")) return fig_loss_curves;
    if (!strcmp(kind, "steps-to-target")) return fig_steps;
    return NULL;
}

int plot_run(const PlotOptions *o, FILE *out, FILE *warn, Error *err)
{
    Plot p;
    memset(&p, 0, sizeof p);
    p.o = o;
    p.out = out;
    p.warn = warn;
    if (find_scripts(&p, err) || check_gnuplot(o->gnuplot, err)) return -1;
    {
        /* A clearer word than the store's when the database is not there at all. */
        Experiment exp;
        if (experiment_load(o->file, o->scale, &exp, err) != 0) return -1;
        char path[1024];
        int n = o->db ? snprintf(path, sizeof path, "%s", o->db) : snprintf(path, sizeof path, "results/%s.db", exp.name);
        bool missing = n > 0 && (size_t)n < sizeof path && access(path, F_OK) != 0;
        if (missing)
            error_set(err, "no results database %s (run bigbatch sweep %s --scale %s%s%s first)", path, o->file,
                      o->scale, o->db ? " --db " : "", o->db ? o->db : "");
        experiment_free(&exp);
        if (missing) return -1;
    }
    if (cells_open(&p.d, o->file, o->scale, o->db, err) != 0) return -1;
    p.exp = &p.d.exp;
    p.set = &p.d.set;
    int drawn = -1;
    int n = o->out ? snprintf(p.out_dir, sizeof p.out_dir, "%s", o->out)
                   : snprintf(p.out_dir, sizeof p.out_dir, "results/figures/%s", p.exp->name);
    if (n < 0 || (size_t)n >= sizeof p.out_dir) {
        error_set(err, "--out: path too long");
        goto out;
    }
    while (n > 1 && p.out_dir[n - 1] == '/') p.out_dir[--n] = 0;
    if (mkdir_p(p.out_dir, err)) goto out;
    snprintf(p.figtitle, sizeof p.figtitle, "%s (%s scale)", p.exp->title[0] ? p.exp->title : p.exp->name,
             p.exp->scale);
    const char *const *kinds = (const char *const *)p.exp->figures;
    int n_kinds = p.exp->n_figures;
    if (n_kinds == 0) { /* the file names none: every kind that has data */
        kinds = EXPERIMENT_FIGURES;
        while (kinds[n_kinds]) n_kinds++;
    }
    drawn = 0;
    for (int i = 0; i < n_kinds; i++) {
        FigureFn fn = figure_fn(kinds[i]);
        if (!fn) {
            fprintf(warn, "bigbatch plot: unknown figure kind '%s' skipped\n", kinds[i]);
            continue;
        }
        int rc = fn(&p, err);
        if (rc < 0) {
            drawn = -1;
            goto out;
        }
        drawn += rc;
    }
out:
    cells_close(&p.d);
    return drawn;
}
