/* `train --db`: one run's rows, written in short transactions that each re-check the claim;
 * or, for a run its sweep started, the same rows sent to the sweep as records (run_stream.h). */
#include "run_record.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_config.h"
#include "run_stream.h"
#include "../engine/base/version.h"

/* The claim is ours while the row is running with our attempt; refreshes the heartbeat. */
static int hold_claim(RunRecord *rr, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st,
                      "UPDATE runs SET heartbeat=?1 WHERE id=?2 AND attempt=?3 AND status='running'", err))
        return -1;
    sqlite3_bind_double(st, 1, unix_time_seconds());
    sqlite3_bind_text(st, 2, rr->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, rr->attempt);
    int rc = store_step_done(&rr->store, st, "heartbeat", err);
    sqlite3_finalize(st);
    if (rc) return -1;
    if (sqlite3_changes(rr->store.db) != 1) {
        error_set(err, "%s: run %s (attempt %d) is no longer ours: another process took it over",
                  rr->store.path, rr->run_id, rr->attempt);
        return -1;
    }
    return 0;
}

static bool process_alive(int pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* A hand-started run: create the row or take it over, unless a live process holds it. */
static int claim_by_hand(RunRecord *rr, const char *config_json, const char *args, Error *err)
{
    char host[256];
    store_hostname(host, sizeof host);
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st, "SELECT status, host, pid FROM runs WHERE id=?1", err)) return -1;
    sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "running") &&
        sqlite3_column_text(st, 1) && !strcmp((const char *)sqlite3_column_text(st, 1), host) &&
        process_alive(sqlite3_column_int(st, 2)) && sqlite3_column_int(st, 2) != (int)getpid()) {
        error_set(err, "%s: run %s is running in process %d; wait for it or remove its row", rr->store.path,
                  rr->run_id, sqlite3_column_int(st, 2));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    if (store_prepare(&rr->store, &st,
                      "INSERT INTO runs(id, config, args, status, attempt, created, started, heartbeat, host, pid)"
                      " VALUES(?1, ?2, ?3, 'running', 1, ?4, ?4, ?4, ?5, ?6)"
                      " ON CONFLICT(id) DO UPDATE SET status='running', attempt=attempt+1, args=?3,"
                      " started=?4, heartbeat=?4, finished=NULL, host=?5, pid=?6, exit_code=NULL, error=NULL",
                      err))
        return -1;
    double t = unix_time_seconds();
    sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, config_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, args, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 4, t);
    sqlite3_bind_text(st, 5, host, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 6, (int)getpid());
    int rc = store_step_done(&rr->store, st, "creating the run", err);
    sqlite3_finalize(st);
    return rc;
}

static int read_attempt(RunRecord *rr, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st, "SELECT status, attempt FROM runs WHERE id=?1", err)) return -1;
    sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
    int rc = -1;
    if (sqlite3_step(st) != SQLITE_ROW) {
        error_set(err, "%s: no run %s", rr->store.path, rr->run_id);
    } else if (strcmp((const char *)sqlite3_column_text(st, 0), "running") != 0) {
        error_set(err, "%s: run %s is %s, not claimed by a sweep (run it without --run-id)", rr->store.path,
                  rr->run_id, sqlite3_column_text(st, 0));
    } else {
        rr->attempt = sqlite3_column_int(st, 1);
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

int run_record_begin(RunRecord *rr, const char *db_path, const char *run_id, const char *config_json,
                     const char *args, Error *err)
{
    memset(rr, 0, sizeof *rr);
    if (store_open(&rr->store, db_path, false, err) != 0) return -1;
    if (run_id) snprintf(rr->run_id, sizeof rr->run_id, "%s", run_id);
    else run_config_id(config_json, rr->run_id);
    if (store_begin(&rr->store, err)) goto fail;
    if ((run_id ? 0 : claim_by_hand(rr, config_json, args, err)) || read_attempt(rr, err)) goto fail_txn;
    /* Rows of an earlier attempt (a killed or failed run) go before this one writes any. */
    if (run_rows_clear(&rr->store, rr->run_id, bigbatch_version(), err)) goto fail_txn;
    if (hold_claim(rr, err) || store_commit(&rr->store, err)) goto fail_txn;
    rr->last_flush = now_seconds();
    return 0;
fail_txn:
    store_rollback(&rr->store);
fail:
    store_close(&rr->store);
    return -1;
}

void run_record_begin_stream(RunRecord *rr, FILE *stream, const char *run_id)
{
    memset(rr, 0, sizeof *rr);
    rr->stream = stream;
    snprintf(rr->run_id, sizeof rr->run_id, "%s", run_id ? run_id : "");
}

/* Runs `write` inside one transaction that holds the claim and flushes the step losses. */
typedef int (*WriteFn)(RunRecord *rr, const void *arg, Error *err);

static int write_txn(RunRecord *rr, Observer *obs, WriteFn write, const void *arg)
{
    if (rr->broken) return -1;
    Error *err = &rr->err;
    if (store_begin(&rr->store, err) || hold_claim(rr, err) ||
        run_rows_steps(&rr->store, rr->run_id, rr->steps, rr->n_steps, err) || (write && write(rr, arg, err)) ||
        store_commit(&rr->store, err)) {
        store_rollback(&rr->store);
        rr->broken = true;
        if (obs) obs->stop = true;
        return -1;
    }
    rr->n_steps = 0;
    rr->last_flush = now_seconds();
    return 0;
}

void run_record_on_step(RunRecord *rr, Observer *obs, int epoch, long step, double loss, double lr, bool skipped)
{
    StepRow row = {step, epoch, loss, lr, skipped};
    if (rr->stream) {
        run_stream_step(rr->stream, &row);
        return;
    }
    if (rr->broken) return;
    if (rr->n_steps == rr->cap_steps) {
        rr->cap_steps = rr->cap_steps ? 2 * rr->cap_steps : 1024;
        rr->steps = xrealloc(rr->steps, sizeof *rr->steps * (size_t)rr->cap_steps, "step rows");
    }
    rr->steps[rr->n_steps++] = row;
    /* A long epoch still heartbeats and loses little when killed. */
    if (now_seconds() - rr->last_flush > 10) write_txn(rr, obs, NULL, NULL);
}

static int write_epoch(RunRecord *rr, const void *arg, Error *err)
{
    return run_rows_epoch(&rr->store, rr->run_id, arg, err);
}

void run_record_on_epoch(RunRecord *rr, Observer *obs, const EpochMetrics *m)
{
    if (rr->stream) run_stream_epoch(rr->stream, m);
    else write_txn(rr, obs, write_epoch, m);
}

static int write_eval(RunRecord *rr, const void *arg, Error *err)
{
    return run_rows_eval(&rr->store, rr->run_id, arg, err);
}

void run_record_on_eval(RunRecord *rr, Observer *obs, int epoch, long step, double test_loss, double test_acc)
{
    EvalRow e = {epoch, step, test_loss, test_acc};
    if (rr->stream) run_stream_eval(rr->stream, &e);
    else write_txn(rr, obs, write_eval, &e);
}

typedef struct {
    long step;
    double loss;
} Divergence;

static int write_divergence(RunRecord *rr, const void *arg, Error *err)
{
    const Divergence *d = arg;
    return run_rows_diverged(&rr->store, rr->run_id, d->step, d->loss, err);
}

void run_record_on_checkpoint(RunRecord *rr, const char *path, long step, int epoch)
{
    if (rr->stream) run_stream_checkpoint(rr->stream, path, step, epoch); /* a sweep's run only */
}

void run_record_on_diverged(RunRecord *rr, Observer *obs, long step, double loss)
{
    Divergence d = {step, loss};
    if (rr->stream) run_stream_diverged(rr->stream, step, loss);
    else write_txn(rr, obs, write_divergence, &d);
}

static int write_device(RunRecord *rr, const void *arg, Error *err)
{
    return run_rows_device(&rr->store, rr->run_id, arg, err);
}

void run_record_on_start(RunRecord *rr, Observer *obs, const char *device)
{
    if (rr->stream) run_stream_start(rr->stream, device);
    else write_txn(rr, obs, write_device, device);
}

typedef struct {
    long step;
    const LayerStatRow *rows;
    int n;
} LayerStats;

static int write_layer_stats(RunRecord *rr, const void *arg, Error *err)
{
    const LayerStats *ls = arg;
    return run_rows_layer_stats(&rr->store, rr->run_id, ls->step, ls->rows, ls->n, err);
}

void run_record_on_layer_stats(RunRecord *rr, Observer *obs, long step, const Net *net, const OptStats *stats)
{
    LayerStatRow *rows = xcalloc((size_t)net->n_params, sizeof *rows, "layer statistics");
    for (int p = 0; p < net->n_params; p++)
        rows[p] = (LayerStatRow){net->params[p].name, param_kind_name(net->params[p].kind), stats[p]};
    LayerStats ls = {step, rows, net->n_params};
    if (rr->stream) run_stream_layer_stats(rr->stream, step, rows, net->n_params);
    else write_txn(rr, obs, write_layer_stats, &ls);
    free(rows);
}

static int write_final(RunRecord *rr, const void *arg, Error *err)
{
    return run_rows_final(&rr->store, rr->run_id, arg, err);
}

int run_record_finish(RunRecord *rr, const TrainResult *res, const char *why, Error *err)
{
    FinalRow f = run_rows_final_of(res, why);
    if (rr->stream) {
        run_stream_end(rr->stream, &f);
        return 0;
    }
    if (rr->broken) {
        *err = rr->err;
        /* The claim may be gone; still try to say why the run failed, if it is ours. */
        if (!res) {
            rr->broken = false;
            write_txn(rr, NULL, write_final, &f);
        }
        return -1;
    }
    if (write_txn(rr, NULL, write_final, &f) != 0) {
        *err = rr->err;
        return -1;
    }
    return 0;
}

void run_record_close(RunRecord *rr)
{
    if (!rr->stream) store_close(&rr->store);
    free(rr->steps);
    rr->steps = NULL;
}
