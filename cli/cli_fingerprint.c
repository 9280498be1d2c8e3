/* `bigbatch fingerprint [--db PATH]`: the numerics fingerprint of this engine (sweeps/fingerprint.h),
 * printed, or recorded in a results database's meta table (what `make demo-archive` does
 * before it archives the demo). */
#include <stdio.h>

#include "../engine/base/version.h"
#include "../sweeps/fingerprint.h"
#include "../sweeps/flags/flag_table.h"
#include "cli.h"

static const Flag FLAGS[] = {
    {"db", "PATH", "record it, with the engine version, in this database's meta table", NULL, F_STR(0)},
    FLAG_HELP_ROW,
};

#define UNKNOWN "unknown option or missing value '%s' (bigbatch %s --help)"

static const FlagTable TABLE = {
    "fingerprint", FLAGS, FLAG_COUNT(FLAGS), sizeof(const char *), NULL,
    "usage: bigbatch fingerprint [--db PATH]\n"
    "Trains a short fixed run (LeNet on Fashion-MNIST's first 1,024 images, 8 steps of\n"
    "momentum SGD and 8 of LARS, one thread) and prints the FNV-1a 64 hash of its\n"
    "checkpoints' tensors and the platform it depends on (OpenBLAS kernels / vector\n"
    "ISA). Same fingerprint, same numerics: an archive stamped with today's is what\n"
    "today's engine makes.\n",
    NULL, 0, UNKNOWN, UNKNOWN, NULL, 0, 0};

void fingerprint_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

int cli_fingerprint(int argc, char **argv)
{
    const char *db = NULL;
    Error err = {{0}};
    int rest;
    int parsed = flag_table_parse(&TABLE, argc, argv, &db, &rest, &err);
    if (parsed == 1) flag_table_usage(&TABLE, stdout);
    if (parsed < 0) fprintf(stderr, "bigbatch fingerprint: %s\n", err.msg);
    if (parsed != 0) return parsed < 0 ? 2 : 0;
    Fingerprint fp;
    if (fingerprint_compute(&fp, &err) != 0 || (db && fingerprint_stamp(db, &fp, &err) != 0)) {
        fprintf(stderr, "bigbatch fingerprint: %s\n", err.msg);
        return 1;
    }
    printf("%s %s %s\n", fp.hex, fp.platform, bigbatch_version());
    return 0;
}
