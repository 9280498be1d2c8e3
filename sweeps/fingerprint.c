/* The numerics fingerprint (fingerprint.h). */
#include "fingerprint.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas_core.h"
#include "store.h"
#include "../engine/train/train.h"
#include "flags/train_flags.h"
#include "../engine/base/version.h"

/* The fixed runs: what each adds to the common flags. Both optimizers' arithmetic counts:
 * LARS reads norms that SGD never takes. */
static const char *const COMMON[] = {"train", "--model", "lenet", "--data", "fashion-mnist", "--train-subset", "1024",
                                     "--test-subset", "256", "--batch", "128", "--epochs", "1", "--momentum", "0.9",
                                     "--weight-decay", "5e-4", "--seed", "1", "--threads", "1", "--quiet"};
static const char *const RUNS[][4] = {
    {"--lr", "0.05", "--opt", "sgd"},
    {"--lr", "2", "--opt", "lars"},
};
enum { N_COMMON = sizeof COMMON / sizeof COMMON[0], N_RUNS = sizeof RUNS / sizeof RUNS[0] };

static void platform_name(char *out, size_t len)
{
#if defined(__AVX512F__)
    const char *isa = "avx512";
#elif defined(__AVX2__)
    const char *isa = "avx2";
#else
    const char *isa = "generic";
#endif
    snprintf(out, len, "%s/%s", blas_core_name(), isa);
}

/* FNV-1a 64 over the tensor bytes of a safetensors file (after its 8-byte header length and
 * JSON header, which names the engine version). */
static int hash_checkpoint(const char *path, uint64_t *h, Error *err)
{
    FILE *f = fopen(path, "rb");
    unsigned char len8[8];
    if (!f || fread(len8, 1, 8, f) != 8) {
        error_set(err, "%s: cannot read the fingerprint's checkpoint", path);
        if (f) fclose(f);
        return -1;
    }
    uint64_t header = 0;
    for (int i = 7; i >= 0; i--) header = header << 8 | len8[i];
    if (fseek(f, (long)header, SEEK_CUR) != 0) {
        error_set(err, "%s: a header of %llu bytes", path, (unsigned long long)header);
        fclose(f);
        return -1;
    }
    unsigned char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) *h = fnv1a64_bytes(*h, buf, got);
    fclose(f);
    return 0;
}

static int train_one(const char *const extra[4], const char *save, Error *err)
{
    const char *argv[N_COMMON + 6];
    int argc = 0;
    for (int i = 0; i < N_COMMON; i++) argv[argc++] = COMMON[i];
    for (int i = 0; i < 4; i++) argv[argc++] = extra[i];
    argv[argc++] = "--save";
    argv[argc++] = save;
    TrainFlags flags;
    if (train_flags_parse(argc, (char **)argv, &flags, err) != 0) return -1;
    TrainResult res;
    return train_run(&flags.cfg, NULL, &res, err);
}

int fingerprint_compute(Fingerprint *fp, Error *err)
{
    const char *dir = getenv("TMPDIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/bigbatch-fingerprint-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        error_set(err, "%s: cannot make a scratch file for the fingerprint", path);
        return -1;
    }
    close(fd);
    uint64_t h = 14695981039346656037ULL;
    int rc = 0;
    for (int r = 0; r < N_RUNS && rc == 0; r++) rc = train_one(RUNS[r], path, err) || hash_checkpoint(path, &h, err);
    unlink(path);
    if (rc) return -1;
    snprintf(fp->hex, sizeof fp->hex, "%016llx", (unsigned long long)h);
    platform_name(fp->platform, sizeof fp->platform);
    return 0;
}

int fingerprint_stamp(const char *db, const Fingerprint *fp, Error *err)
{
    Store s;
    if (store_open(&s, db, false, err) != 0) return -1;
    char cores[16];
    snprintf(cores, sizeof cores, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    const char *keys[] = {"engine_version", "numerics_fingerprint", "fingerprint_platform", "host_cores"};
    const char *vals[] = {bigbatch_version(), fp->hex, fp->platform, cores};
    sqlite3_stmt *st;
    int rc = store_prepare(&s, &st, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)", err);
    for (int i = 0; i < 4 && rc == 0; i++) {
        sqlite3_bind_text(st, 1, keys[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, vals[i], -1, SQLITE_STATIC);
        rc = store_step_done(&s, st, "recording the fingerprint", err);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    store_close(&s);
    return rc;
}

int fingerprint_read(const char *db, Fingerprint *fp, char *engine, size_t engine_len, Error *err)
{
    memset(fp, 0, sizeof *fp);
    if (engine_len) engine[0] = 0;
    Store s;
    if (store_open(&s, db, true, err) != 0) return -1;
    sqlite3_stmt *st;
    int rc = store_prepare(&s, &st, "SELECT key, value FROM meta", err);
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0), *v = (const char *)sqlite3_column_text(st, 1);
        if (!k || !v) continue;
        if (!strcmp(k, "numerics_fingerprint")) snprintf(fp->hex, sizeof fp->hex, "%s", v);
        else if (!strcmp(k, "fingerprint_platform")) snprintf(fp->platform, sizeof fp->platform, "%s", v);
        else if (!strcmp(k, "engine_version") && engine_len) snprintf(engine, engine_len, "%s", v);
    }
    sqlite3_finalize(st);
    store_close(&s);
    return rc;
}
