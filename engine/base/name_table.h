/* One lookup for every table of named rows (models, data sets, optimizers, figures, devices,
 * precisions, commands, ...): each module keeps its table, and finding a row, listing the names
 * for help and docs, and the error for an unknown name are written here once
 * (tests/cli/name_tables.sh fails on a second copy of the lookup). */
#ifndef BB_NAME_TABLE_H
#define BB_NAME_TABLE_H
#include <stddef.h>

#include "util.h"

/* A table of structs whose first member is `const char *name` (an array of `const char *` is
 * one too). A row whose name is NULL (a heading among flags) is skipped by all that follows. */
typedef struct {
    const void *rows;
    int count;
    size_t stride; /* sizeof one row */
} NameTable;
/* The initializer of a NameTable over a whole array: static const NameTable T = NAME_TABLE(ROWS); */
#define NAME_TABLE(array) {(array), (int)(sizeof(array) / sizeof((array)[0])), sizeof((array)[0])}

/* The row named `name` (NULL for none, also for a NULL name). */
const void *name_table_find(NameTable t, const char *name);
/* Its index, or -1. */
int name_table_index(NameTable t, const char *name);
/* "a, b or c": the names with `sep` between them and `last_sep` before the last, truncated to
 * fit buf (len bytes, terminated); returns buf. */
char *name_table_join(NameTable t, char *buf, size_t len, const char *sep, const char *last_sep);
/* Sets err to "unknown <what> '<name>' (<lead><names>)", the names joined with ", " and
 * `last_sep` before the last; returns -1. */
int name_table_unknown(NameTable t, const char *what, const char *name, const char *lead, const char *last_sep,
                       Error *err);

#endif
