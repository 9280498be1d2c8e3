/* One run's rows in the results store: a statement per kind of row (run_rows.h). */
#include "run_rows.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int bind_run_and_step(Store *s, sqlite3_stmt *st, const char *run_id, const char *what, Error *err)
{
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int rc = store_step_done(s, st, what, err);
    sqlite3_finalize(st);
    return rc;
}

int run_rows_clear(Store *s, const char *run_id, const char *engine_version, Error *err)
{
    static const char *const clear[] = {"DELETE FROM epochs WHERE run_id=?1", "DELETE FROM steps WHERE run_id=?1",
                                        "DELETE FROM layer_stats WHERE run_id=?1", "DELETE FROM evals WHERE run_id=?1",
                                        "UPDATE runs SET engine_version=?2, steps=NULL, test_acc=NULL,"
                                        " test_loss=NULL, train_loss=NULL, diverged_step=NULL,"
                                        " diverged_loss=NULL, nonfinite=NULL WHERE id=?1"};
    for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++) {
        sqlite3_stmt *st;
        if (store_prepare(s, &st, clear[i], err)) return -1;
        if (sqlite3_bind_parameter_count(st) == 2) sqlite3_bind_text(st, 2, engine_version, -1, SQLITE_STATIC);
        if (bind_run_and_step(s, st, run_id, "clearing an earlier attempt", err)) return -1;
    }
    return 0;
}

/* Binds what the statement names of :step, :epoch and :version. */
static void bind_position(sqlite3_stmt *st, long step, int epoch, const char *version)
{
    int i;
    if ((i = sqlite3_bind_parameter_index(st, ":step")) > 0) sqlite3_bind_int64(st, i, step);
    if ((i = sqlite3_bind_parameter_index(st, ":epoch")) > 0) sqlite3_bind_int(st, i, epoch);
    if ((i = sqlite3_bind_parameter_index(st, ":version")) > 0) sqlite3_bind_text(st, i, version, -1, SQLITE_STATIC);
}

int run_rows_clear_after(Store *s, const char *run_id, long step, int epoch, const char *engine_version,
                         Error *err)
{
    static const char *const clear[] = {"DELETE FROM epochs WHERE run_id=?1 AND epoch > :epoch",
                                        "DELETE FROM steps WHERE run_id=?1 AND step >= :step",
                                        "DELETE FROM layer_stats WHERE run_id=?1 AND step >= :step",
                                        "DELETE FROM evals WHERE run_id=?1 AND step > :step",
                                        "UPDATE runs SET engine_version=:version, steps=NULL, test_acc=NULL,"
                                        " test_loss=NULL, train_loss=NULL, diverged_step=NULL,"
                                        " diverged_loss=NULL, nonfinite=NULL WHERE id=?1"};
    for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++) {
        sqlite3_stmt *st;
        if (store_prepare(s, &st, clear[i], err)) return -1;
        bind_position(st, step, epoch, engine_version);
        if (bind_run_and_step(s, st, run_id, "keeping the rows before a checkpoint", err)) return -1;
    }
    return 0;
}

int run_rows_steps(Store *s, const char *run_id, const StepRow *rows, int n, Error *err)
{
    if (n == 0) return 0;
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "INSERT INTO steps(run_id, step, epoch, loss, lr, nonfinite, skipped) VALUES(?,?,?,?,?,?,?)", err))
        return -1;
    for (int i = 0; i < n; i++) {
        const StepRow *r = &rows[i];
        char note[64] = "";
        store_nonfinite_note(note, sizeof note, "loss", r->loss);
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, r->step);
        sqlite3_bind_int(st, 3, r->epoch);
        store_bind_real(st, 4, r->loss);
        store_bind_real(st, 5, r->lr);
        if (note[0]) sqlite3_bind_text(st, 6, note, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(st, 6);
        sqlite3_bind_int(st, 7, r->skipped);
        if (store_step_done(s, st, "writing step losses", err)) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}

int run_rows_epoch(Store *s, const char *run_id, const EpochMetrics *m, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "INSERT INTO epochs(run_id, epoch, step, train_loss, train_acc, test_loss, test_acc, loss_gap,"
                      " lr, images_per_sec, elapsed, noise_scale, nonfinite) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,"
                      "?11,?12,?13)",
                      err))
        return -1;
    const double v[] = {m->train_loss, m->train_acc, m->test_loss, m->test_acc, m->loss_gap,
                        m->lr, m->images_per_sec, m->elapsed, m->noise_scale};
    static const char *const names[] = {"train_loss", "train_acc", "test_loss", "test_acc", "loss_gap",
                                         "lr", "images_per_sec", "elapsed", NULL};
    char note[256] = "";
    sqlite3_bind_int(st, 2, m->epoch);
    sqlite3_bind_int64(st, 3, m->step);
    for (int i = 0; i < 9; i++) {
        store_bind_real(st, 4 + i, v[i]);
        if (names[i]) store_nonfinite_note(note, sizeof note, names[i], v[i]); /* noise_scale: NULL = not measured */
    }
    if (note[0]) sqlite3_bind_text(st, 13, note, -1, SQLITE_TRANSIENT);
    return bind_run_and_step(s, st, run_id, "writing an epoch", err);
}

int run_rows_eval(Store *s, const char *run_id, const EvalRow *e, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "INSERT INTO evals(run_id, step, epoch, test_loss, test_acc, nonfinite) VALUES(?1,?2,?3,?4,?5,?6)",
                      err))
        return -1;
    char note[128] = "";
    store_nonfinite_note(note, sizeof note, "test_loss", e->test_loss);
    store_nonfinite_note(note, sizeof note, "test_acc", e->test_acc);
    sqlite3_bind_int64(st, 2, e->step);
    sqlite3_bind_int(st, 3, e->epoch);
    store_bind_real(st, 4, e->test_loss);
    store_bind_real(st, 5, e->test_acc);
    if (note[0]) sqlite3_bind_text(st, 6, note, -1, SQLITE_TRANSIENT);
    return bind_run_and_step(s, st, run_id, "writing an evaluation", err);
}

int run_rows_diverged(Store *s, const char *run_id, long step, double loss, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "UPDATE runs SET diverged_step=?2, diverged_loss=?3, nonfinite=?4 WHERE id=?1", err))
        return -1;
    char note[64] = "";
    store_nonfinite_note(note, sizeof note, "diverged_loss", loss);
    sqlite3_bind_int64(st, 2, step);
    store_bind_real(st, 3, loss);
    if (note[0]) sqlite3_bind_text(st, 4, note, -1, SQLITE_TRANSIENT);
    return bind_run_and_step(s, st, run_id, "recording the divergence", err);
}

int run_rows_device(Store *s, const char *run_id, const char *device, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st, "UPDATE runs SET device=?2 WHERE id=?1", err)) return -1;
    sqlite3_bind_text(st, 2, device, -1, SQLITE_STATIC);
    return bind_run_and_step(s, st, run_id, "recording the device", err);
}

int run_rows_layer_stats(Store *s, const char *run_id, long step, const LayerStatRow *rows, int n, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "INSERT INTO layer_stats(run_id, step, param, name, kind, w_norm, g_norm, ratio, local_rate,"
                      " eff_rate, update_ratio, nonfinite) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                      err))
        return -1;
    static const char *const names[] = {"w_norm", "g_norm", "ratio", "local_rate", "eff_rate", "update_ratio"};
    for (int p = 0; p < n; p++) {
        const OptStats *o = &rows[p].s;
        /* ||w||/||g|| is undefined for a zero gradient: NULL, and not noted as non-finite. */
        double ratio = o->g_norm > 0 ? o->w_norm / o->g_norm : NAN;
        const double v[] = {o->w_norm, o->g_norm, ratio, o->local_rate, o->eff_rate, o->update_ratio};
        char note[256] = "";
        sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, step);
        sqlite3_bind_int(st, 3, p);
        sqlite3_bind_text(st, 4, rows[p].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, rows[p].kind, -1, SQLITE_STATIC);
        for (int i = 0; i < 6; i++) {
            store_bind_real(st, 6 + i, v[i]);
            if (i != 2 || o->g_norm > 0) store_nonfinite_note(note, sizeof note, names[i], v[i]);
        }
        if (note[0]) sqlite3_bind_text(st, 12, note, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(st, 12);
        if (store_step_done(s, st, "writing layer statistics", err)) {
            sqlite3_finalize(st);
            return -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}

FinalRow run_rows_final_of(const TrainResult *res, const char *why)
{
    if (!res) return (FinalRow){.status = "failed", .error = why};
    return (FinalRow){.status = res->diverged ? "diverged" : res->collapsed ? "collapsed" : "complete",
                      .has_result = true, .steps = res->steps, .skipped_steps = res->skipped_steps,
                      .test_acc = res->test_acc, .test_loss = res->test_loss, .train_loss = res->train_loss};
}

int run_rows_final(Store *s, const char *run_id, const FinalRow *f, Error *err)
{
    sqlite3_stmt *st;
    if (store_prepare(s, &st,
                      "UPDATE runs SET status=?2, finished=?3, steps=?4, test_acc=?5, test_loss=?6, train_loss=?7,"
                      " error=?8, exit_code=?9, nonfinite=coalesce(nonfinite, ?10), skipped_steps=?11 WHERE id=?1",
                      err))
        return -1;
    sqlite3_bind_text(st, 2, f->status, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 3, unix_time_seconds());
    char note[128] = "";
    if (f->has_result) {
        sqlite3_bind_int64(st, 4, f->steps);
        sqlite3_bind_int64(st, 11, f->skipped_steps);
        store_bind_real(st, 5, f->test_acc);
        store_bind_real(st, 6, f->test_loss);
        store_bind_real(st, 7, f->train_loss);
        /* a diverged run's test loss is whatever it was: not a note of its own */
        if (strcmp(f->status, "diverged") != 0) store_nonfinite_note(note, sizeof note, "test_loss", f->test_loss);
        store_nonfinite_note(note, sizeof note, "train_loss", f->train_loss);
    }
    if (f->error) sqlite3_bind_text(st, 8, f->error, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 9, f->has_result ? 0 : 1);
    if (note[0]) sqlite3_bind_text(st, 10, note, -1, SQLITE_TRANSIENT);
    return bind_run_and_step(s, st, run_id, "finishing the run", err);
}
