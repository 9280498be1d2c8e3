/* Schema version 5: the status `collapsed` (engine/train/collapse.h) in runs and attempts; version 6
 * the status `pruned` (sweep --prune), by the same rebuild.
 * SQLite cannot change a CHECK constraint in place, so both tables are rebuilt under the
 * current schema (the 12 steps of SQLite's "ALTER TABLE" page, foreign keys off while
 * store_open upgrades), and runs recorded `complete` at the chance level before the status
 * existed are renamed `collapsed`, with their attempts. */
#include "store.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/train/collapse.h"
#include "data/data.h"
#include "../engine/train/train.h"

/* "a,b,c": the table's columns as the file has them (older versions added some at the end). */
static char *column_list(Store *s, const char *table, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "SELECT group_concat('\"' || name || '\"', ',') FROM pragma_table_info(?1)", err)) return NULL;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    char *cols = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        cols = xstrdup((const char *)sqlite3_column_text(st, 0));
    else
        error_set(err, "%s: table %s has no columns", s->path, table);
    sqlite3_finalize(st);
    return cols;
}

static int rebuild_table(Store *s, const char *table, Error *err)
{
    char *def = store_table_definition(table), *cols = column_list(s, table, err);
    int rc = -1;
    if (def && cols) {
        const char *body = strchr(def, '(');
        size_t len = strlen(body) + 2 * strlen(cols) + 6 * strlen(table) + 256;
        char *sql = xmalloc(len, "schema upgrade");
        snprintf(sql, len,
                 "CREATE TABLE %s_new%s INSERT INTO %s_new(%s) SELECT %s FROM %s; DROP TABLE %s;"
                 " ALTER TABLE %s_new RENAME TO %s;",
                 table, body, table, cols, cols, table, table, table, table);
        rc = store_exec(s, sql, err);
        free(sql);
    } else if (!def) {
        error_set(err, "%s: no definition of table %s", s->path, table);
    }
    free(def);
    free(cols);
    return rc;
}

/* The class count a run's data set has by its name alone; 0 (not judged) for data sets whose
 * count depends on the folder, and for runs cut short by --steps, as train.c judges. */
static int judged_classes(const char *config)
{
    TrainConfig defaults;
    train_config_defaults(&defaults);
    cJSON *o = cJSON_Parse(config);
    const cJSON *data = o ? cJSON_GetObjectItemCaseSensitive(o, "data") : NULL;
    const DatasetInfo *info = dataset_find(cJSON_IsString(data) ? data->valuestring : defaults.data);
    bool probe = o && cJSON_GetObjectItemCaseSensitive(o, "steps");
    cJSON_Delete(o);
    return info && !probe ? info->judged_classes : 0;
}

static int rename_collapsed(Store *s, const char *run_id, Error *err)
{
    sqlite3_stmt *st;
    static const char *const SQL[] = {
        "UPDATE runs SET status='collapsed' WHERE id=?1",
        "UPDATE attempts SET outcome='collapsed' WHERE run_id=?1 AND outcome='complete'",
    };
    for (size_t i = 0; i < sizeof SQL / sizeof SQL[0]; i++) {
        if (store_prepare(s, &st, SQL[i], err)) return -1;
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        int rc = store_step_done(s, st, "marking a run collapsed", err);
        sqlite3_finalize(st);
        if (rc) return -1;
    }
    return 0;
}

/* Runs that ended at the chance level before `collapsed` existed. */
static int judge_complete_runs(Store *s, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "SELECT id, config, coalesce(train_loss, 'nan'), coalesce(test_acc, 'nan') FROM runs"
                      " WHERE status='complete'",
                      err))
        return -1;
    int n = 0, cap = 16, rc = 0;
    char(*ids)[17] = xmalloc((size_t)cap * sizeof *ids, "schema upgrade");
    while (sqlite3_step(st) == SQLITE_ROW) {
        int classes = judged_classes((const char *)sqlite3_column_text(st, 1));
        double loss = strtod((const char *)sqlite3_column_text(st, 2), NULL);
        double acc = strtod((const char *)sqlite3_column_text(st, 3), NULL);
        if (!collapse_at_chance(classes, loss, acc)) continue;
        if (n == cap) ids = xrealloc(ids, (size_t)(cap *= 2) * sizeof *ids, "schema upgrade");
        snprintf(ids[n++], sizeof ids[0], "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    for (int i = 0; i < n && rc == 0; i++) rc = rename_collapsed(s, ids[i], err);
    free(ids);
    return rc;
}

int store_upgrade_statuses(Store *s, Error *err)
{
    if (rebuild_table(s, "runs", err) || rebuild_table(s, "attempts", err)) return -1;
    return store_exec(s, "CREATE INDEX IF NOT EXISTS runs_status ON runs(status)", err);
}

int store_upgrade_collapsed(Store *s, Error *err)
{
    return store_upgrade_statuses(s, err) ? -1 : judge_complete_runs(s, err);
}
