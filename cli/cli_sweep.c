/* `bigbatch sweep` and `bigbatch runs`: the command lines of the sweep runner and of the
 * run listing. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../sweeps/flags/cli_args.h"
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

static void sweep_usage(FILE *f, const SweepOptions *d)
{
    fprintf(f,
            "usage: bigbatch sweep FILE [options]\n"
            "\n"
            "Runs every cell of an experiment file's grid (experiments/FORMAT.md), each run a\n"
            "`bigbatch train --db` process, and stores everything in one SQLite database.\n"
            "Running the same command again resumes: complete and diverged runs are skipped,\n"
            "runs left by a dead sweep are re-queued. Several sweeps may share one database.\n"
            "\n"
            "  --scale S          smoke | proxy | full: the file's section of overrides [%s]\n"
            "  --db PATH          results database [results/<experiment>.db]; run logs go to\n"
            "                     <PATH without .db>.logs/<run>.log\n"
            "  --workers N        runs at once in this process [%d]\n"
            "  --threads N        threads per run [cores / (workers x ranks)]\n"
            "  --ranks K          run each under `mpirun -np K` [%d]\n"
            "  --device NAME      every run's train --device: cpu, cuda, cuda:N [%s]\n"
            "  --mpirun CMD       the launcher for --ranks, its words split at blanks and\n"
            "                     run without a shell (quotes are ordinary characters) [%s]\n"
            "  --max-attempts N   a run killed from outside (OOM killer, kill -9) is tried again\n"
            "                     up to N attempts in all; one that fails by itself is tried\n"
            "                     again unless it failed the same way the attempt before [%d]\n"
            "  --retry-failed     run failed runs again (one attempt each, beyond N)\n"
            "  --stale-after SEC  a running run without a heartbeat for this long is re-queued [%g]\n"
            "  --progress-every SEC  a line per run in flight (epoch, step, loss, test accuracy,\n"
            "                     time left) and the sweep's ETA this often; the first within\n"
            "                     5 s; 0: none [30 on a terminal, else 600]\n"
            "  --repeats N        seeds per cell instead of the file's `repeats` (seeds 1..N;\n"
            "                     --repeats 1 is a first look at a file that asks for more)\n"
            "  --launcher L       local: runs are child processes here (mpirun for --ranks);\n"
            "                     slurm: inside a SLURM allocation (salloc, sbatch), each run is a\n"
            "                     job step (srun --ntasks K --cpus-per-task T --exclusive), as many at\n"
            "                     once as the allocation's tasks hold unless --workers says [local]\n"
            "  --print-sbatch     with --launcher slurm: write an sbatch script for the whole sweep\n"
            "                     (tasks, CPUs, a time limit from the runs measured so far) and exit\n"
            "  --checkpoint-every T  every run saves a checkpoint beside its log (<run>.ckpt) every\n"
            "                     T: a duration (90s, 30m, 2h; a bare number is seconds, checked\n"
            "                     after each step) or epochs (2e); a run interrupted (a signal,\n"
            "                     a time limit, a lost node, kill -9 of the sweep) resumes from it\n"
            "                     on its next attempt, its rows kept up to it [off]\n"
            "  --gpus-per-run N   --device cuda: GPUs of each run (srun --gpus; the script asks\n"
            "                     for workers x N) [one per rank]\n"
            "  --mem M, --partition P, --account A, --time T, --chdir DIR\n"
            "                     --print-sbatch: the script's #SBATCH lines of those names\n"
            "                     (--chdir: absolute, default the current folder; --output is\n"
            "                     relative to it; --time: else from the runs measured so far)\n"
            "  --sbatch-line TEXT --print-sbatch: a line `#SBATCH TEXT` of your own (repeatable)\n"
            "  --requeue          in a SLURM job, on SIGUSR2 (the script's --signal=B:USR2@90),\n"
            "                     SIGUSR1 or SIGTERM: checkpoint the runs, stop, and requeue the\n"
            "                     job (scontrol requeue); --print-sbatch's script passes it\n"
            "  --array            --print-sbatch: a job array, one task per run (or per N runs,\n"
            "                     --array-runs-per-task N), each task with a database of its own\n"
            "                     (<PATH without .db>.array/K.db) that `bigbatch merge --array PATH`\n"
            "                     or the next sweep on PATH merges in; logs and checkpoints as above\n"
            "  --array-task K     run only task K's runs (K*N .. K*N+N-1 of the grid, less those\n"
            "                     ended in PATH) into PATH's .array/K.db: what the array's tasks run\n"
            "  --prune asha       ASHA pruning (docs/cli.md, \"Pruning\"): at each rung a cell goes\n"
            "                     on only if its test accuracy there is in the top 1/eta of its group\n"
            "                     (the cells that differ only in the file's tuned axes); a run stopped\n"
            "                     at a rung is `pruned`, its rows kept up to that evaluation. A run\n"
            "                     at a rung its group has not decided waits stopped (SIGSTOP), its\n"
            "                     worker given to the next run; the decisions come from the rows\n"
            "                     alone: the same for any --workers and after a restart [off]\n"
            "  --prune-eta N      the reduction factor: max(1, n/N) of a rung's n cells go on [%d]\n"
            "  --prune-min-epochs E  the first rung; then E*eta, E*eta^2, ... below the run's\n"
            "                     epochs [ceil(epochs / eta^2)]\n"
            "  --prune-rungs LIST the rungs as epochs instead, e.g. 2,6\n"
            "  --dry-run          list the runs (and their status in the database) and exit\n"
            "  --quiet            no progress lines\n",
            d->scale, d->workers, d->ranks, d->device, d->mpirun, d->max_attempts, d->stale_after, d->prune.eta);
}

enum {
    S_SCALE = 256, S_DB, S_WORKERS, S_THREADS, S_RANKS, S_DEVICE, S_MPIRUN, S_ATTEMPTS, S_RETRY, S_STALE, S_PROGRESS,
    S_DRY, S_QUIET, S_LAUNCHER, S_SBATCH, S_REPEATS, S_CKPT, S_GPUS, S_MEM, S_PARTITION, S_ACCOUNT, S_TIME, S_CHDIR,
    S_LINE, S_REQUEUE, S_ARRAY, S_ARRAY_RUNS, S_ARRAY_TASK, S_PRUNE, S_PRUNE_ETA, S_PRUNE_MIN, S_PRUNE_RUNGS, S_HELP
};

/* A value for a #SBATCH line: one line of printable text (a newline would start a line of its
 * own in the script). */
static int sbatch_value(const char *flag, const char *v, const char **slot, Error *err)
{
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p < 32 || *p == 127) {
            error_set(err, "%s: '%s' holds a control character (a newline would be a line of the script)", flag, v);
            return -1;
        }
    if (!*v) {
        error_set(err, "%s: the value is empty", flag);
        return -1;
    }
    *slot = v;
    return 0;
}

/* The options only --print-sbatch reads, each checked as it comes; lines: room for argc. */
static int parse_sbatch_option(int c, const char *flag, SweepOptions *o, const char **lines, Error *err)
{
    long v;
    switch (c) {
    case S_GPUS:
        if (cli_parse_long("--gpus-per-run", optarg, 1, 1024, &v, err)) return -1;
        o->gpus_per_run = (int)v;
        return 0;
    case S_MEM: return sbatch_value(flag, optarg, &o->mem, err);
    case S_PARTITION: return sbatch_value(flag, optarg, &o->partition, err);
    case S_ACCOUNT: return sbatch_value(flag, optarg, &o->account, err);
    case S_TIME: return sbatch_value(flag, optarg, &o->time_limit, err);
    case S_CHDIR:
        if (optarg[0] != '/') {
            error_set(err, "--chdir: '%s' is not an absolute path", optarg);
            return -1;
        }
        return sbatch_value(flag, optarg, &o->chdir, err);
    default:
        if (sbatch_value(flag, optarg, &lines[o->n_sbatch_lines], err)) return -1;
        o->n_sbatch_lines++;
        return 0;
    }
}

/* --prune asha and its settings (prune.h). */
static int parse_prune_option(int c, PruneOptions *p, Error *err)
{
    long v;
    p->given = p->given || c != S_PRUNE;
    switch (c) {
    case S_PRUNE:
        if (strcmp(optarg, "asha")) {
            error_set(err, "--prune: '%s' is not asha (the one pruning rule there is)", optarg);
            return -1;
        }
        p->on = true;
        return 0;
    case S_PRUNE_ETA:
        if (cli_parse_long("--prune-eta", optarg, 2, 100, &v, err)) return -1;
        p->eta = (int)v;
        return 0;
    case S_PRUNE_MIN:
        if (cli_parse_long("--prune-min-epochs", optarg, 1, 1000000, &v, err)) return -1;
        p->min_epochs = (int)v;
        return 0;
    default: return prune_parse_rungs(optarg, p, err);
    }
}

static int parse_sweep(int argc, char **argv, SweepOptions *o, const char **lines, Error *err)
{
    static const struct option opts[] = {
        {"scale", required_argument, 0, S_SCALE},     {"db", required_argument, 0, S_DB},
        {"workers", required_argument, 0, S_WORKERS}, {"threads", required_argument, 0, S_THREADS},
        {"ranks", required_argument, 0, S_RANKS},     {"mpirun", required_argument, 0, S_MPIRUN},
        {"max-attempts", required_argument, 0, S_ATTEMPTS},
        {"device", required_argument, 0, S_DEVICE},
        {"retry-failed", no_argument, 0, S_RETRY},    {"stale-after", required_argument, 0, S_STALE},
        {"progress-every", required_argument, 0, S_PROGRESS},
        {"dry-run", no_argument, 0, S_DRY},           {"quiet", no_argument, 0, S_QUIET},
        {"launcher", required_argument, 0, S_LAUNCHER}, {"print-sbatch", no_argument, 0, S_SBATCH},
        {"repeats", required_argument, 0, S_REPEATS}, {"help", no_argument, 0, S_HELP},
        {"checkpoint-every", required_argument, 0, S_CKPT},
        {"gpus-per-run", required_argument, 0, S_GPUS}, {"mem", required_argument, 0, S_MEM},
        {"partition", required_argument, 0, S_PARTITION}, {"account", required_argument, 0, S_ACCOUNT},
        {"time", required_argument, 0, S_TIME}, {"chdir", required_argument, 0, S_CHDIR},
        {"sbatch-line", required_argument, 0, S_LINE}, {"requeue", no_argument, 0, S_REQUEUE},
        {"array", no_argument, 0, S_ARRAY}, {"array-runs-per-task", required_argument, 0, S_ARRAY_RUNS},
        {"array-task", required_argument, 0, S_ARRAY_TASK},
        {"prune", required_argument, 0, S_PRUNE}, {"prune-eta", required_argument, 0, S_PRUNE_ETA},
        {"prune-min-epochs", required_argument, 0, S_PRUNE_MIN}, {"prune-rungs", required_argument, 0, S_PRUNE_RUNGS},
        {0, 0, 0, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    long v;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case S_SCALE:
            if (!experiment_scale_known(optarg)) {
                error_set(err, "--scale: '%s' is not one of smoke, proxy, full", optarg);
                return -1;
            }
            o->scale = optarg;
            break;
        case S_DB: o->db = optarg; break;
        case S_WORKERS:
            if (cli_parse_long("--workers", optarg, 1, BB_MAX_PROCESSES, &v, err)) return -1;
            o->workers = (int)v;
            o->workers_given = true;
            break;
        case S_THREADS:
            if (cli_parse_long("--threads", optarg, 1, BB_MAX_THREADS, &v, err)) return -1;
            o->threads = (int)v;
            break;
        case S_RANKS:
            if (cli_parse_long("--ranks", optarg, 1, BB_MAX_PROCESSES, &v, err)) return -1;
            o->ranks = (int)v;
            break;
        case S_MPIRUN:
            if (!optarg[strspn(optarg, " \t")]) {
                error_set(err, "--mpirun: the launcher's command is empty");
                return -1;
            }
            o->mpirun = optarg;
            o->mpirun_given = true;
            break;
        case S_DEVICE:
            if (backend_device_check(optarg, err)) {
                error_prefix(err, "--device");
                return -1;
            }
            o->device = optarg;
            break;
        case S_ATTEMPTS:
            if (cli_parse_long("--max-attempts", optarg, 1, 100, &v, err)) return -1;
            o->max_attempts = (int)v;
            break;
        case S_RETRY: o->retry_failed = true; break;
        case S_STALE:
            if (cli_parse_double("--stale-after", optarg, &o->stale_after, err)) return -1;
            if (o->stale_after < 10) {
                error_set(err, "--stale-after: %g s is shorter than the 5 s heartbeat allows (at least 10)", o->stale_after);
                return -1;
            }
            break;
        case S_PROGRESS:
            if (cli_parse_double("--progress-every", optarg, &o->progress_every, err)) return -1;
            if (o->progress_every < 0) {
                error_set(err, "--progress-every: %g s is negative (0 turns the lines off)", o->progress_every);
                return -1;
            }
            break;
        case S_DRY: o->dry_run = true; break;
        case S_REPEATS:
            if (cli_parse_long("--repeats", optarg, 1, 1000, &v, err)) return -1;
            o->repeats = (int)v;
            break;
        case S_LAUNCHER:
            if (strcmp(optarg, "local") && strcmp(optarg, "slurm")) {
                error_set(err, "--launcher: '%s' is not local or slurm", optarg);
                return -1;
            }
            o->slurm = !strcmp(optarg, "slurm");
            break;
        case S_SBATCH: o->print_sbatch = true; break;
        case S_REQUEUE: o->requeue = true; break;
        case S_ARRAY: o->array = true; break;
        case S_ARRAY_RUNS:
            if (cli_parse_long("--array-runs-per-task", optarg, 1, 1000000, &v, err)) return -1;
            o->array_runs_per_task = (int)v;
            break;
        case S_ARRAY_TASK:
            if (cli_parse_long("--array-task", optarg, 0, 10000000, &v, err)) return -1;
            o->array_task = (int)v;
            break;
        case S_GPUS:
        case S_MEM:
        case S_PARTITION:
        case S_ACCOUNT:
        case S_TIME:
        case S_CHDIR:
        case S_LINE:
            if (parse_sbatch_option(c, flag, o, lines, err)) return -1;
            break;
        case S_PRUNE:
        case S_PRUNE_ETA:
        case S_PRUNE_MIN:
        case S_PRUNE_RUNGS:
            if (parse_prune_option(c, &o->prune, err)) return -1;
            break;
        case S_CKPT:
            if (checkpoint_every_parse("--checkpoint-every", optarg, &o->checkpoint_seconds, &o->checkpoint_epochs,
                                       err))
                return -1;
            break;
        case S_QUIET: o->quiet = true; break;
        case S_HELP: return 1;
        case ':': error_set(err, "%s needs a value", flag); return -1;
        default: error_set(err, "unknown option '%s' (bigbatch sweep --help)", flag); return -1;
        }
    }
    if (optind != argc - 1) {
        error_set(err, optind >= argc ? "which experiment file? (bigbatch sweep FILE)"
                                      : "one experiment file, not several (bigbatch sweep FILE)");
        return -1;
    }
    o->file = argv[optind];
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

int cli_sweep(int argc, char **argv)
{
    SweepOptions o;
    sweep_options_defaults(&o);
    Error err = {{0}};
    const char **lines = xcalloc((size_t)argc + 1, sizeof *lines, "--sbatch-line");
    o.sbatch_lines = lines;
    int parsed = parse_sweep(argc, argv, &o, lines, &err);
    if (parsed == 1) {
        sweep_usage(stdout, &o);
        free(lines);
        return 0;
    }
    if (parsed < 0) {
        fprintf(stderr, "bigbatch sweep: %s\n", err.msg);
        free(lines);
        return 2;
    }
    int rc = sweep_run(&o, &err);
    free(lines);
    if (rc < 0) {
        fprintf(stderr, "bigbatch sweep: %s\n", err.msg);
        return rc == SWEEP_USAGE ? 2 : 1;
    }
    return rc;
}

/* "--name value" options into their slots and at most one positional argument (when
 * `positional` is given): 0, 1 for --help, -1 after saying what is wrong. */
typedef struct {
    const char *name;
    const char **slot;
} ValueOption;

static int take_value_options(const char *cmd, int argc, char **argv, const ValueOption *opts, int n,
                              const char **positional)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help")) return 1;
        const char **slot = NULL;
        for (int k = 0; k < n && !slot; k++)
            if (!strcmp(argv[i], opts[k].name)) slot = opts[k].slot;
        if (!slot && positional && !*positional && argv[i][0] != '-') {
            *positional = argv[i];
            continue;
        }
        if (!slot || i + 1 >= argc) {
            fprintf(stderr, "bigbatch %s: %s '%s' (bigbatch %s --help)\n", cmd,
                    slot ? "a value is missing after" : "unknown option or extra argument", argv[i], cmd);
            return -1;
        }
        *slot = argv[++i];
    }
    return 0;
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

/* Takes the switch `name` out of argv (so the value options see the rest); true if present. */
static bool take_switch(int *argc, char **argv, const char *name)
{
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], name) != 0) continue;
        memmove(argv + i, argv + i + 1, (size_t)(*argc - i) * sizeof *argv);
        (*argc)--;
        return true;
    }
    return false;
}

/* `bigbatch runs --db PATH [--experiment NAME] [--status S] [--upgrade]`: one line per run. */
int cli_runs(int argc, char **argv)
{
    const char *db = NULL, *experiment = NULL, *status = NULL;
    const ValueOption opts[] = {{"--db", &db}, {"--experiment", &experiment}, {"--status", &status}};
    bool upgrade = take_switch(&argc, argv, "--upgrade");
    int taken = take_value_options("runs", argc, argv, opts, 3, NULL);
    if (taken == 1) {
        printf("usage: bigbatch runs --db PATH [--experiment NAME] [--status S] [--upgrade]\n"
               "Lists the runs in a results database: id, experiment, status, attempts, final\n"
               "test accuracy, steps, duration and cell (or, for a run started by hand, its flags);\n"
               "under a run tried more than once, how each earlier attempt ended and why.\n"
               "--upgrade first brings the file to this bigbatch's schema (results/SCHEMA.md; runs\n"
               "recorded complete at the chance level become collapsed), as any sweep on it would.\n");
        return 0;
    }
    if (taken < 0) return 2;
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
    "per group the full grid's best cell beside the pruned sweep's, and the epochs each trains.\n";

/* `bigbatch report FILE --replay-prune ...` (prune_replay.h) */
static int report_replay(const char *file, const char *scale, const char *db, const char *eta, const char *min_epochs,
                         const char *rungs)
{
    PruneOptions p;
    prune_options_defaults(&p);
    Error err = {{0}};
    long v;
    if (eta && cli_parse_long("--prune-eta", eta, 2, 100, &v, &err) == 0) p.eta = (int)v;
    if (!err.msg[0] && min_epochs && cli_parse_long("--prune-min-epochs", min_epochs, 1, 1000000, &v, &err) == 0)
        p.min_epochs = (int)v;
    if (!err.msg[0] && rungs) prune_parse_rungs(rungs, &p, &err);
    if (!err.msg[0] && min_epochs && rungs)
        error_set(&err, "--prune-min-epochs and --prune-rungs: give one (the rungs, or the first of them)");
    if (err.msg[0]) {
        fprintf(stderr, "bigbatch report: %s\n", err.msg);
        return 2;
    }
    if (prune_replay(stdout, file, scale, db, &p, &err) != 0) {
        fprintf(stderr, "bigbatch report: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* `bigbatch report --all ...` (results_docs.h) */
static int report_all(int argc, char **argv)
{
    ResultsDocsOptions o = {.experiments = "experiments", .archive = "results/archive", .out = "docs",
                            .bench = "bench/results", .performance = "bench/performance.md.in"};
    const ValueOption opts[] = {{"--experiments", &o.experiments}, {"--archive", &o.archive},
                                {"--out", &o.out},                 {"--plots", &o.plots_dir},
                                {"--html", &o.html_dir},           {"--bench", &o.bench},
                                {"--performance", &o.performance}, {"--readme", &o.readme},
                                {"--results", &o.results_dir}};
    int kept = 0; /* argv without --all */
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--all")) argv[kept++] = argv[i];
    int taken = take_value_options("report", kept, argv, opts, (int)(sizeof opts / sizeof opts[0]), NULL);
    if (taken == 1) {
        fputs(REPORT_USAGE, stdout);
        return 0;
    }
    if (taken < 0) return 2;
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
    const char *file = NULL, *scale = "proxy", *db = NULL, *format = "md", *html = NULL, *plots = NULL;
    const char *eta = NULL, *min_epochs = NULL, *rungs = NULL;
    const ValueOption opts[] = {{"--scale", &scale},          {"--db", &db},
                                {"--format", &format},        {"--html", &html},
                                {"--plots", &plots},          {"--prune-eta", &eta},
                                {"--prune-min-epochs", &min_epochs}, {"--prune-rungs", &rungs}};
    bool replay = take_switch(&argc, argv, "--replay-prune");
    int taken = take_value_options("report", argc, argv, opts, 8, &file);
    if (taken == 1) {
        fputs(REPORT_USAGE, stdout);
        return 0;
    }
    if (taken < 0) return 2;
    if (!file) {
        fprintf(stderr, "bigbatch report: which experiment file? (bigbatch report FILE)\n");
        return 2;
    }
    if (strcmp(format, "md") && strcmp(format, "csv")) {
        fprintf(stderr, "bigbatch report: --format: '%s' is not md or csv\n", format);
        return 2;
    }
    if (!experiment_scale_known(scale)) {
        fprintf(stderr, "bigbatch report: --scale: '%s' is not one of smoke, proxy, full\n", scale);
        return 2;
    }
    if (!replay && (eta || min_epochs || rungs)) {
        fprintf(stderr, "bigbatch report: --prune-eta, --prune-min-epochs and --prune-rungs are for --replay-prune\n");
        return 2;
    }
    if (replay && (html || plots || strcmp(format, "md"))) {
        fprintf(stderr, "bigbatch report: --replay-prune prints its own table: not with --html, --plots or --format\n");
        return 2;
    }
    if (replay) return report_replay(file, scale, db, eta, min_epochs, rungs);
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
