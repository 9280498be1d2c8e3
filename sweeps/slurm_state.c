/* SLURM's view of the sweep's own job (slurm_state.h). */
#include "slurm_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* SLURM_JOB_ID when it is a job id (digits), else NULL. */
static const char *job_id(void)
{
    const char *id = getenv("SLURM_JOB_ID");
    if (!id || !*id || id[strspn(id, "0123456789")] != '\0' || strlen(id) > 20) return NULL;
    return id;
}

/* Runs scontrol with args; its output (stdout and stderr) into out. The exit status, or -1
 * when it could not run. */
static int scontrol(char *const *argv, char *out, size_t len)
{
    int fds[2];
    out[0] = '\0';
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        if (dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0) _exit(126);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    for (ssize_t r; got + 1 < len && ((r = read(fds[0], out + got, len - 1 - got)) > 0 || (r < 0 && errno == EINTR));)
        if (r > 0) got += (size_t)r;
    out[got] = '\0';
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) != 127 ? WEXITSTATUS(st) : -1;
}

/* srun's messages when the allocation it would start a step in is gone, in the last attempt's
 * part of the log (after its "=== run" line). */
static bool log_says_gone(const char *log_path, char *why, size_t why_len)
{
    static const char *const GONE[] = {"has expired", "already completing or completed", "revoked",
                                       "Invalid job id specified", "DUE TO TIME LIMIT",
                                       "DUE TO PREEMPTION", "DUE TO NODE FAILURE"};
    FILE *f = fopen(log_path, "r");
    if (!f) return false;
    char tail[8193];
    size_t n = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size > 8192 && fseek(f, size - 8192, SEEK_SET) != 0) size = 0;
        if (size <= 8192) rewind(f);
        n = fread(tail, 1, sizeof tail - 1, f);
    }
    fclose(f);
    tail[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (tail[i] == '\0') tail[i] = ' ';
    char *from = tail, *at;
    while ((at = strstr(from, "=== run "))) from = at + 1;
    for (size_t i = 0; i < sizeof GONE / sizeof GONE[0]; i++) {
        if (!(at = strstr(from, GONE[i]))) continue;
        while (at > from && at[-1] != '\n') at--;
        snprintf(why, why_len, "%.*s", (int)strcspn(at, "\n"), at);
        return true;
    }
    return false;
}

/* A field of `scontrol show job -o`'s line (key "JobState=") into val; false when absent. */
static bool job_field(const char *out, const char *key, char *val, size_t len)
{
    const char *at = strstr(out, key);
    if (!at) return false;
    at += strlen(key);
    snprintf(val, len, "%.*s", (int)strcspn(at, " \n"), at);
    return true;
}

bool slurm_allocation_gone(const char *log_path, char *why, size_t why_len)
{
    if (log_says_gone(log_path, why, why_len)) return true;
    const char *id = job_id();
    if (!id) return false;
    char *argv[] = {"scontrol", "show", "job", "-o", (char *)id, NULL};
    char out[8192], state[64];
    int rc = scontrol(argv, out, sizeof out);
    if (rc < 0) return false;
    if (rc != 0) { /* a job SLURM no longer knows is gone; scontrol failing otherwise tells nothing */
        bool unknown = strstr(out, "Invalid job id") != NULL;
        if (unknown) snprintf(why, why_len, "scontrol: job %s is not known any more", id);
        return unknown;
    }
    if (!job_field(out, "JobState=", state, sizeof state) || !strcmp(state, "RUNNING")) return false;
    snprintf(why, why_len, "job %s is %s", id, state);
    return true;
}

/* The job's JobState and Reason from `scontrol show job`; -1 when it cannot tell. */
static int state_reason(char *state, char *reason, size_t len)
{
    const char *id = job_id();
    if (!id) return -1;
    char *argv[] = {"scontrol", "show", "job", "-o", (char *)id, NULL};
    char out[8192];
    if (scontrol(argv, out, sizeof out) != 0) return -1;
    return job_field(out, "JobState=", state, len) && job_field(out, "Reason=", reason, len) ? 0 : -1;
}

bool slurm_cancelled(char *why, size_t why_len)
{
    char state[64], reason[64];
    if (state_reason(state, reason, sizeof state)) return false;
    /* scancel: COMPLETING with no reason while it ends, CANCELLED after; a time limit says
     * Reason=TimeLimit */
    if (strcmp(state, "CANCELLED") && (strcmp(state, "COMPLETING") || strcmp(reason, "None"))) return false;
    snprintf(why, why_len, "job %s is %s, Reason=%s", job_id(), state, reason);
    return true;
}

bool slurm_timed_out(void)
{
    char state[64], reason[64];
    return state_reason(state, reason, sizeof state) == 0 && (!strcmp(state, "TIMEOUT") || !strcmp(reason, "TimeLimit"));
}

int slurm_requeue(char *why, size_t why_len)
{
    const char *id = job_id();
    if (!id) {
        snprintf(why, why_len, "not in a SLURM job (no SLURM_JOB_ID)");
        return -1;
    }
    char *argv[] = {"scontrol", "requeue", (char *)id, NULL};
    char out[2048];
    int rc = scontrol(argv, out, sizeof out);
    if (rc == 0) return 0;
    snprintf(why, why_len, "scontrol requeue %s: %s", id, rc < 0 ? "cannot run scontrol" : out);
    return -1;
}
