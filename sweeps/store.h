/* The results store: one SQLite database per experiment (results/<name>.db), whose schema
 * (results/SCHEMA.md) is created and checked here and nowhere else. Used by `train --db`
 * (one run's metrics, by hand), by the sweep runner (claiming runs, and writing the records
 * its runs send) and by the reports.
 *
 * Concurrency: WAL, a busy timeout and short write transactions, so several sweep
 * processes (and runs started by hand) share one file on one host. A run is claimed by one
 * UPDATE that moves it from pending/stale to running and bumps its attempt; every later
 * write of that run checks the claim, so a process that lost it writes nothing. */
#ifndef BB_STORE_H
#define BB_STORE_H
#include <stdbool.h>
#include <sqlite3.h>

#include "../engine/base/util.h"

#define STORE_SCHEMA_VERSION 6 /* 2: runs.device; 3: the attempts table; 4: runs.claim, lease, owner_ns;
                                  5: the status collapsed, runs.skipped_steps, steps.skipped;
                                  6: the status pruned (sweep --prune, prune.h) */
/* The database's own clock, in seconds since 1970, for leases (every process that writes a
 * database runs on the host that holds it: the sweep is its only writer). */
#define STORE_NOW_SQL "((julianday('now') - 2440587.5) * 86400.0)"

typedef struct {
    sqlite3 *db;
    char path[1024];
} Store;

/* Opens (creating the file, its directory and the schema when absent). read_only: the
 * file must exist and nothing is created. */
int store_open(Store *s, const char *path, bool read_only, Error *err);
void store_close(Store *s);

/* For a database that does not exist: how to get one (a sweep, or the archived results). */
const char *store_missing_hint(void);
/* The CREATE TABLE statement of one table of the schema (allocated), or NULL. */
char *store_table_definition(const char *table);
/* From schema version 4 to 5 (store_upgrade.c): the status collapsed. */
int store_upgrade_collapsed(Store *s, Error *err);
/* runs and attempts rebuilt under today's CHECK constraints (from version 5: the status pruned). */
int store_upgrade_statuses(Store *s, Error *err);

/* Statement helpers: every call that can fail names the database and what it did. */
int store_exec(Store *s, const char *sql, Error *err);
int store_prepare(Store *s, sqlite3_stmt **st, const char *sql, Error *err);
int store_step_done(Store *s, sqlite3_stmt *st, const char *what, Error *err);
/* BEGIN IMMEDIATE (takes the write lock now, so the busy timeout applies) / COMMIT. */
int store_begin(Store *s, Error *err);
int store_commit(Store *s, Error *err);
void store_rollback(Store *s);

/* Binds x, or NULL when x is NaN/Inf (SQLite stores NaN as NULL); the value's class is
 * then recorded by store_nonfinite_note in the row's `nonfinite` column. */
void store_bind_real(sqlite3_stmt *st, int i, double x);
/* Appends "name=nan" / "name=inf" / "name=-inf" to buf (comma-separated) when x is not finite. */
void store_nonfinite_note(char *buf, size_t len, const char *name, double x);

const char *store_hostname(char *buf, size_t len);

/* With BIGBATCH_FAULT set (engine/base/fault.h): SQLite's allocations counted as alloc points, so
 * alloc:N fails the Nth, and its file I/O through the fault VFS (store_fault_vfs.h), so dbwrite:N
 * and dbsync:N fail the Nth write or sync. Call before any other SQLite call; nothing without
 * the variable. */
int store_faults_install(Error *err);

#endif
