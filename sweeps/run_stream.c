/* Run records as lines of JSON (run_stream.h): written by a run, applied by its sweep. */
#include "run_stream.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/base/name_table.h"

/* ---- the run's side ---- */

/* cJSON says it ran out of memory only by a NULL; a record cannot be sent half. */
static void *checked(void *p)
{
    if (!p) {
        fprintf(stderr, "bigbatch: out of memory writing a run record\n");
        exit(1);
    }
    return p;
}

/* The shortest decimal that reads back as x to the last bit: cJSON's own printing settles for
 * 15 digits when they come within an epsilon, and a record must give back what was measured. */
static void add_number(cJSON *o, const char *key, double x)
{
    char text[32];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x) break;
    }
    checked(cJSON_AddRawToObject(o, key, text));
}

static void add_text(cJSON *o, const char *key, const char *text)
{
    checked(cJSON_AddStringToObject(o, key, text));
}

static void add_real(cJSON *o, const char *key, double x)
{
    if (isfinite(x)) add_number(o, key, x);
    else add_text(o, key, isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
}

static cJSON *new_record(const char *kind)
{
    cJSON *o = checked(cJSON_CreateObject());
    add_text(o, "record", kind);
    return o;
}

/* Prints and frees the record; cJSON reports memory exhaustion only as NULLs, checked here. */
static void send(FILE *f, cJSON *o)
{
    char *text = checked(cJSON_PrintUnformatted(o));
    fprintf(f, RUN_STREAM_PREFIX "%s\n", text);
    fflush(f);
    cJSON_free(text);
    cJSON_Delete(o);
}

void run_stream_start(FILE *f, const char *device)
{
    cJSON *o = new_record("start");
    add_text(o, "device", device);
    send(f, o);
}

void run_stream_step(FILE *f, const StepRow *r)
{
    cJSON *o = new_record("step");
    add_number(o, "epoch", r->epoch);
    add_number(o, "step", (double)r->step);
    add_real(o, "loss", r->loss);
    add_real(o, "lr", r->lr);
    if (r->skipped) add_number(o, "skipped", 1); /* only then: older sweeps read the rest alike */
    send(f, o);
}

/* The epoch record's numbers, in one table for writing and reading. */
#define EPOCH_REALS(X)                                                                            \
    X(train_loss) X(train_acc) X(test_loss) X(test_acc) X(loss_gap) X(lr) X(images_per_sec)        \
    X(elapsed) X(noise_scale)

void run_stream_epoch(FILE *f, const EpochMetrics *m)
{
    cJSON *o = new_record("epoch");
    add_number(o, "epoch", m->epoch);
    add_number(o, "step", (double)m->step);
#define ADD(name) add_real(o, #name, m->name);
    EPOCH_REALS(ADD)
#undef ADD
    send(f, o);
}

void run_stream_eval(FILE *f, const EvalRow *e)
{
    cJSON *o = new_record("eval");
    add_number(o, "epoch", e->epoch);
    add_number(o, "step", (double)e->step);
    add_real(o, "test_loss", e->test_loss);
    add_real(o, "test_acc", e->test_acc);
    send(f, o);
}

void run_stream_diverged(FILE *f, long step, double loss)
{
    cJSON *o = new_record("diverged");
    add_number(o, "step", (double)step);
    add_real(o, "loss", loss);
    send(f, o);
}

#define STAT_REALS(X) X(w_norm) X(g_norm) X(local_rate) X(eff_rate) X(update_ratio)

void run_stream_layer_stats(FILE *f, long step, const LayerStatRow *rows, int n)
{
    cJSON *o = new_record("layer_stats");
    add_number(o, "step", (double)step);
    cJSON *params = checked(cJSON_AddArrayToObject(o, "params"));
    for (int i = 0; i < n; i++) {
        cJSON *p = checked(cJSON_CreateObject());
        if (!cJSON_AddItemToArray(params, p)) checked(NULL);
        add_text(p, "name", rows[i].name);
        add_text(p, "kind", rows[i].kind);
#define ADD(name) add_real(p, #name, rows[i].s.name);
        STAT_REALS(ADD)
#undef ADD
    }
    send(f, o);
}

void run_stream_end(FILE *f, const FinalRow *r)
{
    cJSON *o = new_record("end");
    add_text(o, "status", r->status);
    if (r->has_result) {
        add_number(o, "steps", (double)r->steps);
        if (r->skipped_steps) add_number(o, "skipped_steps", (double)r->skipped_steps);
        add_real(o, "test_acc", r->test_acc);
        add_real(o, "test_loss", r->test_loss);
        add_real(o, "train_loss", r->train_loss);
    }
    if (r->error) add_text(o, "error", r->error);
    send(f, o);
}

/* ---- the sweep's side ---- */

void run_stream_checkpoint(FILE *f, const char *path, long step, int epoch)
{
    cJSON *o = new_record("checkpoint");
    add_text(o, "path", path);
    add_number(o, "step", (double)step);
    add_number(o, "epoch", epoch);
    send(f, o);
}

int run_stream_is_record(const char *line)
{
    return strncmp(line, RUN_STREAM_PREFIX, strlen(RUN_STREAM_PREFIX)) == 0;
}

/* Field readers: 0, or 1 with err naming the record's kind and the key. */
static int bad(Error *err, const cJSON *o, const char *key, const char *what)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "record");
    error_set(err, "a %s record has no %s \"%s\"", cJSON_IsString(kind) ? kind->valuestring : "run", what, key);
    return 1;
}

static int get_real(const cJSON *o, const char *key, double *x, Error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v)) {
        *x = v->valuedouble;
        return 0;
    }
    static const struct { const char *text; double value; } NONFINITE[] = {{"nan", NAN}, {"inf", INFINITY},
                                                                           {"-inf", -INFINITY}};
    for (size_t i = 0; cJSON_IsString(v) && i < sizeof NONFINITE / sizeof NONFINITE[0]; i++)
        if (!strcmp(v->valuestring, NONFINITE[i].text)) {
            *x = NONFINITE[i].value;
            return 0;
        }
    return bad(err, o, key, "number");
}

static int get_long(const cJSON *o, const char *key, long *n, Error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9e15)
        return bad(err, o, key, "integer");
    *n = (long)v->valuedouble;
    return 0;
}

/* An integer in [lo, hi] that a record may leave out (then *n is left alone). */
static int get_optional_long(const cJSON *o, const char *key, long lo, long hi, long *n, Error *err)
{
    if (!cJSON_GetObjectItemCaseSensitive(o, key)) return 0;
    long x;
    if (get_long(o, key, &x, err)) return 1;
    if (x < lo || x > hi) return bad(err, o, key, "integer in range");
    *n = x;
    return 0;
}

static int get_int(const cJSON *o, const char *key, int *n, Error *err)
{
    long x;
    if (get_long(o, key, &x, err)) return 1;
    if (x < -2147483647L || x > 2147483647L) return bad(err, o, key, "int-sized integer");
    *n = (int)x;
    return 0;
}

static int get_text(const cJSON *o, const char *key, const char **s, Error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v)) return bad(err, o, key, "string");
    *s = v->valuestring;
    return 0;
}

/* Each kind of record: 0, 1 when malformed, -1 when the store fails (as run_stream_apply). */
typedef int (*ApplyFn)(Store *s, const char *run_id, const cJSON *o, Error *err);

static int apply_start(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    const char *device;
    if (get_text(o, "device", &device, err)) return 1;
    return run_rows_device(s, run_id, device, err);
}

static int apply_step(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    StepRow r = {0};
    long skipped = 0;
    if (get_int(o, "epoch", &r.epoch, err) || get_long(o, "step", &r.step, err) || get_real(o, "loss", &r.loss, err) ||
        get_real(o, "lr", &r.lr, err) || get_optional_long(o, "skipped", 0, 1, &skipped, err))
        return 1;
    r.skipped = skipped == 1;
    return run_rows_steps(s, run_id, &r, 1, err);
}

static int apply_epoch(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    EpochMetrics m;
    if (get_int(o, "epoch", &m.epoch, err) || get_long(o, "step", &m.step, err)) return 1;
#define GET(name) if (get_real(o, #name, &m.name, err)) return 1;
    EPOCH_REALS(GET)
#undef GET
    return run_rows_epoch(s, run_id, &m, err);
}

static int apply_eval(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    EvalRow e;
    if (get_int(o, "epoch", &e.epoch, err) || get_long(o, "step", &e.step, err) ||
        get_real(o, "test_loss", &e.test_loss, err) || get_real(o, "test_acc", &e.test_acc, err))
        return 1;
    return run_rows_eval(s, run_id, &e, err);
}

static int apply_diverged(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    long step;
    double loss;
    if (get_long(o, "step", &step, err) || get_real(o, "loss", &loss, err)) return 1;
    return run_rows_diverged(s, run_id, step, loss, err);
}

static int apply_layer_stats(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    long step;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(o, "params");
    if (get_long(o, "step", &step, err)) return 1;
    if (!cJSON_IsArray(params)) return bad(err, o, "params", "array");
    int n = cJSON_GetArraySize(params);
    LayerStatRow *rows = xcalloc((size_t)(n > 0 ? n : 1), sizeof *rows, "layer statistics");
    int i = 0, rc = 0;
    for (const cJSON *p = params->child; p && rc == 0; p = p->next, i++) {
        rc = get_text(p, "name", &rows[i].name, err) || get_text(p, "kind", &rows[i].kind, err);
#define GET(name) rc = rc || get_real(p, #name, &rows[i].s.name, err);
        STAT_REALS(GET)
#undef GET
    }
    if (rc == 0) rc = run_rows_layer_stats(s, run_id, step, rows, n, err);
    free(rows);
    return rc;
}

static int apply_end(Store *s, const char *run_id, const cJSON *o, Error *err)
{
    FinalRow f = {0};
    if (get_text(o, "status", &f.status, err)) return 1;
    static const char *const ENDS[] = {"complete", "diverged", "collapsed", "failed"};
    bool known = false;
    for (size_t i = 0; i < sizeof ENDS / sizeof ENDS[0]; i++) known = known || !strcmp(f.status, ENDS[i]);
    if (!known) {
        error_set(err, "an end record has status \"%s\", not complete, diverged, collapsed or failed", f.status);
        return 1;
    }
    f.has_result = strcmp(f.status, "failed") != 0;
    if (f.has_result && (get_long(o, "steps", &f.steps, err) ||
                         get_optional_long(o, "skipped_steps", 0, LONG_MAX, &f.skipped_steps, err) ||
                         get_real(o, "test_acc", &f.test_acc, err) ||
                         get_real(o, "test_loss", &f.test_loss, err) || get_real(o, "train_loss", &f.train_loss, err)))
        return 1;
    if (!f.has_result && get_text(o, "error", &f.error, err)) return 1;
    return run_rows_final(s, run_id, &f, err);
}

static const struct {
    const char *name;
    ApplyFn apply;
} RECORDS[] = {
    {"start", apply_start},       {"step", apply_step},   {"epoch", apply_epoch}, {"eval", apply_eval},
    {"diverged", apply_diverged}, {"layer_stats", apply_layer_stats}, {"end", apply_end},
};
static const NameTable RECORD_NAMES = NAME_TABLE(RECORDS);

/* No row: the sweep renames the file once this record's transaction is committed. */
static int read_checkpoint(const cJSON *o, RecordEffect *fx, Error *err)
{
    const char *path;
    long step;
    int epoch;
    if (get_text(o, "path", &path, err) || get_long(o, "step", &step, err) || get_int(o, "epoch", &epoch, err))
        return 1;
    if (step < 0 || strlen(path) >= sizeof fx->checkpoint) return bad(err, o, "path", "usable");
    snprintf(fx->checkpoint, sizeof fx->checkpoint, "%s", path);
    fx->checkpoint_step = step;
    return 0;
}

int run_stream_apply(Store *s, const char *run_id, const char *line, RecordEffect *fx, Error *err)
{
    fx->ended = 0;
    fx->checkpoint_step = -1;
    if (!run_stream_is_record(line)) {
        error_set(err, "a line without the \"" RUN_STREAM_PREFIX "\" prefix is not a record");
        return 1;
    }
    cJSON *o = cJSON_Parse(line + strlen(RUN_STREAM_PREFIX));
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        error_set(err, "a record that is not a JSON object");
        return 1;
    }
    const char *kind;
    int rc = get_text(o, "record", &kind, err);
    if (rc == 0 && !strcmp(kind, "checkpoint")) {
        rc = read_checkpoint(o, fx, err);
        cJSON_Delete(o);
        return rc;
    }
    int i = rc == 0 ? name_table_index(RECORD_NAMES, kind) : -1;
    if (rc == 0 && i < 0) {
        error_set(err, "a record of unknown kind \"%s\"", kind);
        rc = 1;
    }
    if (rc == 0) rc = RECORDS[i].apply(s, run_id, o, err);
    if (rc == 0 && !strcmp(kind, "end")) fx->ended = 1;
    cJSON_Delete(o);
    return rc;
}
