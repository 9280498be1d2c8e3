#include "cli_args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int cli_parse_double(const char *flag, const char *s, double *out, Error *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        error_set(err, "%s: '%s' is not a number", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_long(const char *flag, const char *s, long min, long max, long *out, Error *err)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end) {
        error_set(err, "%s: '%s' is not an integer", flag, s);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        if (max == LONG_MAX) error_set(err, "%s: %s is out of range (an integer >= %ld)", flag, s, min);
        else error_set(err, "%s: %s is out of range (an integer from %ld to %ld)", flag, s, min, max);
        return -1;
    }
    *out = v;
    return 0;
}
