/* `bigbatch merge OUT.db IN.db...` (sweeps/merge.h). */
#include <stdio.h>
#include <string.h>

#include "../sweeps/array.h"
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

int cli_merge(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--help")) {
        printf("usage: bigbatch merge OUT.db IN.db [IN.db...]\n"
               "       bigbatch merge --array DB\n"
               "Combines results databases written by separate sweeps into OUT.db (created when\n"
               "absent). Runs are matched by their ids (the hash of their settings): a run OUT lacks is\n"
               "copied with all its rows; one finished in an input but not in OUT replaces OUT's; the\n"
               "same result twice is kept once; two different finished results of one run are a\n"
               "conflict, reported (OUT's kept) and the exit status is 1. Experiments are matched by\n"
               "name and scale and their run lists united. The inputs are only read.\n"
               "--array DB: merges the databases a sweep's job array wrote (<DB without .db>.array/\n"
               "K.db, sweep --print-sbatch --array) into DB and removes them (one with a conflict\n"
               "is kept). Run it once every task has ended (sbatch --dependency=afterany:JOBID).\n");
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "--array")) return merge_array(argv[2]);
    if (argc < 3) {
        fprintf(stderr, "bigbatch merge: give OUT.db and at least one IN.db (bigbatch merge --help)\n");
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-') {
            fprintf(stderr, "bigbatch merge: unknown option '%s' (bigbatch merge --help)\n", argv[i]);
            return 2;
        }
    MergeCounts c;
    Error err = {{0}};
    int rc = merge_databases(argv[1], argv + 2, argc - 2, stdout, &c, &err);
    if (rc != 0) {
        fprintf(stderr, "bigbatch merge: %s\n", err.msg);
        return 1;
    }
    printf("%s: %d runs added, %d replaced, %d the same, %d kept, %d conflicts; %d experiments added\n", argv[1],
           c.added, c.replaced, c.same, c.kept, c.conflicts, c.experiments_added);
    return c.conflicts ? 1 : 0;
}
