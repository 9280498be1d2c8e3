/* `bigbatch verify FILE [--scale S] [--db PATH] [--cell LABEL]... [--repeats N] [--workers W]
 * [--threads T] [--keep PATH]`: sweeps/verify.h. Exit 0 when every new run lands within the
 * archive's spread, 1 when one does not (or on an error), 2 for bad usage. */
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../sweeps/flags/flag_table.h"
#include "../sweeps/archive.h"
#include "../sweeps/figure_dir.h"
#include "../sweeps/verify.h"
#include "cli.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The scratch folder and everything the sweep left in it (database, WAL, run logs). */
static void remove_scratch(const char *dir)
{
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "bigbatch verify: could not remove the scratch folder %s\n", dir);
}

/* What verify's flags set: the request, room for the --cell labels (argc of them), --keep. */
typedef struct {
    VerifyRequest r;
    const char **labels;
    const char *keep;
} VerifyFlags;

static void verify_defaults(void *target)
{
    VerifyFlags *v = target;
    memset(v, 0, sizeof *v);
    v->r = (VerifyRequest){.scale = "proxy", .repeats = 1, .workers = 1, .floor = VERIFY_FLOOR};
}

static int set_device(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)target, (void)c;
    return backend_device_check(v, err) ? -1 : 0;
}

/* --cell, repeatable: labels has room for every argument. */
static int add_cell(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)c, (void)err;
    VerifyFlags *f = target;
    f->labels[f->r.n_labels++] = v;
    return 0;
}

static const char HEAD[] =
    "usage: bigbatch verify FILE [--scale S] [--db PATH] [--cell LABEL]... [--repeats N]\n"
    "                       [--workers W] [--threads T] [--device D] [--keep PATH]\n"
    "Re-runs cells of an experiment's results database (the archive: make results-load)\n"
    "with today's engine, then prints per cell the archived seeds, today's runs and whether\n"
    "each lands within the archive: an archived seed ended the same way (complete,\n"
    "collapsed, diverged) and a complete run lies within the archived complete seeds'\n"
    "range widened by their standard deviation (at least --spread).\n";

#define AT(member) offsetof(VerifyFlags, member)

static const Flag FLAGS[] = {
    {"scale", "S", "the sweep's scale", "%s", F_STR(AT(r.scale))},
    {"db", "PATH",
     "the archived database [results/<experiment>.db], or the archive\n"
     "itself (results/archive/<experiment>.sql.gz)",
     NULL, F_STR(AT(r.db))},
    {"cell", "LABEL",
     "a cell to re-run, as `bigbatch report` labels it (\"opt=sgd batch=2048\n"
     "lr=0.8\"); repeat for more [every cell]",
     NULL, .set = add_cell},
    {"repeats", "N", "seeds per cell, the archive's first N", "%d", F_INT(AT(r.repeats), 1, 1000)},
    {"workers", "W", "runs at once", "%d", F_INT(AT(r.workers), 1, 64)},
    {"threads", "T", "threads per run [cores / W]", NULL, F_INT(AT(r.threads), 1, 1024)},
    {"device", "D",
     "where today's runs compute: cpu, cuda, cuda:N [cpu] (a GPU's runs\n"
     "against a CPU archive: do they land within its seeds' spread?)",
     NULL, F_STR(AT(r.device)), .set = set_device},
    {"spread", "W",
     "the least half-width around the archived seeds' range: what a cell of\n"
     "one seed, or runs of other arithmetic (a GPU's), may differ by",
     "%g", F_DBL(AT(r.floor)), F_RANGE(0, 1, false, false, "is not in [0, 1]")},
    {"keep", "PATH", "keep today's runs in this database [a scratch file, removed]", NULL, F_STR(AT(keep))},
    FLAG_HELP_ROW,
};

static const FlagTable TABLE = {"verify", FLAGS, FLAG_COUNT(FLAGS), sizeof(VerifyFlags), verify_defaults, HEAD,
                                "Exit 0: every run within; 1: one outside, or an error; 2: bad usage.\n", 13, NULL,
                                "%s needs a value", "the experiment file", 1, 1};

void verify_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

static int parse_verify(int argc, char **argv, VerifyFlags *f, Error *err)
{
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, f, &rest, err);
    if (rc != 0) return rc;
    f->r.file = argv[rest];
    return 0;
}

int cli_verify(int argc, char **argv)
{
    VerifyFlags f;
    verify_defaults(&f);
    const char **labels = calloc((size_t)argc, sizeof *labels);
    Error err = {{0}};
    if (!labels) return 1;
    f.labels = labels;
    f.r.labels = labels;
    int parsed = parse_verify(argc, argv, &f, &err);
    VerifyRequest r = f.r;
    const char *keep = f.keep;
    if (parsed != 0) {
        if (parsed == 1) flag_table_usage(&TABLE, stdout);
        else fprintf(stderr, "bigbatch verify: %s\n", err.msg);
        free(labels);
        return parsed == 1 ? 0 : 2;
    }
    char scratch[1024] = "";
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/bigbatch-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "bigbatch verify: %s: cannot make a scratch folder\n", scratch);
        free(labels);
        return 1;
    }
    char db[1100], restored[1100];
    snprintf(db, sizeof db, "%s/verify.db", scratch);
    snprintf(restored, sizeof restored, "%s/archive.db", scratch);
    r.scratch = keep ? keep : db;
    int outside = 0, rc = 0;
    /* an archive as committed (results/archive/X.sql.gz): restored into the scratch folder */
    if (r.db && name_ends_with(r.db, ".sql.gz") && (rc = archive_restore(r.db, restored, &err)) == 0) r.db = restored;
    if (rc == 0) rc = verify_run(&r, stdout, &outside, &err);
    if (rc != 0) fprintf(stderr, "bigbatch verify: %s\n", err.msg);
    remove_scratch(scratch);
    free(labels);
    return rc != 0 || outside ? 1 : 0;
}
