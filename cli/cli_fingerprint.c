/* `bigbatch fingerprint [--db PATH]`: the numerics fingerprint of this engine (sweeps/fingerprint.h),
 * printed, or recorded in a results database's meta table (what `make demo-archive` does
 * before it archives the demo). */
#include <stdio.h>
#include <string.h>

#include "../engine/base/version.h"
#include "../sweeps/fingerprint.h"
#include "cli.h"

int cli_fingerprint(int argc, char **argv)
{
    const char *db = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) {
            printf("usage: bigbatch fingerprint [--db PATH]\n"
                   "Trains a short fixed run (LeNet on Fashion-MNIST's first 1,024 images, 8 steps of\n"
                   "momentum SGD and 8 of LARS, one thread) and prints the FNV-1a 64 hash of its\n"
                   "checkpoints' tensors and the platform it depends on (OpenBLAS kernels / vector\n"
                   "ISA). Same fingerprint, same numerics: an archive stamped with today's is what\n"
                   "today's engine makes. --db PATH records it, with the engine version, in the\n"
                   "database's meta table.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--db") && i + 1 < argc) {
            db = argv[++i];
            continue;
        }
        fprintf(stderr, "bigbatch fingerprint: unknown option or missing value '%s' (bigbatch fingerprint --help)\n",
                argv[i]);
        return 2;
    }
    Fingerprint fp;
    Error err = {{0}};
    if (fingerprint_compute(&fp, &err) != 0 || (db && fingerprint_stamp(db, &fp, &err) != 0)) {
        fprintf(stderr, "bigbatch fingerprint: %s\n", err.msg);
        return 1;
    }
    printf("%s %s %s\n", fp.hex, fp.platform, bigbatch_version());
    return 0;
}
