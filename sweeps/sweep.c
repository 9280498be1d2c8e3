/* The sweep runner: claim a run, start `bigbatch train` for it as a child process, collect
 * it, repeat; up to `workers` children at once. The sweep is the only writer of its
 * database: a child sends its metrics and final status as records on its standard output
 * (train --record-stream, run_stream.h), which the sweep reads through a pipe and writes
 * (run_output.h). The runner renews the leases of its runs and closes those whose child died
 * without saying how it ended. */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../engine/base/input_limits.h"
#include "array.h"
#include "claims.h"
#include "experiment.h"
#include "launcher.h"
#include "prune_store.h"
#include "run_checkpoint.h"
#include "run_output.h"
#include "run_rows.h"
#include "sbatch.h"
#include "slurm_state.h"
#include "store.h"
#include "../engine/base/version.h"

void sweep_options_defaults(SweepOptions *o)
{
    memset(o, 0, sizeof *o);
    o->scale = "proxy";
    o->workers = 1;
    o->ranks = 1;
    o->device = "cpu";
    o->stale_after = 120;
    o->progress_every = -1; /* sweep_progress_every: 30 s on a terminal, else 600 s */
    o->mpirun = "mpirun --oversubscribe";
    o->max_attempts = 3;
    o->array_runs_per_task = 1;
    o->array_task = -1;
    prune_options_defaults(&o->prune);
}

double sweep_progress_every(const SweepOptions *o)
{
    if (o->progress_every >= 0) return o->progress_every;
    return isatty(STDOUT_FILENO) ? 30 : 600;
}

void sweep_db_path(const char *db, const char *experiment_name, char *out, size_t len)
{
    if (db) snprintf(out, len, "%s", db);
    else snprintf(out, len, "results/%s.db", experiment_name);
}

/* Set by SIGINT/SIGTERM. A signal handler can only reach a static flag; nothing else in
 * the runner is static. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

typedef struct {
    pid_t pid;
    char run_id[65];
    int attempt;
    int spec;          /* index into the expanded runs */
    double started;
    RunOutput out;     /* its standard output: records and log lines */
    char checkpoint[1100]; /* --checkpoint-every: the run's checkpoint; "" without */
    bool resume;       /* this attempt goes on from it */
    int held;          /* --prune: 0 running; HELD_AT_RUNG stopped (SIGSTOP) at a rung until its group's
                        * decision; HELD_PROMOTED stopped and promoted, to go on when a worker is free */
    int held_epoch;    /* the rung it waits at */
} Child;

enum { HELD_AT_RUNG = 1, HELD_PROMOTED = 2 };

typedef struct {
    const SweepOptions *o;
    Store store;
    ClaimOwner owner;    /* this sweep's claims: token, lease, host, pid namespace */
    long long exp_id;
    const Experiment *exp;
    const RunSpec *runs;
    int n_runs;
    char bin[1024], log_dir[1024], db[1024];
    int threads;
    char threads_arg[16];  /* the child's --threads value: its argv points here */
    Child *children;
    struct pollfd *poll_fds;  /* one per worker: the children's output pipes */
    int n_children;
    int finished_here;
    double run_seconds;  /* summed over the runs finished here, for the ETA */
    char gone[400];      /* --launcher slurm: why the allocation is gone; "" while it is there */
    RunVerdict *verdicts; /* --prune: one per run, from the last look at the database */
    int max_children;     /* workers, and with --prune the runs held at rungs besides them */
} Sweep;

/* The sweep stops starting runs: a signal, or its SLURM allocation is gone. */
static bool stopping(const Sweep *w)
{
    return interrupted || w->gone[0];
}

static int spec_of(const Sweep *w, const char *run_id)
{
    for (int i = 0; i < w->n_runs; i++)
        if (!strcmp(w->runs[i].id, run_id)) return i;
    return -1;
}

static void say(const Sweep *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const Sweep *w, const char *fmt, ...)
{
    if (w->o->quiet) return;
    char stamp[16];
    time_t t = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%H:%M:%S", localtime_r(&t, &tm));
    printf("[%s] ", stamp);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static void format_duration(double s, char *out, size_t len)
{
    if (!isfinite(s) || s < 0) snprintf(out, len, "?");
    else if (s < 90) snprintf(out, len, "%.0fs", s);
    else if (s < 5400) snprintf(out, len, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else snprintf(out, len, "%.0fh%02.0fm", floor(s / 3600), fmod(floor(s / 60), 60));
}

/* The run's train command: its spec's flags, then how the sweep runs it; with checkpoints,
 * where to save them (handed off, run_checkpoint.h), how often, and what to resume from. */
static char **child_argv(const Sweep *w, const Child *c, char *every, size_t every_len)
{
    const char *extra[16] = {"--record-stream", "--run-id", c->run_id,    "--threads",
                             w->threads_arg,    "--device", w->o->device, "--quiet"};
    int n = 8;
    if (c->checkpoint[0]) {
        if (w->o->checkpoint_epochs > 0) snprintf(every, every_len, "%d", w->o->checkpoint_epochs);
        else snprintf(every, every_len, "%.17g", w->o->checkpoint_seconds);
        extra[n++] = "--save";
        extra[n++] = c->checkpoint;
        extra[n++] = "--save-handoff";
        extra[n++] = w->o->checkpoint_epochs > 0 ? "--save-every" : "--save-seconds";
        extra[n++] = every;
        if (c->resume) {
            extra[n++] = "--resume";
            extra[n++] = c->checkpoint;
        }
    }
    return runspec_train_argv(&w->runs[c->spec], w->bin, extra, n);
}

/* GPUs of a run's job step: --gpus-per-run, else one per rank with --device cuda; none on CPUs. */
static int step_gpus(const SweepOptions *o)
{
    if (strncmp(o->device, "cuda", 4) != 0) return 0;
    return o->gpus_per_run > 0 ? o->gpus_per_run : o->ranks;
}

/* The run's ends of its stdout pipe and its log: pipe[0] for the sweep (non-blocking),
 * pipe[1] for the run; log_fd appends to its log. Closed on exec, but for the dup2'd copies. */
static int open_output(const char *log, int pipe_fds[2], int *log_fd, Error *err)
{
    *log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (*log_fd < 0) {
        error_set(err, "%s: %s", log, strerror(errno));
        return -1;
    }
    if (pipe2(pipe_fds, O_CLOEXEC) != 0 || fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK) != 0) {
        error_set(err, "a pipe for run output: %s", strerror(errno));
        close(*log_fd);
        return -1;
    }
    return 0;
}

/* Forks and execs the run: its stdout comes to the sweep (records; other lines go to its log
 * file, appended per attempt), its stderr goes to the log file directly. */
static int spawn(Sweep *w, Child *c, Error *err)
{
    char log[1200];
    snprintf(log, sizeof log, "%s/%s.log", w->log_dir, c->run_id);
    int pipe_fds[2], log_fd;
    if (open_output(log, pipe_fds, &log_fd, err)) return -1;
    char every[32];
    char **argv = child_argv(w, c, every, sizeof every);
    /* srun ... <bin> train ... (a job step), or mpirun -np K <bin> train ...: an argument
     * vector, no shell (launcher.h) */
    char **exec_argv = w->o->slurm      ? slurm_step_argv(w->o->ranks, w->threads, step_gpus(w->o), c->run_id, argv, err)
                       : w->o->ranks > 1 ? launcher_argv(w->o->mpirun, w->o->ranks, argv, err)
                                         : argv;
    if (!exec_argv) {
        free(argv);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        close(log_fd);
        return -1;
    }
    char host[256];
    time_t t = time(NULL);
    char when[64];
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
    dprintf(log_fd, "=== run %s attempt %d on %s, %s, sweep pid %d\n===", c->run_id, c->attempt,
            store_hostname(host, sizeof host), when, (int)getpid());
    for (char **a = exec_argv; *a; a++) dprintf(log_fd, " %s", *a);
    dprintf(log_fd, "\n");
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        if (exec_argv != argv) free(exec_argv);
        free(argv);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        close(log_fd);
        error_set(err, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* The run dies with its sweep (even by kill -9), so a restarted sweep can take it over. */
        /* A run held at a rung (SIGSTOP) would never act on a SIGTERM: with --prune it is SIGKILL. */
        prctl(PR_SET_PDEATHSIG, w->o->prune.on ? SIGKILL : SIGTERM);
        if (getppid() != parent) _exit(1);
        int in = open("/dev/null", O_RDONLY);
        if (in < 0 || dup2(pipe_fds[1], 1) < 0 || dup2(log_fd, 2) < 0 || dup2(in, 0) < 0) _exit(126);
        close(in);
        /* Runs side by side must not spin-wait for cores (docs/engine.md: "Engine layout"). */
        setenv("OMP_WAIT_POLICY", "passive", 0);
        /* the worker slot: a bare --device cuda puts each worker's runs on a GPU of their own */
        char slot[16];
        snprintf(slot, sizeof slot, "%d", (int)(c - w->children));
        setenv("BIGBATCH_WORKER", slot, 1);
        if (w->o->ranks > 1 && geteuid() == 0) { /* Open MPI refuses root unless told twice */
            setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
            setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
        }
        execvp(exec_argv[0], exec_argv);
        fprintf(stderr, "bigbatch sweep: cannot run %s: %s\n", exec_argv[0], strerror(errno));
        _exit(127);
    }
    if (exec_argv != argv) free(exec_argv);
    free(argv);
    close(pipe_fds[1]);
    run_output_init(&c->out, pipe_fds[0], log_fd, c->checkpoint[0] ? c->checkpoint : NULL);
    c->pid = pid;
    c->started = now_seconds();
    return 0;
}

/* The rows of the run's earlier attempts go before this one sends any; with checkpoints, only
 * those after its last one (run_checkpoint.h), and the attempt resumes from it. */
static int clear_earlier_attempts(Sweep *w, Child *c, Error *err)
{
    if (!w->o->checkpoint_seconds && !w->o->checkpoint_epochs) {
        if (store_begin(&w->store, err)) return -1;
        if (run_rows_clear(&w->store, c->run_id, bigbatch_version(), err) || store_commit(&w->store, err)) {
            store_rollback(&w->store);
            return -1;
        }
        return 0;
    }
    char said[800];
    run_checkpoint_path(w->log_dir, c->run_id, c->checkpoint, sizeof c->checkpoint);
    if (run_checkpoint_prepare(&w->store, c->checkpoint, c->run_id, bigbatch_version(), &c->resume, said,
                               sizeof said, err))
        return -1;
    if (said[0]) say(w, "run   %s  %s", c->run_id, said);
    return 0;
}

/* Writes what the child has sent; a child whose claim was lost, or that sent a record the sweep
 * cannot read, is stopped. to_end: it has exited, read all it left. */
static int read_child(Sweep *w, Child *c, bool to_end, Error *err)
{
    RunClaim claim = {&w->store, &w->owner, c->run_id, c->attempt};
    bool was_stopped = c->out.lost || c->out.refused;
    if (run_output_read(&c->out, &claim, to_end, err)) return -1;
    if (!to_end && !was_stopped && (c->out.lost || c->out.refused)) {
        kill(c->pid, SIGTERM);
        if (c->held) kill(c->pid, SIGCONT); /* held at a rung (--prune): it acts on it now */
    }
    return 0;
}

/* Waits up to `seconds` for output of any child, and reads it. */
static int wait_for_output(Sweep *w, double seconds, Error *err)
{
    struct pollfd *fds = w->poll_fds;
    int n = w->n_children;
    for (int i = 0; i < n; i++) fds[i] = (struct pollfd){.fd = w->children[i].out.fd, .events = POLLIN};
    if (poll(fds, (nfds_t)n, (int)(seconds * 1000)) < 0) return 0; /* a signal: the loop looks at it */
    for (int i = 0; i < n; i++)
        if (fds[i].revents && read_child(w, &w->children[i], false, err)) return -1;
    return 0;
}

/* Claims and starts runs while a worker slot is free; the number started, or -1. */
/* The children that hold a worker: all but those stopped at a rung (--prune). */
static int active_children(const Sweep *w)
{
    int n = 0;
    for (int i = 0; i < w->n_children; i++) n += w->children[i].held == 0;
    return n;
}

/* A run promoted at its rung goes on before any new run starts (ASHA's order): 1 if one did. */
static int resume_promoted(Sweep *w)
{
    for (int i = 0; i < w->n_children; i++) {
        Child *c = &w->children[i];
        if (c->held != HELD_PROMOTED) continue;
        kill(c->pid, SIGCONT);
        c->held = 0;
        say(w, "go on %s  %s  (promoted at the rung of epoch %d)", c->run_id, w->runs[c->spec].label, c->held_epoch);
        return 1;
    }
    return 0;
}

static int fill_slots(Sweep *w, Error *err)
{
    int started = 0;
    while (active_children(w) < w->o->workers && !stopping(w)) {
        if (resume_promoted(w)) continue;
        if (w->n_children == w->max_children) break;
        Child c = {0};
        int got = claims_take(&w->store, &w->owner, w->log_dir, c.run_id, &c.attempt, err);
        if (got < 0) return -1;
        if (got == 0) break;
        c.spec = spec_of(w, c.run_id);
        if (c.spec < 0) { /* cannot happen: claims_take takes only the runs registered from these specs */
            error_set(err, "claimed run %s is not in the expanded grid", c.run_id);
            return -1;
        }
        if (clear_earlier_attempts(w, &c, err) || spawn(w, &c, err) != 0) {
            Error e2 = {{0}};
            claims_close(&w->store, c.run_id, c.attempt, RUN_FAILED, -1, err->msg, &e2);
            return -1;
        }
        w->children[w->n_children++] = c;
        say(w, "start %s  %s  (attempt %d)", c.run_id, w->runs[c.spec].label, c.attempt);
        started++;
    }
    return started;
}

/* The run's own account of how it ended, for the progress line. */
static void describe_end(Sweep *w, const Child *c, char *out, size_t len)
{
    sqlite3_stmt *st;
    Error err = {{0}};
    snprintf(out, len, "?");
    if (store_prepare(&w->store, &st, "SELECT status, test_acc, error, diverged_step FROM runs WHERE id=?1", &err))
        return;
    sqlite3_bind_text(st, 1, c->run_id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *status = (const char *)sqlite3_column_text(st, 0);
        if (!strcmp(status, "complete"))
            snprintf(out, len, "complete test_acc=%.4f", sqlite3_column_double(st, 1));
        else if (!strcmp(status, "diverged"))
            snprintf(out, len, "diverged at step %d", sqlite3_column_int(st, 3));
        else if (!strcmp(status, "collapsed"))
            snprintf(out, len, "collapsed to chance, test_acc=%.4f", sqlite3_column_double(st, 1));
        else if (!strcmp(status, "pruned"))
            snprintf(out, len, "pruned, test_acc=%.4f at its last evaluation", sqlite3_column_double(st, 1));
        else if (!strcmp(status, "pending"))
            snprintf(out, len, "%s; tried again (%d of at most %d attempts so far)",
                     (const char *)sqlite3_column_text(st, 2), c->attempt, w->o->max_attempts);
        else
            snprintf(out, len, "%s: %s", status, sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
    }
    sqlite3_finalize(st);
}

static void report_progress(Sweep *w)
{
    int counts[RUN_N_STATUS];
    Error err = {{0}};
    if (claims_count(&w->store, counts, &err) != 0) return;
    int ended = counts[RUN_COMPLETE] + counts[RUN_COLLAPSED] + counts[RUN_DIVERGED] + counts[RUN_FAILED];
    int left = counts[RUN_PENDING] + counts[RUN_STALE] + counts[RUN_RUNNING];
    /* Runs train in our workers and in any other sweep process on this database (the runs
     * running that are not ours), so the runs left share that many lanes. */
    int others = counts[RUN_RUNNING] - w->n_children;
    int lanes = w->o->workers + (others > 0 ? others : 0);
    if (lanes > left) lanes = left > 0 ? left : 1;
    char eta[32] = "?";
    if (w->finished_here > 0) format_duration(w->run_seconds / w->finished_here * left / lanes, eta, sizeof eta);
    say(w, "%d/%d runs ended (%d complete, %d collapsed, %d diverged, %d failed), %d running, %d waiting; ETA %s",
        ended, w->n_runs, counts[RUN_COMPLETE], counts[RUN_COLLAPSED], counts[RUN_DIVERGED], counts[RUN_FAILED],
        counts[RUN_RUNNING],
        counts[RUN_PENDING] + counts[RUN_STALE], eta);
}

/* How an attempt whose process exited (wait status st) ended, and whether it is tried again:
 * a run killed from outside (OOM killer, kill -9) while it had attempts left, or one that
 * failed by itself other than the attempt before it did (a run failing the same way twice,
 * as a bad configuration does, is not tried a third time). Diverged is a result. */
static int end_attempt(Sweep *w, const Child *c, int st, Error *err)
{
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    int status;
    char recorded[512], why[600], before[600];
    if (claims_attempt_state(&w->store, c->run_id, c->attempt, &status, recorded, sizeof recorded, err)) return -1;
    if (status < 0) return 0; /* taken over by another sweep: its attempt, not ours */
    AttemptEnd e = {.run_id = c->run_id, .attempt = c->attempt, .exit_code = code};
    if (status == RUN_COMPLETE || status == RUN_DIVERGED || status == RUN_COLLAPSED || status == RUN_PRUNED) {
        e.outcome = RUN_STATUS_NAMES[status];
        return claims_end_attempt(&w->store, &e, err);
    }
    char log[1200];
    snprintf(log, sizeof log, "%s/%s.log", w->log_dir, c->run_id);
    if (w->o->slurm && (w->gone[0] || slurm_allocation_gone(log, w->gone, sizeof w->gone))) {
        /* not the run's failure: it waits in the queue for the next allocation */
        snprintf(why, sizeof why, "the SLURM allocation is gone: %s", w->gone);
        e.outcome = "interrupted";
        e.reason = why;
        e.next = RUN_STALE;
        return claims_end_attempt(&w->store, &e, err);
    }
    if (code == TRAIN_EXIT_CHECKPOINTED && status == RUN_RUNNING) { /* stopped by a SIGUSR1 from outside */
        e.outcome = "interrupted";
        e.reason = "the run saved its checkpoint and stopped (SIGUSR1)";
        e.next = RUN_STALE;
        return claims_end_attempt(&w->store, &e, err);
    }
    /* srun reports a task killed by signal S (a cancelled step, a lost node) as exit 128 + S */
    const int signal = WIFSIGNALED(st) ? WTERMSIG(st) : w->o->slurm && code > 128 && code < 160 ? code - 128 : 0;
    const bool killed = signal && status == RUN_RUNNING;
    if (killed)
        snprintf(why, sizeof why, "the run's %s was killed by signal %d (%s)", w->o->slurm ? "job step" : "process",
                 signal, strsignal(signal));
    else if (status == RUN_FAILED && recorded[0])
        snprintf(why, sizeof why, "%s", recorded);
    else
        snprintf(why, sizeof why, "the run's process exited with status %d without recording its end", code);
    if (claims_previous_reason(&w->store, c->run_id, c->attempt, before, sizeof before, err)) return -1;
    e.outcome = killed ? "killed" : "failed";
    e.reason = why;
    bool retry = c->attempt < w->o->max_attempts && (killed || strcmp(before, why) != 0);
    e.next = retry ? RUN_PENDING : RUN_FAILED;
    return claims_end_attempt(&w->store, &e, err);
}

/* Collects children that exited: each attempt's end is recorded, and a run that did not
 * record its own is tried again or closed as failed (end_attempt). */
static int reap(Sweep *w, Error *err)
{
    for (int i = 0; i < w->n_children;) {
        Child *c = &w->children[i];
        int st;
        pid_t r = waitpid(c->pid, &st, WNOHANG);
        if (r == 0) {
            i++;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            error_set(err, "waiting for run %s: %s", c->run_id, strerror(errno));
            return -1;
        }
        int read_rc = read_child(w, c, true, err);
        run_output_close(&c->out);
        if (read_rc) return -1;
        if (stopping(w) && !w->gone[0]) { /* back to the queue, for the next sweep */
            AttemptEnd e = {.run_id = c->run_id, .attempt = c->attempt, .exit_code = -1, .outcome = "interrupted",
                            .reason = "the sweep was interrupted", .next = RUN_STALE};
            if (claims_end_attempt(&w->store, &e, err) != 0) return -1;
        } else if (end_attempt(w, c, st, err) != 0) {
            return -1;
        }
        double took = now_seconds() - c->started;
        char end[256], dur[32];
        describe_end(w, c, end, sizeof end);
        format_duration(took, dur, sizeof dur);
        say(w, "end   %s  %s  %s in %s", c->run_id, w->runs[c->spec].label, end, dur);
        if (!stopping(w)) {
            w->finished_here++;
            w->run_seconds += took;
        }
        w->children[i] = w->children[--w->n_children];
        if (!stopping(w)) report_progress(w);
    }
    return 0;
}

static const char *flag_value(const RunSpec *r, const char *name)
{
    for (int i = 0; i < r->n_flags; i++)
        if (!strcmp(r->flag_names[i], name)) return r->flag_values[i];
    return "";
}

/* What a run in flight has recorded: epochs done, the last epoch's step, elapsed time and
 * test accuracy, and its last step and loss (steps are written every 10 s). */
typedef struct {
    int epochs_done;
    long long epoch_step, steps; /* steps: the last recorded one, 1-based */
    double acc, loss;
} RunPace;

static void read_pace(Sweep *w, const char *run_id, RunPace *p)
{
    *p = (RunPace){.acc = NAN, .loss = NAN};
    Error err = {{0}};
    sqlite3_stmt *st;
    if (store_prepare(&w->store, &st,
                      "SELECT (SELECT count(*) FROM epochs WHERE run_id=?1),"
                      " (SELECT test_acc FROM epochs WHERE run_id=?1 ORDER BY epoch DESC LIMIT 1),"
                      " (SELECT step FROM epochs WHERE run_id=?1 ORDER BY epoch DESC LIMIT 1),"
                      " (SELECT step FROM steps WHERE run_id=?1 ORDER BY step DESC LIMIT 1),"
                      " (SELECT loss FROM steps WHERE run_id=?1 ORDER BY step DESC LIMIT 1)",
                      &err))
        return;
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        p->epochs_done = sqlite3_column_int(st, 0);
        if (sqlite3_column_type(st, 1) != SQLITE_NULL) p->acc = sqlite3_column_double(st, 1);
        p->epoch_step = sqlite3_column_int64(st, 2);
        if (sqlite3_column_type(st, 3) != SQLITE_NULL) p->steps = sqlite3_column_int64(st, 3) + 1;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL) p->loss = sqlite3_column_double(st, 4);
    }
    sqlite3_finalize(st);
}

/* The fraction of a run done: steps over the steps of all its epochs, once an epoch has
 * told how many steps one has; 0 when nothing says yet. */
static double run_fraction(const RunPace *p, long epochs)
{
    if (epochs <= 0 || p->epochs_done <= 0 || p->epoch_step <= 0) return 0;
    double total = (double)p->epoch_step / p->epochs_done * (double)epochs;
    double f = (double)(p->steps > p->epoch_step ? p->steps : p->epoch_step) / total;
    return f < 1 ? f : 1;
}

/* A line per run in flight, so that a sweep shows it is alive: epoch, last loss and test
 * accuracy, time so far and left at its pace; then the sweep's time left, from the runs
 * finished here or, before any has, from the pace of those in flight. */
static void report_running(Sweep *w)
{
    double left_sum = 0, total_sum = 0;
    int paced = 0;
    for (int i = 0; i < w->n_children; i++) {
        const Child *c = &w->children[i];
        const RunSpec *r = &w->runs[c->spec];
        RunPace p;
        read_pace(w, c->run_id, &p);
        long epochs = strtol(flag_value(r, "epochs"), NULL, 10);
        double so_far = now_seconds() - c->started, f = run_fraction(&p, epochs);
        char total[24] = "", acc_text[40] = "", loss_text[32] = "", spent[32], left[48] = "";
        if (epochs > 0) snprintf(total, sizeof total, "/%ld", epochs);
        if (isfinite(p.loss)) snprintf(loss_text, sizeof loss_text, ", loss %.4f", p.loss);
        if (isfinite(p.acc)) snprintf(acc_text, sizeof acc_text, ", test_acc %.4f", p.acc);
        format_duration(so_far, spent, sizeof spent);
        if (f > 0 && f < 1) {
            char d[32];
            format_duration(so_far * (1 - f) / f, d, sizeof d);
            snprintf(left, sizeof left, ", about %s left", d);
            left_sum += so_far * (1 - f) / f;
            total_sum += so_far / f;
            paced++;
        }
        say(w, "run   %s  %s  epoch %d%s, step %lld%s%s; %s so far%s", c->run_id, r->label, p.epochs_done, total,
            p.steps, loss_text, acc_text, spent, left);
    }
    int counts[RUN_N_STATUS];
    Error err = {{0}};
    if (claims_count(&w->store, counts, &err) != 0) return;
    int waiting = counts[RUN_PENDING] + counts[RUN_STALE];
    double per_run = w->finished_here > 0 ? w->run_seconds / w->finished_here : paced ? total_sum / paced : 0;
    char eta[32] = "not known yet";
    if (per_run > 0 && paced == w->n_children)
        format_duration((left_sum + per_run * waiting) / (w->o->workers > 0 ? w->o->workers : 1), eta, sizeof eta);
    say(w, "sweep %d/%d runs ended, %d running, %d waiting; ETA %s", w->n_runs - waiting - counts[RUN_RUNNING],
        w->n_runs, counts[RUN_RUNNING], waiting, eta);
}

static Child *child_of_spec(Sweep *w, int spec)
{
    for (int i = 0; i < w->n_children; i++)
        if (w->children[i].spec == spec) return &w->children[i];
    return NULL;
}

/* A run of a cell stopped at a rung is marked pruned (any run of the sweep's database: a
 * restarted sweep prunes what the rows of the last one decide, and one that ended past its rung
 * before the sweep looked is cut back to it); one of ours is killed, its rows after the rung
 * already gone. */
static int prune_run(Sweep *w, int spec, const RunVerdict *v, Error *err)
{
    bool marked = false;
    if (strcmp(v->status, "pruned") && prune_mark(&w->store, w->runs[spec].id, v->epoch, &marked, err)) return -1;
    Child *c = child_of_spec(w, spec);
    /* nothing of it is wanted past the rung, stopped or not; pruned by another sweep on this
     * database too (held here, it would never act on the SIGTERM a lost claim sends) */
    if (c && (marked || !strcmp(v->status, "pruned"))) kill(c->pid, SIGKILL);
    if (marked) say(w, "prune %s  %s  at the rung of epoch %d", w->runs[spec].id, w->runs[spec].label, v->epoch);
    return 0;
}

/* --prune: the decisions the database allows now. A run of ours at an undecided rung is
 * stopped (SIGSTOP: it keeps its memory, gives up its worker); a promoted one goes on when a
 * worker is free (fill_slots); a stopped cell's runs are pruned. */
static int prune_step(Sweep *w, Error *err)
{
    if (prune_scan(&w->store, w->exp, w->runs, w->n_runs, &w->o->prune, w->verdicts, err)) return -1;
    for (int i = 0; i < w->n_runs; i++) {
        const RunVerdict *v = &w->verdicts[i];
        if (v->verdict == PRUNE_STOP && v->reached && prune_run(w, i, v, err))
            return -1;
    }
    for (int i = 0; i < w->n_children; i++) {
        Child *c = &w->children[i];
        const RunVerdict *v = &w->verdicts[c->spec];
        if (v->verdict == PRUNE_HOLD && c->held == 0) {
            kill(c->pid, SIGSTOP);
            c->held = HELD_AT_RUNG;
            c->held_epoch = v->epoch;
            say(w, "hold  %s  %s  at the rung of epoch %d, until its group has reached it", c->run_id,
                w->runs[c->spec].label, v->epoch);
        } else if (v->verdict == PRUNE_GO && c->held == HELD_AT_RUNG) {
            c->held = HELD_PROMOTED;
        }
    }
    return 0;
}

static int heartbeat_all(Sweep *w, Error *err)
{
    for (int i = 0; i < w->n_children; i++)
        if (claims_heartbeat(&w->store, &w->owner, w->children[i].run_id, w->children[i].attempt, err) != 0)
            return -1;
    return 0;
}

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL); /* a signal cuts it short, which is what we want */
}

/* The runs and their status; a database that is there but does not open (not ours, malformed)
 * is an error, not "not created yet". */
static int dry_run(const Sweep *w, Error *err)
{
    Store s;
    struct stat st_db; /* an empty file is a database not created yet, as the sweep takes it */
    bool have_db = stat(w->db, &st_db) == 0 && st_db.st_size > 0;
    if (have_db && store_open(&s, w->db, true, err) != 0) return -1;
    printf("%s (%s scale): %d runs; database %s%s\n", w->exp->name, w->exp->scale, w->n_runs, w->db,
           have_db ? "" : " (not created yet)");
    printf("%4s  %-16s  %-9s  %s\n", "seq", "run", "status", "cell");
    for (int i = 0; i < w->n_runs; i++) {
        char status[16] = "new";
        if (have_db) {
            sqlite3_stmt *st;
            if (store_prepare(&s, &st, "SELECT status FROM runs WHERE id=?1", err) == 0) {
                sqlite3_bind_text(st, 1, w->runs[i].id, -1, SQLITE_STATIC);
                if (sqlite3_step(st) == SQLITE_ROW) snprintf(status, sizeof status, "%s", sqlite3_column_text(st, 0));
                sqlite3_finalize(st);
            }
        }
        printf("%4d  %-16s  %-9s  %s seed=%s\n", w->runs[i].seq, w->runs[i].id, status, w->runs[i].label,
               flag_value(&w->runs[i], "seed"));
    }
    if (have_db) store_close(&s);
    return 0;
}

static int self_path(char *out, size_t len, Error *err)
{
    if (self_exe_path(out, len) == 0) return 0;
    error_set(err, "cannot find this program's path (/proc/self/exe): %s", strerror(errno));
    return -1;
}

/* A signal or a lost allocation: the runs in flight stop and stay queued. With checkpoints they
 * are asked to save first (SIGUSR1: after the step in progress); the sweep waits for them. */
static int stop_children(Sweep *w, Error *err)
{
    const bool save = w->o->checkpoint_seconds > 0 || w->o->checkpoint_epochs > 0;
    if (w->gone[0]) say(w, "the SLURM allocation is gone (%s): stopping; the runs stay queued", w->gone);
    else say(w, "interrupted (signal %d): %s %d run%s; they stay queued", (int)interrupted,
             save ? "checkpointing and stopping" : "stopping", w->n_children, w->n_children == 1 ? "" : "s");
    for (int i = 0; i < w->n_children; i++) {
        kill(w->children[i].pid, save ? SIGUSR1 : SIGTERM);
        if (w->children[i].held) kill(w->children[i].pid, SIGCONT); /* a stopped run acts on it now */
    }
    while (w->n_children > 0)
        if (reap(w, err) || wait_for_output(w, 0.05, err)) return -1;
    return 0;
}

static int run_loop(Sweep *w, Error *err)
{
    const SweepOptions *o = w->o;
    int n;
    if (o->retry_failed) {
        if (claims_retry_failed(&w->store, w->exp_id, &n, err)) return -1;
        if (n) say(w, "retrying %d failed run%s", n, n == 1 ? "" : "s");
    }
    /* The first lines on runs in flight come within seconds, then every `every`. */
    const double every = sweep_progress_every(o);
    double last_beat = 0, last_stale = 0, last_prune = 0, last_progress = now_seconds() - every + (every < 5 ? every : 5);
    for (;;) {
        double t = now_seconds();
        if (t - last_stale > 5) {
            char why[700];
            if (claims_mark_stale(&w->store, w->exp_id, &w->owner, o->stale_after, &n, why, sizeof why, err))
                return -1;
            if (n) say(w, "%d run%s left by a dead or silent process re-queued (%s%s)", n, n == 1 ? "" : "s",
                       n > 1 ? "first " : "", why);
            last_stale = t;
        }
        if (stopping(w)) break;
        if (fill_slots(w, err) < 0) return -1;
        if (w->n_children == 0) {
            int counts[RUN_N_STATUS];
            if (claims_count(&w->store, counts, err)) return -1;
            if (counts[RUN_PENDING] + counts[RUN_STALE] + counts[RUN_RUNNING] == 0) {
                /* runs that ended past a rung since the last look are judged before the end */
                if (o->prune.on && prune_step(w, err)) return -1;
                break;
            }
            /* Only other processes' runs are left: wait for them (or for them to go stale). */
            sleep_seconds(1);
            continue;
        }
        if (reap(w, err)) return -1;
        if (o->prune.on && now_seconds() - last_prune > 0.2) {
            if (prune_step(w, err)) return -1;
            last_prune = now_seconds();
        }
        if (now_seconds() - last_beat > 5) {
            if (heartbeat_all(w, err)) return -1;
            last_beat = now_seconds();
        }
        if (every > 0 && now_seconds() - last_progress >= every) {
            report_running(w);
            last_progress = now_seconds();
        }
        if (wait_for_output(w, 0.1, err)) return -1;
    }
    return stopping(w) ? stop_children(w, err) : 0;
}

/* --requeue: the job goes back to SLURM's queue and its next start resumes the runs; not
 * after a scancel, whose SIGTERM is the same as a time limit's. */
static void requeue(Sweep *w)
{
    char why[2200];
    if (interrupted == SIGTERM && slurm_cancelled(why, sizeof why)) {
        say(w, "not requeued: %s (cancelled)", why);
        return;
    }
    if (slurm_requeue(why, sizeof why) == 0) say(w, "requeued SLURM job %s", getenv("SLURM_JOB_ID"));
    else say(w, "cannot requeue: %s", why);
}

/* --repeats: seeds 1..n per cell (the file's seed + 0..n-1); a file whose seed is an axis of
 * its grid has one run per seed already. */
static int override_repeats(Experiment *exp, int n, Error *err)
{
    for (int i = 0; i < exp->n_keys; i++) {
        if (strcmp(exp->keys[i].name, "seed") || exp->keys[i].role == KEY_FIXED || n == 1) continue;
        error_set(err, "--repeats %d: %s varies 'seed' in its grid, so each cell is one run per seed", n, exp->path);
        return -1;
    }
    exp->repeats = n;
    return 0;
}

/* only_labels: the runs of those cells, in grid order; a label that names no cell is an error. */
static int keep_labels(const SweepOptions *o, RunSpec *runs, int *n_runs, Error *err)
{
    for (int k = 0; k < o->n_only_labels; k++) {
        bool found = false;
        for (int i = 0; i < *n_runs && !found; i++) found = !strcmp(runs[i].label, o->only_labels[k]);
        if (!found) {
            error_set(err, "no cell '%s' in %s (its labels are like '%s')", o->only_labels[k], o->file,
                      *n_runs ? runs[0].label : "");
            return -1;
        }
    }
    int kept = 0;
    for (int i = 0; i < *n_runs; i++) {
        bool keep = false;
        for (int k = 0; k < o->n_only_labels && !keep; k++) keep = !strcmp(runs[i].label, o->only_labels[k]);
        if (keep) {
            RunSpec t = runs[kept];
            runs[kept++] = runs[i];
            runs[i] = t;
        }
    }
    for (int i = kept; i < *n_runs; i++) runspec_clear(&runs[i]);
    *n_runs = kept;
    return 0;
}

/* Inside a SLURM allocation: unless given, the workers are the allocation's tasks over the
 * ranks, and the threads its CPUs per task. */
static int slurm_allocation(SweepOptions *o, Error *err)
{
    if (!getenv("SLURM_JOB_ID")) {
        error_set(err, "--launcher slurm: not inside a SLURM allocation (no SLURM_JOB_ID): run it under salloc, or "
                       "in an sbatch script (--print-sbatch writes one)");
        return -1;
    }
    const char *tasks = getenv("SLURM_NTASKS"), *cpus = getenv("SLURM_CPUS_PER_TASK");
    long n = tasks ? strtol(tasks, NULL, 10) : 0;
    if (!o->workers_given && n > 0) o->workers = n / o->ranks > 0 ? (int)(n / o->ranks) : 1;
    long t = cpus ? strtol(cpus, NULL, 10) : 0;
    if (o->threads == 0) o->threads = t > 0 && t <= BB_MAX_THREADS ? (int)t : 1;
    return 0;
}

/* The databases a job array's tasks left (array.h), folded into the sweep's before it starts;
 * those of tasks still at work are left for later. */
static int fold_array(Sweep *w, Error *err)
{
    int merged, left;
    if (array_fold(w->db, false, stdout, &merged, &left, err)) return -1;
    if (merged + left) say(w, "job array: %d task database%s merged into %s, %d left", merged, merged == 1 ? "" : "s",
                           w->db, left);
    return 0;
}

int sweep_run(const SweepOptions *given, Error *err)
{
    SweepOptions eff = *given;
    const SweepOptions *o = &eff;
    Experiment exp;
    RunSpec *runs = NULL;
    int n_runs = 0, rc = SWEEP_ERROR;
    /* Everything about the file is checked before the database is touched; --dry-run checks
     * every scale, so that a value only the full scale uses is not first seen on a cluster. */
    if (o->dry_run && experiment_check_scales(o->file, err) != 0) return SWEEP_USAGE;
    if (experiment_load(o->file, o->scale, &exp, err) != 0) return SWEEP_USAGE;
    if (o->repeats > 0 && override_repeats(&exp, o->repeats, err) != 0) {
        experiment_free(&exp);
        return SWEEP_USAGE;
    }
    if (experiment_expand(&exp, &runs, &n_runs, err) != 0) {
        experiment_free(&exp);
        return SWEEP_USAGE;
    }
    if (o->n_only_labels > 0 && keep_labels(o, runs, &n_runs, err) != 0) goto out_runs;
    if (o->prune.on && exp.n_tuned == 0) {
        error_set(err, "--prune asha: %s tunes no axis (its [experiment] `tuned =`), so no cell has a group to be "
                       "compared in", o->file);
        rc = SWEEP_USAGE;
        goto out_runs;
    }
    Sweep w;
    memset(&w, 0, sizeof w);
    w.o = o;
    w.exp = &exp;
    w.runs = runs;
    w.n_runs = n_runs;
    sweep_db_path(o->db, exp.name, w.db, sizeof w.db);
    /* logs and checkpoints beside the sweep's database, also for an array task's runs */
    snprintf(w.log_dir, sizeof w.log_dir, "%.*s.logs", (int)(strlen(w.db) > 3 && !strcmp(w.db + strlen(w.db) - 3, ".db")
                                                              ? strlen(w.db) - 3 : strlen(w.db)), w.db);
    if (o->array_task >= 0 && !o->print_sbatch) {
        if (array_keep_task(w.db, o->array_task, o->array_runs_per_task, o->retry_failed, runs, &n_runs, err)) goto out;
        w.n_runs = n_runs;
        if (n_runs == 0) {
            say(&w, "array task %d: every run of it has ended in %s", o->array_task, w.db);
            rc = 0;
            goto out;
        }
        char sweep_db[sizeof w.db];
        snprintf(sweep_db, sizeof sweep_db, "%s", w.db);
        array_task_db(sweep_db, o->array_task, w.db, sizeof w.db);
    } else if (!o->dry_run && !o->print_sbatch && fold_array(&w, err)) {
        goto out;
    }
    if (o->dry_run) {
        rc = dry_run(&w, err);
        goto out;
    }
    if (o->print_sbatch) {
        rc = self_path(w.bin, sizeof w.bin, err) ? -1 : sbatch_write(stdout, o, w.bin, w.db, exp.name, exp.scale, n_runs, err);
        goto out;
    }
    if (o->slurm && slurm_allocation(&eff, err) != 0) {
        rc = SWEEP_USAGE;
        goto out;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    w.threads = o->threads > 0 ? o->threads : (int)(cpus / (o->workers * o->ranks));
    if (w.threads < 1) w.threads = 1;
    snprintf(w.threads_arg, sizeof w.threads_arg, "%d", w.threads);
    if (self_path(w.bin, sizeof w.bin, err)) goto out;
    /* the lease is --stale-after: a claim not renewed for that long may be taken over */
    if (claims_owner_init(&w.owner, o->stale_after, err)) goto out;
    if (store_open(&w.store, w.db, false, err) != 0) goto out;
    if (mkdir(w.log_dir, 0777) != 0 && errno != EEXIST) {
        error_set(err, "%s: %s", w.log_dir, strerror(errno));
        goto out_store;
    }
    if (claims_register(&w.store, &exp, runs, n_runs, &w.exp_id, err) != 0) goto out_store;
    /* --prune: runs held at rungs give up their workers, so up to every run may be a child */
    w.max_children = o->workers + (o->prune.on ? n_runs : 0);
    w.children = xcalloc((size_t)w.max_children, sizeof *w.children, "sweep workers");
    w.poll_fds = xcalloc((size_t)w.max_children, sizeof *w.poll_fds, "sweep workers");
    w.verdicts = xcalloc((size_t)(n_runs > 0 ? n_runs : 1), sizeof *w.verdicts, "pruning");
    say(&w, "sweep %s (%s scale): %d runs, %d worker%s x %d thread%s; database %s, logs in %s/", exp.name, exp.scale,
        n_runs, o->workers, o->workers == 1 ? "" : "s", w.threads, w.threads == 1 ? "" : "s", w.db, w.log_dir);
    report_progress(&w);
    /* SIGUSR1/SIGUSR2: SLURM's warning before a time limit or preemption (--signal) */
    static const int SIGNALS[] = {SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
    struct sigaction sa = {0}, old[4];
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    for (int i = 0; i < 4; i++) sigaction(SIGNALS[i], &sa, &old[i]);
    int loop = run_loop(&w, err);
    for (int i = 0; i < 4; i++) sigaction(SIGNALS[i], &old[i], NULL);
    /* at a time limit its run steps may end before the sweep's own SIGTERM comes */
    bool timed_out = w.gone[0] && o->requeue && slurm_timed_out();
    if (loop == 0 && o->requeue && ((interrupted && interrupted != SIGINT) || timed_out)) requeue(&w);
    if (loop == 0) {
        int counts[RUN_N_STATUS];
        if (claims_count(&w.store, counts, err) == 0) {
            char pruned[32] = ""; /* after the fixed part, which scripts read */
            if (o->prune.on || counts[RUN_PRUNED]) snprintf(pruned, sizeof pruned, "; %d pruned", counts[RUN_PRUNED]);
            say(&w, "%s: %d complete, %d collapsed, %d diverged, %d failed, %d not run%s", stopping(&w) ? "stopped" : "done",
                counts[RUN_COMPLETE], counts[RUN_COLLAPSED], counts[RUN_DIVERGED], counts[RUN_FAILED],
                counts[RUN_PENDING] + counts[RUN_STALE] + counts[RUN_RUNNING], pruned);
            rc = w.gone[0] ? SWEEP_EXIT_ALLOCATION_GONE : interrupted ? 130 : counts[RUN_FAILED] > 0 ? 1 : 0;
        }
    } else {
        /* The store failed under us: stop our runs; they stay running until found stale. */
        for (int i = 0; i < w.n_children; i++) {
            kill(w.children[i].pid, SIGTERM);
            if (w.children[i].held) kill(w.children[i].pid, SIGCONT);
        }
        for (int i = 0; i < w.n_children; i++) {
            waitpid(w.children[i].pid, NULL, 0);
            run_output_close(&w.children[i].out);
        }
    }
    free(w.children);
    free(w.poll_fds);
    free(w.verdicts);
out_store:
    store_close(&w.store);
out:
out_runs:
    runspecs_free(runs, n_runs);
    experiment_free(&exp);
    return rc;
}
