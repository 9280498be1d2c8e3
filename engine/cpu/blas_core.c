/* OpenBLAS's kernel choice (see blas_core.h). */
#include "../blas_core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cpu.h"

const char *blas_core_name(void)
{
    const char *name = openblas_get_corename();
    return name ? name : "unknown";
}

/* The best kernel set the CPU's features allow, or NULL when Prescott is all it can run. */
static const char *core_for_features(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512cd"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
    return NULL;
}

void blas_core_ensure(char **argv)
{
    const char *set = getenv("OPENBLAS_CORETYPE");
    if (set && *set) return; /* the user's choice, or our own re-execution */
    if (strcasecmp(blas_core_name(), "Prescott") != 0) return;
    const char *core = core_for_features();
    if (!core) return;
    if (setenv("OPENBLAS_CORETYPE", core, 1) != 0) return;
    execv("/proc/self/exe", argv);
    /* still here: carry on with the slow kernels rather than fail */
    fprintf(stderr, "bigbatch: warning: OpenBLAS chose its generic Prescott kernels for this CPU and "
                    "re-running with OPENBLAS_CORETYPE=%s failed (%s); set it yourself for 2x speed\n",
            core, strerror(errno));
}
