/* The CPU backend computes with subnormal floats flushed to zero (FTZ: results that would be
 * subnormal become 0; DAZ: subnormal operands read as 0). A net that fits its batch well drives
 * its output gradients, and with them every layer's backward, below FLT_MIN; on Intel cores
 * each subnormal operand costs a microcode assist of about a hundred cycles, and the CIFAR
 * AlexNet trained at a fifth of its speed once it had fit its synthetic batch
 * (bench/results/2026-12-06-denormals.txt). Values that small are below float's precision
 * next to any normal term they are added to; TensorFlow's CPU threads flush them the same way.
 * The mode is each thread's own (MXCSR), and a new thread starts with its creator's. */
#include "cpu.h"

#if defined(__SSE__)
#include <xmmintrin.h>
enum { MXCSR_DENORMALS_ARE_ZERO = 1 << 6, MXCSR_FLUSH_TO_ZERO = 1 << 15 };
#endif

/* This thread's mode; nothing to set where there is no MXCSR (not x86). */
static void flush_this_thread(void)
{
#if defined(__SSE__)
    _mm_setcsr(_mm_getcsr() | MXCSR_DENORMALS_ARE_ZERO | MXCSR_FLUSH_TO_ZERO);
#endif
}

static void flush_in_region(void *ctx, int t, int T)
{
    (void)ctx;
    (void)t;
    (void)T;
    flush_this_thread();
}

/* The caller's thread first, so every thread created after it inherits the mode; then the
 * OpenMP threads that already exist, in one region of the backend's threads. */
void cpu_flush_denormals(int threads)
{
    flush_this_thread();
    cpu_run(threads, flush_in_region, NULL);
}
