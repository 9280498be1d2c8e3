/* A command's flags as one table that drives its parsing (getopt_long), its ranges, its
 * --help text and its Markdown table in docs/cli.md: every command's flags are a FlagTable
 * (train_flags.c, and one per command in cli/). A flag's value goes into a caller's struct
 * (the target) at an offset, by type, and then through an optional setter. This file is the
 * only one that calls getopt_long (tests/cli/layering.sh checks). */
#ifndef BB_FLAG_TABLE_H
#define BB_FLAG_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../../engine/base/util.h"

typedef struct Flag Flag;

/* The flag being set: its row and its "--name", for setters and their messages. */
typedef struct {
    const Flag *f;
    char flag[48];
} FlagCall;

/* After the type's store: 0, or -1 with err. value is NULL for a switch. */
typedef int (*FlagSetter)(void *target, const FlagCall *call, const char *value, Error *err);

/* A range of numbers: lo < x or lo <= x, x < hi or x <= hi. The error is "--flag: X bad",
 * X as %g, or as given in quotes when `quote`. */
typedef struct {
    double lo, hi;
    bool lo_open, hi_open;
    const char *bad;
    bool quote;
} Range;

typedef enum {
    T_NONE,   /* the setter does it all */
    T_STR,    /* const char *, pointing into argv */
    T_INT,    /* int, an integer in [min, max] */
    T_LONG,   /* long, an integer in [min, max] */
    T_ULL,    /* unsigned long long, an integer in [min, max] */
    T_DOUBLE, /* double, a finite number, within `range` when there is one */
    T_SWITCH, /* bool, set to true; the flag takes no value */
    T_CHOICE, /* int, the index of the value in `names` */
    T_CHARS,  /* char[], printed only (its setter fills it) */
    T_HELP,   /* --help: parsing stops and says so; the flag takes no value */
    T_ACTION, /* no value, nothing stored: the setter alone (T_NONE's switch) */
} FlagType;

struct Flag {
    const char *name;     /* without "--"; NULL: a row that only prints `help` as a heading */
    const char *arg;      /* the value's name in the help; NULL with T_SWITCH */
    const char *help;     /* lines separated by '\n'; NULL: not in the help (--help) */
    const char *dflt;     /* printf format of the default value at `at`, printed as " [...]"
                             after the help; NULL: none (the help may say it in words) */
    const char *dflt_doc; /* the default in the docs' words, where `dflt` prints this machine's */
    FlagType type;
    size_t at;            /* offsetof(the target, ...) */
    long min, max;        /* T_INT, T_LONG, T_ULL: the values accepted */
    FlagSetter set;       /* after `type`'s store; NULL: none */
    const Range *range;       /* T_DOUBLE: the values accepted; NULL: any */
    const char *const *names; /* T_CHOICE: the values, in the order of the enum they map to */
    const char *expected;     /* the values as the "is not one of" error lists them */
    char *(*choices)(char *buf, size_t len); /* values from a name table, printed first */
};

typedef struct {
    const char *command;  /* "bench": the "(bigbatch bench --help)" of the messages */
    const Flag *flags;
    int n_flags;
    size_t size;                    /* the target's size */
    void (*defaults)(void *target); /* the defaults the help prints; NULL: all zero */
    const char *head, *tail;        /* --help's text before and after the flags; NULL: none */
    int width;                      /* the flag column of --help; 0: 22 */
    const char *unknown; /* the unknown-flag error, a format of the flag then the command;
                            NULL: "unknown option '%s' (bigbatch %s --help)" */
    const char *missing; /* the error of a flag without its value, as `unknown`; NULL: the
                            unknown-flag error */
    /* The arguments after the flags: min_operands to max_operands of them (max -1: any number),
     * `operands` naming them when too few are given ("the experiment file": "give the experiment
     * file (bigbatch sweep --help)"). All zero: none. */
    const char *operands;
    int min_operands, max_operands;
} FlagTable;

/* The values of an on|off choice into an int: 0 off, 1 on. */
extern const char *const FLAG_OFF_ON[];

#define FLAG_COUNT(rows) ((int)(sizeof(rows) / sizeof((rows)[0])))

/* Row builders: where the value goes, by type. */
#define FLAG_HEADING(text) {.help = text}
#define F_STR(at_) .type = T_STR, .at = at_
#define F_INT(at_, min_, max_) .type = T_INT, .at = at_, .min = min_, .max = max_
#define F_LONG(at_, min_, max_) .type = T_LONG, .at = at_, .min = min_, .max = max_
#define F_ULL(at_, min_) .type = T_ULL, .at = at_, .min = min_, .max = LONG_MAX
#define F_DBL(at_) .type = T_DOUBLE, .at = at_
#define F_SWITCH(at_) .type = T_SWITCH, .at = at_
#define F_CHOICE(at_, names_, expected_) .type = T_CHOICE, .at = at_, .names = names_, .expected = expected_
#define F_RANGE(lo, hi, lo_open, hi_open, bad) .range = &(const Range){lo, hi, lo_open, hi_open, bad, false}
#define F_RANGE_Q(lo, hi, lo_open, hi_open, bad) .range = &(const Range){lo, hi, lo_open, hi_open, bad, true}
#define FLAG_HELP_ROW {"help", NULL, NULL, NULL, .type = T_HELP}

/* Parses argv (argv[0] skipped) into target: 0, 1 for --help, -1 with err (also for fewer or
 * more arguments after the flags than the table takes). *rest: the first argument that is no
 * flag (getopt_long moves them all to the end), argc when none. */
int flag_table_parse(const FlagTable *t, int argc, char **argv, void *target, int *rest, Error *err);
/* head, the flags under their headings with their help, defaults and ranges, then tail. */
void flag_table_usage(const FlagTable *t, FILE *out);
/* The flags as Markdown tables, one per heading (docs/cli.md, bigbatch help --markdown). */
void flag_table_markdown(const FlagTable *t, FILE *out);
/* 1: `--name VALUE`, 0: a switch without a value, -1: not one of the table's. */
int flag_table_takes_value(const FlagTable *t, const char *name);
/* The "is not one of" error of a choice: -1. */
int flag_bad_choice(const FlagCall *c, const char *value, Error *err);

/* Text appended to buf[len] at `used`, each piece after `sep` (then "" for the rest). */
typedef struct {
    char *buf;
    size_t len, used;
    const char *sep;
} Said;

void said(Said *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
