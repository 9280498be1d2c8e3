/* Opening the results database and owning its schema (documented in results/SCHEMA.md). */
#include "store.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/base/fault.h"
#include "store_fault_vfs.h"

/* Every table in one place. Real columns that can be NaN/Inf get NULL plus a note in
 * `nonfinite` ("train_loss=nan"), because SQLite stores a NaN as NULL. */
static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS meta(\n"
    "  key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS experiments(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL, scale TEXT NOT NULL,\n"
    "  title TEXT, source TEXT, file TEXT, text TEXT, metric TEXT,\n"
    "  paper TEXT,\n"                       /* JSON: {columns: [...], rows: [[...]], notes: [...]} */
    "  created REAL NOT NULL, updated REAL NOT NULL,\n"
    "  UNIQUE(name, scale));\n"
    "CREATE TABLE IF NOT EXISTS runs(\n"
    "  id TEXT PRIMARY KEY,\n"              /* 16 hex digits: FNV-1a 64 of config */
    "  config TEXT NOT NULL,\n"             /* canonical JSON of the train flags */
    "  args TEXT NOT NULL,\n"               /* the train command line */
    "  status TEXT NOT NULL CHECK(status IN\n"
    "    ('pending','running','complete','diverged','failed','stale','collapsed','pruned')),\n"
    "  attempt INTEGER NOT NULL DEFAULT 0,\n"
    "  created REAL NOT NULL, started REAL, finished REAL, heartbeat REAL,\n"
    "  host TEXT, pid INTEGER, engine_version TEXT, device TEXT,\n"
    "  claim TEXT, lease REAL, owner_ns TEXT,\n"  /* the owning sweep's token, lease end, pid namespace */
    "  exit_code INTEGER, error TEXT, log TEXT,\n"
    "  steps INTEGER, test_acc REAL, test_loss REAL, train_loss REAL,\n"
    "  diverged_step INTEGER, diverged_loss REAL, nonfinite TEXT,\n"
    "  skipped_steps INTEGER);\n"           /* updates skipped by fp16's loss scaling (schema 5) */
    "CREATE INDEX IF NOT EXISTS runs_status ON runs(status);\n"
    "CREATE TABLE IF NOT EXISTS experiment_runs(\n"
    "  experiment_id INTEGER NOT NULL REFERENCES experiments(id),\n"
    "  run_id TEXT NOT NULL REFERENCES runs(id),\n"
    "  seq INTEGER NOT NULL,\n"             /* order in the grid */
    "  cell TEXT NOT NULL,\n"               /* JSON of the cell's grid values */
    "  label TEXT NOT NULL,\n"
    "  repeat INTEGER NOT NULL,\n"
    "  PRIMARY KEY(experiment_id, run_id));\n"
    "CREATE TABLE IF NOT EXISTS epochs(\n"
    "  run_id TEXT NOT NULL REFERENCES runs(id), epoch INTEGER NOT NULL, step INTEGER NOT NULL,\n"
    "  train_loss REAL, train_acc REAL, test_loss REAL, test_acc REAL, loss_gap REAL,\n"
    "  lr REAL, images_per_sec REAL, elapsed REAL, noise_scale REAL, nonfinite TEXT,\n"
    "  PRIMARY KEY(run_id, epoch));\n"
    "CREATE TABLE IF NOT EXISTS steps(\n"
    "  run_id TEXT NOT NULL REFERENCES runs(id), step INTEGER NOT NULL, epoch INTEGER NOT NULL,\n"
    "  loss REAL, lr REAL, nonfinite TEXT,\n"
    "  skipped INTEGER NOT NULL DEFAULT 0,\n"  /* 1: no update, inf/NaN gradients (schema 5) */
    "  PRIMARY KEY(run_id, step)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS evals(\n"
    "  run_id TEXT NOT NULL REFERENCES runs(id), step INTEGER NOT NULL, epoch INTEGER NOT NULL,\n"
    "  test_loss REAL, test_acc REAL, nonfinite TEXT,\n"
    "  PRIMARY KEY(run_id, step)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS layer_stats(\n"
    "  run_id TEXT NOT NULL REFERENCES runs(id), step INTEGER NOT NULL, param INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL, kind TEXT NOT NULL,\n"
    "  w_norm REAL, g_norm REAL, ratio REAL, local_rate REAL, eff_rate REAL, update_ratio REAL,\n"
    "  nonfinite TEXT,\n"
    "  PRIMARY KEY(run_id, step, param)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS attempts(\n"  /* every attempt a sweep saw end (schema 3) */
    "  run_id TEXT NOT NULL REFERENCES runs(id), attempt INTEGER NOT NULL,\n"
    "  finished REAL NOT NULL, host TEXT, exit_code INTEGER,\n"
    "  outcome TEXT NOT NULL CHECK(outcome IN\n"
    "    ('complete','diverged','collapsed','failed','killed','interrupted','pruned')),\n"
    "  reason TEXT, retried INTEGER NOT NULL DEFAULT 0,\n"
    "  PRIMARY KEY(run_id, attempt)) WITHOUT ROWID;\n";

const char *store_missing_hint(void)
{
    return "  no results yet: `bigbatch sweep experiments/<name>.ini` makes results/<name>.db, and\n"
           "  `make results-load` rebuilds the archived ones (results/archive/*.sql.gz)\n";
}

char *store_table_definition(const char *table)
{
    char head[128];
    snprintf(head, sizeof head, "CREATE TABLE IF NOT EXISTS %s(", table);
    const char *start = strstr(SCHEMA, head), *end = start ? strstr(start, ";\n") : NULL;
    if (!end) return NULL;
    size_t len = (size_t)(end - start) + 1;
    char *def = xmalloc(len + 1, "schema");
    memcpy(def, start, len);
    def[len] = 0;
    return def;
}

/* The error an injected fault stands for (engine/base/fault.h): SQLite's own for that failure. */
static int injected(Store *s, FaultPoint p, const char *what, Error *err)
{
    error_set(err, "%s: %s: %s (BIGBATCH_FAULT: injected %s fault)", s->path, what,
              sqlite3_errstr(p == FAULT_ALLOC ? SQLITE_NOMEM : SQLITE_IOERR), p == FAULT_FSYNC ? "fsync" : "write");
    return -1;
}

static int exec_sql(Store *s, const char *sql, Error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        /* SQLite's message alone ("disk I/O error") does not say which step failed: its first line does */
        size_t line = strcspn(sql, "\n");
        error_set(err, "%s: %s (running: %.*s)", s->path, msg ? msg : sqlite3_errmsg(s->db),
                  (int)(line < 80 ? line : 80), sql);
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int store_exec(Store *s, const char *sql, Error *err)
{
    if (fault_should_fail(FAULT_WRITE)) return injected(s, FAULT_WRITE, sql, err);
    return exec_sql(s, sql, err);
}

int store_prepare(Store *s, sqlite3_stmt **st, const char *sql, Error *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        error_set(err, "%s: %s (preparing: %.80s)", s->path, sqlite3_errmsg(s->db), sql);
        *st = NULL;
        return -1;
    }
    return 0;
}

int store_step_done(Store *s, sqlite3_stmt *st, const char *what, Error *err)
{
    if (fault_should_fail(FAULT_WRITE)) return injected(s, FAULT_WRITE, what, err);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        error_set(err, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
        return -1;
    }
    return 0;
}

int store_begin(Store *s, Error *err) { return store_exec(s, "BEGIN IMMEDIATE", err); }
/* COMMIT is where SQLite syncs: fsync faults land here. */
int store_commit(Store *s, Error *err)
{
    if (fault_should_fail(FAULT_FSYNC)) return injected(s, FAULT_FSYNC, "COMMIT", err);
    return exec_sql(s, "COMMIT", err);
}

/* SQLite's allocator with alloc faults (fault.h): the C library's, as SQLite's default is on
 * glibc, so nothing need be kept; a failed one makes SQLite report SQLITE_NOMEM. */
static void *fault_malloc(int n) { return fault_should_fail(FAULT_ALLOC) ? NULL : malloc((size_t)n); }
static void fault_free(void *p) { free(p); }
static void *fault_realloc(void *p, int n) { return fault_should_fail(FAULT_ALLOC) ? NULL : realloc(p, (size_t)n); }
static int fault_size(void *p) { return p ? (int)malloc_usable_size(p) : 0; }
static int fault_roundup(int n) { return (n + 7) & ~7; }
static int fault_mem_init(void *app) { (void)app; return SQLITE_OK; }
static void fault_mem_shutdown(void *app) { (void)app; }

int store_faults_install(Error *err)
{
    if (!fault_active()) return 0;
    static const sqlite3_mem_methods MEM = {fault_malloc, fault_free, fault_realloc, fault_size,
                                            fault_roundup, fault_mem_init, fault_mem_shutdown, NULL};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &MEM) != SQLITE_OK) {
        error_set(err, "BIGBATCH_FAULT: cannot wrap SQLite's allocator (SQLite already started)");
        return -1;
    }
    return store_fault_vfs_install(err); /* after the allocator: finding the default VFS starts SQLite */
}

void store_rollback(Store *s)
{
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void store_bind_real(sqlite3_stmt *st, int i, double x)
{
    if (isfinite(x)) sqlite3_bind_double(st, i, x);
    else sqlite3_bind_null(st, i);
}

void store_nonfinite_note(char *buf, size_t len, const char *name, double x)
{
    if (isfinite(x)) return;
    size_t used = strlen(buf);
    if (used >= len) return;
    snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "", name,
             isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

const char *store_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0) snprintf(buf, len, "unknown");
    buf[len - 1] = 0;
    return buf;
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path, Error *err)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = 0;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) goto fail;
        *p = '/';
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) goto fail;
    return 0;
fail:
    error_set(err, "%s: cannot create directory %s: %s", path, dir, strerror(errno));
    return -1;
}

/* The schema version this file was written with; refuses a newer one. */
static int check_version(Store *s, bool read_only, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "SELECT value FROM meta WHERE key='schema_version'", err)) return -1;
    int have = -1;
    if (sqlite3_step(st) == SQLITE_ROW) have = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (have > STORE_SCHEMA_VERSION) {
        error_set(err, "%s: schema version %d is newer than this bigbatch's %d", s->path, have,
                  STORE_SCHEMA_VERSION);
        return -1;
    }
    if (have < 0 && read_only) {
        error_set(err, "%s: not a bigbatch results database (no schema_version)", s->path);
        return -1;
    }
    if (have >= 1 && have < STORE_SCHEMA_VERSION && !read_only) {
        /* version 1 had no runs.device (NULL for its runs); version 2 no attempts table (SCHEMA
         * made it); version 3 no claim token, lease or owner's pid namespace (NULL: claimed
         * before leases, judged by heartbeat) */
        if (have == 1 && store_exec(s, "ALTER TABLE runs ADD COLUMN device TEXT", err)) return -1;
        if (have <= 3 && (store_exec(s, "ALTER TABLE runs ADD COLUMN claim TEXT", err) ||
                          store_exec(s, "ALTER TABLE runs ADD COLUMN lease REAL", err) ||
                          store_exec(s, "ALTER TABLE runs ADD COLUMN owner_ns TEXT", err)))
            return -1;
        /* version 4 no skipped steps (fp16's loss scaling): none for its runs */
        if (have <= 4 && (store_exec(s, "ALTER TABLE runs ADD COLUMN skipped_steps INTEGER", err) ||
                          store_exec(s, "ALTER TABLE steps ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0", err)))
            return -1;
        /* version 4 had no status collapsed, version 5 no status pruned: both rebuild runs and
         * attempts under today's schema, so one rebuild brings either */
        if (have <= 4 && store_upgrade_collapsed(s, err)) return -1;
        if (have == 5 && store_upgrade_statuses(s, err)) return -1;
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE meta SET value='%d' WHERE key='schema_version'", STORE_SCHEMA_VERSION);
        return store_exec(s, sql, err);
    }
    if (have < 0) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta VALUES('schema_version','%d')",
                 STORE_SCHEMA_VERSION);
        return store_exec(s, sql, err);
    }
    return 0;
}

/* The one integer sql yields into *out; SQLite's code otherwise. */
static int query_int(Store *s, const char *sql, int *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* Refuses a file that is someone else's database (tables, but no bigbatch meta with a schema
 * version) before anything (tables, WAL) would change it; an empty one is new unless read_only.
 * A bigbatch file always has both: they are created in one transaction. */
static int check_ours(Store *s, bool read_only, Error *err)
{
    int objects = 0, meta = 0, version = 0;
    int rc = query_int(s, "SELECT count(*) FROM sqlite_master", &objects);
    if (rc == SQLITE_OK) rc = query_int(s, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'", &meta);
    if (rc != SQLITE_OK) {
        error_set(err, "%s: cannot read: %s", s->path, sqlite3_errmsg(s->db));
        return -1;
    }
    if (objects == 0 && !read_only) return 0;
    /* a foreign `meta` may lack these columns: then it is not ours either */
    if (meta && query_int(s, "SELECT count(*) FROM meta WHERE key='schema_version'", &version) != SQLITE_OK)
        version = 0;
    if (version == 0) {
        error_set(err, "%s: not a bigbatch results database (%s); left as it is", s->path,
                  objects ? "it holds other tables and no bigbatch schema_version" : "it is empty");
        return -1;
    }
    return 0;
}

/* Switching to WAL needs a moment without other connections' transactions; the busy
 * handler does not cover it, so wait and retry (sweeps starting together on a new file). */
static int enable_wal(Store *s, Error *err)
{
    for (int tries = 0;; tries++) {
        sqlite3_stmt *st;
        if (store_prepare(s, &st, "PRAGMA journal_mode=WAL", err)) return -1;
        int rc = sqlite3_step(st);
        bool wal = rc == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        if (wal) return 0;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED && rc != SQLITE_ROW) || tries == 600) {
            error_set(err, "%s: cannot switch to WAL mode: %s", s->path, sqlite3_errmsg(s->db));
            return -1;
        }
        sqlite3_sleep(100);
    }
}

int store_open(Store *s, const char *path, bool read_only, Error *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    if (read_only && access(path, R_OK) != 0) {
        error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!read_only && make_parent_dirs(path, err) != 0) return -1;
    int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &s->db, flags, store_fault_vfs_name()) != SQLITE_OK) {
        error_set(err, "%s: cannot open: %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
        store_close(s);
        return -1;
    }
    /* Writers wait for each other instead of failing with "database is locked". */
    sqlite3_busy_timeout(s->db, 60000);
    if (check_ours(s, read_only, err)) goto fail; /* before anything could change the file */
    if (!read_only) {
        /* Foreign keys are enforced once the schema is current: an upgrade rebuilds tables
         * that others refer to (store_upgrade.c), which SQLite allows only with them off. */
        if (enable_wal(s, err) || store_exec(s, "PRAGMA synchronous=NORMAL", err)) goto fail;
        if (store_begin(s, err)) goto fail;
        if (store_exec(s, SCHEMA, err) || check_version(s, false, err) || store_commit(s, err)) {
            store_rollback(s);
            goto fail;
        }
        if (store_exec(s, "PRAGMA foreign_keys=ON", err)) goto fail;
    } else if (store_exec(s, "PRAGMA foreign_keys=ON", err) || check_version(s, true, err)) {
        goto fail;
    }
    return 0;
fail:
    store_close(s);
    return -1;
}

void store_close(Store *s)
{
    if (s->db) sqlite3_close(s->db);
    s->db = NULL;
}
