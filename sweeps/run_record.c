/* `train --db`: one run's rows, written in short transactions that each re-check the claim. */
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
#include "version.h"

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
    static const char *const clear[] = {"DELETE FROM epochs WHERE run_id=?1", "DELETE FROM steps WHERE run_id=?1",
                                        "DELETE FROM layer_stats WHERE run_id=?1", "DELETE FROM evals WHERE run_id=?1",
                                        "UPDATE runs SET engine_version=?2, steps=NULL, test_acc=NULL,"
                                        " test_loss=NULL, train_loss=NULL, diverged_step=NULL,"
                                        " diverged_loss=NULL, nonfinite=NULL WHERE id=?1"};
    for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++) {
        sqlite3_stmt *st;
        if (store_prepare(&rr->store, &st, clear[i], err)) goto fail_txn;
        sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
        if (sqlite3_bind_parameter_count(st) == 2) sqlite3_bind_text(st, 2, bigbatch_version(), -1, SQLITE_STATIC);
        int rc = store_step_done(&rr->store, st, "clearing an earlier attempt", err);
        sqlite3_finalize(st);
        if (rc) goto fail_txn;
    }
    if (hold_claim(rr, err) || store_commit(&rr->store, err)) goto fail_txn;
    rr->last_flush = now_seconds();
    return 0;
fail_txn:
    store_rollback(&rr->store);
fail:
    store_close(&rr->store);
    return -1;
}

static int insert_steps(RunRecord *rr, Error *err)
{
    if (rr->n_steps == 0) return 0;
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st, "INSERT INTO steps(run_id, step, epoch, loss, lr, nonfinite) VALUES(?,?,?,?,?,?)",
                      err))
        return -1;
    for (int i = 0; i < rr->n_steps; i++) {
        const StepRow *r = &rr->steps[i];
        char note[64] = "";
        store_nonfinite_note(note, sizeof note, "loss", r->loss);
        sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, r->step);
        sqlite3_bind_int(st, 3, r->epoch);
        store_bind_real(st, 4, r->loss);
        store_bind_real(st, 5, r->lr);
        if (note[0]) sqlite3_bind_text(st, 6, note, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(st, 6);
        if (store_step_done(&rr->store, st, "writing step losses", err)) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    rr->n_steps = 0;
    return 0;
}

/* Runs `write` inside one transaction that holds the claim and flushes the step losses. */
typedef int (*WriteFn)(RunRecord *rr, const void *arg, Error *err);

static int write_txn(RunRecord *rr, Observer *obs, WriteFn write, const void *arg)
{
    if (rr->broken) return -1;
    Error *err = &rr->err;
    if (store_begin(&rr->store, err) || hold_claim(rr, err) || insert_steps(rr, err) ||
        (write && write(rr, arg, err)) || store_commit(&rr->store, err)) {
        store_rollback(&rr->store);
        rr->broken = true;
        if (obs) obs->stop = true;
        return -1;
    }
    rr->last_flush = now_seconds();
    return 0;
}

void run_record_on_step(RunRecord *rr, Observer *obs, int epoch, long step, double loss, double lr)
{
    if (rr->broken) return;
    if (rr->n_steps == rr->cap_steps) {
        rr->cap_steps = rr->cap_steps ? 2 * rr->cap_steps : 1024;
        rr->steps = xrealloc(rr->steps, sizeof *rr->steps * (size_t)rr->cap_steps, "step rows");
    }
    rr->steps[rr->n_steps++] = (StepRow){step, epoch, loss, lr};
    /* A long epoch still heartbeats and loses little when killed. */
    if (now_seconds() - rr->last_flush > 10) write_txn(rr, obs, NULL, NULL);
}

static int write_epoch(RunRecord *rr, const void *arg, Error *err)
{
    const EpochMetrics *m = arg;
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st,
                      "INSERT INTO epochs(run_id, epoch, step, train_loss, train_acc, test_loss, test_acc, loss_gap,"
                      " lr, images_per_sec, elapsed, noise_scale, nonfinite) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      err))
        return -1;
    const double v[] = {m->train_loss, m->train_acc, m->test_loss, m->test_acc, m->loss_gap,
                        m->lr, m->images_per_sec, m->elapsed, m->noise_scale};
    static const char *const names[] = {"train_loss", "train_acc", "test_loss", "test_acc", "loss_gap",
                                         "lr", "images_per_sec", "elapsed", NULL};
    char note[256] = "";
    sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, m->epoch);
    sqlite3_bind_int64(st, 3, m->step);
    for (int i = 0; i < 9; i++) {
        store_bind_real(st, 4 + i, v[i]);
        if (names[i]) store_nonfinite_note(note, sizeof note, names[i], v[i]); /* noise_scale: NULL = not measured */
    }
    if (note[0]) sqlite3_bind_text(st, 13, note, -1, SQLITE_TRANSIENT);
    int rc = store_step_done(&rr->store, st, "writing an epoch", err);
    sqlite3_finalize(st);
    return rc;
}

void run_record_on_epoch(RunRecord *rr, Observer *obs, const EpochMetrics *m)
{
    write_txn(rr, obs, write_epoch, m);
}

typedef struct {
    int epoch;
    long step;
    double test_loss, test_acc;
} Eval;

static int write_eval(RunRecord *rr, const void *arg, Error *err)
{
    const Eval *e = arg;
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st,
                      "INSERT INTO evals(run_id, step, epoch, test_loss, test_acc, nonfinite) VALUES(?,?,?,?,?,?)", err))
        return -1;
    char note[128] = "";
    store_nonfinite_note(note, sizeof note, "test_loss", e->test_loss);
    store_nonfinite_note(note, sizeof note, "test_acc", e->test_acc);
    sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, e->step);
    sqlite3_bind_int(st, 3, e->epoch);
    store_bind_real(st, 4, e->test_loss);
    store_bind_real(st, 5, e->test_acc);
    if (note[0]) sqlite3_bind_text(st, 6, note, -1, SQLITE_TRANSIENT);
    int rc = store_step_done(&rr->store, st, "writing an evaluation", err);
    sqlite3_finalize(st);
    return rc;
}

void run_record_on_eval(RunRecord *rr, Observer *obs, int epoch, long step, double test_loss, double test_acc)
{
    Eval e = {epoch, step, test_loss, test_acc};
    write_txn(rr, obs, write_eval, &e);
}

typedef struct {
    long step;
    double loss;
} Divergence;

static int write_divergence(RunRecord *rr, const void *arg, Error *err)
{
    const Divergence *d = arg;
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st, "UPDATE runs SET diverged_step=?1, diverged_loss=?2, nonfinite=?3 WHERE id=?4",
                      err))
        return -1;
    char note[64] = "";
    store_nonfinite_note(note, sizeof note, "diverged_loss", d->loss);
    sqlite3_bind_int64(st, 1, d->step);
    store_bind_real(st, 2, d->loss);
    if (note[0]) sqlite3_bind_text(st, 3, note, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, rr->run_id, -1, SQLITE_STATIC);
    int rc = store_step_done(&rr->store, st, "recording the divergence", err);
    sqlite3_finalize(st);
    return rc;
}

static int write_device(RunRecord *rr, const void *arg, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st, "UPDATE runs SET device=?2 WHERE id=?1", err)) return -1;
    sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, arg, -1, SQLITE_STATIC);
    int rc = store_step_done(&rr->store, st, "recording the device", err);
    sqlite3_finalize(st);
    return rc;
}

void run_record_on_start(RunRecord *rr, Observer *obs, const char *device)
{
    write_txn(rr, obs, write_device, device);
}

void run_record_on_diverged(RunRecord *rr, Observer *obs, long step, double loss)
{
    Divergence d = {step, loss};
    write_txn(rr, obs, write_divergence, &d);
}

typedef struct {
    long step;
    const Net *net;
    const OptStats *stats;
} LayerStats;

static int write_layer_stats(RunRecord *rr, const void *arg, Error *err)
{
    const LayerStats *ls = arg;
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st,
                      "INSERT INTO layer_stats(run_id, step, param, name, kind, w_norm, g_norm, ratio, local_rate,"
                      " eff_rate, update_ratio, nonfinite) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                      err))
        return -1;
    static const char *const names[] = {"w_norm", "g_norm", "ratio", "local_rate", "eff_rate", "update_ratio"};
    for (int p = 0; p < ls->net->n_params; p++) {
        const OptStats *s = &ls->stats[p];
        /* ||w||/||g|| is undefined for a zero gradient: NULL, and not noted as non-finite. */
        double ratio = s->g_norm > 0 ? s->w_norm / s->g_norm : NAN;
        const double v[] = {s->w_norm, s->g_norm, ratio, s->local_rate, s->eff_rate, s->update_ratio};
        char note[256] = "";
        sqlite3_bind_text(st, 1, rr->run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, ls->step);
        sqlite3_bind_int(st, 3, p);
        sqlite3_bind_text(st, 4, ls->net->params[p].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, param_kind_name(ls->net->params[p].kind), -1, SQLITE_STATIC);
        for (int i = 0; i < 6; i++) {
            store_bind_real(st, 6 + i, v[i]);
            if (i != 2 || s->g_norm > 0) store_nonfinite_note(note, sizeof note, names[i], v[i]);
        }
        if (note[0]) sqlite3_bind_text(st, 12, note, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(st, 12);
        if (store_step_done(&rr->store, st, "writing layer statistics", err)) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}

void run_record_on_layer_stats(RunRecord *rr, Observer *obs, long step, const Net *net, const OptStats *stats)
{
    LayerStats ls = {step, net, stats};
    write_txn(rr, obs, write_layer_stats, &ls);
}

typedef struct {
    const TrainResult *res;
    const char *why;
} Final;

static int write_final(RunRecord *rr, const void *arg, Error *err)
{
    const Final *f = arg;
    sqlite3_stmt *st;
    if (store_prepare(&rr->store, &st,
                      "UPDATE runs SET status=?1, finished=?2, steps=?3, test_acc=?4, test_loss=?5, train_loss=?6,"
                      " error=?7, exit_code=?8, nonfinite=coalesce(nonfinite, ?9) WHERE id=?10",
                      err))
        return -1;
    const TrainResult *r = f->res;
    sqlite3_bind_text(st, 1, !r ? "failed" : r->diverged ? "diverged" : "complete", -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 2, unix_time_seconds());
    char note[128] = "";
    if (r) {
        sqlite3_bind_int64(st, 3, r->steps);
        store_bind_real(st, 4, r->test_acc);
        store_bind_real(st, 5, r->test_loss);
        store_bind_real(st, 6, r->train_loss);
        if (!r->diverged) store_nonfinite_note(note, sizeof note, "test_loss", r->test_loss);
        store_nonfinite_note(note, sizeof note, "train_loss", r->train_loss);
    }
    if (f->why) sqlite3_bind_text(st, 7, f->why, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, r ? 0 : 1);
    if (note[0]) sqlite3_bind_text(st, 9, note, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 10, rr->run_id, -1, SQLITE_STATIC);
    int rc = store_step_done(&rr->store, st, "finishing the run", err);
    sqlite3_finalize(st);
    return rc;
}

int run_record_finish(RunRecord *rr, const TrainResult *res, const char *why, Error *err)
{
    if (rr->broken) {
        *err = rr->err;
        /* The claim may be gone; still try to say why the run failed, if it is ours. */
        if (!res) {
            rr->broken = false;
            Final f = {NULL, why};
            write_txn(rr, NULL, write_final, &f);
        }
        return -1;
    }
    Final f = {res, why};
    if (write_txn(rr, NULL, write_final, &f) != 0) {
        *err = rr->err;
        return -1;
    }
    return 0;
}

void run_record_close(RunRecord *rr)
{
    store_close(&rr->store);
    free(rr->steps);
    rr->steps = NULL;
}
