/* Which OpenBLAS kernel set runs, and a fix for CPUs the library does not know. */
#ifndef BIGBATCH_BLAS_CORE_H
#define BIGBATCH_BLAS_CORE_H

/* OpenBLAS picks its kernels from the CPU model when it loads. A model newer than the library
 * (Debian 12's 0.3.21 does not know Sapphire or Emerald Rapids) gets the generic Prescott
 * kernels, which run our convolutions 2-2.5x slower. When that happened and the CPU has AVX2,
 * this re-executes the program once with OPENBLAS_CORETYPE set to the kernel set its features
 * allow (SkylakeX with AVX-512, else Haswell); it returns when nothing needs doing or the
 * re-execution failed (with a warning). An OPENBLAS_CORETYPE the user set is left alone. */
void blas_core_ensure(char **argv);

/* The name of the kernel set in use ("SkylakeX", "Haswell", "Prescott", ...). */
const char *blas_core_name(void);

#endif
