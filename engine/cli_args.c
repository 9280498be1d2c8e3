#include "cli_args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int cli_parse_double(const char *cmd, const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        fprintf(stderr, "bigbatch %s: %s: '%s' is not a number\n", cmd, flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_long(const char *cmd, const char *flag, const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min) {
        fprintf(stderr, "bigbatch %s: %s: '%s' is not an integer >= %ld\n", cmd, flag, s, min);
        return -1;
    }
    *out = v;
    return 0;
}
