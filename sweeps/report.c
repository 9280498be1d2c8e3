/* The report: cells of the grid with their repeats summarized, the best over the tuned axes
 * (as the papers chose the best LR and warmup per batch), and the paper's numbers beside. */
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cells.h"
#include "critical_batch.h"
#include "edges.h"
#include "fingerprint.h"
#include "fragile.h"
#include "html.h"
#include "rcp.h"
#include "steps_target.h"
#include "experiment.h"

typedef CellSet Report;

/* How a cell's seeds ended, beyond its numbers: "3 seeds, 1 of 3 collapsed", "collapsed". */
static void format_outcomes(const Cell *c, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
#define NOTE(...) (used += (size_t)snprintf(out + used, used < len ? len - used : 0, __VA_ARGS__))
    if (c->runs > 1) NOTE("%d seeds", c->runs);
    const struct {
        int n;
        const char *what;
    } ends[] = {{c->collapsed, "collapsed"}, {c->diverged, "diverged"}, {c->failed, "failed"}, {c->pruned, "pruned"}};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        if (ends[i].n == 0) continue;
        if (c->runs > 1) NOTE(", %d of %d %s", ends[i].n, c->runs, ends[i].what);
        else NOTE("%s%s", used ? ", " : "", ends[i].what);
    }
    if (c->waiting) NOTE(", %d/%d done", c->runs - c->waiting, c->runs);
#undef NOTE
}

/* "0.8712 ± 0.0041 (3 seeds)", "0.1000 (collapsed)", "0.6102 ± 0.4390 (3 seeds, 1 of 3
 * collapsed)", "0.7100 (3 seeds, 2 of 3 diverged)", "diverged (3 seeds)" (all of them), "pruned at epoch 2
 * (0.4830)" (sweep --prune), "not run yet" */
static void format_result(const Cell *c, char *out, size_t len)
{
    char num[64] = "", notes[128];
    if (c->complete > 1) snprintf(num, sizeof num, "%.4f ± %.4f", c->mean, c->std);
    else if (c->complete) snprintf(num, sizeof num, "%.4f", c->mean);
    format_outcomes(c, notes, sizeof notes);
    if (!c->complete && c->diverged == c->runs && c->runs == 1) snprintf(out, len, "diverged");
    else if (!c->complete && c->diverged == c->runs) snprintf(out, len, "diverged (%d seeds)", c->runs);
    else if (!c->complete && c->failed == c->runs) snprintf(out, len, "failed");
    else if (!c->complete && c->pruned == c->runs)
        snprintf(out, len, "pruned at epoch %d (%.4f%s)", c->pruned_epoch, c->pruned_sum / c->pruned,
                 c->runs > 1 ? ", mean of its seeds" : "");
    else if (!c->complete && !c->diverged && !c->failed && !c->pruned) snprintf(out, len, "not run yet");
    else if (!c->complete && c->runs == 1) snprintf(out, len, "%s", notes);
    else if (!c->complete) snprintf(out, len, "(%s)", notes);
    else if (notes[0]) snprintf(out, len, "%s (%s)", num, notes);
    else snprintf(out, len, "%s", num);
}

void report_cell_result(const Cell *c, char *out, size_t len) { format_result(c, out, len); }

static void format_diff(const Cell *c, const char *paper, char *out, size_t len)
{
    char *end;
    double p = paper ? strtod(paper, &end) : NAN;
    if (paper && end != paper && !*end && c->complete && !c->diverged && !c->collapsed)
        snprintf(out, len, "%+.4f", c->mean - p);
    else if (len) out[0] = 0;
}

/* ---- markup: the same report as Markdown or as an HTML fragment ---- */

typedef struct {
    void (*heading)(FILE *out, int level, const char *text);
    void (*para)(FILE *out, const char *label, const char *text); /* label may be NULL */
    void (*table_begin)(FILE *out, const char *caption, const char *const *cols, int n);
    void (*row)(FILE *out, const char *const *cols, int n);
    void (*table_end)(FILE *out);
    void (*list_item)(FILE *out, const char *label, const char *text, bool first); /* label: before a list */
    void (*list_end)(FILE *out);
} Markup;

static void md_heading(FILE *out, int level, const char *text)
{
    fprintf(out, "%.*s %s\n", level > 1 ? level : 1, "######", text);
}

static void md_para(FILE *out, const char *label, const char *text)
{
    if (label) fprintf(out, "\n**%s** %s\n", label, text);
    else fprintf(out, "\n%s\n", text);
}

static void md_row(FILE *out, const char *const *cols, int n)
{
    fprintf(out, "|");
    for (int i = 0; i < n; i++) fprintf(out, " %s |", cols[i]);
    fprintf(out, "\n");
}

static void md_table_begin(FILE *out, const char *caption, const char *const *cols, int n)
{
    fprintf(out, "\n%s\n\n", caption);
    md_row(out, cols, n);
    fprintf(out, "|");
    for (int i = 0; i < n; i++) fprintf(out, "---|");
    fprintf(out, "\n");
}

static void md_table_end(FILE *out) { (void)out; }

static void md_list_item(FILE *out, const char *label, const char *text, bool first)
{
    if (first) fprintf(out, "\n%s\n\n", label);
    fprintf(out, "- %s\n", text);
}

static void md_list_end(FILE *out) { (void)out; }

static const Markup MARKDOWN = {md_heading, md_para, md_table_begin, md_row, md_table_end, md_list_item, md_list_end};

static void html_heading(FILE *out, int level, const char *text)
{
    int h = level > 1 ? level : 1;
    fprintf(out, "<h%d>", h);
    html_escape(out, text);
    fprintf(out, "</h%d>\n", h);
}

/* Text with `code` spans, as the Markdown has them. */
static void html_text(FILE *out, const char *text)
{
    bool code = false;
    for (const char *p = text; *p;) {
        const char *tick = strchr(p, '`');
        size_t n = tick ? (size_t)(tick - p) : strlen(p);
        char *part = strndup(p, n);
        if (!part) {
            fprintf(stderr, "bigbatch: out of memory writing a report\n");
            exit(3);
        }
        html_escape(out, part);
        free(part);
        if (!tick) break;
        code = !code;
        fputs(code ? "<code>" : "</code>", out);
        p = tick + 1;
    }
    if (code) fputs("</code>", out);
}

static void html_para(FILE *out, const char *label, const char *text)
{
    fprintf(out, "<p>");
    if (label) {
        fprintf(out, "<b>");
        html_escape(out, label);
        fprintf(out, "</b> ");
    }
    html_text(out, text);
    fprintf(out, "</p>\n");
}

static void html_table_begin(FILE *out, const char *caption, const char *const *cols, int n)
{
    fprintf(out, "<table class=\"sortable\"><caption>");
    html_escape(out, caption);
    fprintf(out, "</caption>\n<thead><tr>");
    for (int i = 0; i < n; i++) {
        fprintf(out, "<th>");
        html_escape(out, cols[i]);
        fprintf(out, "</th>");
    }
    fprintf(out, "</tr></thead>\n<tbody>\n");
}

static void html_row(FILE *out, const char *const *cols, int n)
{
    fprintf(out, "<tr>");
    for (int i = 0; i < n; i++) {
        fprintf(out, "<td>");
        html_escape(out, cols[i]);
        fprintf(out, "</td>");
    }
    fprintf(out, "</tr>\n");
}

static void html_table_end(FILE *out) { fprintf(out, "</tbody></table>\n"); }

static void html_list_item(FILE *out, const char *label, const char *text, bool first)
{
    if (first) {
        fprintf(out, "<p>");
        html_escape(out, label);
        fprintf(out, "</p>\n<ul>\n");
    }
    fprintf(out, "<li>");
    html_text(out, text);
    fprintf(out, "</li>\n");
}

static void html_list_end(FILE *out) { fprintf(out, "</ul>\n"); }

static const Markup HTML = {html_heading,   html_para,      html_table_begin, html_row,
                            html_table_end, html_list_item, html_list_end};

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

/* Variables of [derived] expressions are means, not settings: the Markdown tables leave them out. */
static bool shown(const Experiment *exp, const char *name, bool all)
{
    const ExpKey *k = cells_find_key(exp, name);
    return all || !k || k->is_flag;
}

/* The cell's value of every key of `first` (the keys all cells share), fixed values filled in. */
static int cell_values(const Experiment *exp, const cJSON *first, const Cell *c, const char **vals, int max, bool all)
{
    int k = 0;
    for (const cJSON *it = first->child; it && k < max; it = it->next) {
        if (!shown(exp, it->string, all)) continue;
        const char *v = cells_value_in(exp, c->cell, it->string);
        vals[k++] = v ? v : "";
    }
    return k;
}

static bool on_gpu(const Cell *c)
{
    for (int r = 0; r < c->runs; r++)
        if (!strncmp(c->run_list[r].device, "cuda", 4)) return true;
    return false;
}

/* Some cell ran on a GPU and some on the CPU: then each cell says where (Provenance counts). */
static bool mixes_devices(const Report *rep)
{
    int gpu = 0;
    for (int i = 0; i < rep->n_cells; i++) gpu += on_gpu(&rep->cells[i]);
    return gpu > 0 && gpu < rep->n_cells;
}

static bool single_seed(const Report *rep)
{
    for (int i = 0; i < rep->n_cells; i++)
        if (rep->cells[i].runs > 1) return false;
    return true;
}

/* What the table's caption says of seeds: their spread, or that each cell is one. */
static void cells_caption(const Report *rep, double spread, char *out, size_t len)
{
    const char *best = rep->exp->n_tuned ? "; * = best over the tuned axes" : "";
    if (!single_seed(rep))
        snprintf(out, len, "Every cell (mean ± sample standard deviation over its seeds, how many, and how many "
                           "collapsed to chance or diverged%s):", best);
    else if (spread > 0)
        snprintf(out, len, "Every cell, each a single seed (too costly to repeat on a CPU): seeds alone move a cell "
                           "of the demo by up to %.4f, so smaller differences are no finding; ~ = fragile: a "
                           "neighbour along a tuned axis differs by more than that or ended otherwise%s:", spread, best);
    else
        snprintf(out, len, "Every cell, each a single seed (too costly to repeat on a CPU); ~ = fragile: a neighbour "
                           "along a tuned axis ended otherwise (collapsed, diverged)%s:", best);
}

static void write_cells(FILE *out, const Report *rep, const Markup *m, double spread)
{
    const Experiment *exp = rep->exp;
    const char *cols[MAX_COLS];
    int n = 0;
    const cJSON *first = rep->cells[0].cell;
    for (const cJSON *it = first->child; it && n < MAX_COLS - 4; it = it->next)
        if (shown(exp, it->string, false)) cols[n++] = it->string;
    cols[n++] = "runs";
    cols[n++] = exp->metric;
    cols[n++] = "paper";
    cols[n++] = "ours - paper";
    char caption[400];
    cells_caption(rep, spread, caption, sizeof caption);
    bool mark_fragile = single_seed(rep), mixed = mixes_devices(rep);
    m->table_begin(out, caption, cols, n);
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        char result[128], diff[32], runs[16], marked[140];
        const char *vals[MAX_COLS];
        int k = cell_values(exp, first, c, vals, MAX_COLS - 4, false);
        format_result(c, result, sizeof result);
        snprintf(marked, sizeof marked, "%s%s%s%s", result, c->best ? " *" : "",
                 mark_fragile && fragile_cell(rep, c, spread) ? " ~" : "", mixed && on_gpu(c) ? " [gpu]" : "");
        const char *paper = cells_paper_value(exp, c->cell, false);
        format_diff(c, paper, diff, sizeof diff);
        snprintf(runs, sizeof runs, "%d", c->runs);
        vals[k++] = runs;
        vals[k++] = marked;
        vals[k++] = paper ? paper : "";
        vals[k++] = diff;
        m->row(out, vals, k);
    }
    m->table_end(out);
}

static void write_best(FILE *out, const Report *rep, const Markup *m)
{
    const Experiment *exp = rep->exp;
    const char *cols[MAX_COLS];
    int n = 0;
    const cJSON *first = rep->cells[0].cell;
    for (const cJSON *it = first->child; it && n < MAX_COLS - 8; it = it->next)
        if (cells_is_group_axis(exp, it->string)) cols[n++] = it->string;
    int n_group = n;
    char names[MAX_COLS][80];
    for (int t = 0; t < exp->n_tuned && n < MAX_COLS - 7; t++) {
        snprintf(names[n], sizeof names[n], "best %s", exp->tuned[t]);
        cols[n] = names[n];
        n++;
    }
    cols[n++] = exp->metric;
    cols[n++] = "grid edge";
    cols[n++] = "diverged cells";
    cols[n++] = "collapsed cells";
    cols[n++] = "paper";
    cols[n++] = "ours - paper";
    char *caption = NULL;
    size_t caption_len = 0;
    FILE *c = open_memstream(&caption, &caption_len);
    if (!c) {
        fprintf(stderr, "bigbatch: out of memory writing a report\n");
        exit(3);
    }
    fprintf(c, "Best over %s", exp->n_tuned ? "" : "all cells");
    for (int t = 0; t < exp->n_tuned; t++) fprintf(c, "%s%s", t ? ", " : "", exp->tuned[t]);
    fprintf(c, " for each ");
    for (int g = 0; g < n_group; g++) fprintf(c, "%s%s", g ? ", " : "", cols[g]);
    fprintf(c, "%s (the papers report the best tuned run; grid edge: the best value of a tuned axis is the "
               "smallest or largest of its grid, so the optimum may lie outside it):",
            n_group ? "" : "experiment");
    fclose(c);
    m->table_begin(out, caption, cols, n);
    free(caption);
    /* One row per group, in the order its first cell appears. */
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        bool first_of_group = true;
        for (int j = 0; j < i && first_of_group; j++) first_of_group = !cells_same_group(rep, &rep->cells[j], c);
        if (!first_of_group) continue;
        const Cell *best = NULL;
        int diverged = 0, collapsed = 0, total = 0;
        for (int j = 0; j < rep->n_cells; j++) {
            if (!cells_same_group(rep, &rep->cells[j], c)) continue;
            total++;
            if (rep->cells[j].diverged == rep->cells[j].runs) diverged++;
            if (rep->cells[j].collapsed && rep->cells[j].collapsed == rep->cells[j].runs) collapsed++;
            if (rep->cells[j].best) best = &rep->cells[j];
        }
        const char *vals[MAX_COLS];
        int k = 0;
        for (int g = 0; g < n_group; g++) {
            const char *v = cells_value_in(exp, c->cell, cols[g]);
            vals[k++] = v ? v : "";
        }
        for (int t = 0; t < exp->n_tuned; t++) {
            const char *v = best ? cells_value_in(exp, best->cell, exp->tuned[t]) : NULL;
            vals[k++] = v ? v : "-";
        }
        char result[160], diff[32], div[32], col[32], edge[200] = "";
        if (best) edges_describe(rep, best, edge, sizeof edge);
        if (best) format_result(best, result, sizeof result);
        else snprintf(result, sizeof result, "%s", diverged == total ? "diverged" : "not run yet");
        snprintf(div, sizeof div, "%d/%d", diverged, total);
        snprintf(col, sizeof col, "%d/%d", collapsed, total);
        const char *paper = cells_paper_value(exp, (best ? best : c)->cell, true);
        if (best) format_diff(best, paper, diff, sizeof diff);
        else diff[0] = 0;
        vals[k++] = result;
        vals[k++] = edge[0] ? edge : "-";
        vals[k++] = div;
        vals[k++] = col;
        vals[k++] = paper ? paper : "";
        vals[k++] = diff;
        m->row(out, vals, k);
    }
    m->table_end(out);
}

static void write_csv(FILE *out, const Report *rep)
{
    const Experiment *exp = rep->exp;
    const char *cols[MAX_COLS];
    int n = 0;
    const cJSON *first = rep->cells[0].cell;
    for (const cJSON *it = first->child; it && n < MAX_COLS - 11; it = it->next) cols[n++] = it->string;
    const char *tail[] = {"runs", "complete", "collapsed", "diverged", "failed", "mean", "std", "best", "paper", "diff"};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) cols[n++] = tail[i];
    print_csv_row(out, cols, n);
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        const char *vals[MAX_COLS];
        int k = cell_values(exp, first, c, vals, MAX_COLS - 11, true);
        char runs[16], complete[16], collapsed[16], diverged[16], failed[16], mean[32] = "", std[32] = "", diff[32];
        snprintf(runs, sizeof runs, "%d", c->runs);
        snprintf(complete, sizeof complete, "%d", c->complete);
        snprintf(collapsed, sizeof collapsed, "%d", c->collapsed);
        snprintf(diverged, sizeof diverged, "%d", c->diverged);
        snprintf(failed, sizeof failed, "%d", c->failed);
        if (c->complete) snprintf(mean, sizeof mean, "%.6g", c->mean);
        if (c->complete > 1) snprintf(std, sizeof std, "%.6g", c->std);
        const char *paper = cells_paper_value(exp, c->cell, false);
        format_diff(c, paper, diff, sizeof diff);
        const char *rest[] = {runs, complete, collapsed, diverged, failed, mean, std, c->best ? "1" : "0", paper ? paper : "", diff};
        for (size_t j = 0; j < sizeof rest / sizeof rest[0]; j++) vals[k++] = rest[j];
        print_csv_row(out, vals, k);
    }
}

/* The best cells at an edge of a tuned axis, one line each; how many. */
static int write_provisional(FILE *out, const Report *rep, const Markup *m)
{
    const Experiment *exp = rep->exp;
    int n = 0;
    for (int i = 0; i < rep->n_cells; i++) {
        const Cell *c = &rep->cells[i];
        if (!c->best) continue;
        for (int t = 0; t < exp->n_tuned; t++) {
            EdgeSide s = edges_side(rep, c, exp->tuned[t]);
            if (s == EDGE_NONE) continue;
            char group[400], line[800];
            edges_group_text(rep, c, group, sizeof group);
            const char *v = cells_value_in(exp, c->cell, exp->tuned[t]);
            snprintf(line, sizeof line, "the best %s%s%s is at the edge of its grid (%s = %s, the %s); widen the grid "
                     "before taking it as a result.", exp->tuned[t], group[0] ? " of " : "", group, exp->tuned[t],
                     v ? v : "?", s == EDGE_TOP ? "top" : "bottom");
            m->list_item(out, "Provisional:", line, n++ == 0);
        }
    }
    if (n) m->list_end(out);
    return n;
}

static int count_edges(const Report *rep)
{
    int n = 0;
    char buf[8];
    for (int i = 0; i < rep->n_cells; i++)
        if (rep->cells[i].best) n += edges_describe(rep, &rep->cells[i], buf, sizeof buf);
    return n;
}

#define DEPARTURE_FACTOR 2.0

/* One row of the critical-batch table: a series' fit, noise scale and departure. */
static int critical_row(FILE *out, const CellsData *d, const StepsSeries *s, const Markup *m, Error *err)
{
    double *b = xcalloc((size_t)s->n, sizeof *b, "fit points"), *st = xcalloc((size_t)s->n, sizeof *st, "fit points");
    for (int i = 0; i < s->n; i++) b[i] = s->pts[i].batch, st[i] = (double)s->pts[i].steps;
    CriticalFit f = critical_batch_fit(b, st, s->n);
    double leaves = critical_batch_departure(b, st, s->n, DEPARTURE_FACTOR), noise;
    int rc = steps_target_noise_scale(d, s->pts[0].run_id, &noise, err);
    char batches[256] = "", smin[32] = "-", bcrit[64], rms[32] = "-", ns[64] = "not measured", dep[64];
    size_t used = 0;
    for (int i = 0; i < s->n && used < sizeof batches; i++)
        used += (size_t)snprintf(batches + used, sizeof batches - used, "%s%.10g", i ? ", " : "", b[i]);
    if (f.ok) snprintf(smin, sizeof smin, "%.4g", f.s_min), snprintf(rms, sizeof rms, "%.1f%%", 100 * f.rms_rel);
    if (f.ok) snprintf(bcrit, sizeof bcrit, "%.4g", f.b_crit);
    else snprintf(bcrit, sizeof bcrit, "%s", s->n < 2 ? "- (one batch)" : "- (no bend: S_min <= 0)");
    if (!isnan(noise)) snprintf(ns, sizeof ns, "%.4g (batch %.10g)", noise, b[0]);
    if (isnan(leaves)) snprintf(dep, sizeof dep, "not up to %.10g", b[s->n - 1]);
    else snprintf(dep, sizeof dep, "%.10g", leaves);
    const char *vals[] = {s->name[0] ? s->name : "ours", batches, smin, bcrit, rms, ns, dep};
    m->row(out, vals, 7);
    free(b);
    free(st);
    return rc;
}

/* McCandlish et al.'s S = S_min (1 + B_crit / B) fitted to the measured steps to the target,
 * beside the noise scale that predicts B_crit and where the curve leaves perfect scaling. */
static int write_critical_batch(FILE *out, const CellsData *d, const Markup *m, Error *err)
{
    StepsSeries *series;
    int n;
    if (steps_target_collect(d, &series, &n, err)) return -1;
    if (n == 0) {
        steps_target_free(series, n);
        return 0;
    }
    char caption[900];
    snprintf(caption, sizeof caption,
             "Critical batch: S = S_min (1 + B_crit / B) (McCandlish et al. 2018, eq. 2.11) fitted by least squares "
             "in 1/B, relative residuals, to the fewest steps to the target per batch; noise scale: B_simple "
             "(--noise-scale, last epoch) of the smallest batch's counted run, which McCandlish et al. find close to "
             "B_crit; leaves perfect scaling: the first batch whose steps exceed %.0fx perfect scaling from the "
             "smallest batch (on the fitted curve, about B_crit):",
             DEPARTURE_FACTOR);
    const char *cols[] = {"series", "batches", "S_min (steps)", "B_crit", "fit rms", "noise scale B_simple",
                          "leaves perfect scaling at"};
    m->table_begin(out, caption, cols, 7);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = critical_row(out, d, &series[i], m, err);
    m->table_end(out);
    steps_target_free(series, n);
    return rc;
}

/* Each run's epochs to the target: the (1-based) epoch of its first evaluation that reached it;
 * INFINITY for a run that never did (diverged, or ended below it). How many runs. */
static int cell_epochs(const CellsData *d, const Cell *c, double *out, Error *err)
{
    int n = 0;
    for (int r = 0; r < c->runs; r++) {
        const CellRun *run = &c->run_list[r];
        if (!strcmp(run->status, "pending") || !strcmp(run->status, "running") || !strcmp(run->status, "stale"))
            continue;
        long step;
        int epoch, found = run->complete ? steps_target_run(d, run->id, &step, &epoch, err) : 1;
        if (found < 0) return -1;
        out[n++] = found ? INFINITY : epoch;
    }
    return n;
}

/* The reference batch a cell stands for: the value of the experiment's reference_batch key, else
 * its batch, or at a proxy that keeps the batch-to-dataset ratio (fixed keys train_images and
 * imagenet_images), its batch scaled back, taken as the nearest reference point's when within 3%
 * (the proxy's batch is rounded to whole images). */
static double reference_batch(const CellsData *d, const RcpSet *rs, const Cell *c)
{
    if (*d->exp.reference_batch) {
        const char *rb = cells_value_in(&d->exp, c->cell, d->exp.reference_batch);
        return rb ? atof(rb) : NAN;
    }
    const char *bv = cells_value_in(&d->exp, c->cell, "batch");
    const char *ti = cells_value_in(&d->exp, c->cell, "train_images");
    const char *ii = cells_value_in(&d->exp, c->cell, "imagenet_images");
    double b = bv ? atof(bv) : 0;
    if (!ti || !ii || !(atof(ti) > 0)) return b;
    b *= atof(ii) / atof(ti);
    for (int i = 0; i < rs->n; i++)
        if (fabs(b / rs->points[i].batch - 1) < 0.03) return rs->points[i].batch;
    return b;
}

static int rcp_row(FILE *out, const CellsData *d, const RcpSet *rs, const Cell *c, const Markup *m, Error *err)
{
    const char *bv = cells_value_in(&d->exp, c->cell, "batch");
    double *ep = xcalloc((size_t)(c->runs ? c->runs : 1), sizeof *ep, "epochs to target");
    int n = cell_epochs(d, c, ep, err);
    if (n < 0) {
        free(ep);
        return -1;
    }
    double ref_batch = reference_batch(d, rs, c);
    RcpVerdict v = rcp_check(rs, ref_batch, ep, n);
    char seeds[64], refb[32], mean[32] = "-", ref[32] = "-", min[32] = "-";
    snprintf(refb, sizeof refb, "%.10g", ref_batch);
    snprintf(seeds, sizeof seeds, "%d", n);
    if (!isnan(v.mean)) snprintf(mean, sizeof mean, isfinite(v.mean) ? "%.2f" : "never", v.mean);
    if (!isnan(v.ref_mean)) snprintf(ref, sizeof ref, "%.2f", v.ref_mean);
    if (!isnan(v.min_epochs)) snprintf(min, sizeof min, "%.2f", v.min_epochs);
    const char *vals[] = {bv ? bv : "?", refb, seeds, mean, v.how, ref, min, v.pass ? "pass" : "fail"};
    m->row(out, vals, 8);
    free(ep);
    return 0;
}

/* Epochs to the target per cell against the reference convergence points, by MLPerf's rule. */
static int write_rcp(FILE *out, const CellsData *d, const Markup *m, Error *err)
{
    RcpSet rs;
    /* as results/published-runs.ini: here, else beside the binary's ../ (a report run elsewhere) */
    char *path = find_project_file(d->exp.reference_points);
    if (!path) {
        error_set(err, "%s: reference_points %s is neither here nor beside the binary's ../", d->exp.path,
                  d->exp.reference_points);
        return -1;
    }
    int loaded = rcp_load(path, &rs, err);
    free(path);
    if (loaded) return -1;
    char caption[2400];
    snprintf(caption, sizeof caption,
             "Against the reference convergence points (%s; %s): per cell, its seeds' epochs to the target (the "
             "epoch of the first evaluation that reached it; never: counted as infinitely slow, more than one such "
             "run fails), MLPerf's rule: %d seeds, the fastest and slowest dropped (olympic mean); the reference's "
             "olympic mean, and the fastest mean a one-sided pooled t-test at alpha %.2g accepts; points slower than "
             "their neighbours' interpolation are pruned, batches between kept points interpolated linearly, below "
             "them held to the smallest, above them no reference (fail). Pass: mean >= fastest acceptable%s:",
             d->exp.reference_points, rs.source, rs.runs, rs.alpha,
             d->exp.target != rs.target ? "; NB: this scale's target is not the points' own, so the verdicts are "
                                          "only a check of the machinery" : "");
    const char *cols[] = {"batch", "stands for", "seeds", "mean epochs (olympic)", "reference", "reference mean",
                          "fastest acceptable", "verdict"};
    m->table_begin(out, caption, cols, 8);
    int rc = 0;
    for (int i = 0; i < d->set.n_cells && rc == 0; i++) rc = rcp_row(out, d, &rs, &d->set.cells[i], m, err);
    m->table_end(out);
    rcp_free(&rs);
    return rc;
}

/* The best of the best cells: the one a finding names the winner. */
static const Cell *overall_winner(const Report *rep)
{
    const Cell *w = NULL;
    for (int i = 0; i < rep->n_cells; i++)
        if (rep->cells[i].best && (!w || cells_better(rep, rep->cells[i].mean, w->mean))) w = &rep->cells[i];
    return w;
}

/* The file's findings, labelled provisional when a best cell sits at a grid edge, and saying so
 * first when it is the winner's. */
static void write_findings(FILE *out, const Report *rep, const Markup *m)
{
    const Cell *w = overall_winner(rep);
    char edge[200] = "", group[400], label[800];
    if (!count_edges(rep)) {
        m->para(out, "What it shows.", rep->exp->findings);
        return;
    }
    if (w && edges_describe(rep, w, edge, sizeof edge)) {
        edges_group_text(rep, w, group, sizeof group);
        snprintf(label, sizeof label, "What it shows (provisional: the winner, %s, has its best %s of its grid; "
                 "every best cell at an edge is listed below).", group, edge);
    } else {
        snprintf(label, sizeof label, "What it shows (provisional: some best cells sit at an edge of their grid, "
                 "listed below).");
    }
    m->para(out, label, rep->exp->findings);
}

/* At a scale the paper's numbers do not apply to, they are shown on their own. */
static void write_paper(FILE *out, const Experiment *exp, const Markup *m)
{
    char caption[400];
    snprintf(caption, sizeof caption, "The paper's numbers (%s), compared at the %s scale only ([paper] scales):",
             exp->paper_what ? exp->paper_what : "as filed", exp->paper_scales[0]);
    m->table_begin(out, caption, (const char *const *)exp->paper_cols, exp->n_paper_cols);
    for (int i = 0; i < exp->n_paper_rows; i++) m->row(out, (const char *const *)exp->paper_rows[i], exp->n_paper_cols);
    m->table_end(out);
}

/* What the provenance line counts the runs by: one SQL expression over `runs r` each. */
static const char *const RUN_FACETS[] = {
    "coalesce(r.engine_version, 'unrecorded')",             /* the engine */
    "coalesce(r.device, 'unrecorded')",                     /* where it ran */
    "coalesce(json_extract(r.config, '$.precision'), 'fp32')", /* its arithmetic */
    /* where it ran, for telling whether devices mix: runs from before devices were recorded
     * all ran on CPUs (the CUDA backend had run only its device checks then) */
    "coalesce(r.device, 'cpu')",
};
enum { FACET_ENGINE, FACET_DEVICE, FACET_PRECISION, FACET_DEVICE_KIND };

/* "a (24 runs), b (3 runs)": the experiment's runs counted by one facet, most runs first;
 * returns how many distinct values there were. */
static int runs_by(const CellsData *d, int facet, char *out, size_t len)
{
    sqlite3_stmt *st;
    Error err = {{0}};
    char sql[512];
    snprintf(out, len, "unknown");
    snprintf(sql, sizeof sql,
             "SELECT %s, count(*) FROM experiment_runs e JOIN runs r ON r.id = e.run_id WHERE e.experiment_id = ?1"
             " AND r.status NOT IN ('pending', 'stale') GROUP BY 1 ORDER BY 2 DESC, 1",
             RUN_FACETS[facet]);
    if (store_prepare((Store *)&d->store, &st, sql, &err)) return 0;
    sqlite3_bind_int64(st, 1, d->exp_id);
    size_t used = 0;
    int k = 0;
    for (; sqlite3_step(st) == SQLITE_ROW && used < len; k++)
        used += (size_t)snprintf(out + used, len - used, "%s%s (%d run%s)", k ? ", " : "", sqlite3_column_text(st, 0),
                                 sqlite3_column_int(st, 1), sqlite3_column_int(st, 1) == 1 ? "" : "s");
    sqlite3_finalize(st);
    return k;
}

/* Which engine made the runs, and whether today's would make the same (its fingerprint). */
static void write_provenance(FILE *out, const ReportRequest *r, const CellsData *d, const Markup *m)
{
    char engines[512], devices[512], precisions[256], recorded[96] = "", text[2000];
    Fingerprint fp;
    char stamped_by[96];
    Error err = {{0}};
    runs_by(d, FACET_ENGINE, engines, sizeof engines);
    runs_by(d, FACET_DEVICE, devices, sizeof devices);
    char kinds[512];
    int n_devices = runs_by(d, FACET_DEVICE_KIND, kinds, sizeof kinds);
    runs_by(d, FACET_PRECISION, precisions, sizeof precisions);
    if (fingerprint_read(d->path, &fp, stamped_by, sizeof stamped_by, &err) == 0 && fp.hex[0])
        snprintf(recorded, sizeof recorded, "%s (%s)", fp.hex, fp.platform);
    const char *verdict = !recorded[0] ? "not recorded (archived before fingerprints): `bigbatch verify` re-runs "
                                         "its cells with today's engine"
                          : !r->reference_fingerprint ? "as recorded"
                          : !strcmp(fp.hex, r->reference_fingerprint)
                              ? "the same as the demo archive's, which tests/cli/fingerprint.sh requires of today's "
                                "engine: today's engine makes these runs"
                              : "differs from today's engine's: `bigbatch verify` says whether its cells still hold";
    snprintf(text, sizeof text, "runs by engine %s; on %s%s; in %s; numerics fingerprint %s%s%s.", engines, devices,
             n_devices > 1 ? " (the tables mix devices: [gpu] marks a cell with a run on a GPU)" : "", precisions,
             recorded[0] ? recorded : "", recorded[0] ? ": " : "", verdict);
    m->para(out, "Provenance:", text);
}

/* The report in one markup: title, what and where, the tables, the paper's notes, findings. */
static int write_marked(FILE *out, const ReportRequest *r, const CellsData *d, const Markup *m, Error *err)
{
    const Experiment *exp = &d->exp;
    const Report *rep = &d->set;
    m->heading(out, r->heading, exp->title[0] ? exp->title : exp->name);
    char *what = NULL;
    if (asprintf(&what, "Experiment `%s`, %s scale, metric %s (%s is better), %s %s.", exp->name, exp->scale,
                 exp->metric, rep->higher_is_better ? "higher" : "lower", r->db_label ? "data" : "database",
                 r->db_label ? r->db_label : d->path) < 0) {
        fprintf(stderr, "bigbatch: out of memory writing a report\n");
        exit(3);
    }
    m->para(out, NULL, what);
    free(what);
    if (exp->source[0]) m->para(out, "Source:", exp->source);
    if (exp->description[0]) m->para(out, "Setup:", exp->description);
    if (exp->scaled[0]) m->para(out, "Scaled down:", exp->scaled);
    write_provenance(out, r, d, m);
    write_cells(out, rep, m, r->seed_spread);
    if (exp->n_tuned) write_best(out, rep, m);
    if (!isnan(exp->target) && write_critical_batch(out, d, m, err)) return -1;
    if (exp->reference_points[0] && !isnan(exp->target) && write_rcp(out, d, m, err)) return -1;
    if (!experiment_paper_applies(exp) && exp->n_paper_rows) write_paper(out, exp, m);
    for (int i = 0; i < exp->n_paper_notes; i++) m->list_item(out, "Paper notes:", exp->paper_notes[i], i == 0);
    if (exp->n_paper_notes) m->list_end(out);
    if (exp->findings[0]) write_findings(out, rep, m);
    if (count_edges(rep)) write_provisional(out, rep, m);
    return 0;
}

/* The one table a dashboard shows: the best per group when the file tunes, else every cell;
 * and the runs' states counted. */
static void write_headline_table(FILE *out, const CellsData *d, const Markup *m, double spread)
{
    int n[4] = {0};
    for (int i = 0; i < d->set.n_cells; i++) {
        const Cell *c = &d->set.cells[i];
        n[0] += c->complete - c->collapsed, n[1] += c->collapsed, n[2] += c->diverged, n[3] += c->failed;
    }
    char counts[160];
    int pruned = 0;
    for (int i = 0; i < d->set.n_cells; i++) pruned += d->set.cells[i].pruned;
    snprintf(counts, sizeof counts, "%d complete, %d collapsed, %d diverged, %d failed%s", n[0], n[1], n[2], n[3],
             pruned ? "," : ".");
    if (pruned) snprintf(counts + strlen(counts), sizeof counts - strlen(counts), " %d pruned.", pruned);
    m->para(out, "Runs:", counts);
    if (d->exp.n_tuned) write_best(out, &d->set, m);
    else write_cells(out, &d->set, m, spread);
}

int report_write(FILE *out, const ReportRequest *r, Error *err)
{
    CellsData d;
    if (cells_open(&d, r->file, r->scale, r->db, err) != 0) return -1;
    int rc = 0;
    if (r->headline_only) write_headline_table(out, &d, r->format == REPORT_HTML ? &HTML : &MARKDOWN, r->seed_spread);
    else if (r->format == REPORT_CSV) write_csv(out, &d.set);
    else if (write_marked(out, r, &d, r->format == REPORT_HTML ? &HTML : &MARKDOWN, err)) rc = -1;
    cells_close(&d);
    return rc;
}
