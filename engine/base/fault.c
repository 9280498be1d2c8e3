/* BIGBATCH_FAULT's state and its one check (fault.h). */
#include "fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

static const char *const POINT_NAMES[FAULT_N_POINTS] = {"write", "fsync", "alloc", "dbwrite", "dbsync"};

/* The test hook: set once by fault_init before any store or checkpoint call (see fault.h). */
static struct {
    bool on, random;
    FaultPoint point;       /* write:N and the like: which point */
    long nth, seen;         /* fail the nth call at point (1-based); calls seen so far */
    double p;               /* random: the probability of each call failing */
    Rng rng;
    long fired;
} fault;

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1) return -1;
    *out = v;
    return 0;
}

static int parse_random(const char *rest, Error *err)
{
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(rest, &end, 10);
    double p = *end == ':' ? strtod(end + 1, &end) : -1;
    if (errno || end == rest || *end || !(p >= 0 && p <= 1)) {
        error_set(err, "BIGBATCH_FAULT: 'random:%s' is not random:SEED:P (P from 0 to 1)", rest);
        return -1;
    }
    fault.random = true;
    fault.p = p;
    rng_seed(&fault.rng, seed, 59);
    return 0;
}

/* At exit, how many faults fired: SQLite absorbs some (a checkpoint at close that fails keeps
 * the WAL), so a test cannot tell from errors alone whether its Nth call was reached. */
static void report_fired(void)
{
    if (fault.on && fault.fired) fprintf(stderr, "BIGBATCH_FAULT: %ld injected fault(s) fired\n", fault.fired);
}

static int watch_exit(Error *err)
{
    if (atexit(report_fired) == 0) return 0;
    error_set(err, "BIGBATCH_FAULT: cannot register its report at exit");
    fault.on = false;
    return -1;
}

int fault_init(const char *spec, Error *err)
{
    memset(&fault, 0, sizeof fault);
    if (!spec || !*spec) return 0;
    fault.on = true;
    const char *colon = strchr(spec, ':');
    size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (colon && name_len == 6 && !strncmp(spec, "random", 6))
        return parse_random(colon + 1, err) ? -1 : watch_exit(err);
    for (int p = 0; colon && p < FAULT_N_POINTS; p++) {
        if (strlen(POINT_NAMES[p]) != name_len || strncmp(spec, POINT_NAMES[p], name_len)) continue;
        fault.point = (FaultPoint)p;
        if (parse_long(colon + 1, &fault.nth) == 0) return watch_exit(err);
    }
    error_set(err, "BIGBATCH_FAULT: '%s' is not write:N, fsync:N, alloc:N, dbwrite:N, dbsync:N (N from 1)"
                   " or random:SEED:P", spec);
    fault.on = false;
    return -1;
}

bool fault_should_fail(FaultPoint p)
{
    if (!fault.on) return false;
    bool fail = fault.random ? rng_uniform(&fault.rng) < fault.p : p == fault.point && ++fault.seen == fault.nth;
    if (!fail) return false;
    fault.fired++;
    errno = p == FAULT_ALLOC ? ENOMEM : EIO;
    return true;
}

bool fault_active(void) { return fault.on; }
long fault_fired(void) { return fault.fired; }
