/* The engine's scalar type. float32 for training; the gradient-check build
 * compiles the same sources with -DBB_DOUBLE so finite differences are exact
 * enough to check every layer in double precision. */
#ifndef BB_REAL_H
#define BB_REAL_H
#ifdef __cplusplus
#include <cmath> /* the CUDA backend's .cu files are C++: overloads instead of tgmath */
#else
#include <tgmath.h>
#endif

#ifdef BB_DOUBLE
typedef double real;
#define REAL_NAME "double"
#else
typedef float real;
#define REAL_NAME "float32"
#endif

#endif
