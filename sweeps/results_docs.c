/* The results pages (results_docs.h): for each experiment file with an archive, restore the
 * archive into a scratch database, write its report and draw its figures, then move the page
 * and figures into place. */
#include "results_docs.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "cells.h"
#include "fingerprint.h"
#include "fragile.h"
#include "headline.h"
#include "bench_page.h"
#include "html.h"
#include "experiment.h"
#include "figure_dir.h"
#include "plot.h"
#include "plot_parts.h"
#include "report.h"
#include "report_html.h"

/* The scale a page shows: the largest one the archive has runs of. */
static const char *const SCALE_PREFERENCE[] = {"full", "proxy", "smoke"};
enum { N_SCALES = (int)(sizeof SCALE_PREFERENCE / sizeof SCALE_PREFERENCE[0]) };

/* Of the scales the database has runs of, the one SCALE_PREFERENCE puts first (NULL: none). */
static const char *archived_scale(const char *db, const char *name, Error *err)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *q = NULL;
    const char *found = NULL;
    int rc = sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(h, "SELECT 1 FROM experiments e JOIN experiment_runs x ON x.experiment_id = e.id "
                                   "WHERE e.name = ?1 AND e.scale = ?2 LIMIT 1", -1, &q, NULL);
    for (int i = 0; rc == SQLITE_OK && i < N_SCALES && !found; i++) {
        sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, SCALE_PREFERENCE[i], -1, SQLITE_STATIC);
        int step = sqlite3_step(q);
        if (step == SQLITE_ROW) found = SCALE_PREFERENCE[i];
        else if (step != SQLITE_DONE) rc = step;
        sqlite3_reset(q);
    }
    if (rc != SQLITE_OK) error_set(err, "%s: %s", db, h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
    else if (!found) error_set(err, "%s: no runs of experiment %s at any scale", db, name);
    sqlite3_finalize(q);
    sqlite3_close(h);
    return found;
}

typedef struct {
    const ResultsDocsOptions *o;
    char *work;      /* scratch folder inside out/ (same file system: renames are atomic) */
    char *figures;   /* work/figures: the new figures, moved to out/figures at the end */
    FILE *page;      /* work/results.md */
    FILE *progress;
    FILE *index;     /* the list items of html_dir/index.html (NULL: no HTML) */
    double seed_spread;  /* the demo archive's (fragile.h); NAN when it has no repeats */
    char reference[17];  /* the demo archive's numerics fingerprint ("" when none) */
    char *demo_db;       /* the demo's archive restored in work/ (NULL: not archived) */
} Docs;

/* Moves the images drawn into `dir` to work/figures/<name>-<figure>.<ext>; links the PNGs
 * from the page. */
static int move_figures(Docs *d, const char *dir, const char *name, Error *err)
{
    static const char *const images[] = {".png", ".svg", NULL};
    Names made = {0};
    int rc = list_files(dir, images, &made, err);
    for (int i = 0; rc == 0 && i < made.n; i++) {
        char *from = path_join(dir, made.items[i]), *named = NULL, *to = NULL;
        size_t len = strlen(name) + strlen(made.items[i]) + 2, kind = strcspn(made.items[i], ".");
        named = xmalloc(len, "figure name");
        if (kind == strlen(name) && !strncmp(made.items[i], name, kind)) /* layer-ratios.png, not twice */
            snprintf(named, len, "%s", made.items[i]);
        else
            snprintf(named, len, "%s-%s", name, made.items[i]);
        to = path_join(d->figures, named);
        if (rename(from, to) != 0) {
            error_set(err, "%s: cannot move to %s: %s", from, to, strerror(errno));
            rc = -1;
        } else if (name_ends_with(named, ".png")) {
            fprintf(d->page, "\n![%s: %.*s](figures/%s)\n", name, (int)(strlen(made.items[i]) - 4), made.items[i],
                    named);
        }
        free(from);
        free(named);
        free(to);
    }
    names_free(&made);
    return rc;
}

/* The experiment's HTML page, and its line in the index. */
/* A figure as an <img> whose source is the SVG itself (a data: URL, every byte but letters
 * and digits percent-encoded), so the index stays one self-contained file. */
static void write_thumbnail(FILE *out, const char *svg, const char *name, const char *href)
{
    FILE *f = fopen(svg, "rb");
    if (!f) return;
    fprintf(out, "<a href=\"%s.html\"><img class=\"thumb\" alt=\"%s\" src=\"data:image/svg+xml,", href, name);
    int c;
    while ((c = getc(f)) != EOF) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) putc(c, out);
        else fprintf(out, "%%%02X", c);
    }
    fclose(f);
    fprintf(out, "\"></a>\n");
}

/* The page of one experiment, and its entry of the index: title, scale, where the data came
 * from, the runs' states, its headline table and a thumbnail of its first figure. */
static int write_html_page(Docs *d, const FigureDraw *f, const char *dump, const char *svg_dir, const Experiment *exp,
                           Error *err)
{
    HtmlReportRequest h = {f->file, f->scale, f->db, dump, f->plots_dir, d->o->html_dir, svg_dir, d->seed_spread,
                           d->reference[0] ? d->reference : NULL};
    if (report_html_write(&h, NULL, err) != 0) return -1;
    fprintf(d->index, "<section><h2><a href=\"%s.html\">", exp->name);
    html_escape(d->index, exp->title[0] ? exp->title : exp->name);
    fprintf(d->index, "</a></h2>\n<p><code>%s</code>, %s scale, from <code>", exp->name, f->scale);
    html_escape(d->index, dump);
    fprintf(d->index, "</code></p>\n");
    if (exp->n_figures > 0) {
        char svg_name[128];
        snprintf(svg_name, sizeof svg_name, "%s.svg", exp->figures[0]);
        char *svg = path_join(svg_dir, svg_name);
        write_thumbnail(d->index, svg, exp->figures[0], exp->name);
        free(svg);
    }
    ReportRequest r = {.file = f->file, .scale = f->scale, .db = f->db, .format = REPORT_HTML, .heading = 3,
                       .seed_spread = d->seed_spread, .headline_only = true};
    int rc = report_write(d->index, &r, err);
    fprintf(d->index, "</section>\n");
    return rc;
}

/* html_dir/index.html: a link to every page (written beside and renamed into place). */
static int write_html_index(const ResultsDocsOptions *o, const char *items, Error *err)
{
    char *path = path_join(o->html_dir, "index.html"), *part = path_join(o->html_dir, ".index.html.part");
    FILE *f = fopen(part, "w");
    int rc = f ? 0 : -1;
    if (f) {
        fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>bigbatch results</title>"
                   "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}section{border-top:1px solid "
                   "#ccc;overflow:auto;padding-bottom:1em}img.thumb{float:right;width:360px;margin-left:1em}"
                   "table{border-collapse:collapse;font-size:90%%}td,th{border:1px solid #ddd;padding:2px 6px}"
                   "</style></head>\n<body>\n<h1>bigbatch results</h1>\n<p>Every experiment with results in <code>");
        html_escape(f, o->results_dir ? o->results_dir : o->archive);
        fprintf(f, "</code> (%s): its headline table, how its runs ended and its first figure; the title opens its "
                   "page. Made by <code>bigbatch report --all --html</code>.</p>\n%s</body></html>\n",
                o->results_dir ? "your own results databases" : "the archived results", items);
        rc = fclose(f) == 0 ? 0 : -1;
    }
    if (rc == 0 && rename(part, path) != 0) rc = -1;
    if (rc != 0) {
        error_set(err, "%s: cannot write: %s", path, strerror(errno));
        unlink(part);
    }
    free(path);
    free(part);
    return rc;
}

/* One experiment's section of the page; 1 when it has no archive (noted in `missing`), 0, or -1. */
static int write_experiment(Docs *d, const char *ini, FILE *missing, Error *err)
{
    char *file = path_join(d->o->experiments, ini);
    Experiment exp;
    int rc = experiment_load(file, "proxy", &exp, err);
    if (rc != 0) {
        free(file);
        return -1;
    }
    size_t len = strlen(exp.name) + 8;
    char *dump_name = xmalloc(len, "archive name"), *db_name = xmalloc(len, "database name");
    snprintf(dump_name, len, "%s.sql.gz", exp.name);
    snprintf(db_name, len, "%s.db", exp.name);
    /* the data: an archive restored into work/, or the user's own database as it is */
    const char *own = d->o->results_dir;
    char *dump = own ? path_join(own, db_name) : path_join(d->o->archive, dump_name),
         *db = own ? xstrdup(dump) : path_join(d->work, db_name);
    const char *scale = NULL;
    if (access(dump, F_OK) != 0) {
        fprintf(missing, "- `%s/%s`: %s\n", d->o->experiments, ini, exp.title[0] ? exp.title : exp.name);
        rc = 1;
    } else if ((!own && archive_restore(dump, db, err) != 0) || !(scale = archived_scale(db, exp.name, err))) {
        rc = -1;
    } else {
        fprintf(d->progress, "report --all: %s (%s scale) from %s\n", exp.name, scale, dump);
        fprintf(d->page, "\n");
        ReportRequest r = {.file = file, .scale = scale, .db = db, .format = REPORT_MD, .db_label = dump, .heading = 2,
                           .seed_spread = d->seed_spread, .reference_fingerprint = d->reference[0] ? d->reference : NULL};
        rc = report_write(d->page, &r, err);
        /* drawn once into work/<name>/: inlined by the HTML page, then moved to the figures */
        FigureDraw f = {file, scale, db, d->o->plots_dir, true};
        char *dir = path_join(d->work, exp.name);
        if (rc == 0 && figures_draw_into(&f, dir, d->progress, err) < 0) rc = -1;
        if (rc == 0 && d->index) rc = write_html_page(d, &f, dump, dir, &exp, err);
        if (rc == 0) rc = move_figures(d, dir, exp.name, err);
        free(dir);
        if (!own) unlink(db);
    }
    experiment_free(&exp);
    free(dump_name);
    free(db_name);
    free(dump);
    free(db);
    free(file);
    return rc;
}

/* The demo archive's seed spread and fingerprint, what every section is judged by; when it is
 * not archived, neither (each section then says so). */
static void read_demo(Docs *d)
{
    const char *own = d->o->results_dir;
    char *dump = own ? path_join(own, SEED_SPREAD_EXPERIMENT ".db")
                     : path_join(d->o->archive, SEED_SPREAD_EXPERIMENT ".sql.gz");
    char *db = own ? xstrdup(dump) : path_join(d->work, "seed-spread.db");
    char *ini = path_join(d->o->experiments, SEED_SPREAD_EXPERIMENT ".ini");
    Error err = {{0}};
    CellsData demo;
    Fingerprint fp;
    /* both the experiment file and its data: a page made from other files has no demo */
    if (access(ini, F_OK) == 0 && access(dump, F_OK) == 0 && (own || archive_restore(dump, db, &err) == 0)) {
        if (cells_open(&demo, ini, "proxy", db, &err) == 0) {
            d->seed_spread = fragile_seed_spread(&demo.set);
            cells_close(&demo);
        }
        if (fingerprint_read(db, &fp, NULL, 0, &err) == 0) snprintf(d->reference, sizeof d->reference, "%s", fp.hex);
        d->demo_db = db; /* for the headline; removed with work/ */
    } else {
        free(db);
    }
    free(dump);
    free(ini);
}

/* work/headline.md: the README's headline block from the demo's archive (headline.h). */
static int write_headline(const Docs *d, Error *err)
{
    char *path = path_join(d->work, "headline.md"), *ini = path_join(d->o->experiments, SEED_SPREAD_EXPERIMENT ".ini");
    FILE *out = fopen(path, "w");
    int rc = out ? headline_write(out, ini, d->demo_db, err) : -1;
    if (!out) error_set(err, "%s: cannot create: %s", path, strerror(errno));
    if (out && fclose(out) != 0 && rc == 0) {
        error_set(err, "%s: write error: %s", path, strerror(errno));
        rc = -1;
    }
    free(path);
    free(ini);
    return rc;
}

static void write_header(Docs *d)
{
    fprintf(d->page, "# Results\n\n"
                     "Generated by `bigbatch report --all` from the archived results (%s/*.sql.gz) and the\n"
                     "experiment files (%s/*.ini): do not edit; edit the experiment file's prose or rerun its\n"
                     "sweep, save it with `sweeps/archive.sh save`, and regenerate. Each section is one\n"
                     "experiment file at the largest scale its archive holds: the paper's source, how it was\n"
                     "scaled down, every cell of the grid, the best over the tuned axes, the paper's notes, what\n"
                     "the runs show, and the figures.\n",
            d->o->archive, d->o->experiments);
}

static int cmp_str_desc(const void *a, const void *b) { return strcmp(*(char *const *)b, *(char *const *)a); }

enum { SUMMARY_CHARS = 200 };

/* The first line of a bench output (what ran, when, at which commit), without its "# " and cut
 * at a word to SUMMARY_CHARS, and the file's line count: one entry of the index. */
static int bench_summary(const char *src, char *summary, long *lines, Error *err)
{
    FILE *in = fopen(src, "r");
    if (!in) {
        error_set(err, "%s: cannot open: %s", src, strerror(errno));
        return -1;
    }
    size_t len = 0;
    bool first = true;
    int c;
    *lines = 0;
    while ((c = getc(in)) != EOF) {
        if (c == '\n') {
            (*lines)++;
            first = false;
        } else if (first && len < SUMMARY_CHARS + 1) {
            summary[len++] = c == '|' ? '/' : (char)c;
        }
    }
    summary[len] = 0;
    const int bad = ferror(in);
    fclose(in);
    if (bad) {
        error_set(err, "%s: read error", src);
        return -1;
    }
    if (len > SUMMARY_CHARS) { /* cut at the last space, marked */
        char *space = strrchr(summary, ' ');
        strcpy(space && space > summary ? space : summary + SUMMARY_CHARS - 3, " ...");
    }
    if (!strncmp(summary, "# ", 2)) memmove(summary, summary + 2, strlen(summary + 2) + 1);
    return 0;
}

/* work/benchmarks.md: an index of the dated bench outputs, newest first, each a link and its
 * first line; the files stay in the bench folder (inlined, the page was 6,888 lines). */
static int write_benchmarks(const Docs *d, Error *err)
{
    static const char *const txt[] = {".txt", NULL};
    Names files = {0};
    if (list_files(d->o->bench, txt, &files, err) != 0) return -1;
    qsort(files.items, (size_t)files.n, sizeof *files.items, cmp_str_desc);
    char *path = path_join(d->work, "benchmarks.md");
    FILE *out = fopen(path, "w");
    int rc = out ? 0 : -1;
    if (!out) error_set(err, "%s: cannot create: %s", path, strerror(errno));
    /* links relative to docs/, where the page lives (an absolute --bench as it is) */
    const char *up = d->o->bench[0] == '/' ? "" : "../";
    if (out)
        fprintf(out, "# Benchmarks: the dated outputs\n\nGenerated by `bigbatch report --all` from %s/*.txt: an "
                     "index, newest first. Each file is one dated run of `make bench` (or of the benchmark its first "
                     "line names), kept verbatim there; below, its first line. docs/performance.md reads today's "
                     "numbers from them.\n",
                d->o->bench);
    char day[11] = "";
    for (int i = 0; rc == 0 && i < files.n; i++) {
        const char *name = files.items[i];
        char *src = path_join(d->o->bench, name), summary[SUMMARY_CHARS + 8];
        long lines;
        rc = bench_summary(src, summary, &lines, err);
        if (rc == 0 && strncmp(day, name, 10) != 0) { /* a heading per day (names start with the date) */
            snprintf(day, sizeof day, "%.10s", name);
            fprintf(out, "\n## %s\n\n", day);
        }
        if (rc == 0) fprintf(out, "- [%s](%s%s/%s) (%ld lines): %s\n", name, up, d->o->bench, name, lines, summary);
        free(src);
    }
    if (out && fclose(out) != 0 && rc == 0) {
        error_set(err, "%s: write error: %s", path, strerror(errno));
        rc = -1;
    }
    free(path);
    names_free(&files);
    return rc;
}

/* work/performance.md: the template with its directives filled from the bench outputs. */
static int write_performance(const Docs *d, Error *err)
{
    char *path = path_join(d->work, "performance.md");
    FILE *out = fopen(path, "w");
    int rc = out ? bench_page_write(d->o->performance, d->o->bench, out, err) : -1;
    if (!out) error_set(err, "%s: cannot create: %s", path, strerror(errno));
    if (out && fclose(out) != 0 && rc == 0) {
        error_set(err, "%s: write error: %s", path, strerror(errno));
        rc = -1;
    }
    free(path);
    return rc;
}

/* Moves a file of the scratch folder to out/. */
static int publish_file(const Docs *d, const char *name, Error *err)
{
    char *from = path_join(d->work, name), *to = path_join(d->o->out, name);
    int rc = rename(from, to) == 0 ? 0 : -1;
    if (rc) error_set(err, "%s: cannot move to %s: %s", from, to, strerror(errno));
    free(from);
    free(to);
    return rc;
}

/* Moves every file of work/figures into out/figures, then the pages into out/. */
static int publish(Docs *d, Error *err)
{
    static const char *const any[] = {"", NULL};
    char *figures = path_join(d->o->out, "figures");
    Names made = {0};
    int rc = plot_mkdir_p(figures, err) || list_files(d->figures, any, &made, err) ? -1 : 0;
    for (int i = 0; rc == 0 && i < made.n; i++) {
        char *from = path_join(d->figures, made.items[i]), *to = path_join(figures, made.items[i]);
        if (rename(from, to) != 0) {
            error_set(err, "%s: cannot move to %s: %s", from, to, strerror(errno));
            rc = -1;
        }
        free(from);
        free(to);
    }
    names_free(&made);
    free(figures);
    if (rc != 0) return -1;
    if (d->o->bench && publish_file(d, "benchmarks.md", err) != 0) return -1;
    if (d->o->bench && d->o->performance && publish_file(d, "performance.md", err) != 0) return -1;
    if (d->demo_db) {
        char *block = path_join(d->o->out, "headline.md");
        int spliced = publish_file(d, "headline.md", err) || (d->o->readme && headline_splice(d->o->readme, block, err));
        free(block);
        if (spliced) return -1;
    }
    return publish_file(d, "results.md", err);
}

/* Removes the scratch folder and what is left in it (two levels: work/<name>/ files). */
static void remove_tree(const char *dir)
{
    static const char *const any[] = {"", NULL};
    Names entries = {0};
    Error ignored;
    if (list_files(dir, any, &entries, &ignored) == 0)
        for (int i = 0; i < entries.n; i++) {
            char *p = path_join(dir, entries.items[i]);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p);
            else unlink(p);
            free(p);
        }
    names_free(&entries);
    rmdir(dir);
}

int results_docs_write(const ResultsDocsOptions *o, FILE *progress, Error *err)
{
    static const char *const ini[] = {".ini", NULL};
    Names files = {0};
    if (list_files(o->experiments, ini, &files, err) != 0 || plot_mkdir_p(o->out, err) != 0) {
        names_free(&files);
        return -1;
    }
    Docs d = {.o = o, .work = path_join(o->out, ".report-XXXXXX"), .progress = progress, .seed_spread = NAN};
    char *index_items = NULL;
    size_t index_len = 0;
    if (o->html_dir && (plot_mkdir_p(o->html_dir, err) != 0 || !(d.index = open_memstream(&index_items, &index_len)))) {
        if (!err->msg[0]) error_set(err, "out of memory");
        free(d.work);
        names_free(&files);
        return -1;
    }
    int rc = -1;
    if (!mkdtemp(d.work)) {
        error_set(err, "%s: cannot create a scratch folder: %s", d.work, strerror(errno));
        if (d.index) fclose(d.index);
        free(index_items);
        free(d.work);
        names_free(&files);
        return -1;
    }
    d.figures = path_join(d.work, "figures");
    read_demo(&d);
    char *page = path_join(d.work, "results.md");
    if (mkdir(d.figures, 0777) != 0) error_set(err, "%s: %s", d.figures, strerror(errno));
    else if (!(d.page = fopen(page, "w"))) error_set(err, "%s: cannot create: %s", page, strerror(errno));
    if (d.page) {
        write_header(&d);
        rc = 0;
        /* the bench pages first: a bad template fails before the minutes of figures */
        if (o->bench) rc = write_benchmarks(&d, err);
        if (rc == 0 && o->bench && o->performance) rc = write_performance(&d, err);
        char *missing_text = NULL;
        size_t missing_len = 0;
        FILE *missing = open_memstream(&missing_text, &missing_len);
        if (!missing && rc == 0) {
            error_set(err, "out of memory");
            rc = -1;
        }
        for (int i = 0; rc == 0 && i < files.n; i++) {
            int one = write_experiment(&d, files.items[i], missing, err);
            if (one < 0) {
                error_prefix(err, files.items[i]);
                rc = -1;
            }
        }
        if (missing) fclose(missing);
        if (rc == 0 && d.demo_db) rc = write_headline(&d, err);
        if (rc == 0 && missing_len)
            fprintf(d.page, "\n## Not archived\n\nThese experiment files have no archive in %s, so no results here:\n\n%s",
                    o->archive, missing_text);
        free(missing_text);
        if (fclose(d.page) != 0 && rc == 0) {
            error_set(err, "%s: write error: %s", page, strerror(errno));
            rc = -1;
        }
        if (rc == 0) rc = publish(&d, err);
    }
    if (d.index) {
        fclose(d.index);
        if (rc == 0) rc = write_html_index(o, index_items ? index_items : "", err);
        free(index_items);
    }
    remove_tree(d.work);
    free(d.demo_db);
    free(page);
    free(d.figures);
    free(d.work);
    names_free(&files);
    return rc;
}
