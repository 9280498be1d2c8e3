/* `bigbatch merge OUT.db IN.db...` (sweeps/merge.h). */
#include <stdio.h>
#include <string.h>

#include "../sweeps/array.h"
#include "../sweeps/flags/flag_table.h"
#include "../sweeps/merge.h"
#include "cli.h"

/* `merge --array DB`: the job array's task databases (sweeps/array.h), every task ended. */
static int merge_array(const char *db)
{
    int merged, left;
    Error err = {{0}};
    if (array_fold(db, true, stdout, &merged, &left, &err)) {
        fprintf(stderr, "bigbatch merge --array: %s\n", err.msg);
        return 1;
    }
    printf("%s: %d task database%s merged, %d left\n", db, merged, merged == 1 ? "" : "s", left);
    return left ? 1 : 0;
}

static const Flag FLAGS[] = {
    {"array", "DB",
     "merge the databases a sweep's job array wrote (<DB without\n"
     ".db>.array/K.db, sweep --print-sbatch --array) into DB and remove\n"
     "them (one with a conflict is kept); once every task has ended\n"
     "(sbatch --dependency=afterany:JOBID)",
     NULL, F_STR(0)},
    FLAG_HELP_ROW,
};

static const FlagTable TABLE = {
    "merge", FLAGS, FLAG_COUNT(FLAGS), sizeof(const char *), NULL,
    "usage: bigbatch merge OUT.db IN.db [IN.db...]\n"
    "       bigbatch merge --array DB\n"
    "Combines results databases written by separate sweeps into OUT.db (created when\n"
    "absent). Runs are matched by their ids (the hash of their settings): a run OUT lacks is\n"
    "copied with all its rows; one finished in an input but not in OUT replaces OUT's; the\n"
    "same result twice is kept once; two different finished results of one run are a\n"
    "conflict, reported (OUT's kept) and the exit status is 1. Experiments are matched by\n"
    "name and scale and their run lists united. The inputs are only read.\n",
    NULL, 0, NULL, NULL, "OUT.db and at least one IN.db", 0, -1};

void merge_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* 0, 1 for --help, -1 with err; *array: --array's DB; *rest: OUT.db's index. */
static int parse_merge(int argc, char **argv, const char **array, int *rest, Error *err)
{
    *array = NULL;
    int rc = flag_table_parse(&TABLE, argc, argv, array, rest, err);
    if (rc != 0) return rc;
    if (*array && *rest < argc) {
        error_set(err, "--array DB merges one sweep's array, without '%s'", argv[*rest]);
        return -1;
    }
    if (!*array && argc - *rest < 2) {
        error_set(err, "give OUT.db and at least one IN.db (bigbatch merge --help)");
        return -1;
    }
    return 0;
}

int cli_merge(int argc, char **argv)
{
    const char *array;
    Error err = {{0}};
    int rest;
    int parsed = parse_merge(argc, argv, &array, &rest, &err);
    if (parsed == 1) flag_table_usage(&TABLE, stdout);
    if (parsed < 0) fprintf(stderr, "bigbatch merge: %s\n", err.msg);
    if (parsed != 0) return parsed < 0 ? 2 : 0;
    if (array) return merge_array(array);
    const char *out = argv[rest];
    MergeCounts c;
    int rc = merge_databases(out, argv + rest + 1, argc - rest - 1, stdout, &c, &err);
    if (rc != 0) {
        fprintf(stderr, "bigbatch merge: %s\n", err.msg);
        return 1;
    }
    printf("%s: %d runs added, %d replaced, %d the same, %d kept, %d conflicts; %d experiments added\n", out,
           c.added, c.replaced, c.same, c.kept, c.conflicts, c.experiments_added);
    return c.conflicts ? 1 : 0;
}
