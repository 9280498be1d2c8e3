/* A run's stdout, split into records for the database and lines for its log (run_output.h). */
#include "run_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_stream.h"

void run_output_init(RunOutput *o, int fd, int log_fd, const char *checkpoint)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->log_fd = log_fd;
    snprintf(o->checkpoint, sizeof o->checkpoint, "%s", checkpoint ? checkpoint : "");
}

static int log_line(RunOutput *o, const char *line, size_t n, Error *err)
{
    const char nl = '\n';
    for (int part = 0; part < 2; part++) {
        const char *p = part ? &nl : line;
        size_t left = part ? 1 : n;
        while (left > 0) {
            ssize_t w = write(o->log_fd, p, left);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                error_set(err, "writing a run's log: %s", strerror(errno));
                return -1;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    return 0;
}

/* A checkpoint record: its file must be <checkpoint>.step<step>, nothing a run could name
 * elsewhere; it waits for the commit. The one it supersedes in the same read is not needed. */
static int note_checkpoint(RunOutput *o, const RecordEffect *fx, Error *why)
{
    char want[1200];
    int n = o->checkpoint[0] ? snprintf(want, sizeof want, "%s.step%ld", o->checkpoint, fx->checkpoint_step) : -1;
    if (n < 0 || (size_t)n >= sizeof want || strcmp(want, fx->checkpoint) != 0) {
        error_set(why, "a checkpoint record names %s, not this run's checkpoint%s%s", fx->checkpoint,
                  o->checkpoint[0] ? " " : "", o->checkpoint[0] ? want : " (the sweep asked for none)");
        return 1;
    }
    if (o->handed[0] && strcmp(o->handed, want) != 0) unlink(o->handed);
    memcpy(o->handed, want, sizeof want);
    return 0;
}

/* After the commit: the handed-off checkpoint becomes the run's, durably (the directory too).
 * A failure leaves the last one in place, which is still consistent: it is said in the log. */
static int promote_checkpoint(RunOutput *o, Error *err)
{
    char note[2600];
    if (rename(o->handed, o->checkpoint) != 0) {
        snprintf(note, sizeof note, "bigbatch sweep: cannot rename %s to %s: %s", o->handed, o->checkpoint,
                 strerror(errno));
        o->handed[0] = '\0';
        return log_line(o, note, strlen(note), err);
    }
    o->handed[0] = '\0';
    char dir[1200];
    snprintf(dir, sizeof dir, "%s", o->checkpoint);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) slash[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        snprintf(note, sizeof note, "bigbatch sweep: cannot sync the folder of %s: %s", o->checkpoint, strerror(errno));
        if (fd >= 0) close(fd);
        return log_line(o, note, strlen(note), err);
    }
    close(fd);
    return 0;
}

/* One record, inside the transaction `*open` says is begun (begun here at the first record of
 * a read, after checking the claim). A record the sweep cannot read fails the run. */
static int handle_record(RunOutput *o, const RunClaim *c, const char *line, bool *open, Error *err)
{
    if (o->lost || o->ended || o->refused) return 0; /* nothing more of this attempt is written */
    if (!*open) {
        bool held;
        if (store_begin(c->store, err)) return -1;
        *open = true;
        if (claims_held(c->store, c->owner, c->run_id, c->attempt, &held, err)) return -1;
        if (!held) {
            o->lost = true;
            return 0;
        }
    }
    Error why = {{0}};
    RecordEffect fx;
    int rc = run_stream_apply(c->store, c->run_id, line, &fx, &why);
    if (rc < 0) {
        *err = why;
        return -1;
    }
    if (rc == 0 && fx.checkpoint_step >= 0) rc = note_checkpoint(o, &fx, &why);
    o->ended = fx.ended;
    if (rc == 0) return fx.ended ? claims_note_recorded_end(c->store, c->run_id, c->attempt, err) : 0;
    o->refused = true;
    char reason[700];
    snprintf(reason, sizeof reason, "line %ld of the run's output is not a record this sweep reads: %s", o->lines,
             why.msg);
    FinalRow f = {.status = "failed", .error = reason};
    if (run_rows_final(c->store, c->run_id, &f, err)) return -1;
    return claims_note_recorded_end(c->store, c->run_id, c->attempt, err);
}

static int handle_line(RunOutput *o, const RunClaim *c, char *line, size_t n, bool *open, Error *err)
{
    o->lines++;
    line[n] = '\0';
    if (run_stream_is_record(line)) return handle_record(o, c, line, open, err);
    return log_line(o, line, n, err);
}

/* Handles the whole lines in buf (and, at the end of the stream, the last part one). */
static int handle_lines(RunOutput *o, const RunClaim *c, bool at_eof, Error *err)
{
    bool open = false;
    int rc = 0;
    size_t start = 0;
    for (;;) {
        char *nl = memchr(o->buf + start, '\n', o->len - start);
        /* a line too long to hold is cut: what is held is handled as a line of its own */
        bool cut = !nl && o->len - start >= RUN_STREAM_MAX_LINE;
        if (!nl && !cut && !(at_eof && start < o->len)) break;
        size_t n = nl ? (size_t)(nl - (o->buf + start)) : o->len - start;
        if ((rc = handle_line(o, c, o->buf + start, n, &open, err)) != 0) break;
        start += n + (nl ? 1 : 0);
    }
    memmove(o->buf, o->buf + start, o->len - start);
    o->len -= start;
    if (open) {
        if (rc == 0 && !o->lost) rc = store_commit(c->store, err);
        else store_rollback(c->store);
    }
    if (rc == 0 && !o->lost && o->handed[0]) return promote_checkpoint(o, err);
    o->handed[0] = '\0'; /* not committed: the file stays behind, and is not the run's */
    return rc;
}

int run_output_read(RunOutput *o, const RunClaim *c, bool to_end, Error *err)
{
    bool eof = false;
    while (o->fd >= 0) {
        if (o->cap - o->len < 65536 + 1) {
            o->cap = o->cap ? 2 * o->cap : 1 << 17;
            o->buf = xrealloc(o->buf, o->cap, "a run's output");
        }
        ssize_t r = read(o->fd, o->buf + o->len, o->cap - o->len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!to_end) break;
            /* the run exited, but a process it started still holds the pipe: do not wait for it */
            eof = true;
            break;
        }
        if (r < 0) {
            error_set(err, "reading run %s's output: %s", c->run_id, strerror(errno));
            return -1;
        }
        if (r == 0) {
            eof = true;
            break;
        }
        o->len += (size_t)r;
        /* a long stream is handled as it comes, not held whole */
        if (o->len >= RUN_STREAM_MAX_LINE && handle_lines(o, c, false, err)) return -1;
    }
    return handle_lines(o, c, eof, err);
}

void run_output_close(RunOutput *o)
{
    if (o->fd >= 0) close(o->fd);
    if (o->log_fd >= 0) close(o->log_fd);
    free(o->buf);
    o->fd = o->log_fd = -1;
    o->buf = NULL;
    o->len = o->cap = 0;
}
