/* The numerics fingerprint: a short, fixed training run's checkpoint, hashed. Two engines
 * with the same fingerprint on a platform sum in the same order there, so an archive made
 * by one is what the other would make; a change of any kernel's rounding changes it.
 * An archive records it (meta: engine_version, numerics_fingerprint, fingerprint_platform),
 * and tests/cli/fingerprint.sh fails when today's engine's differs from the demo archive's. */
#ifndef BB_FINGERPRINT_H
#define BB_FINGERPRINT_H
#include <stddef.h>

#include "../engine/base/util.h"

typedef struct {
    char hex[17];         /* FNV-1a 64 over the checkpoints' tensor bytes */
    char platform[64];    /* what the bits depend on besides the code: "SkylakeX/avx512" */
} Fingerprint;

/* Trains the fixed runs (LeNet on Fashion-MNIST's first 1,024 images, 8 steps of momentum
 * SGD and 8 of LARS, one thread) in this process; scratch files in $TMPDIR. */
int fingerprint_compute(Fingerprint *fp, Error *err);
/* Writes it, with this engine's version and the machine's core count (what the README's
 * demo time was measured on), into the database's meta table. */
int fingerprint_stamp(const char *db, const Fingerprint *fp, Error *err);
/* What a database's meta says (empty strings when it was never stamped): 0, or -1 with err. */
int fingerprint_read(const char *db, Fingerprint *fp, char *engine, size_t engine_len, Error *err);

#endif
