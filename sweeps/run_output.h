/* A run's standard output as its sweep reads it: record lines (run_stream.h) are written to
 * the results database, in one transaction per read and only while the sweep still holds the
 * run's claim; every other line goes to the run's log file, in the order it came. */
#ifndef BB_RUN_OUTPUT_H
#define BB_RUN_OUTPUT_H
#include <stdbool.h>
#include <stddef.h>

#include "claims.h"

typedef struct {
    int fd;           /* the read end of the run's stdout pipe, non-blocking; -1 once closed */
    int log_fd;       /* the run's log file, opened for appending */
    char *buf;        /* bytes read and not yet a whole line */
    size_t len, cap;
    long lines;       /* lines read so far, to name a bad one */
    bool ended;       /* the run's end record is written */
    bool lost;        /* the claim is no longer ours: the run must stop */
    bool refused;     /* a record could not be read: the run is failed with why it was refused */
    char checkpoint[1100];  /* the run's checkpoint (sweep --checkpoint-every), or "" */
    char handed[1200];      /* a checkpoint record's file, renamed to `checkpoint` once the rows
                             * before it are committed; "" when none waits */
} RunOutput;

typedef struct {
    Store *store;
    const ClaimOwner *owner;
    const char *run_id;
    int attempt;
} RunClaim;

/* checkpoint: where the run's checkpoints end up (NULL: it makes none); a checkpoint record
 * must name checkpoint.step<N>, which is renamed to it after the commit that holds the rows
 * sent before the record, so the file never stands ahead of the database. */
void run_output_init(RunOutput *o, int fd, int log_fd, const char *checkpoint);
/* Reads what the run has written so far (to_end: until the pipe closes, after the run
 * exited) and handles its whole lines. 0, or -1 with err when the store or the log fails. */
int run_output_read(RunOutput *o, const RunClaim *c, bool to_end, Error *err);
/* Closes the pipe and the log. */
void run_output_close(RunOutput *o);

#endif
