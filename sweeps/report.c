/* The report: cells of the grid with their repeats summarized, the best over the tuned axes
 * (as the papers chose the best LR and warmup per batch), and the paper's numbers beside. */
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"
#include "store.h"
#include "sweep.h"

typedef struct {
    cJSON *cell;        /* {"batch": "512", ...} in file order */
    char *label;
    int runs, complete, diverged, failed, waiting;
    double sum, sum_sq; /* over complete runs */
    double mean, std;
    bool best;          /* the best of its group over the tuned axes */
} Cell;

typedef struct {
    const Experiment *exp;
    Cell *cells;
    int n_cells;
    bool higher_is_better;
} Report;

static const ExpKey *find_key(const Experiment *exp, const char *name)
{
    for (int i = 0; i < exp->n_keys; i++)
        if (!strcmp(exp->keys[i].name, name)) return &exp->keys[i];
    return NULL;
}

static bool is_tuned(const Experiment *exp, const char *name)
{
    for (int i = 0; i < exp->n_tuned; i++)
        if (!strcmp(exp->tuned[i], name)) return true;
    return false;
}

/* The axes that define a group for "best over the tuned axes": grid and zipped keys that are
 * neither tuned nor zipped with a tuned axis. Derived values follow from these. */
static bool is_group_axis(const Experiment *exp, const char *name)
{
    const ExpKey *k = find_key(exp, name);
    if (!k || is_tuned(exp, name)) return false;
    if (k->role == KEY_GRID) return true;
    return k->role == KEY_ZIP && !is_tuned(exp, k->zip_with);
}

static bool same_value(const char *a, const char *b)
{
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    if (ea != a && !*ea && eb != b && !*eb) return x == y;
    return !strcmp(a, b);
}

/* The value of key `name` in a cell, or the experiment's fixed value. */
static const char *value_in(const Experiment *exp, const cJSON *cell, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cell, name);
    if (cJSON_IsString(v)) return v->valuestring;
    const ExpKey *k = find_key(exp, name);
    return k && k->role == KEY_FIXED ? k->values[0] : NULL;
}

/* The paper's number for a cell (or group): the first row whose key columns all match. */
static const char *paper_value(const Experiment *exp, const cJSON *cell, bool group_only)
{
    for (int r = 0; r < exp->n_paper_rows; r++) {
        bool match = true;
        for (int c = 0; c + 1 < exp->n_paper_cols && match; c++) {
            const char *col = exp->paper_cols[c];
            if (group_only && find_key(exp, col) && find_key(exp, col)->role != KEY_FIXED && !is_group_axis(exp, col))
                continue; /* a tuned axis: the paper's best is compared with ours */
            const char *v = value_in(exp, cell, col);
            match = v && same_value(v, exp->paper_rows[r][c]);
        }
        if (match) return exp->paper_rows[r][exp->n_paper_cols - 1];
    }
    return NULL;
}

static const char *metric_sql(const char *metric)
{
    if (!strcmp(metric, "test_loss")) return "r.test_loss";
    if (!strcmp(metric, "train_loss")) return "r.train_loss";
    if (!strcmp(metric, "loss_gap")) return "(SELECT loss_gap FROM epochs WHERE run_id = r.id ORDER BY epoch DESC LIMIT 1)";
    if (!strcmp(metric, "best_test_acc")) return "(SELECT max(test_acc) FROM epochs WHERE run_id = r.id)";
    return "r.test_acc";
}

static int load_cells(Report *rep, Store *s, long long exp_id, Error *err)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT e.cell, e.label, r.status, %s FROM experiment_runs e JOIN runs r ON r.id = e.run_id"
             " WHERE e.experiment_id = ?1 ORDER BY e.seq",
             metric_sql(rep->exp->metric));
    sqlite3_stmt *st;
    if (store_prepare(s, &st, sql, err)) return -1;
    sqlite3_bind_int64(st, 1, exp_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *cell_text = (const char *)sqlite3_column_text(st, 0);
        const char *status = (const char *)sqlite3_column_text(st, 2);
        Cell *c = NULL;
        for (int i = 0; i < rep->n_cells && !c; i++) {
            char *t = cJSON_PrintUnformatted(rep->cells[i].cell);
            if (t && !strcmp(t, cell_text)) c = &rep->cells[i];
            free(t);
        }
        if (!c) {
            rep->cells = xrealloc(rep->cells, sizeof *rep->cells * (size_t)(rep->n_cells + 1), "report cells");
            c = &rep->cells[rep->n_cells++];
            memset(c, 0, sizeof *c);
            c->cell = cJSON_Parse(cell_text);
            c->label = xstrdup((const char *)sqlite3_column_text(st, 1));
            if (!c->cell) {
                error_set(err, "%s: a run's cell is not JSON: %.60s", s->path, cell_text);
                rc = SQLITE_ERROR;
                break;
            }
        }
        c->runs++;
        if (!strcmp(status, "complete") && sqlite3_column_type(st, 3) != SQLITE_NULL) {
            double x = sqlite3_column_double(st, 3);
            c->complete++;
            c->sum += x;
            c->sum_sq += x * x;
        } else if (!strcmp(status, "diverged")) {
            c->diverged++;
        } else if (!strcmp(status, "failed") || !strcmp(status, "complete")) {
            c->failed++;
        } else {
            c->waiting++;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        if (rc != SQLITE_ERROR || !err->msg[0]) error_set(err, "%s: reading runs: %s", s->path, sqlite3_errstr(rc));
        return -1;
    }
    for (int i = 0; i < rep->n_cells; i++) {
        Cell *c = &rep->cells[i];
        c->mean = c->complete ? c->sum / c->complete : NAN;
        double var = c->complete > 1 ? (c->sum_sq - c->sum * c->sum / c->complete) / (c->complete - 1) : 0;
        c->std = c->complete > 1 ? sqrt(var > 0 ? var : 0) : NAN;
    }
    return 0;
}

/* Two cells are in one group when every group axis has the same value. */
static bool same_group(const Report *rep, const Cell *a, const Cell *b)
{
    for (const cJSON *it = a->cell->child; it; it = it->next) {
        if (!is_group_axis(rep->exp, it->string)) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(b->cell, it->string);
        if (!cJSON_IsString(o) || strcmp(o->valuestring, it->valuestring)) return false;
    }
    return true;
}

static bool better(const Report *rep, double a, double b)
{
    return rep->higher_is_better ? a > b : a < b;
}

/* A cell counts for "best" when it trained: some repeat complete and none diverged. */
static void mark_best(Report *rep)
{
    if (rep->exp->n_tuned == 0) return; /* nothing was tuned: no cell is "the best" of a group */
    for (int i = 0; i < rep->n_cells; i++) {
        Cell *c = &rep->cells[i];
        if (c->complete == 0 || c->diverged > 0) continue;
        bool best = true;
        for (int j = 0; j < rep->n_cells && best; j++) {
            const Cell *o = &rep->cells[j];
            if (j == i || o->complete == 0 || o->diverged > 0 || !same_group(rep, c, o)) continue;
            if (better(rep, o->mean, c->mean) || (o->mean == c->mean && j < i)) best = false;
        }
        c->best = best;
    }
}

/* "0.8712 ± 0.0041", "diverged", "diverged 1/3, 0.71", "pending", ... */
static void format_result(const Cell *c, char *out, size_t len)
{
    char num[64] = "";
    if (c->complete) {
        if (c->complete > 1) snprintf(num, sizeof num, "%.4f ± %.4f", c->mean, c->std);
        else snprintf(num, sizeof num, "%.4f", c->mean);
    }
    if (c->diverged == c->runs) snprintf(out, len, "diverged");
    else if (c->diverged) snprintf(out, len, "diverged %d/%d%s%s", c->diverged, c->runs, num[0] ? ", " : "", num);
    else if (c->complete == c->runs) snprintf(out, len, "%s", num);
    else if (c->complete) snprintf(out, len, "%s (%d/%d done)", num, c->complete, c->runs);
    else snprintf(out, len, "%s", c->failed ? "failed" : "not run yet");
}

static void format_diff(const Cell *c, const char *paper, char *out, size_t len)
{
    char *end;
    double p = paper ? strtod(paper, &end) : NAN;
    if (paper && end != paper && !*end && c->complete && !c->diverged) snprintf(out, len, "%+.4f", c->mean - p);
    else if (len) out[0] = 0;
}

static void print_md_row(FILE *out, const char *const *cols, int n)
{
    fprintf(out, "|");
    for (int i = 0; i < n; i++) fprintf(out, " %s |", cols[i]);
    fprintf(out, "\n");
}

static void print_md_rule(FILE *out, int n)
{
    fprintf(out, "|");
    for (int i = 0; i < n; i++) fprintf(out, "---|");
    fprintf(out, "\n");
}

/* CSV field, quoted when it holds a comma or a quote. */
static void print_csv_row(FILE *out, const char *const *cols, int n)
{
    for (int i = 0; i < n; i++) {
        const char *v = cols[i];
        if (strpbrk(v, ",\"\n")) {
            fputc('"', out);
            for (const char *p = v; *p; p++) {
                if (*p == '"') fputc('"', out);
                fputc(*p, out);
            }
            fputc('"', out);
        } else {
            fputs(v, out);
        }
        fputc(i + 1 < n ? ',' : '\n', out);
    }
}

#define MAX_COLS 48

/* The cell's value of every key of `first` (the keys all cells share), fixed values filled in. */
static int cell_values(const Experiment *exp, const cJSON *first, const Cell *c, const char **vals, int max)
{
    int k = 0;
    for (const cJSON *it = first->child; it && k < max; it = it->next) {
        const char *v = value_in(exp, c->cell, it->string);
        vals[k++] = v ? v : "";
    }
    return k;
}

static void write_cells_md(FILE *out, const Report *rep)
{
    const Experiment *exp = rep->exp;
    const char *cols[MAX_COLS];
    int n = 0;
    const cJSON *first = rep->cells[0].cell;
    for (const cJSON *it = first->child; it && n < MAX_COLS - 4; it = it->next) cols[n++] = it->string;
    cols[n++] = "runs";
    cols[n++] = exp->metric;
    cols[n++] = "paper";
    cols[n++] = "ours - paper";
    fprintf(out, "\nEvery cell (mean ± sample standard deviation over repeats%s):\n\n",
            exp->n_tuned ? "; * = best over the tuned axes" : "");
    print_md_row(out, cols, n);
    print_md_rule(out, n);
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        char result[128], diff[32], runs[16], marked[140];
        const char *vals[MAX_COLS];
        int k = cell_values(exp, first, c, vals, MAX_COLS - 4);
        format_result(c, result, sizeof result);
        snprintf(marked, sizeof marked, "%s%s", result, c->best ? " *" : "");
        const char *paper = paper_value(exp, c->cell, false);
        format_diff(c, paper, diff, sizeof diff);
        snprintf(runs, sizeof runs, "%d", c->runs);
        vals[k++] = runs;
        vals[k++] = marked;
        vals[k++] = paper ? paper : "";
        vals[k++] = diff;
        print_md_row(out, vals, k);
    }
}

static void write_best_md(FILE *out, const Report *rep)
{
    const Experiment *exp = rep->exp;
    const char *cols[MAX_COLS];
    int n = 0;
    const cJSON *first = rep->cells[0].cell;
    for (const cJSON *it = first->child; it && n < MAX_COLS - 6; it = it->next)
        if (is_group_axis(exp, it->string)) cols[n++] = it->string;
    int n_group = n;
    char names[MAX_COLS][80];
    for (int t = 0; t < exp->n_tuned && n < MAX_COLS - 5; t++) {
        snprintf(names[n], sizeof names[n], "best %s", exp->tuned[t]);
        cols[n] = names[n];
        n++;
    }
    cols[n++] = exp->metric;
    cols[n++] = "diverged cells";
    cols[n++] = "paper";
    cols[n++] = "ours - paper";
    fprintf(out, "\nBest over %s", exp->n_tuned ? "" : "all cells");
    for (int t = 0; t < exp->n_tuned; t++) fprintf(out, "%s%s", t ? ", " : "", exp->tuned[t]);
    fprintf(out, " for each ");
    for (int g = 0; g < n_group; g++) fprintf(out, "%s%s", g ? ", " : "", cols[g]);
    fprintf(out, "%s (the papers report the best tuned run):\n\n", n_group ? "" : "experiment");
    print_md_row(out, cols, n);
    print_md_rule(out, n);
    /* One row per group, in the order its first cell appears. */
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        bool first_of_group = true;
        for (int j = 0; j < i && first_of_group; j++) first_of_group = !same_group(rep, &rep->cells[j], c);
        if (!first_of_group) continue;
        const Cell *best = NULL;
        int diverged = 0, total = 0;
        for (int j = 0; j < rep->n_cells; j++) {
            if (!same_group(rep, &rep->cells[j], c)) continue;
            total++;
            if (rep->cells[j].diverged == rep->cells[j].runs) diverged++;
            if (rep->cells[j].best) best = &rep->cells[j];
        }
        const char *vals[MAX_COLS];
        int k = 0;
        for (int g = 0; g < n_group; g++) {
            const char *v = value_in(exp, c->cell, cols[g]);
            vals[k++] = v ? v : "";
        }
        for (int t = 0; t < exp->n_tuned; t++) {
            const char *v = best ? value_in(exp, best->cell, exp->tuned[t]) : NULL;
            vals[k++] = v ? v : "-";
        }
        char result[128], diff[32], div[32];
        if (best) format_result(best, result, sizeof result);
        else snprintf(result, sizeof result, "%s", diverged == total ? "diverged" : "not run yet");
        snprintf(div, sizeof div, "%d/%d", diverged, total);
        const char *paper = paper_value(exp, (best ? best : c)->cell, true);
        if (best) format_diff(best, paper, diff, sizeof diff);
        else diff[0] = 0;
        vals[k++] = result;
        vals[k++] = div;
        vals[k++] = paper ? paper : "";
        vals[k++] = diff;
        print_md_row(out, vals, k);
    }
}

static void write_csv(FILE *out, const Report *rep)
{
    const Experiment *exp = rep->exp;
    const char *cols[MAX_COLS];
    int n = 0;
    const cJSON *first = rep->cells[0].cell;
    for (const cJSON *it = first->child; it && n < MAX_COLS - 10; it = it->next) cols[n++] = it->string;
    const char *tail[] = {"runs", "complete", "diverged", "failed", "mean", "std", "best", "paper", "diff"};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) cols[n++] = tail[i];
    print_csv_row(out, cols, n);
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        const char *vals[MAX_COLS];
        int k = cell_values(exp, first, c, vals, MAX_COLS - 10);
        char runs[16], complete[16], diverged[16], failed[16], mean[32] = "", std[32] = "", diff[32];
        snprintf(runs, sizeof runs, "%d", c->runs);
        snprintf(complete, sizeof complete, "%d", c->complete);
        snprintf(diverged, sizeof diverged, "%d", c->diverged);
        snprintf(failed, sizeof failed, "%d", c->failed);
        if (c->complete) snprintf(mean, sizeof mean, "%.6g", c->mean);
        if (c->complete > 1) snprintf(std, sizeof std, "%.6g", c->std);
        const char *paper = paper_value(exp, c->cell, false);
        format_diff(c, paper, diff, sizeof diff);
        const char *rest[] = {runs, complete, diverged, failed, mean, std, c->best ? "1" : "0", paper ? paper : "", diff};
        for (size_t j = 0; j < sizeof rest / sizeof rest[0]; j++) vals[k++] = rest[j];
        print_csv_row(out, vals, k);
    }
}

static long long find_experiment(Store *s, const Experiment *exp, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "SELECT id FROM experiments WHERE name = ?1 AND scale = ?2", err)) return -1;
    sqlite3_bind_text(st, 1, exp->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, exp->scale, -1, SQLITE_STATIC);
    long long id = -1;
    if (sqlite3_step(st) == SQLITE_ROW) id = sqlite3_column_int64(st, 0);
    else
        error_set(err, "%s has no sweep of %s at the %s scale (bigbatch sweep %s --scale %s)", s->path, exp->name,
                  exp->scale, exp->path, exp->scale);
    sqlite3_finalize(st);
    return id;
}

int report_write(FILE *out, const char *file, const char *scale, const char *db, ReportFormat format, Error *err)
{
    Experiment exp;
    if (experiment_load(file, scale, &exp, err) != 0) return -1;
    char path[1024];
    sweep_db_path(db, exp.name, path, sizeof path);
    Store s;
    if (store_open(&s, path, true, err) != 0) {
        experiment_free(&exp);
        return -1;
    }
    Report rep = {&exp, NULL, 0, strstr(exp.metric, "acc") != NULL};
    int rc = -1;
    long long exp_id = find_experiment(&s, &exp, err);
    if (exp_id < 0 || load_cells(&rep, &s, exp_id, err) != 0) goto out;
    if (rep.n_cells == 0) {
        error_set(err, "%s: experiment %s has no runs", path, exp.name);
        goto out;
    }
    mark_best(&rep);
    if (format == REPORT_CSV) {
        write_csv(out, &rep);
    } else {
        fprintf(out, "# %s\n\n", exp.title[0] ? exp.title : exp.name);
        if (exp.source[0]) fprintf(out, "Source: %s.  \n", exp.source);
        fprintf(out, "Experiment `%s`, %s scale, metric %s (%s is better), database %s.\n", exp.name, exp.scale,
                exp.metric, rep.higher_is_better ? "higher" : "lower", path);
        if (exp.scaled[0]) fprintf(out, "Scaled down: %s\n", exp.scaled);
        write_cells_md(out, &rep);
        if (exp.n_tuned) write_best_md(out, &rep);
        for (int i = 0; i < exp.n_paper_notes; i++) fprintf(out, "%s%s\n", i ? "" : "\nPaper notes:\n", exp.paper_notes[i]);
    }
    rc = 0;
out:
    for (int i = 0; i < rep.n_cells; i++) {
        cJSON_Delete(rep.cells[i].cell);
        free(rep.cells[i].label);
    }
    free(rep.cells);
    store_close(&s);
    experiment_free(&exp);
    return rc;
}
