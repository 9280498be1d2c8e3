/* `bigbatch sweep` and `bigbatch runs`: the command lines of the sweep runner and of the
 * run listing. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../sweeps/flags/cli_args.h"
#include "../sweeps/flags/flag_table.h"
#include "../sweeps/claims.h"
#include "../sweeps/experiment.h"
#include "../sweeps/prune_replay.h"
#include "../sweeps/report.h"
#include "../sweeps/report_html.h"
#include "../sweeps/results_docs.h"
#include "../sweeps/run_checkpoint.h"
#include "../sweeps/store.h"
#include "../sweeps/sweep.h"
#include "cli.h"

/* What sweep's flags set: the options, and room for the --sbatch-line values (argc of them). */
typedef struct {
    SweepOptions o;
    const char **lines;
} SweepFlags;

static void sweep_defaults(void *target) { sweep_options_defaults(&((SweepFlags *)target)->o); }

static int set_scale(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)target;
    if (experiment_scale_known(v)) return 0;
    error_set(err, "%s: '%s' is not one of smoke, proxy, full", c->flag, v);
    return -1;
}

static int set_workers(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)c, (void)v, (void)err;
    ((SweepFlags *)target)->o.workers_given = true;
    return 0;
}

static int set_mpirun(void *target, const FlagCall *c, const char *v, Error *err)
{
    if (!v[strspn(v, " \t")]) {
        error_set(err, "%s: the launcher's command is empty", c->flag);
        return -1;
    }
    ((SweepFlags *)target)->o.mpirun_given = true;
    return 0;
}

static int set_device(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)target;
    if (backend_device_check(v, err) == 0) return 0;
    error_prefix(err, c->flag);
    return -1;
}

static int set_launcher(void *target, const FlagCall *c, const char *v, Error *err)
{
    if (strcmp(v, "local") && strcmp(v, "slurm")) {
        error_set(err, "%s: '%s' is not local or slurm", c->flag, v);
        return -1;
    }
    ((SweepFlags *)target)->o.slurm = !strcmp(v, "slurm");
    return 0;
}

static int set_checkpoint_every(void *target, const FlagCall *c, const char *v, Error *err)
{
    SweepOptions *o = &((SweepFlags *)target)->o;
    return checkpoint_every_parse(c->flag, v, &o->checkpoint_seconds, &o->checkpoint_epochs, err);
}

/* A value for a #SBATCH line (stored by its type): one line of printable text (a newline would
 * start a line of its own in the script). */
static int sbatch_value(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)target;
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p < 32 || *p == 127) {
            error_set(err, "%s: '%s' holds a control character (a newline would be a line of the script)", c->flag, v);
            return -1;
        }
    if (!*v) {
        error_set(err, "%s: the value is empty", c->flag);
        return -1;
    }
    return 0;
}

static int set_chdir(void *target, const FlagCall *c, const char *v, Error *err)
{
    if (v[0] != '/') {
        error_set(err, "%s: '%s' is not an absolute path", c->flag, v);
        return -1;
    }
    return sbatch_value(target, c, v, err);
}

/* --sbatch-line, repeatable: lines has room for every argument. */
static int add_sbatch_line(void *target, const FlagCall *c, const char *v, Error *err)
{
    SweepFlags *s = target;
    if (sbatch_value(target, c, v, err)) return -1;
    s->lines[s->o.n_sbatch_lines++] = v;
    return 0;
}

/* --prune asha (prune.h): the one rule there is */
static int set_prune(void *target, const FlagCall *c, const char *v, Error *err)
{
    if (strcmp(v, "asha")) {
        error_set(err, "%s: '%s' is not asha (the one pruning rule there is)", c->flag, v);
        return -1;
    }
    ((SweepFlags *)target)->o.prune.on = true;
    return 0;
}

/* --prune-eta and --prune-min-epochs (stored by their type): settings that need --prune asha */
static int mark_prune_setting(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)c, (void)v, (void)err;
    ((SweepFlags *)target)->o.prune.given = true;
    return 0;
}

static int set_prune_rungs(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)c;
    mark_prune_setting(target, c, v, err);
    return prune_parse_rungs(v, &((SweepFlags *)target)->o.prune, err);
}

static const char SWEEP_HEAD[] =
    "usage: bigbatch sweep FILE [options]\n"
    "\n"
    "Runs every cell of an experiment file's grid (experiments/FORMAT.md), each run a\n"
    "`bigbatch train --db` process, and stores everything in one SQLite database.\n"
    "Running the same command again resumes: complete and diverged runs are skipped,\n"
    "runs left by a dead sweep are re-queued. Several sweeps may share one database.\n"
    "\n";

#define AT(member) offsetof(SweepFlags, o.member)

static const Flag SWEEP_FLAGS[] = {
    {"scale", "S", "smoke | proxy | full: the file's section of overrides", "%s", F_STR(AT(scale)), .set = set_scale},
    {"db", "PATH",
     "results database [results/<experiment>.db]; run logs go to\n"
     "<PATH without .db>.logs/<run>.log",
     NULL, F_STR(AT(db))},
    {"workers", "N", "runs at once in this process", "%d", F_INT(AT(workers), 1, BB_MAX_PROCESSES), .set = set_workers},
    {"threads", "N", "threads per run [cores / (workers x ranks)]", NULL, F_INT(AT(threads), 1, BB_MAX_THREADS)},
    {"ranks", "K", "run each under `mpirun -np K`", "%d", F_INT(AT(ranks), 1, BB_MAX_PROCESSES)},
    {"device", "NAME", "every run's train --device: cpu, cuda, cuda:N", "%s", F_STR(AT(device)), .set = set_device},
    {"mpirun", "CMD",
     "the launcher for --ranks, its words split at blanks and\n"
     "run without a shell (quotes are ordinary characters)",
     "%s", F_STR(AT(mpirun)), .set = set_mpirun},
    {"max-attempts", "N",
     "a run killed from outside (OOM killer, kill -9) is tried again\n"
     "up to N attempts in all; one that fails by itself is tried\n"
     "again unless it failed the same way the attempt before",
     "%d", F_INT(AT(max_attempts), 1, 100)},
    {"retry-failed", NULL, "run failed runs again (one attempt each, beyond N)", NULL, F_SWITCH(AT(retry_failed))},
    {"stale-after", "SEC", "a running run without a heartbeat for this long is re-queued", "%g",
     F_DBL(AT(stale_after)), F_RANGE(10, INFINITY, false, false, "s is shorter than the 5 s heartbeat allows (at least 10)")},
    {"progress-every", "SEC",
     "a line per run in flight (epoch, step, loss, test accuracy,\n"
     "time left) and the sweep's ETA this often; the first within\n"
     "5 s; 0: none [30 on a terminal, else 600]",
     NULL, F_DBL(AT(progress_every)), F_RANGE(0, INFINITY, false, false, "s is negative (0 turns the lines off)")},
    {"repeats", "N",
     "seeds per cell instead of the file's `repeats` (seeds 1..N;\n"
     "--repeats 1 is a first look at a file that asks for more)",
     NULL, F_INT(AT(repeats), 1, 1000)},
    {"launcher", "L",
     "local: runs are child processes here (mpirun for --ranks);\n"
     "slurm: inside a SLURM allocation (salloc, sbatch), each run is a\n"
     "job step (srun --ntasks K --cpus-per-task T --exclusive), as many at\n"
     "once as the allocation's tasks hold unless --workers says [local]",
     NULL, .set = set_launcher},
    {"print-sbatch", NULL,
     "with --launcher slurm: write an sbatch script for the whole sweep\n"
     "(tasks, CPUs, a time limit from the runs measured so far) and exit",
     NULL, F_SWITCH(AT(print_sbatch))},
    {"checkpoint-every", "T",
     "every run saves a checkpoint beside its log (<run>.ckpt) every\n"
     "T: a duration (90s, 30m, 2h; a bare number is seconds, checked\n"
     "after each step) or epochs (2e); a run interrupted (a signal,\n"
     "a time limit, a lost node, kill -9 of the sweep) resumes from it\n"
     "on its next attempt, its rows kept up to it [off]",
     NULL, .set = set_checkpoint_every},
    {"gpus-per-run", "N",
     "--device cuda: GPUs of each run (srun --gpus; the script asks\n"
     "for workers x N) [one per rank]",
     NULL, F_INT(AT(gpus_per_run), 1, 1024)},
    {"mem", "M", "--print-sbatch: the script's #SBATCH --mem", NULL, F_STR(AT(mem)), .set = sbatch_value},
    {"partition", "P", "--print-sbatch: the script's #SBATCH --partition", NULL, F_STR(AT(partition)), .set = sbatch_value},
    {"account", "A", "--print-sbatch: the script's #SBATCH --account", NULL, F_STR(AT(account)), .set = sbatch_value},
    {"time", "T", "--print-sbatch: the script's #SBATCH --time [from the runs measured so far]", NULL,
     F_STR(AT(time_limit)), .set = sbatch_value},
    {"chdir", "DIR",
     "--print-sbatch: the script's #SBATCH --chdir, absolute (--output\n"
     "is relative to it) [the current folder]",
     NULL, F_STR(AT(chdir)), .set = set_chdir},
    {"sbatch-line", "TEXT", "--print-sbatch: a line `#SBATCH TEXT` of your own (repeatable)", NULL,
     .set = add_sbatch_line},
    {"requeue", NULL,
     "in a SLURM job, on SIGUSR2 (the script's --signal=B:USR2@90),\n"
     "SIGUSR1 or SIGTERM: checkpoint the runs, stop, and requeue the\n"
     "job (scontrol requeue), also at its time limit; not after scancel;\n"
     "--print-sbatch's script passes it",
     NULL, F_SWITCH(AT(requeue))},
    {"array", NULL,
     "--print-sbatch: a job array, one task per run (or per N runs,\n"
     "--array-runs-per-task N), each task with a database of its own\n"
     "(<PATH without .db>.array/K.db) that `bigbatch merge --array PATH`\n"
     "or the next sweep on PATH merges in; logs and checkpoints as above",
     NULL, F_SWITCH(AT(array))},
    {"array-runs-per-task", "N", "runs of the grid per task of --array or --array-task", "%d",
     F_INT(AT(array_runs_per_task), 1, 1000000)},
    {"array-task", "K",
     "run only task K's runs (K*N .. K*N+N-1 of the grid, less those\n"
     "ended in PATH) into PATH's .array/K.db: what the array's tasks run",
     NULL, F_INT(AT(array_task), 0, 10000000)},
    {"prune", "asha",
     "ASHA pruning (docs/cli.md, \"Pruning\"): at each rung a cell goes\n"
     "on only if its test accuracy there is in the top 1/eta of its group\n"
     "(the cells that differ only in the file's tuned axes); a run stopped\n"
     "at a rung is `pruned`, its rows kept up to that evaluation. A run\n"
     "at a rung its group has not decided waits stopped (SIGSTOP), its\n"
     "worker given to the next run; the decisions come from the rows\n"
     "alone: the same for any --workers and after a restart [off]",
     NULL, .set = set_prune},
    {"prune-eta", "N", "the reduction factor: max(1, n/N) of a rung's n cells go on", "%d",
     F_INT(AT(prune.eta), 2, 100), .set = mark_prune_setting},
    {"prune-min-epochs", "E",
     "the first rung; then E*eta, E*eta^2, ... below the run's\n"
     "epochs [ceil(epochs / eta^2)]",
     NULL, F_INT(AT(prune.min_epochs), 1, 1000000), .set = mark_prune_setting},
    {"prune-rungs", "LIST", "the rungs as epochs instead, e.g. 2,6", NULL, .set = set_prune_rungs},
    {"dry-run", NULL, "list the runs (and their status in the database) and exit", NULL, F_SWITCH(AT(dry_run))},
    {"quiet", NULL, "no progress lines", NULL, F_SWITCH(AT(quiet))},
    FLAG_HELP_ROW,
};

#undef AT

static const FlagTable SWEEP_TABLE = {"sweep", SWEEP_FLAGS, FLAG_COUNT(SWEEP_FLAGS), sizeof(SweepFlags),
                                      sweep_defaults, SWEEP_HEAD, NULL, 18, NULL, NULL, "the experiment file", 1, 1};

void sweep_flags_usage(FILE *out) { flag_table_usage(&SWEEP_TABLE, out); }
void sweep_flags_markdown(FILE *out) { flag_table_markdown(&SWEEP_TABLE, out); }

/* The checks across flags: 0, or -1 with err. */
static int check_sweep(const SweepOptions *o, Error *err)
{
    bool sbatch_only = o->mem || o->partition || o->account || o->time_limit || o->chdir || o->n_sbatch_lines;
    if (sbatch_only && !o->print_sbatch) {
        error_set(err, "--mem, --partition, --account, --time, --chdir and --sbatch-line are for --print-sbatch");
        return -1;
    }
    if (o->print_sbatch && !o->slurm) {
        error_set(err, "--print-sbatch: give --launcher slurm too (the script runs the sweep with it)");
        return -1;
    }
    if (o->array && !o->print_sbatch) {
        error_set(err, "--array: for --print-sbatch (the script's tasks run with --array-task)");
        return -1;
    }
    if (o->array_runs_per_task != 1 && !o->array && o->array_task < 0) {
        error_set(err, "--array-runs-per-task: for --array or --array-task");
        return -1;
    }
    const PruneOptions *p = &o->prune;
    if (!p->on && p->given) {
        error_set(err, "--prune-eta, --prune-min-epochs and --prune-rungs are for --prune asha");
        return -1;
    }
    if (p->min_epochs && p->n_rungs) {
        error_set(err, "--prune-min-epochs and --prune-rungs: give one (the rungs, or the first of them)");
        return -1;
    }
    /* A run waits at a rung stopped by SIGSTOP, which reaches a local child only: srun and
     * mpirun would stop themselves, not their ranks. A job array's tasks each see a part of
     * a group, in databases of their own. */
    if (p->on && (o->slurm || o->ranks > 1 || o->array || o->array_task >= 0)) {
        error_set(err, "--prune asha: not with %s (it holds runs at rungs by stopping their local process)",
                   o->slurm ? "--launcher slurm" : o->ranks > 1 ? "--ranks > 1" : "a job array");
        return -1;
    }
    if (o->slurm && o->mpirun_given) {
        error_set(err, "--mpirun: --launcher slurm starts every rank with srun");
        return -1;
    }
    return 0;
}

static int parse_sweep(int argc, char **argv, SweepFlags *s, Error *err)
{
    int rest;
    int rc = flag_table_parse(&SWEEP_TABLE, argc, argv, s, &rest, err);
    if (rc != 0) return rc;
    s->o.file = argv[rest];
    return check_sweep(&s->o, err);
}

int cli_sweep(int argc, char **argv)
{
    SweepFlags s;
    sweep_defaults(&s);
    Error err = {{0}};
    s.lines = xcalloc((size_t)argc + 1, sizeof *s.lines, "--sbatch-line");
    s.o.sbatch_lines = s.lines;
    int parsed = parse_sweep(argc, argv, &s, &err);
    if (parsed == 1) {
        sweep_flags_usage(stdout);
        free(s.lines);
        return 0;
    }
    if (parsed < 0) {
        fprintf(stderr, "bigbatch sweep: %s\n", err.msg);
        free(s.lines);
        return 2;
    }
    int rc = sweep_run(&s.o, &err);
    free(s.lines);
    if (rc < 0) {
        fprintf(stderr, "bigbatch sweep: %s\n", err.msg);
        return rc == SWEEP_USAGE ? 2 : 1;
    }
    return rc;
}

/* runs and report: the messages of their flags */
#define UNKNOWN_ARG "unknown option or extra argument '%s' (bigbatch %s --help)"
#define MISSING_VALUE "a value is missing after '%s' (bigbatch %s --help)"

/* Parses a table: 0, 1 for --help, -1 after saying what is wrong; *rest as flag_table_parse's. */
static int parse_or_say(const FlagTable *t, int argc, char **argv, void *target, int *rest)
{
    Error err = {{0}};
    int rc = flag_table_parse(t, argc, argv, target, rest, &err);
    if (rc < 0) fprintf(stderr, "bigbatch %s: %s\n", t->command, err.msg);
    return rc;
}

/* Under a run's line, how its earlier attempts ended (attempts holds them from schema 3 on;
 * `earlier` is NULL for an older file). */
static void print_earlier_attempts(sqlite3_stmt *earlier, const char *run_id, int attempt)
{
    if (!earlier || attempt < 2) return;
    sqlite3_reset(earlier);
    sqlite3_bind_text(earlier, 1, run_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(earlier, 2, attempt);
    while (sqlite3_step(earlier) == SQLITE_ROW)
        printf("    attempt %d: %s%s%s%s\n", sqlite3_column_int(earlier, 0), sqlite3_column_text(earlier, 1),
               sqlite3_column_text(earlier, 2)[0] ? ": " : "", sqlite3_column_text(earlier, 2),
               sqlite3_column_int(earlier, 3) ? " (tried again)" : "");
}

/* `bigbatch runs --db PATH [--experiment NAME] [--status S] [--upgrade]`: one line per run. */
typedef struct {
    const char *db, *experiment, *status;
    bool upgrade;
} RunsFlags;

static const Flag RUNS_FLAGS[] = {
    {"db", "PATH", "the results database", NULL, F_STR(offsetof(RunsFlags, db))},
    {"experiment", "NAME", "only this experiment's runs [all]", NULL, F_STR(offsetof(RunsFlags, experiment))},
    {"status", "S", "only the runs in this status (complete, failed, ...) [all]", NULL,
     F_STR(offsetof(RunsFlags, status))},
    {"upgrade", NULL,
     "first bring the file to this bigbatch's schema (results/SCHEMA.md;\n"
     "runs recorded complete at the chance level become collapsed), as\n"
     "any sweep on it would",
     NULL, F_SWITCH(offsetof(RunsFlags, upgrade))},
    FLAG_HELP_ROW,
};

static const FlagTable RUNS_TABLE = {
    "runs", RUNS_FLAGS, FLAG_COUNT(RUNS_FLAGS), sizeof(RunsFlags), NULL,
    "usage: bigbatch runs --db PATH [--experiment NAME] [--status S] [--upgrade]\n"
    "Lists the runs in a results database: id, experiment, status, attempts, final\n"
    "test accuracy, steps, duration and cell (or, for a run started by hand, its flags);\n"
    "under a run tried more than once, how each earlier attempt ended and why.\n",
    NULL, 0, UNKNOWN_ARG, MISSING_VALUE, NULL, 0, 0};

void runs_flags_markdown(FILE *out) { flag_table_markdown(&RUNS_TABLE, out); }

int cli_runs(int argc, char **argv)
{
    RunsFlags f = {NULL, NULL, NULL, false};
    int rest;
    int taken = parse_or_say(&RUNS_TABLE, argc, argv, &f, &rest);
    if (taken == 1) {
        flag_table_usage(&RUNS_TABLE, stdout);
        return 0;
    }
    if (taken < 0) return 2;
    const char *db = f.db, *experiment = f.experiment, *status = f.status;
    const bool upgrade = f.upgrade;
    if (!db) {
        fprintf(stderr, "bigbatch runs: which database? (--db PATH)\n");
        return 2;
    }
    Store s;
    Error err = {{0}};
    if (store_open(&s, db, !upgrade, &err) != 0) {
        fprintf(stderr, "bigbatch runs: %s\n", err.msg);
        if (access(db, F_OK) != 0) fprintf(stderr, "%s", store_missing_hint());
        return 1;
    }
    sqlite3_stmt *st;
    if (store_prepare(&s, &st,
                      "SELECT r.id, coalesce(x.name || '/' || x.scale, '-'), r.status, r.attempt, r.test_acc, r.steps,"
                      " r.finished - r.started, coalesce(e.label, r.config), r.error"
                      " FROM runs r LEFT JOIN experiment_runs e ON e.run_id = r.id"
                      " LEFT JOIN experiments x ON x.id = e.experiment_id"
                      " WHERE (?1 IS NULL OR x.name = ?1) AND (?2 IS NULL OR r.status = ?2)"
                      " ORDER BY x.name, x.scale, e.seq, r.created",
                      &err)) {
        fprintf(stderr, "bigbatch runs: %s\n", err.msg);
        store_close(&s);
        return 1;
    }
    sqlite3_stmt *earlier = NULL; /* absent before schema 3: then there is nothing to show */
    if (sqlite3_prepare_v2(s.db,
                           "SELECT attempt, outcome, coalesce(reason, ''), retried FROM attempts"
                           " WHERE run_id=?1 AND attempt < ?2 ORDER BY attempt",
                           -1, &earlier, NULL) != SQLITE_OK) {
        sqlite3_finalize(earlier);
        earlier = NULL;
    }
    if (experiment) sqlite3_bind_text(st, 1, experiment, -1, SQLITE_STATIC);
    if (status) sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
    printf("%-16s  %-24s  %-9s  %3s  %8s  %7s  %8s  %s\n", "run", "experiment", "status", "try", "test_acc", "steps",
           "seconds", "cell");
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char acc[16] = "-", steps[16] = "-", secs[16] = "-";
        if (sqlite3_column_type(st, 4) != SQLITE_NULL) snprintf(acc, sizeof acc, "%.4f", sqlite3_column_double(st, 4));
        if (sqlite3_column_type(st, 5) != SQLITE_NULL) snprintf(steps, sizeof steps, "%d", sqlite3_column_int(st, 5));
        if (sqlite3_column_type(st, 6) != SQLITE_NULL) snprintf(secs, sizeof secs, "%.1f", sqlite3_column_double(st, 6));
        printf("%-16s  %-24s  %-9s  %3d  %8s  %7s  %8s  %s", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
               sqlite3_column_text(st, 2), sqlite3_column_int(st, 3), acc, steps, secs, sqlite3_column_text(st, 7));
        if (sqlite3_column_type(st, 8) != SQLITE_NULL) printf("  [%s]", sqlite3_column_text(st, 8));
        printf("\n");
        print_earlier_attempts(earlier, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 3));
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_finalize(earlier);
    store_close(&s);
    if (rc != SQLITE_DONE) {
        fprintf(stderr, "bigbatch runs: %s: %s\n", db, sqlite3_errstr(rc));
        return 1;
    }
    printf("%d run%s\n", n, n == 1 ? "" : "s");
    return 0;
}

static const char REPORT_USAGE[] =
    "usage: bigbatch report FILE [--scale S] [--db PATH] [--format md|csv] [--html DIR [--plots DIR]]\n"
    "       bigbatch report FILE --replay-prune [--scale S] [--db PATH] [--prune-eta N]\n"
    "                            [--prune-min-epochs E | --prune-rungs LIST]\n"
    "       bigbatch report --all [--experiments DIR] [--archive DIR] [--out DIR] [--html DIR] [--plots DIR]\n"
    "                             [--readme FILE] [--results DIR]\n"
    "                             [--bench DIR] [--performance TEMPLATE]\n"
    "The paper-style table of an experiment: one row per grid cell (mean and spread over\n"
    "repeats, diverged cells marked), the best over the file's tuned axes for each value of\n"
    "the other axes, and the paper's number beside ours. --scale [proxy], --db\n"
    "[results/<experiment>.db], --format md (Markdown) or csv (one row per cell) [md].\n"
    "--all: the results pages from the archived results alone: OUT/results.md with every\n"
    "experiment of --experiments [experiments] that has an archive in --archive\n"
    "[results/archive] (its table, prose and figures), and the figures in OUT/figures/\n"
    "[OUT: docs], OUT/benchmarks.md: the dated make bench outputs of --bench\n"
    "[bench/results], verbatim, and OUT/performance.md: --performance\n"
    "[bench/performance.md.in] with its {{table|line|block FILE \"TEXT\"}} lines filled from\n"
    "them. --plots: the gnuplot scripts (as bigbatch plot). The demo's archive also makes\n"
    "OUT/headline.md, put between the headline markers of --readme [README.md when OUT is\n"
    "docs, else none].\n"
    "--results DIR: read your own DIR/<experiment>.db instead of the archives (then give\n"
    "--out and --readme elsewhere, or the docs become your results).\n"
    "--html DIR: a self-contained page DIR/<experiment>.html (FILE: instead of the Markdown;\n"
    "--all: besides results.md, a page per archived experiment and DIR/index.html): the\n"
    "tables, the figures as inline SVG, every run's state, final metrics, loss curve and layer\n"
    "ratios; every table sorts by a click on a header.\n"
    "--replay-prune: what `sweep --prune asha` with these settings (bigbatch sweep --help)\n"
    "would have found, played over the per-epoch curves of a finished sweep without pruning:\n"
    "per group the full grid's best cell beside the pruned sweep's, and the epochs each trains.\n"
    "\nreport FILE:\n";

/* report FILE's flags */
typedef struct {
    const char *scale, *db, *format, *html, *plots;
    bool replay;                            /* --replay-prune */
    const char *eta, *min_epochs, *rungs;   /* its settings, checked by report_replay */
} ReportFlags;

static void report_defaults(void *target) { *(ReportFlags *)target = (ReportFlags){.scale = "proxy", .format = "md"}; }

static int set_report_scale(void *target, const FlagCall *c, const char *v, Error *err)
{
    return set_scale(target, c, v, err);
}

static int set_report_format(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)target;
    if (!strcmp(v, "md") || !strcmp(v, "csv")) return 0;
    error_set(err, "%s: '%s' is not md or csv", c->flag, v);
    return -1;
}

#define AT(member) offsetof(ReportFlags, member)

static const Flag REPORT_FLAGS[] = {
    {"scale", "S", "the sweep's scale", "%s", F_STR(AT(scale)), .set = set_report_scale},
    {"db", "PATH", "the results database [results/<experiment>.db]", NULL, F_STR(AT(db))},
    {"format", "F", "md (Markdown) or csv (one row per cell)", "%s", F_STR(AT(format)), .set = set_report_format},
    {"html", "DIR", "a self-contained page DIR/<experiment>.html instead of the Markdown", NULL, F_STR(AT(html))},
    {"plots", "DIR", "with --html: the gnuplot scripts (as bigbatch plot)", NULL, F_STR(AT(plots))},
    {"replay-prune", NULL, "replay `sweep --prune asha` over the database's finished curves", NULL,
     F_SWITCH(AT(replay))},
    {"prune-eta", "N", "--replay-prune: the reduction factor [3]", NULL, F_STR(AT(eta))},
    {"prune-min-epochs", "E", "--replay-prune: the first rung [ceil(epochs / eta^2)]", NULL, F_STR(AT(min_epochs))},
    {"prune-rungs", "LIST", "--replay-prune: the rungs as epochs instead, e.g. 2,6", NULL, F_STR(AT(rungs))},
    FLAG_HELP_ROW,
};

#undef AT
#define AT(member) offsetof(ResultsDocsOptions, member)

static const Flag REPORT_ALL_FLAGS[] = {
    {"all", NULL, NULL, NULL, .type = T_ACTION}, /* the mode itself */
    {"experiments", "DIR", "the experiment files", "%s", F_STR(AT(experiments))},
    {"archive", "DIR", "the archived results", "%s", F_STR(AT(archive))},
    {"results", "DIR", "read your own DIR/<experiment>.db instead of the archives", NULL, F_STR(AT(results_dir))},
    {"out", "DIR", "where results.md, benchmarks.md, performance.md and figures/ go", "%s", F_STR(AT(out))},
    {"bench", "DIR", "the dated make bench outputs", "%s", F_STR(AT(bench))},
    {"performance", "TEMPLATE", "performance.md's template", "%s", F_STR(AT(performance))},
    {"readme", "FILE", "the README whose headline markers take OUT/headline.md\n[README.md when OUT is docs]", NULL,
     F_STR(AT(readme))},
    {"html", "DIR", "also a page per archived experiment and DIR/index.html", NULL, F_STR(AT(html_dir))},
    {"plots", "DIR", "the gnuplot scripts (as bigbatch plot)", NULL, F_STR(AT(plots_dir))},
    FLAG_HELP_ROW,
};

#undef AT

static void report_all_defaults(void *target)
{
    *(ResultsDocsOptions *)target = (ResultsDocsOptions){.experiments = "experiments", .archive = "results/archive",
                                                         .out = "docs", .bench = "bench/results",
                                                         .performance = "bench/performance.md.in"};
}

static const FlagTable REPORT_TABLE = {"report", REPORT_FLAGS, FLAG_COUNT(REPORT_FLAGS), sizeof(ReportFlags),
                                       report_defaults, REPORT_USAGE, "\nreport --all:\n", 0, UNKNOWN_ARG,
                                       MISSING_VALUE, "the experiment file", 1, 1};
static const FlagTable REPORT_ALL_TABLE = {"report", REPORT_ALL_FLAGS, FLAG_COUNT(REPORT_ALL_FLAGS),
                                           sizeof(ResultsDocsOptions), report_all_defaults, NULL, NULL, 0,
                                           UNKNOWN_ARG, MISSING_VALUE, NULL, 0, 0};

void report_flags_markdown(FILE *out) { flag_table_markdown(&REPORT_TABLE, out); }
void report_all_flags_markdown(FILE *out) { flag_table_markdown(&REPORT_ALL_TABLE, out); }

/* report --help: both tables, FILE's then --all's */
static void report_usage(void)
{
    flag_table_usage(&REPORT_TABLE, stdout);
    flag_table_usage(&REPORT_ALL_TABLE, stdout);
}

/* `bigbatch report FILE --replay-prune ...` (prune_replay.h) */
static int report_replay(const char *file, const ReportFlags *f)
{
    PruneOptions p;
    prune_options_defaults(&p);
    Error err = {{0}};
    long v;
    if (f->eta && cli_parse_long("--prune-eta", f->eta, 2, 100, &v, &err) == 0) p.eta = (int)v;
    if (!err.msg[0] && f->min_epochs && cli_parse_long("--prune-min-epochs", f->min_epochs, 1, 1000000, &v, &err) == 0)
        p.min_epochs = (int)v;
    if (!err.msg[0] && f->rungs) prune_parse_rungs(f->rungs, &p, &err);
    if (!err.msg[0] && f->min_epochs && f->rungs)
        error_set(&err, "--prune-min-epochs and --prune-rungs: give one (the rungs, or the first of them)");
    if (err.msg[0]) {
        fprintf(stderr, "bigbatch report: %s\n", err.msg);
        return 2;
    }
    if (prune_replay(stdout, file, f->scale, f->db, &p, &err) != 0) {
        fprintf(stderr, "bigbatch report: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The checks across report FILE's flags: 0, or 2 having said why. */
static int check_report(const ReportFlags *f)
{
    if (!f->replay && (f->eta || f->min_epochs || f->rungs)) {
        fprintf(stderr, "bigbatch report: --prune-eta, --prune-min-epochs and --prune-rungs are for --replay-prune\n");
        return 2;
    }
    if (f->replay && (f->html || f->plots || strcmp(f->format, "md"))) {
        fprintf(stderr, "bigbatch report: --replay-prune prints its own table: not with --html, --plots or --format\n");
        return 2;
    }
    return 0;
}

/* `bigbatch report --all ...` (results_docs.h) */
static int report_all(int argc, char **argv)
{
    ResultsDocsOptions o;
    report_all_defaults(&o);
    int rest;
    int taken = parse_or_say(&REPORT_ALL_TABLE, argc, argv, &o, &rest);
    if (taken == 1) report_usage();
    if (taken != 0) return taken < 0 ? 2 : 0;
    /* the repository's own docs come with its README's headline; pages made elsewhere do not
     * touch it unless asked */
    if (!o.readme && !strcmp(o.out, "docs")) o.readme = "README.md";
    Error err = {{0}};
    if (results_docs_write(&o, stderr, &err) != 0) {
        fprintf(stderr, "bigbatch report --all: %s\n", err.msg);
        return 1;
    }
    printf("%s/results.md, %s/benchmarks.md, %s/performance.md and %s/figures/ written\n", o.out, o.out, o.out,
           o.out);
    if (o.html_dir) printf("%s/index.html and a page per experiment written\n", o.html_dir);
    return 0;
}

/* `bigbatch report FILE [--scale S] [--db PATH] [--format md|csv]`, or `report --all` */
int cli_report(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--all")) return report_all(argc, argv);
    ReportFlags f;
    report_defaults(&f);
    int rest;
    int taken = parse_or_say(&REPORT_TABLE, argc, argv, &f, &rest);
    if (taken == 1) report_usage();
    if (taken != 0) return taken < 0 ? 2 : 0;
    const char *file = argv[rest], *scale = f.scale, *db = f.db, *format = f.format, *html = f.html, *plots = f.plots;
    if (check_report(&f)) return 2;
    if (f.replay) return report_replay(file, &f);
    Error err = {{0}};
    if (html) {
        HtmlReportRequest h = {.file = file, .scale = scale, .db = db, .plots_dir = plots, .dir = html};
        char *page = NULL;
        if (report_html_write(&h, &page, &err) != 0) {
            fprintf(stderr, "bigbatch report: --html: %s\n", err.msg);
            return 1;
        }
        printf("%s\n", page);
        free(page);
        return 0;
    }
    ReportRequest r = {.file = file, .scale = scale, .db = db, .format = !strcmp(format, "csv") ? REPORT_CSV : REPORT_MD,
                       .heading = 1};
    if (report_write(stdout, &r, &err) != 0) {
        fprintf(stderr, "bigbatch report: %s\n", err.msg);
        return 1;
    }
    return 0;
}
