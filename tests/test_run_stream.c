/* Run records (sweeps/run_stream.c): what a run sends its sweep comes back as the same rows,
 * bit for bit, non-finite values included; a line that is not a record this version writes
 * is refused with a message naming what is wrong, and writes nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sweeps/run_stream.h"

static Store store;
static char path[] = "/tmp/bb-run-stream-XXXXXX";

static void open_store(void)
{
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    unlink(path);
    Error err = {{0}};
    cr_assert_eq(store_open(&store, path, false, &err), 0, "%s", err.msg);
    cr_assert_eq(store_exec(&store,
                            "INSERT INTO runs(id, config, args, status, created) VALUES('r1', '{}', 'x', 'running', 0)",
                            &err),
                 0, "%s", err.msg);
}

static void close_store(void)
{
    store_close(&store);
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char p[64];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

TestSuite(run_stream, .init = open_store, .fini = close_store);

/* Applies every line the writer produced; returns how many were records. */
static int apply_all(char *text)
{
    int n = 0, ended = 0;
    RecordEffect fx;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        Error err = {{0}};
        cr_assert(run_stream_is_record(line), "not a record: %s", line);
        cr_assert_eq(run_stream_apply(&store, "r1", line, &fx, &err), 0, "%s: %s", line, err.msg);
        ended = ended || fx.ended;
        n++;
    }
    cr_assert(ended, "the end record did not say so");
    return n;
}

static double real_at(const char *sql)
{
    sqlite3_stmt *st;
    Error err = {{0}};
    cr_assert_eq(store_prepare(&store, &st, sql, &err), 0, "%s", err.msg);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "no row: %s", sql);
    double x = sqlite3_column_type(st, 0) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return x;
}

static const char *text_at(const char *sql, char *buf, size_t len)
{
    sqlite3_stmt *st;
    Error err = {{0}};
    cr_assert_eq(store_prepare(&store, &st, sql, &err), 0, "%s", err.msg);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "no row: %s", sql);
    snprintf(buf, len, "%s", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "(null)");
    sqlite3_finalize(st);
    return buf;
}

Test(run_stream, every_record_round_trips)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    cr_assert(f);
    /* 0.1 + 0.2 is 0.30000000000000004: "0.3" is within an epsilon of it, and wrong */
    const double third = 0.1 + 0.2, tiny = 4.9406564584124654e-324;
    run_stream_start(f, "cuda:0 NVIDIA H200 \"quoted\"");
    run_stream_step(f, &(StepRow){.step = 0, .epoch = 1, .loss = third, .lr = tiny});
    run_stream_step(f, &(StepRow){.step = 1, .epoch = 1, .loss = NAN, .lr = 0.1});
    run_stream_step(f, &(StepRow){.step = 2, .epoch = 1, .loss = -INFINITY, .lr = 0.1});
    EpochMetrics m = {.epoch = 1, .step = 2, .train_loss = 2.302585092994046, .train_acc = 0.125, .test_loss = INFINITY,
                      .test_acc = 0.1, .loss_gap = -1e-300, .lr = 0.1, .images_per_sec = 5294.5, .elapsed = 0.25,
                      .noise_scale = NAN};
    run_stream_epoch(f, &m);
    run_stream_eval(f, &(EvalRow){.epoch = 1, .step = 2, .test_loss = third, .test_acc = 0.75});
    LayerStatRow rows[2] = {{"conv1.weight", "conv", {1.5, 0, 1, 0.1, 0}},
                            {"fc.bias", "bias", {third, 2.5, NAN, INFINITY, 1e-9}}};
    run_stream_layer_stats(f, 2, rows, 2);
    run_stream_diverged(f, 3, INFINITY);
    run_stream_end(f, &(FinalRow){.status = "diverged", .has_result = true, .steps = 3, .test_acc = NAN,
                                  .test_loss = NAN, .train_loss = INFINITY});
    fclose(f);
    cr_assert_eq(apply_all(text), 9);
    free(text);
    char buf[256];
    cr_assert_str_eq(text_at("SELECT device FROM runs", buf, sizeof buf), "cuda:0 NVIDIA H200 \"quoted\"");
    cr_assert_eq(real_at("SELECT loss FROM steps WHERE step=0"), third, "a double is sent to its last bit");
    cr_assert_eq(real_at("SELECT lr FROM steps WHERE step=0"), tiny);
    cr_assert_str_eq(text_at("SELECT nonfinite FROM steps WHERE step=1", buf, sizeof buf), "loss=nan");
    cr_assert_str_eq(text_at("SELECT nonfinite FROM steps WHERE step=2", buf, sizeof buf), "loss=-inf");
    cr_assert_eq(real_at("SELECT train_loss FROM epochs"), m.train_loss);
    cr_assert_eq(real_at("SELECT loss_gap FROM epochs"), m.loss_gap);
    cr_assert(isnan(real_at("SELECT noise_scale FROM epochs")), "not measured stays NULL");
    cr_assert_str_eq(text_at("SELECT nonfinite FROM epochs", buf, sizeof buf), "test_loss=inf");
    cr_assert_eq(real_at("SELECT test_loss FROM evals"), third);
    cr_assert_eq(real_at("SELECT count(*) FROM layer_stats"), 2);
    cr_assert_str_eq(text_at("SELECT name || ' ' || kind FROM layer_stats WHERE param=1", buf, sizeof buf),
                     "fc.bias bias");
    cr_assert_eq(real_at("SELECT w_norm FROM layer_stats WHERE param=1"), third);
    cr_assert_str_eq(text_at("SELECT nonfinite FROM layer_stats WHERE param=1", buf, sizeof buf),
                     "local_rate=nan,eff_rate=inf");
    cr_assert(isnan(real_at("SELECT ratio FROM layer_stats WHERE param=0")), "zero gradient: no ratio");
    cr_assert_str_eq(text_at("SELECT status || ' ' || steps || ' ' || diverged_step FROM runs", buf, sizeof buf),
                     "diverged 3 3");
    cr_assert_str_eq(text_at("SELECT nonfinite FROM runs", buf, sizeof buf), "diverged_loss=inf");
}

Test(run_stream, a_failed_end_keeps_its_reason)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    run_stream_end(f, &(FinalRow){.status = "failed", .error = "data/x.bin:3: \"bad\"\nsecond line"});
    fclose(f);
    apply_all(text);
    free(text);
    char buf[256];
    cr_assert_str_eq(text_at("SELECT status || ': ' || error FROM runs", buf, sizeof buf),
                     "failed: data/x.bin:3: \"bad\"\nsecond line");
}

Test(run_stream, a_bad_record_is_refused_by_name_and_writes_nothing)
{
    static const struct {
        const char *line, *says;
    } BAD[] = {
        {"@bigbatch {\"record\":\"step\",\"epoch\":1,\"step\":0,\"lr\":0.1}", "step record has no number \"loss\""},
        {"@bigbatch {\"record\":\"step\",\"epoch\":1,\"step\":0.5,\"loss\":1,\"lr\":0.1}", "no integer \"step\""},
        {"@bigbatch {\"record\":\"step\",\"epoch\":1,\"step\":0,\"loss\":\"NaN\",\"lr\":0.1}", "no number \"loss\""},
        {"@bigbatch {\"record\":\"start\",\"device\":7}", "start record has no string \"device\""},
        {"@bigbatch {\"record\":\"snapshot\"}", "unknown kind \"snapshot\""},
        {"@bigbatch {\"record\":\"checkpoint\"}", "checkpoint record has no string \"path\""},
        {"@bigbatch {\"kind\":\"step\"}", "no string \"record\""},
        {"@bigbatch [1, 2]", "not a JSON object"},
        {"@bigbatch {\"record\":\"step\"", "not a JSON object"},
        {"@bigbatch {\"record\":\"end\",\"status\":\"won\"}", "status \"won\", not complete"},
        {"@bigbatch {\"record\":\"end\",\"status\":\"failed\"}", "end record has no string \"error\""},
        {"@bigbatch {\"record\":\"layer_stats\",\"step\":1,\"params\":[{\"name\":\"w\",\"kind\":\"conv\"}]}",
         "no number \"w_norm\""},
        {"@bigbatch {\"record\":\"layer_stats\",\"step\":1,\"params\":{}}", "no array \"params\""},
        {"epoch 1 done", "prefix"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        Error err = {{0}};
        RecordEffect fx;
        cr_expect_eq(run_stream_apply(&store, "r1", BAD[i].line, &fx, &err), 1, "%s: accepted", BAD[i].line);
        int ended = fx.ended;
        cr_expect(strstr(err.msg, BAD[i].says), "%s: said '%s', not '%s'", BAD[i].line, err.msg, BAD[i].says);
        cr_expect_eq(ended, 0);
    }
    cr_assert_eq(real_at("SELECT (SELECT count(*) FROM steps) + (SELECT count(*) FROM layer_stats)"), 0);
    char buf[64];
    cr_assert_str_eq(text_at("SELECT status FROM runs", buf, sizeof buf), "running");
}

/* A checkpoint record writes no row and hands its file and position to the sweep. */
Test(run_stream, checkpoint_record_hands_off)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    cr_assert(f);
    run_stream_checkpoint(f, "logs/r1.ckpt.step37", 37, 2);
    fclose(f);
    text[strcspn(text, "\n")] = '\0';
    RecordEffect fx;
    Error err = {{0}};
    cr_assert_eq(run_stream_apply(&store, "r1", text, &fx, &err), 0, "%s", err.msg);
    cr_expect_eq(fx.checkpoint_step, 37);
    cr_expect_str_eq(fx.checkpoint, "logs/r1.ckpt.step37");
    cr_expect_eq(fx.ended, 0);
    cr_expect_eq(run_stream_apply(&store, "r1", "@bigbatch {\"record\":\"checkpoint\",\"step\":-1,\"epoch\":0,\"path\":\"x\"}",
                                  &fx, &err), 1, "a negative step accepted");
    free(text);
}
