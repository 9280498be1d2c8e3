/* Strict parsing of numeric flag values, shared by the subcommands (cli/) and the train
 * flags (train_flags.c, which the experiment files use too, so it lives here, below both):
 * the whole argument must be a number in range, and the error names the flag. */
#ifndef BB_CLI_ARGS_H
#define BB_CLI_ARGS_H

#include "util.h"

/* The largest values the integer flags accept, wherever they are given (train, sweep, bench,
 * experiment files): beyond them a run cannot be meant, and sizes computed from them stay far
 * from overflow. */
enum {
    BB_MAX_THREADS = 1024,     /* --threads: one process's threads */
    BB_MAX_BATCH = 1 << 20,    /* --batch, --eval-batch, --micro-batch, --base-batch: 1,048,576 */
    BB_MAX_IMAGE_SIDE = 16384, /* --image-size and a decoded image's width or height */
    BB_MAX_PROCESSES = 65536,  /* --ranks, --workers, --workers-emulated */
};

int cli_parse_double(const char *flag, const char *s, double *out, Error *err);
/* An integer in [min, max]; otherwise -1 with an error naming the flag and the range. */
int cli_parse_long(const char *flag, const char *s, long min, long max, long *out, Error *err);

#endif
