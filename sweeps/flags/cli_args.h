/* Strict parsing of numeric flag values, shared by the subcommands (cli/) and the train
 * flags (train_flags.c, which the experiment files use too, so it lives here, below both):
 * the whole argument must be a number in range, and the error names the flag. */
#ifndef BB_CLI_ARGS_H
#define BB_CLI_ARGS_H

#include "../../engine/base/input_limits.h"
#include "../../engine/base/util.h"

int cli_parse_double(const char *flag, const char *s, double *out, Error *err);
/* An integer in [min, max]; otherwise -1 with an error naming the flag and the range. */
int cli_parse_long(const char *flag, const char *s, long min, long max, long *out, Error *err);

#endif
