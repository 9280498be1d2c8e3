/* An attempt's start from its run's last checkpoint (run_checkpoint.h). */
#include "run_checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/train/checkpoint.h"
#include "run_rows.h"

int checkpoint_every_parse(const char *flag, const char *text, double *seconds, int *epochs, Error *err)
{
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    static const struct { const char *unit; double seconds; } UNITS[] = {
        {"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"e", 0}};
    size_t u = 0;
    while (end != text && u < sizeof UNITS / sizeof UNITS[0] && strcmp(end, UNITS[u].unit)) u++;
    *seconds = 0;
    *epochs = 0;
    if (errno || end == text || u == sizeof UNITS / sizeof UNITS[0] || !isfinite(x) || x <= 0) {
        error_set(err, "%s: '%s' is not a positive duration (30m, 90s, 2h) or a number of epochs (2e)", flag, text);
        return -1;
    }
    if (UNITS[u].seconds > 0) {
        *seconds = x * UNITS[u].seconds;
        return 0;
    }
    if (x != floor(x) || x > 1e6) {
        error_set(err, "%s: '%s': epochs are a whole number (2e)", flag, text);
        return -1;
    }
    *epochs = (int)x;
    return 0;
}

void run_checkpoint_path(const char *log_dir, const char *run_id, char *out, size_t len)
{
    snprintf(out, len, "%s/%s.ckpt", log_dir, run_id);
}

/* Unlinks <path>.step* (hand-offs an interrupted attempt or sweep left, and their .tmp). */
static int remove_handoffs(const char *path, Error *err)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? path + (slash - dir) + 1 : path;
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d) {
        error_set(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    char prefix[1100];
    snprintf(prefix, sizeof prefix, "%s.step", base);
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        char file[2200];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        if (unlink(file) != 0 && errno != ENOENT) {
            error_set(err, "%s: %s", file, strerror(errno));
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

/* The checkpoint's position; false when there is none, or it does not open (then removed). */
static bool usable(const char *path, TrainPosition *pos, char *said, size_t said_len)
{
    if (access(path, F_OK) != 0) return false;
    Error why = {{0}};
    if (checkpoint_position(path, pos, &why) == 0) return true;
    snprintf(said, said_len, "its checkpoint does not open, removed: %s", why.msg);
    unlink(path);
    return false;
}

int run_checkpoint_prepare(Store *s, const char *path, const char *run_id, const char *engine_version,
                           bool *resume, char *said, size_t said_len, Error *err)
{
    said[0] = '\0';
    *resume = false;
    if (remove_handoffs(path, err)) return -1;
    TrainPosition pos;
    *resume = usable(path, &pos, said, said_len);
    if (store_begin(s, err)) return -1;
    int rc = *resume ? run_rows_clear_after(s, run_id, pos.step, pos.epoch, engine_version, err)
                     : run_rows_clear(s, run_id, engine_version, err);
    if (rc || store_commit(s, err)) {
        store_rollback(s);
        return -1;
    }
    if (*resume) snprintf(said, said_len, "resumed from its checkpoint after step %ld (epoch %d%s)", pos.step,
                          pos.epoch + (pos.epoch_step > 0), pos.epoch_step > 0 ? ", mid-epoch" : " done");
    return 0;
}
