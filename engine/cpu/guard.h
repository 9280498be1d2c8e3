/* The guarded CPU backend (make BACKEND=guarded, -DBB_GUARDED): all backend memory lives
 * in one arena that is PROT_NONE except while a backend function runs, so an access to
 * tensor memory from outside the backend faults at once, and the fault handler prints a
 * backtrace with file and line. BK_GUARD(bk) opens the arena for the rest of the enclosing
 * function (nested calls only count); without BB_GUARDED it is nothing. */
#ifndef BB_CPU_GUARD_H
#define BB_CPU_GUARD_H
#include <stddef.h>

typedef struct Backend Backend;

#ifdef BB_GUARDED
Backend *guard_open(Backend *bk);
void guard_close(Backend **bk);
#define BK_GUARD(bk) Backend *bk_guard_scope_ __attribute__((cleanup(guard_close), unused)) = guard_open(bk)
/* Arena allocation (page-granular, zero-filled; *block gets the size taken) and release. */
void *guard_alloc(size_t bytes, size_t *block);
void guard_free(void *p, size_t block);
#else
#define BK_GUARD(bk) (void)(bk)
#endif

#endif
