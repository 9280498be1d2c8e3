/* The HTML report (report_html.h): a page assembled from the report's HTML fragment, the
 * figures gnuplot draws as SVG, and the runs read from the database. */
#include "report_html.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cells.h"
#include "html.h"
#include "experiment.h"
#include "figure_dir.h"
#include "plot.h"
#include "plot_parts.h"
#include "report.h"

static const char STYLE[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:90%;min-width:50%}"
    "caption{text-align:left;padding:.3em 0;color:#444}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
    "th{background:#eee;cursor:pointer;user-select:none}"
    "th.asc::after{content:' \\25B2'}th.desc::after{content:' \\25BC'}"
    "tr:nth-child(even) td{background:#fafafa}"
    "figure{margin:1em 0}figure svg{max-width:100%;height:auto}"
    "section.run{border-top:1px solid #ddd;margin-top:1em}"
    "td.complete{color:#070}td.diverged{color:#a00}td.failed{color:#a00;font-weight:bold}";

/* Click a header to sort by its column (numbers as numbers, the rest as text after them,
 * empty cells last, in either direction); #sort=T,C,asc|desc sorts one table when the page opens. */
static const char SCRIPT[] =
    "(function(){"
    "function key(t){var x=parseFloat(t);return isNaN(x)||!/^[-+]?[0-9.]/.test(t)?null:x;}"
    "function sortBy(table,col,dir){"
    "var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);"
    "rows.sort(function(a,b){var s=a.cells[col].textContent.trim(),t=b.cells[col].textContent.trim();"
    "if(s===''||t==='')return s===''?(t===''?0:1):-1;"
    "var x=key(s),y=key(t);if((x===null)!==(y===null))return x===null?1:-1;"
    "var c=x!==null?x-y:s.localeCompare(t);return dir==='desc'?-c:c;});"
    "rows.forEach(function(r){body.appendChild(r);});"
    "Array.prototype.forEach.call(table.tHead.rows[0].cells,function(h,i){"
    "h.className=i===col?dir:'';});}"
    "var tables=document.querySelectorAll('table.sortable');"
    "Array.prototype.forEach.call(tables,function(table){"
    "Array.prototype.forEach.call(table.tHead.rows[0].cells,function(h,i){"
    "h.addEventListener('click',function(){sortBy(table,i,h.className==='asc'?'desc':'asc');});});});"
    "var m=/^#sort=(\\d+),(\\d+),(asc|desc)$/.exec(location.hash);"
    "if(m&&tables[+m[1]])sortBy(tables[+m[1]],+m[2],m[3]);"
    "document.body.setAttribute('data-sortable-tables',tables.length);"
    "})();";

/* ---- the figures ---- */

/* Copies an SVG file into the page without its XML declaration (not allowed inside HTML). */
static int inline_svg(FILE *out, const char *path, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char line[4096];
    bool first = true;
    while (fgets(line, sizeof line, f)) {
        if (first && !strncmp(line, "<?xml", 5)) {
            first = false;
            continue;
        }
        first = false;
        fputs(line, out);
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) error_set(err, "%s: read error", path);
    return bad ? -1 : 0;
}

/* The SVGs of `dir`, inlined in the page. */
static int inline_figures(FILE *out, const char *dir, Error *err)
{
    static const char *const svg[] = {".svg", NULL};
    Names names;
    if (list_files(dir, svg, &names, err) != 0) return -1;
    fprintf(out, "<h2>Figures</h2>\n");
    int rc = 0;
    for (int i = 0; i < names.n && rc == 0; i++) {
        char *path = path_join(dir, names.items[i]);
        fprintf(out, "<figure>\n");
        rc = inline_svg(out, path, err);
        fprintf(out, "<figcaption>%.*s</figcaption></figure>\n", (int)(strlen(names.items[i]) - 4), names.items[i]);
        free(path);
    }
    names_free(&names);
    return rc;
}

/* The experiment's figures: those already drawn into r->svg_dir, or drawn here as SVG into a
 * scratch folder beside the page, which is removed. */
static int write_figures(FILE *out, const HtmlReportRequest *r, const char *page, Error *err)
{
    if (r->svg_dir) return inline_figures(out, r->svg_dir, err);
    size_t len = strlen(page) + 16;
    char *dir = xmalloc(len, "scratch folder");
    snprintf(dir, len, "%s.fig-XXXXXX", page);
    if (!mkdtemp(dir)) {
        error_set(err, "%s: cannot create a scratch folder: %s", dir, strerror(errno));
        free(dir);
        return -1;
    }
    FigureDraw f = {r->file, r->scale, r->db, r->plots_dir, false};
    int rc = figures_draw_into(&f, dir, stderr, err) < 0 ? -1 : inline_figures(out, dir, err);
    static const char *const any[] = {"", NULL};
    Names made;
    Error ignored;
    if (list_files(dir, any, &made, &ignored) == 0) {
        for (int i = 0; i < made.n; i++) {
            char *path = path_join(dir, made.items[i]);
            unlink(path);
            free(path);
        }
        names_free(&made);
    }
    rmdir(dir);
    free(dir);
    return rc;
}

/* ---- the runs ---- */

static const char *text_col(sqlite3_stmt *q, int i)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    return t ? (const char *)t : "";
}

/* A number column as text: 4 significant decimals, "" for NULL. */
static void number_col(sqlite3_stmt *q, int i, char *buf, size_t len)
{
    if (sqlite3_column_type(q, i) == SQLITE_NULL) buf[0] = 0;
    else if (sqlite3_column_type(q, i) == SQLITE_INTEGER) snprintf(buf, len, "%lld", sqlite3_column_int64(q, i));
    else snprintf(buf, len, "%.4f", sqlite3_column_double(q, i));
}

static void write_runs_table(FILE *out, const CellsData *d, sqlite3_stmt *run)
{
    static const char *const cols[] = {"cell", "run", "status", "attempts", "steps", "test_acc",
                                       "test_loss", "train_loss", "diverged at step", "details"};
    const int n_cols = (int)(sizeof cols / sizeof cols[0]);
    fprintf(out, "<h2>Runs</h2>\n<table class=\"sortable\" id=\"runs\"><caption>Every run of the grid, in "
                 "sweep order: its state and final metrics (details: loss curve and layer ratios)</caption>\n"
                 "<thead><tr>");
    for (int i = 0; i < n_cols; i++) fprintf(out, "<th>%s</th>", cols[i]);
    fprintf(out, "</tr></thead>\n<tbody>\n");
    for (int c = 0; c < d->set.n_cells; c++) {
        const Cell *cell = &d->set.cells[c];
        for (int k = 0; k < cell->runs; k++) {
            const char *id = cell->run_list[k].id;
            sqlite3_reset(run);
            sqlite3_bind_text(run, 1, id, -1, SQLITE_STATIC);
            if (sqlite3_step(run) != SQLITE_ROW) continue;
            char steps[32], acc[32], tloss[32], trloss[32], div[32];
            number_col(run, 2, steps, sizeof steps);
            number_col(run, 3, acc, sizeof acc);
            number_col(run, 4, tloss, sizeof tloss);
            number_col(run, 5, trloss, sizeof trloss);
            number_col(run, 6, div, sizeof div);
            const char *status = text_col(run, 0);
            fprintf(out, "<tr><td>");
            html_escape(out, cell->label ? cell->label : "");
            fprintf(out, "</td><td><a href=\"#run-%s\">%s</a></td><td class=\"", id, id);
            html_escape(out, status);
            fprintf(out, "\">");
            html_escape(out, status);
            fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>", text_col(run, 1),
                    steps, acc, tloss, trloss, div);
            fprintf(out, "<td><a href=\"#run-%s\">loss, ratios</a></td></tr>\n", id);
        }
    }
    fprintf(out, "</tbody></table>\n");
}

typedef struct {
    double *x, *train, *test;
    int n;
} Curve;

/* The run's train and test loss per epoch (NAN where not finite). */
static Curve read_curve(sqlite3_stmt *epochs, const char *id)
{
    Curve c = {0};
    sqlite3_reset(epochs);
    sqlite3_bind_text(epochs, 1, id, -1, SQLITE_STATIC);
    while (sqlite3_step(epochs) == SQLITE_ROW) {
        c.x = xrealloc(c.x, sizeof *c.x * (size_t)(c.n + 1), "curve");
        c.train = xrealloc(c.train, sizeof *c.train * (size_t)(c.n + 1), "curve");
        c.test = xrealloc(c.test, sizeof *c.test * (size_t)(c.n + 1), "curve");
        c.x[c.n] = sqlite3_column_double(epochs, 0);
        c.train[c.n] = sqlite3_column_type(epochs, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(epochs, 1);
        c.test[c.n] = sqlite3_column_type(epochs, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(epochs, 2);
        c.n++;
    }
    return c;
}

enum { CURVE_W = 480, CURVE_H = 200, MARGIN = 40 };

static void polyline(FILE *out, const Curve *c, const double *y, double x0, double x1, double y0, double y1,
                     const char *style)
{
    fprintf(out, "<polyline fill=\"none\" %s points=\"", style);
    for (int i = 0; i < c->n; i++) {
        if (!isfinite(y[i])) continue;
        double px = MARGIN + (x1 > x0 ? (c->x[i] - x0) / (x1 - x0) : 0.5) * (CURVE_W - 2 * MARGIN);
        double py = CURVE_H - MARGIN + (y1 > y0 ? -(y[i] - y0) / (y1 - y0) : -0.5) * (CURVE_H - 2 * MARGIN);
        fprintf(out, "%.1f,%.1f ", px, py);
    }
    fprintf(out, "\"/>\n");
}

/* Train (solid) and test (dashed) loss against the epoch. */
static void write_curve(FILE *out, const Curve *c)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int i = 0; i < c->n; i++) {
        x0 = fmin(x0, c->x[i]);
        x1 = fmax(x1, c->x[i]);
        const double v[2] = {c->train[i], c->test[i]};
        for (int k = 0; k < 2; k++)
            if (isfinite(v[k])) {
                y0 = fmin(y0, v[k]);
                y1 = fmax(y1, v[k]);
            }
    }
    if (!isfinite(y0)) {
        fprintf(out, "<p>No finite loss recorded.</p>\n");
        return;
    }
    fprintf(out, "<svg class=\"curve\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
                 "xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\n",
            CURVE_W, CURVE_H, CURVE_W, CURVE_H);
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", MARGIN,
            MARGIN, CURVE_W - 2 * MARGIN, CURVE_H - 2 * MARGIN);
    polyline(out, c, c->train, x0, x1, y0, y1, "stroke=\"#1f77b4\" stroke-width=\"2\"");
    polyline(out, c, c->test, x0, x1, y0, y1, "stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"5,3\"");
    fprintf(out, "<text x=\"%d\" y=\"%d\">%.3g</text><text x=\"%d\" y=\"%d\">%.3g</text>\n", 2, MARGIN + 4, y1, 2,
            CURVE_H - MARGIN, y0);
    fprintf(out, "<text x=\"%d\" y=\"%d\">epoch %g</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">epoch %g</text>\n",
            MARGIN, CURVE_H - MARGIN + 16, x0, CURVE_W - MARGIN, CURVE_H - MARGIN + 16, x1);
    fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#1f77b4\">train loss</text>"
                 "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">test loss (dashed)</text>\n</svg>\n",
            MARGIN, MARGIN - 8, MARGIN + 90, MARGIN - 8);
}

/* The layer statistics of the run's first step, if it logged any. */
static void write_ratios(FILE *out, sqlite3_stmt *layers, const char *id)
{
    sqlite3_reset(layers);
    sqlite3_bind_text(layers, 1, id, -1, SQLITE_STATIC);
    bool any = false;
    while (sqlite3_step(layers) == SQLITE_ROW) {
        if (!any)
            fprintf(out, "<table class=\"sortable\"><caption>Layer statistics after the first step</caption>\n"
                         "<thead><tr><th>parameter</th><th>kind</th><th>||w||</th><th>||g||</th>"
                         "<th>||w||/||g||</th><th>local rate</th></tr></thead>\n<tbody>\n");
        any = true;
        char w[32], g[32], ratio[32], rate[32];
        number_col(layers, 2, w, sizeof w);
        number_col(layers, 3, g, sizeof g);
        number_col(layers, 4, ratio, sizeof ratio);
        number_col(layers, 5, rate, sizeof rate);
        fprintf(out, "<tr><td>");
        html_escape(out, text_col(layers, 0));
        fprintf(out, "</td><td>");
        html_escape(out, text_col(layers, 1));
        fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", w, g, ratio, rate);
    }
    if (any) fprintf(out, "</tbody></table>\n");
    else fprintf(out, "<p>No layer statistics (the run was not started with layer-stats).</p>\n");
}

static void write_run_details(FILE *out, const CellsData *d, sqlite3_stmt *epochs, sqlite3_stmt *layers)
{
    fprintf(out, "<h2>Each run</h2>\n");
    for (int c = 0; c < d->set.n_cells; c++) {
        const Cell *cell = &d->set.cells[c];
        for (int k = 0; k < cell->runs; k++) {
            const char *id = cell->run_list[k].id;
            fprintf(out, "<section class=\"run\" id=\"run-%s\"><h3>%s: ", id, id);
            html_escape(out, cell->label ? cell->label : "");
            fprintf(out, "</h3>\n");
            Curve curve = read_curve(epochs, id);
            if (curve.n) write_curve(out, &curve);
            else fprintf(out, "<p>No epochs recorded.</p>\n");
            free(curve.x);
            free(curve.train);
            free(curve.test);
            write_ratios(out, layers, id);
            fprintf(out, "</section>\n");
        }
    }
}

static int write_runs(FILE *out, const HtmlReportRequest *r, Error *err)
{
    CellsData d;
    if (cells_open(&d, r->file, r->scale, r->db, err) != 0) return -1;
    sqlite3_stmt *run = NULL, *epochs = NULL, *layers = NULL;
    int rc = store_prepare(&d.store, &run,
                           "SELECT status, attempt, steps, test_acc, test_loss, train_loss, diverged_step "
                           "FROM runs WHERE id = ?1",
                           err);
    if (rc == 0)
        rc = store_prepare(&d.store, &epochs,
                           "SELECT epoch, train_loss, test_loss FROM epochs WHERE run_id = ?1 ORDER BY epoch", err);
    if (rc == 0)
        rc = store_prepare(&d.store, &layers,
                           "SELECT name, kind, w_norm, g_norm, ratio, local_rate FROM layer_stats "
                           "WHERE run_id = ?1 AND step = 0 ORDER BY param",
                           err);
    if (rc == 0) {
        write_runs_table(out, &d, run);
        write_run_details(out, &d, epochs, layers);
    }
    sqlite3_finalize(run);
    sqlite3_finalize(epochs);
    sqlite3_finalize(layers);
    cells_close(&d);
    return rc;
}

/* ---- the page ---- */

/* dir/<experiment>.html, after creating dir; NULL with err. */
static char *page_path(const HtmlReportRequest *r, Error *err)
{
    Experiment exp;
    if (experiment_load(r->file, r->scale, &exp, err) != 0) return NULL;
    size_t len = strlen(exp.name) + 6;
    char *name = xmalloc(len, "page name");
    snprintf(name, len, "%s.html", exp.name);
    experiment_free(&exp);
    char *path = plot_mkdir_p(r->dir, err) == 0 ? path_join(r->dir, name) : NULL;
    free(name);
    return path;
}

int report_html_write(const HtmlReportRequest *r, char **page, Error *err)
{
    if (page) *page = NULL;
    char *path = page_path(r, err);
    if (!path) return -1;
    size_t len = strlen(path) + 16;
    char *part = xmalloc(len, "page name");
    snprintf(part, len, "%s.part", path);
    FILE *out = fopen(part, "w");
    if (!out) {
        error_set(err, "%s: cannot create: %s", part, strerror(errno));
        free(part);
        free(path);
        return -1;
    }
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
    html_escape(out, r->file);
    fprintf(out, " (bigbatch report)</title>\n<style>%s</style></head><body>\n", STYLE);
    ReportRequest rr = {.file = r->file, .scale = r->scale, .db = r->db, .format = REPORT_HTML, .db_label = r->db_label, .heading = 1, .seed_spread = r->seed_spread, .reference_fingerprint = r->reference_fingerprint};
    int rc = report_write(out, &rr, err);
    if (rc == 0) rc = write_figures(out, r, path, err);
    if (rc == 0) rc = write_runs(out, r, err);
    fprintf(out, "<script>%s</script>\n</body></html>\n", SCRIPT);
    if (fclose(out) != 0 && rc == 0) {
        error_set(err, "%s: write error: %s", part, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(part, path) != 0) {
        error_set(err, "%s: cannot rename to %s: %s", part, path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) unlink(part);
    free(part);
    if (rc == 0 && page) *page = path;
    else free(path);
    return rc;
}
