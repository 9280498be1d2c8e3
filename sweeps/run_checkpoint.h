/* A sweep's checkpoints (sweep --checkpoint-every): each run saves to <logs>/<run>.ckpt, by way
 * of <run>.ckpt.step<N> files that the sweep renames once the rows sent before them are
 * committed (run_output.h), so the file never stands ahead of the database. A later attempt
 * resumes from it: the rows before its position stay, the later ones go, and the run goes on
 * from there with train --resume. */
#ifndef BB_RUN_CHECKPOINT_H
#define BB_RUN_CHECKPOINT_H
#include <stdbool.h>
#include <stddef.h>

#include "store.h"

/* "30m", "90s", "2h", "1.5h" (a duration), "2e" (epochs); a bare number is seconds.
 * 0 with *seconds or *epochs set (the other 0), or -1 with err naming the flag. */
int checkpoint_every_parse(const char *flag, const char *text, double *seconds, int *epochs, Error *err);

/* <log_dir>/<run_id>.ckpt */
void run_checkpoint_path(const char *log_dir, const char *run_id, char *out, size_t len);

/* Before an attempt of run_id: removes what an interrupted hand-off left (<path>.step*), then,
 * when `path` holds a checkpoint that opens, keeps the run's rows before its position and sets
 * *resume; otherwise clears all the run's rows (a checkpoint that does not open is removed and
 * said in `said`, "" otherwise). In one transaction of s. 0, or -1 with err. */
int run_checkpoint_prepare(Store *s, const char *path, const char *run_id, const char *engine_version,
                           bool *resume, char *said, size_t said_len, Error *err);

#endif
