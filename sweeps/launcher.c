/* The argument vector that starts a run of several ranks (launcher.h). */
#include "launcher.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char BLANKS[] = " \t";

static int count_words(const char *s)
{
    int n = 0;
    for (s += strspn(s, BLANKS); *s; s += strspn(s, BLANKS), n++) s += strcspn(s, BLANKS);
    return n;
}

char **launcher_argv(const char *launcher, int ranks, char *const *run_argv, Error *err)
{
    const int words = count_words(launcher);
    if (words == 0) {
        error_set(err, "--mpirun: the launcher's command is empty");
        return NULL;
    }
    int run_args = 0;
    while (run_argv[run_args]) run_args++;
    char np[16];
    snprintf(np, sizeof np, "%d", ranks);
    /* pointers, then the launcher's text and the rank count, copied behind them */
    const size_t n_ptrs = (size_t)words + 2 + (size_t)run_args + 1;
    const size_t text = strlen(launcher) + 1 + strlen(np) + 1;
    char **argv = malloc(n_ptrs * sizeof *argv + text);
    if (!argv) {
        error_set(err, "out of memory for the launcher's arguments");
        return NULL;
    }
    char *copy = (char *)(argv + n_ptrs);
    strcpy(copy, launcher);
    int k = 0;
    for (char *s = copy + strspn(copy, BLANKS); *s; s += strspn(s, BLANKS)) {
        argv[k++] = s;
        s += strcspn(s, BLANKS);
        if (*s) *s++ = '\0';
    }
    char *np_copy = copy + strlen(launcher) + 1;
    strcpy(np_copy, np);
    argv[k++] = "-np";
    argv[k++] = np_copy;
    for (int i = 0; i < run_args; i++) argv[k++] = run_argv[i];
    argv[k] = NULL;
    return argv;
}

char **slurm_step_argv(int ranks, int threads, int gpus, const char *run_id, char *const *run_argv, Error *err)
{
    int run_args = 0;
    while (run_argv[run_args]) run_args++;
    enum { WORDS = 8, WORD_LEN = 96 };
    char **argv = malloc((size_t)(WORDS + run_args + 1) * sizeof *argv + WORDS * WORD_LEN);
    if (!argv) {
        error_set(err, "out of memory for srun's arguments");
        return NULL;
    }
    char *text = (char *)(argv + WORDS + run_args + 1);
    for (int k = 0; k < WORDS; k++) argv[k] = text + k * WORD_LEN;
    snprintf(argv[0], WORD_LEN, "srun");
    snprintf(argv[1], WORD_LEN, "--ntasks=%d", ranks);
    snprintf(argv[2], WORD_LEN, "--cpus-per-task=%d", threads);
    snprintf(argv[3], WORD_LEN, "--exclusive");
    snprintf(argv[4], WORD_LEN, "--kill-on-bad-exit=1");
    snprintf(argv[5], WORD_LEN, "--mpi=%s", ranks > 1 ? "pmix" : "none");
    snprintf(argv[6], WORD_LEN, "--job-name=bigbatch-%.64s", run_id);
    int k = 7;
    if (gpus > 0) snprintf(argv[k++], WORD_LEN, "--gpus=%d", gpus);
    for (int i = 0; i < run_args; i++) argv[k++] = run_argv[i];
    argv[k] = NULL;
    return argv;
}
