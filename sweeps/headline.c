/* The README's generated headline (headline.h). */
#include "headline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cells.h"
#include "fingerprint.h"
#include "report.h"
#include "store.h"

/* How the sweep ran: runs, wall time from the first start to the last end, and the most runs
 * that trained at once. */
typedef struct {
    int runs, at_once;
    double wall;
    char engines[256];
} SweepTime;

static int sweep_time(Store *s, long long exp_id, SweepTime *t, Error *err)
{
    static const char *const SQL =
        "WITH r AS (SELECT x.* FROM runs x JOIN experiment_runs e ON e.run_id = x.id WHERE e.experiment_id = ?1"
        " AND x.finished IS NOT NULL)"
        " SELECT (SELECT count(*) FROM r), (SELECT max(finished) - min(started) FROM r),"
        " (SELECT max((SELECT count(*) FROM r b WHERE b.started <= a.started AND b.finished > a.started)) FROM r a),"
        " (SELECT group_concat(v, ', ') FROM (SELECT DISTINCT coalesce(engine_version, 'unrecorded') v FROM r))";
    sqlite3_stmt *st;
    if (store_prepare(s, &st, SQL, err)) return -1;
    sqlite3_bind_int64(st, 1, exp_id);
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0) {
        t->runs = sqlite3_column_int(st, 0);
        t->wall = sqlite3_column_double(st, 1);
        t->at_once = sqlite3_column_int(st, 2);
        snprintf(t->engines, sizeof t->engines, "%s", sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "");
    } else {
        error_set(err, "%s: reading the demo's run times: %s", s->path, sqlite3_errmsg(s->db));
    }
    sqlite3_finalize(st);
    return rc;
}

static void write_table(FILE *out, const CellsData *d)
{
    const cJSON *first = d->set.cells[0].cell;
    for (const cJSON *it = first->child; it; it = it->next)
        if (cells_find_key(&d->exp, it->string) && cells_find_key(&d->exp, it->string)->is_flag) fprintf(out, "| %s ", it->string);
    fprintf(out, "| %s |\n", d->exp.metric);
    for (const cJSON *it = first->child; it; it = it->next)
        if (cells_find_key(&d->exp, it->string) && cells_find_key(&d->exp, it->string)->is_flag) fprintf(out, "|---");
    fprintf(out, "|---|\n");
    for (int i = 0; i < d->set.n_cells; i++) {
        const Cell *c = &d->set.cells[i];
        for (const cJSON *it = first->child; it; it = it->next) {
            const ExpKey *k = cells_find_key(&d->exp, it->string);
            const char *v = cells_value_in(&d->exp, c->cell, it->string);
            if (k && k->is_flag) fprintf(out, "| %s ", v ? v : "");
        }
        char result[160];
        report_cell_result(c, result, sizeof result);
        fprintf(out, "| %s |\n", result);
    }
}

int headline_write(FILE *out, const char *ini, const char *db, Error *err)
{
    CellsData d;
    if (cells_open(&d, ini, "proxy", db, err) != 0) return -1;
    SweepTime t;
    Fingerprint fp;
    char cores[32] = "";
    int rc = sweep_time(&d.store, d.exp_id, &t, err);
    if (rc == 0) rc = fingerprint_read(db, &fp, NULL, 0, err);
    if (rc == 0) {
        sqlite3_stmt *st;
        if (store_prepare(&d.store, &st, "SELECT value FROM meta WHERE key = 'host_cores'", err) == 0) {
            if (sqlite3_step(st) == SQLITE_ROW) snprintf(cores, sizeof cores, " on %s cores", sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
        }
        int minutes = (int)(t.wall / 60 + 0.5);
        fprintf(out, "`make demo` (%s, %s scale): %s, every cell from its archived seeds (mean ± sample standard "
                     "deviation; collapsed and diverged seeds named). The archive's %d runs took %d minutes%s, %d at "
                     "a time; engine %s, numerics fingerprint %s (%s).\n\n",
                d.exp.name, d.exp.scale, d.exp.title, t.runs, minutes, cores, t.at_once, t.engines,
                fp.hex[0] ? fp.hex : "not recorded", fp.platform[0] ? fp.platform : "-");
        write_table(out, &d);
    }
    cells_close(&d);
    return rc;
}

/* The whole file, allocated; NULL with err. */
static char *slurp(const char *path, Error *err)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int c;
    if (f && mem)
        while ((c = getc(f)) != EOF) putc(c, mem);
    if (mem) fclose(mem);
    if (!f) {
        error_set(err, "%s: cannot read: %s", path, strerror(errno));
        free(text);
        text = NULL;
    } else {
        fclose(f);
    }
    return text;
}

int headline_splice(const char *readme, const char *block_file, Error *err)
{
    char *text = slurp(readme, err), *block = text ? slurp(block_file, err) : NULL;
    char *begin = text ? strstr(text, HEADLINE_BEGIN "\n") : NULL, *end = begin ? strstr(begin, HEADLINE_END) : NULL;
    int rc = -1;
    if (text && block && (!begin || !end)) {
        error_set(err, "%s: no lines \"%s\" and \"%s\" to put the demo's table between", readme, HEADLINE_BEGIN,
                  HEADLINE_END);
    } else if (text && block) {
        size_t part_len = strlen(readme) + 8;
        char *part = xmalloc(part_len, "README");
        snprintf(part, part_len, "%s.part", readme);
        FILE *f = fopen(part, "w");
        begin += strlen(HEADLINE_BEGIN "\n");
        bool ok = f && fwrite(text, 1, (size_t)(begin - text), f) == (size_t)(begin - text) && fputs(block, f) >= 0 &&
                  fputs(end, f) >= 0;
        if (f && fclose(f) != 0) ok = false;
        if (ok && rename(part, readme) == 0) rc = 0;
        else {
            error_set(err, "%s: cannot write: %s", part, strerror(errno));
            unlink(part);
        }
        free(part);
    }
    free(text);
    free(block);
    return rc;
}
