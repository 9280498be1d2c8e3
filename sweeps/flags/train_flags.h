/* The flags of `bigbatch train` (also the keys of experiment files), from one table that
 * drives the parsing and the help text (train_flags.c). */
#ifndef BB_TRAIN_FLAGS_H
#define BB_TRAIN_FLAGS_H
#include <stdio.h>

#include "../../engine/train/train.h"
#include "../../engine/base/util.h"

typedef struct {
    TrainConfig cfg;          /* points into argv: keep argv alive */
    char preset_said[768];    /* what a LARS/LARC preset and the switches by hand set */
    const char *db;           /* --db: store the run in this SQLite database */
    const char *run_id;       /* --run-id: the run's row (claimed elsewhere); default: hash of the config */
    bool record_stream;       /* --record-stream: the rows as records on stdout, for the sweep */
} TrainFlags;

/* Parses and checks argv (argv[0] is skipped): 0, 1 for --help, -1 with err. */
int train_flags_parse(int argc, char **argv, TrainFlags *out, Error *err);
/* The flags, their help and their defaults, under group headings (for train --help). */
void train_flags_usage(FILE *out);
/* The same as Markdown tables, one per heading (docs/cli.md's, by `bigbatch help --markdown train`). */
void train_flags_markdown(FILE *out);
/* 1: `--name VALUE`, 0: a switch without a value, -1: not a train flag. */
int train_flag_takes_value(const char *name);

#endif
