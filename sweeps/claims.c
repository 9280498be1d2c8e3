/* Claiming runs in the results store: one UPDATE moves a run to running, so two sweep
 * processes can never take the same one (SQLite serializes writers). */
#include "claims.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "run_config.h"

const char *const RUN_STATUS_NAMES[RUN_N_STATUS] = {"pending", "running", "complete", "diverged", "failed", "stale", "collapsed",
                                                     "pruned"};

/* {"columns": [...], "rows": [[...], ...], "notes": [...]}: the paper's numbers as filed. */
static char *paper_json(const Experiment *exp)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *cols = cJSON_AddArrayToObject(o, "columns");
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    cJSON *notes = cJSON_AddArrayToObject(o, "notes");
    if (!cols || !rows || !notes) {
        cJSON_Delete(o);
        return NULL;
    }
    for (int c = 0; c < exp->n_paper_cols; c++) cJSON_AddItemToArray(cols, cJSON_CreateString(exp->paper_cols[c]));
    for (int r = 0; r < exp->n_paper_rows; r++) {
        cJSON *row = cJSON_CreateArray();
        for (int c = 0; c < exp->n_paper_cols; c++) cJSON_AddItemToArray(row, cJSON_CreateString(exp->paper_rows[r][c]));
        cJSON_AddItemToArray(rows, row);
    }
    for (int i = 0; i < exp->n_paper_notes; i++) cJSON_AddItemToArray(notes, cJSON_CreateString(exp->paper_notes[i]));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

static int upsert_experiment(Store *s, const Experiment *exp, long long *exp_id, Error *err)
{
    char *paper = paper_json(exp);
    if (!paper) {
        error_set(err, "out of memory");
        return -1;
    }
    sqlite3_stmt *st;
    int rc = store_prepare(s, &st,
                           "INSERT INTO experiments(name, scale, title, source, file, text, metric, paper, created, updated)"
                           " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) ON CONFLICT(name, scale) DO UPDATE SET"
                           " title=?3, source=?4, file=?5, text=?6, metric=?7, paper=?8, updated=?9"
                           " RETURNING id",
                           err);
    if (rc == 0) {
        const char *vals[] = {exp->name, exp->scale, exp->title, exp->source, exp->path, exp->text, exp->metric, paper};
        for (int i = 0; i < 8; i++) bind_text_or_null(st, i + 1, vals[i]);
        sqlite3_bind_double(st, 9, unix_time_seconds());
        if (sqlite3_step(st) == SQLITE_ROW) {
            *exp_id = sqlite3_column_int64(st, 0);
        } else {
            error_set(err, "%s: registering experiment %s: %s", s->path, exp->name, sqlite3_errmsg(s->db));
            rc = -1;
        }
        sqlite3_finalize(st);
    }
    free(paper);
    return rc;
}

/* This sweep's own runs, in its grid's order, in a table of its connection alone: another
 * sweep on the database may register the experiment with another grid (its file edited in
 * between), and this one must neither take runs it cannot start nor wait for them. */
static int own_runs_table(Store *s, const RunSpec *runs, int n_runs, Error *err)
{
    if (store_exec(s, "DROP TABLE IF EXISTS temp.sweep_own;"
                      "CREATE TEMP TABLE sweep_own(id TEXT PRIMARY KEY, seq INTEGER NOT NULL)", err))
        return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "INSERT OR IGNORE INTO temp.sweep_own(id, seq) VALUES(?1, ?2)", err)) return -1;
    int rc = 0;
    for (int i = 0; i < n_runs && rc == 0; i++) {
        sqlite3_bind_text(st, 1, runs[i].id, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, runs[i].seq);
        rc = store_step_done(s, st, "listing the sweep's runs", err);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int insert_runs(Store *s, long long exp_id, const RunSpec *runs, int n_runs, Error *err)
{
    sqlite3_stmt *del, *run, *link;
    if (own_runs_table(s, runs, n_runs, err)) return -1;
    if (store_prepare(s, &del, "DELETE FROM experiment_runs WHERE experiment_id=?1", err)) return -1;
    sqlite3_bind_int64(del, 1, exp_id);
    int rc = store_step_done(s, del, "resetting the experiment's runs", err);
    sqlite3_finalize(del);
    if (rc) return -1;
    if (store_prepare(s, &run,
                      "INSERT INTO runs(id, config, args, status, created) VALUES(?1, ?2, ?3, 'pending', ?4)"
                      " ON CONFLICT(id) DO NOTHING",
                      err))
        return -1;
    if (store_prepare(s, &link,
                      "INSERT INTO experiment_runs(experiment_id, run_id, seq, cell, label, repeat)"
                      " VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
                      err)) {
        sqlite3_finalize(run);
        return -1;
    }
    double t = unix_time_seconds();
    for (int i = 0; i < n_runs && rc == 0; i++) {
        const RunSpec *r = &runs[i];
        char **argv = runspec_train_argv(r, "bigbatch", NULL, 0);
        int argc = 0;
        while (argv[argc]) argc++;
        char *args = run_config_command(NULL, argc, argv);
        free(argv);
        sqlite3_bind_text(run, 1, r->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(run, 2, r->config_json, -1, SQLITE_STATIC);
        sqlite3_bind_text(run, 3, args, -1, SQLITE_STATIC);
        sqlite3_bind_double(run, 4, t);
        rc = store_step_done(s, run, "registering a run", err);
        sqlite3_reset(run);
        free(args);
        if (rc) break;
        sqlite3_bind_int64(link, 1, exp_id);
        sqlite3_bind_text(link, 2, r->id, -1, SQLITE_STATIC);
        sqlite3_bind_int(link, 3, r->seq);
        sqlite3_bind_text(link, 4, r->cell_json, -1, SQLITE_STATIC);
        sqlite3_bind_text(link, 5, r->label, -1, SQLITE_STATIC);
        sqlite3_bind_int(link, 6, r->repeat);
        rc = store_step_done(s, link, "linking a run to its experiment", err);
        sqlite3_reset(link);
    }
    sqlite3_finalize(run);
    sqlite3_finalize(link);
    return rc;
}

int claims_register(Store *s, const Experiment *exp, const RunSpec *runs, int n_runs, long long *exp_id, Error *err)
{
    if (store_begin(s, err)) return -1;
    if (upsert_experiment(s, exp, exp_id, err) || insert_runs(s, *exp_id, runs, n_runs, err) ||
        store_commit(s, err)) {
        store_rollback(s);
        return -1;
    }
    return 0;
}

/* One UPDATE over the experiment's runs; *n = rows changed. */
static int update_runs(Store *s, const char *sql, long long exp_id, int *n, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, sql, err)) return -1;
    sqlite3_bind_int64(st, 1, exp_id);
    int rc = store_step_done(s, st, "updating runs", err);
    sqlite3_finalize(st);
    if (n) *n = rc ? 0 : sqlite3_changes(s->db);
    return rc;
}

int claims_retry_failed(Store *s, long long exp_id, int *n, Error *err)
{
    return update_runs(s,
                       "UPDATE runs SET status='pending' WHERE status='failed' AND id IN"
                       " (SELECT run_id FROM experiment_runs WHERE experiment_id=?1)",
                       exp_id, n, err);
}

int claims_owner_init(ClaimOwner *o, double lease_s, Error *err)
{
    memset(o, 0, sizeof *o);
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) {
        error_set(err, "getrandom: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 16; i++) snprintf(o->token + 2 * i, 3, "%02x", bytes[i]);
    store_hostname(o->host, sizeof o->host);
    ssize_t len = readlink("/proc/self/ns/pid", o->pid_ns, sizeof o->pid_ns - 1);
    o->pid_ns[len > 0 ? len : 0] = 0;
    o->pid = (int)getpid();
    o->lease_s = lease_s;
    return 0;
}

static bool process_gone(int pid)
{
    return pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH);
}

/* Why a running run's owner has lost it, into why; false while its claim holds. */
static bool owner_lost(sqlite3_stmt *sel, const ClaimOwner *me, double stale_after, char *why, size_t len)
{
    const char *h = (const char *)sqlite3_column_text(sel, 2), *ns = (const char *)sqlite3_column_text(sel, 6);
    int pid = sqlite3_column_int(sel, 3);
    double silent = sqlite3_column_double(sel, 7); /* seconds since the heartbeat, database clock */
    bool leased = sqlite3_column_type(sel, 5) != SQLITE_NULL;
    double past_lease = leased ? sqlite3_column_double(sel, 8) : 0; /* seconds since the lease ended */
    const char *claim = (const char *)sqlite3_column_text(sel, 9);
    /* Our own claim is ours however long we were stopped (SIGSTOP, a suspended laptop): we
     * renew it; re-queueing it would kill our own runs. */
    if (claim && !strcmp(claim, me->token)) return false;
    if (h && ns && me->pid_ns[0] && !strcmp(h, me->host) && !strcmp(ns, me->pid_ns) && process_gone(pid))
        snprintf(why, len, "its sweep process %d on %s is gone", pid, h);
    else if (leased && past_lease > 0)
        snprintf(why, len, "its lease ran out %.0f s ago (process %d on %s)", past_lease, pid, h ? h : "?");
    else if (!leased && silent > stale_after)
        snprintf(why, len, "no heartbeat for %.0f s (process %d on %s)", silent, pid, h ? h : "?");
    else
        return false;
    return true;
}

/* running -> stale for one run whose owner is lost, and the attempt's end in `attempts` (its
 * sweep never saw it: killed with it, or silent), as interrupted and retried: one transaction.
 * *changed: whether the run was still running as found. */
static int mark_one_stale(Store *s, sqlite3_stmt *upd, sqlite3_stmt *ins, const char *id, int attempt,
                          const char *why, bool *changed, Error *err)
{
    *changed = false;
    if (store_begin(s, err)) return -1;
    sqlite3_stmt *sts[2] = {upd, ins};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        sqlite3_bind_text(sts[k], 1, id, -1, SQLITE_STATIC);
        sqlite3_bind_int(sts[k], 2, attempt);
        sqlite3_bind_text(sts[k], 3, why, -1, SQLITE_STATIC);
        rc = store_step_done(s, sts[k], "marking a stale run", err);
        sqlite3_reset(sts[k]);
        if (k == 0 && rc == 0) *changed = sqlite3_changes(s->db) > 0;
        if (k == 0 && !*changed) break; /* its owner ended it meanwhile: nothing was lost */
    }
    if (rc == 0 && store_commit(s, err) == 0) return 0;
    store_rollback(s);
    *changed = false;
    return -1;
}

int claims_mark_stale(Store *s, long long exp_id, const ClaimOwner *me, double stale_after, int *n, char *first,
                      size_t len, Error *err)
{
    *n = 0;
    if (len) first[0] = 0;
    sqlite3_stmt *sel, *upd, *ins = NULL;
    if (store_prepare(s, &sel,
                      "SELECT r.id, r.attempt, r.host, r.pid, r.heartbeat, r.lease, r.owner_ns,"
                      " " STORE_NOW_SQL " - r.heartbeat, " STORE_NOW_SQL " - r.lease, r.claim"
                      " FROM runs r JOIN experiment_runs e"
                      " ON e.run_id = r.id WHERE e.experiment_id=?1 AND r.status='running'",
                      err))
        return -1;
    /* the lost attempt ended, as far as anyone knows, at its last heartbeat */
    if (store_prepare(s, &upd,
                      "UPDATE runs SET status='stale', error=?3 WHERE id=?1 AND attempt=?2 AND status='running'",
                      err) ||
        store_prepare(s, &ins,
                      "INSERT OR IGNORE INTO attempts(run_id, attempt, finished, host, outcome, reason, retried)"
                      " SELECT id, attempt, coalesce(heartbeat, " STORE_NOW_SQL "), host, 'interrupted', ?3, 1"
                      " FROM runs WHERE id=?1 AND attempt=?2",
                      err)) {
        sqlite3_finalize(sel);
        sqlite3_finalize(upd);
        return -1;
    }
    /* Collect first: the SELECT must be finished before this connection writes. */
    typedef struct { char id[65]; int attempt; char why[400]; } Stale;
    Stale found[64];
    int n_found = 0;
    sqlite3_bind_int64(sel, 1, exp_id);
    while (sqlite3_step(sel) == SQLITE_ROW && n_found < 64) {
        Stale *f = &found[n_found];
        if (!owner_lost(sel, me, stale_after, f->why, sizeof f->why)) continue;
        snprintf(f->id, sizeof f->id, "%s", (const char *)sqlite3_column_text(sel, 0));
        f->attempt = sqlite3_column_int(sel, 1);
        n_found++;
    }
    sqlite3_finalize(sel);
    int rc = 0;
    for (int i = 0; i < n_found && rc == 0; i++) {
        bool changed;
        rc = mark_one_stale(s, upd, ins, found[i].id, found[i].attempt, found[i].why, &changed, err);
        if (changed && *n == 0 && len) snprintf(first, len, "%s: %s", found[i].id, found[i].why);
        *n += changed;
    }
    sqlite3_finalize(upd);
    sqlite3_finalize(ins);
    return rc;
}

int claims_take(Store *s, const ClaimOwner *me, const char *log_dir, char run_id[65], int *attempt, Error *err)
{
    sqlite3_stmt *st;
    /* One statement: SQLite runs it under the write lock, so the chosen run cannot be
     * chosen by another process in between. */
    if (store_prepare(s, &st,
                      "UPDATE runs SET status='running', attempt=attempt+1, started=?2, heartbeat=?2,"
                      " finished=NULL, host=?3, pid=?4, claim=?6,"
                      " lease=" STORE_NOW_SQL " + ?7, owner_ns=?8,"
                      " exit_code=NULL, error=NULL, log=?5 || '/' || id || '.log'"
                      " WHERE id = (SELECT r.id FROM runs r JOIN temp.sweep_own o ON o.id = r.id"
                      "   WHERE r.status IN ('pending','stale') ORDER BY o.seq LIMIT 1)"
                      " RETURNING id, attempt",
                      err))
        return -1;
    sqlite3_bind_double(st, 2, unix_time_seconds());
    sqlite3_bind_text(st, 3, me->host, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, me->pid);
    sqlite3_bind_text(st, 5, log_dir, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, me->token, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 7, me->lease_s);
    sqlite3_bind_text(st, 8, me->pid_ns, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), got = 0;
    if (rc == SQLITE_ROW) {
        snprintf(run_id, 65, "%s", (const char *)sqlite3_column_text(st, 0));
        *attempt = sqlite3_column_int(st, 1);
        got = 1;
        rc = sqlite3_step(st);
    }
    if (rc != SQLITE_DONE) {
        error_set(err, "%s: claiming a run: %s", s->path, sqlite3_errmsg(s->db));
        got = -1;
    }
    sqlite3_finalize(st);
    return got;
}

int claims_held(Store *s, const ClaimOwner *me, const char *run_id, int attempt, bool *held, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "SELECT 1 FROM runs WHERE id=?1 AND attempt=?2 AND claim=?3 AND status='running'", err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, attempt);
    sqlite3_bind_text(st, 3, me->token, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *held = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        error_set(err, "%s: checking the claim of run %s: %s", s->path, run_id, sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int claims_heartbeat(Store *s, const ClaimOwner *me, const char *run_id, int attempt, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "UPDATE runs SET heartbeat=?5, lease=" STORE_NOW_SQL " + ?4"
                      " WHERE id=?1 AND attempt=?2 AND claim=?3 AND status='running'",
                      err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, attempt);
    sqlite3_bind_text(st, 3, me->token, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, me->lease_s);
    sqlite3_bind_double(st, 5, unix_time_seconds());
    int rc = store_step_done(s, st, "heartbeat", err);
    sqlite3_finalize(st);
    return rc;
}

int claims_close(Store *s, const char *run_id, int attempt, int status, int exit_code, const char *why, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "UPDATE runs SET status=?3, exit_code=?4, error=coalesce(error, ?5), finished=?6"
                      " WHERE id=?1 AND attempt=?2 AND status='running'",
                      err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, attempt);
    sqlite3_bind_text(st, 3, RUN_STATUS_NAMES[status], -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, exit_code);
    sqlite3_bind_text(st, 5, why, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 6, unix_time_seconds());
    int rc = store_step_done(s, st, "closing a run", err);
    sqlite3_finalize(st);
    return rc;
}

/* The RUN_* index of a status as the runs table spells it; -1 for none. */
static int status_index(const unsigned char *name)
{
    for (int k = 0; name && k < RUN_N_STATUS; k++)
        if (!strcmp((const char *)name, RUN_STATUS_NAMES[k])) return k;
    return -1;
}

int claims_count(Store *s, int counts[RUN_N_STATUS], Error *err)
{
    memset(counts, 0, sizeof *counts * RUN_N_STATUS);
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "SELECT r.status, count(*) FROM runs r JOIN temp.sweep_own o ON o.id = r.id GROUP BY r.status",
                      err))
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = status_index(sqlite3_column_text(st, 0));
        if (k >= 0) counts[k] = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        error_set(err, "%s: counting runs: %s", s->path, sqlite3_errmsg(s->db));
        return -1;
    }
    return 0;
}

int claims_attempt_state(Store *s, const char *run_id, int attempt, int *status, char *error, size_t len,
                         Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "SELECT status, coalesce(error, '') FROM runs WHERE id=?1 AND attempt=?2", err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, attempt);
    *status = -1;
    error[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW) {
        *status = status_index(sqlite3_column_text(st, 0));
        snprintf(error, len, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    return 0;
}

int claims_previous_reason(Store *s, const char *run_id, int attempt, char *reason, size_t len, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "SELECT coalesce(reason, '') FROM attempts WHERE run_id=?1 AND attempt=?2"
                      " AND outcome IN ('failed','killed')",
                      err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, attempt - 1);
    reason[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW) snprintf(reason, len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return 0;
}

int claims_note_recorded_end(Store *s, const char *run_id, int attempt, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "INSERT OR IGNORE INTO attempts(run_id, attempt, finished, host, outcome, reason, retried)"
                      " SELECT id, attempt, coalesce(finished, " STORE_NOW_SQL "), host, status, error, 0 FROM runs"
                      " WHERE id=?1 AND attempt=?2 AND status IN ('complete','collapsed','diverged','failed','pruned')",
                      err))
        return -1;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, attempt);
    int rc = store_step_done(s, st, "recording an attempt's end", err);
    sqlite3_finalize(st);
    return rc;
}

static int record_attempt(Store *s, const AttemptEnd *e, Error *err)
{
    char host[256];
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "INSERT OR REPLACE INTO attempts VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", err)) return -1;
    sqlite3_bind_text(st, 1, e->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, e->attempt);
    sqlite3_bind_double(st, 3, unix_time_seconds());
    sqlite3_bind_text(st, 4, store_hostname(host, sizeof host), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 5, e->exit_code);
    sqlite3_bind_text(st, 6, e->outcome, -1, SQLITE_STATIC);
    if (e->reason) sqlite3_bind_text(st, 7, e->reason, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, e->reason && e->next != RUN_FAILED);
    int rc = store_step_done(s, st, "recording an attempt", err);
    sqlite3_finalize(st);
    return rc;
}

int claims_end_attempt(Store *s, const AttemptEnd *e, Error *err)
{
    if (store_begin(s, err)) return -1;
    int rc = record_attempt(s, e, err);
    sqlite3_stmt *st = NULL;
    if (rc == 0 && e->reason)
        rc = store_prepare(s, &st,
                           "UPDATE runs SET status=?3, exit_code=?4, error=?5, finished=?6"
                           " WHERE id=?1 AND attempt=?2 AND status IN ('running','failed')"
                           /* a run that recorded its own failure stays failed when interrupted */
                           " AND (?3 != 'stale' OR status = 'running')",
                           err);
    if (st) {
        sqlite3_bind_text(st, 1, e->run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, e->attempt);
        sqlite3_bind_text(st, 3, RUN_STATUS_NAMES[e->next], -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, e->exit_code);
        sqlite3_bind_text(st, 5, e->reason, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 6, unix_time_seconds());
        rc = store_step_done(s, st, "ending an attempt", err);
        sqlite3_finalize(st);
    }
    if (rc == 0) return store_commit(s, err);
    store_rollback(s);
    return -1;
}
