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
