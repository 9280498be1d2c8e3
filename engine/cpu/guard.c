/* The guarded backend's arena and fault handler (see guard.h). The arena is process-wide
 * state on purpose: the fault handler has to recognise an address in it, and a signal
 * handler can reach nothing else. Only the guarded build compiles this. */
#ifdef BB_GUARDED
#include "guard.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 TiB of address space, reserved without memory: only what is allocated gets pages. */
#define ARENA_RESERVE ((size_t)1 << 40)
#define MAX_FREE 4096

typedef struct {
    char *p;
    size_t bytes;
} Block;

typedef struct {
    char *base;
    size_t used;         /* bytes handed out from base (the range that is opened) */
    int depth;           /* nesting of open backend calls */
    size_t page;
    Block free_list[MAX_FREE];
    int n_free;
} Arena;

static Arena arena;
/* Net replicas (engine/dist/replicas.h) call the backend from several threads at once: the
 * arena opens at the first open call and closes after the last. */
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what)
{
    fprintf(stderr, "bigbatch: guarded backend: %s failed\n", what);
    abort();
}

static void protect(int prot)
{
    if (arena.used && mprotect(arena.base, arena.used, prot) != 0) die("mprotect");
}

/* Runs addr2line on the frames (fork + execvp: nothing passes through a shell). */
static void print_backtrace(void)
{
    void *frames[48];
    int n = backtrace(frames, 48);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return;
    exe[len] = 0;
    /* frames in the executable: those whose object starts where this file's does */
    Dl_info self;
    if (!dladdr((void *)print_backtrace, &self)) return;
    char offsets[48][24];
    char *argv[48 + 5] = {"addr2line", "-f", "-C", "-e", exe};
    int argc = 5;
    for (int i = 0; i < n; i++) {
        Dl_info info;
        if (!dladdr(frames[i], &info) || info.dli_fbase != self.dli_fbase) continue;
        snprintf(offsets[i], sizeof offsets[i], "%#lx",
                 (unsigned long)((uintptr_t)frames[i] - (uintptr_t)info.dli_fbase - 1));
        argv[argc++] = offsets[i];
    }
    argv[argc] = NULL;
    if (argc == 5) return; /* addr2line would read addresses from stdin */
    fprintf(stderr, "bigbatch: guarded backend: frames in bigbatch (function, file:line):\n");
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, STDIN_FILENO);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execvp("addr2line", argv);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    char *a = si->si_addr;
    if (a >= arena.base && a < arena.base + ARENA_RESERVE) {
        fprintf(stderr, "bigbatch: guarded backend: access to backend memory at %p from outside the "
                        "backend (use bk_upload/bk_download)\n", (void *)a);
        print_backtrace();
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arena_init(void)
{
    if (arena.base) return;
    arena.page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, ARENA_RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) die("reserving the arena (mmap)");
    arena.base = p;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

Backend *guard_open(Backend *bk)
{
    pthread_mutex_lock(&arena_lock);
    if (arena.depth++ == 0) protect(PROT_READ | PROT_WRITE);
    pthread_mutex_unlock(&arena_lock);
    return bk;
}

void guard_close(Backend **bk)
{
    (void)bk;
    pthread_mutex_lock(&arena_lock);
    if (--arena.depth == 0) protect(PROT_NONE);
    pthread_mutex_unlock(&arena_lock);
}

void *guard_alloc(size_t bytes, size_t *block)
{
    arena_init();
    size_t need = (bytes + arena.page - 1) / arena.page * arena.page;
    if (!need) need = arena.page;
    for (int i = 0; i < arena.n_free; i++) { /* first fit among freed blocks */
        if (arena.free_list[i].bytes < need) continue;
        char *p = arena.free_list[i].p;
        *block = arena.free_list[i].bytes;
        arena.free_list[i] = arena.free_list[--arena.n_free];
        return p; /* MADV_DONTNEED on free left it zero-filled */
    }
    *block = need;
    if (arena.used + need > ARENA_RESERVE) die("allocating backend memory beyond the arena");
    char *p = arena.base + arena.used;
    arena.used += need;
    if (arena.depth && mprotect(p, need, PROT_READ | PROT_WRITE) != 0) die("mprotect");
    return p;
}

void guard_free(void *p, size_t block)
{
    /* give the pages back, zero-filled for the next user; a full free list just leaks them */
    if (madvise(p, block, MADV_DONTNEED) != 0) die("madvise");
    if (arena.n_free < MAX_FREE) arena.free_list[arena.n_free++] = (Block){p, block};
}
#else
/* ISO C wants something in a translation unit. */
typedef int guard_unused;
#endif
