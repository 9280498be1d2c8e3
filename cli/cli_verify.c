/* `bigbatch verify FILE [--scale S] [--db PATH] [--cell LABEL]... [--repeats N] [--workers W]
 * [--threads T] [--keep PATH]`: sweeps/verify.h. Exit 0 when every new run lands within the
 * archive's spread, 1 when one does not (or on an error), 2 for bad usage. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../sweeps/flags/cli_args.h"
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

static void verify_usage(void)
{
    printf("usage: bigbatch verify FILE [--scale S] [--db PATH] [--cell LABEL]... [--repeats N]\n"
           "                       [--workers W] [--threads T] [--device D] [--keep PATH]\n"
           "Re-runs cells of an experiment's results database (the archive: make results-load)\n"
           "with today's engine, then prints per cell the archived seeds, today's runs and whether\n"
           "each lands within the archive: an archived seed ended the same way (complete,\n"
           "collapsed, diverged) and a complete run lies within the archived complete seeds'\n"
           "range widened by their standard deviation (at least 0.005).\n"
           "  --scale S     the sweep's scale [proxy]\n"
           "  --db PATH     the archived database [results/<experiment>.db], or the archive\n"
           "                itself (results/archive/<experiment>.sql.gz)\n"
           "  --cell LABEL  a cell to re-run, as `bigbatch report` labels it (\"opt=sgd batch=2048\n"
           "                lr=0.8\"); repeat for more [every cell]\n"
           "  --repeats N   seeds per cell, the archive's first N [1]\n"
           "  --workers W   runs at once [1]; --threads T: threads per run [cores / W]\n"
           "  --device D    where today's runs compute: cpu, cuda, cuda:N [cpu] (a GPU's runs\n"
           "                against a CPU archive: do they land within its seeds' spread?)\n"
           "  --keep PATH   keep today's runs in this database [a scratch file, removed]\n"
           "Exit 0: every run within; 1: one outside, or an error; 2: bad usage.\n");
}

static int parse_verify(int argc, char **argv, VerifyRequest *r, const char **labels, const char **keep, Error *err)
{
    long v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) return 1;
        if (a[0] != '-') {
            if (r->file) return error_set(err, "one experiment file, not several ('%s')", a), -1;
            r->file = a;
            continue;
        }
        if (!val) return error_set(err, "%s needs a value", a), -1;
        i++;
        if (!strcmp(a, "--scale")) r->scale = val;
        else if (!strcmp(a, "--db")) r->db = val;
        else if (!strcmp(a, "--keep")) *keep = val;
        else if (!strcmp(a, "--device") && !backend_device_check(val, err)) r->device = val;
        else if (!strcmp(a, "--cell")) labels[r->n_labels++] = val;
        else if (!strcmp(a, "--repeats") && !cli_parse_long(a, val, 1, 1000, &v, err)) r->repeats = (int)v;
        else if (!strcmp(a, "--workers") && !cli_parse_long(a, val, 1, 64, &v, err)) r->workers = (int)v;
        else if (!strcmp(a, "--threads") && !cli_parse_long(a, val, 1, 1024, &v, err)) r->threads = (int)v;
        else if (!err->msg[0]) return error_set(err, "unknown option '%s' (bigbatch verify --help)", a), -1;
        else return -1;
    }
    if (!r->file) return error_set(err, "which experiment file? (bigbatch verify FILE)"), -1;
    return 0;
}

int cli_verify(int argc, char **argv)
{
    VerifyRequest r = {.scale = "proxy", .repeats = 1, .workers = 1};
    const char **labels = calloc((size_t)argc, sizeof *labels), *keep = NULL;
    Error err = {{0}};
    if (!labels) return 1;
    r.labels = labels;
    int parsed = parse_verify(argc, argv, &r, labels, &keep, &err);
    if (parsed != 0) {
        if (parsed == 1) verify_usage();
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
