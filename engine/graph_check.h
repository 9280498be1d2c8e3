/* The checks of a graph capture (bk_graph_capture, engine/backend.h), made in backend.c's
 * dispatch for every backend. While a capture runs, a call that would wait for the device, read
 * it from the host or allocate is refused: inside a CUDA graph capture it would fail or freeze a
 * host value into the graph. And every operation is recorded with its arguments (scalars by
 * value, pointers by address, the shape structs by their contents), so that a backend without
 * graphs (the CPU) can issue the operations again at each launch and check that exactly the same
 * ones come out: what a GPU's replay would run. */
#ifndef BB_GRAPH_CHECK_H
#define BB_GRAPH_CHECK_H
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

typedef struct GraphCheck GraphCheck;

GraphCheck *graph_check_new(void);
void graph_check_free(GraphCheck *g);
/* From the first operation on: recording (a capture), or comparing with the recording (a launch
 * that issues the operations again). Clears an earlier error. */
void graph_check_start(GraphCheck *g, bool compare);
/* Operation `op` is issued; its arguments follow by GRAPH_ARG. */
void graph_check_op(GraphCheck *g, const char *op);
/* `call` may not run inside a capture: the first such call is the capture's error. */
void graph_check_refuse(GraphCheck *g, const char *call);
/* 0 when everything was allowed and (comparing) the same; else -1 with err naming the operation's
 * position and name and the argument that differs, or the refused call. */
int graph_check_finish(GraphCheck *g, Error *err);

/* One argument of the current operation, by type (GRAPH_ARG picks). */
void graph_arg_int(GraphCheck *g, const char *name, long long v);
void graph_arg_size(GraphCheck *g, const char *name, size_t v);
void graph_arg_bool(GraphCheck *g, const char *name, bool v);
void graph_arg_real(GraphCheck *g, const char *name, double v);
void graph_arg_ptr(GraphCheck *g, const char *name, const void *v);
void graph_arg_conv(GraphCheck *g, const char *name, const ConvShape *s);
void graph_arg_pool(GraphCheck *g, const char *name, const PoolShape *s);
void graph_arg_bn(GraphCheck *g, const char *name, const BatchNormShape *s);
void graph_arg_lrn(GraphCheck *g, const char *name, const LrnShape *s);
void graph_arg_dropout(GraphCheck *g, const char *name, const DropoutKey *k);
void graph_arg_opt(GraphCheck *g, const char *name, const OptConfig *c);

#define GRAPH_ARG(g, x)                                                                                   \
    _Generic((x),                                                                                         \
        int: graph_arg_int, long: graph_arg_int, size_t: graph_arg_size, bool: graph_arg_bool,           \
        float: graph_arg_real, double: graph_arg_real, const ConvShape *: graph_arg_conv,                 \
        const PoolShape *: graph_arg_pool, const BatchNormShape *: graph_arg_bn,                          \
        const LrnShape *: graph_arg_lrn, const DropoutKey *: graph_arg_dropout,                           \
        const OptConfig *: graph_arg_opt, default: graph_arg_ptr)(g, #x, x)

/* F(x) for each of up to 16 arguments (an operation's argument list, parentheses removed). */
#define GRAPH_EXPAND(...) __VA_ARGS__
#define GRAPH_COUNT(...) GRAPH_COUNT_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define GRAPH_COUNT_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, n, ...) n
#define GRAPH_CAT(a, b) GRAPH_CAT_(a, b)
#define GRAPH_CAT_(a, b) a##b
#define GRAPH_FOR_EACH(F, ...) GRAPH_CAT(GRAPH_FE_, GRAPH_COUNT(__VA_ARGS__))(F, __VA_ARGS__)
#define GRAPH_FE_1(F, x) F(x)
#define GRAPH_FE_2(F, x, ...) F(x) GRAPH_FE_1(F, __VA_ARGS__)
#define GRAPH_FE_3(F, x, ...) F(x) GRAPH_FE_2(F, __VA_ARGS__)
#define GRAPH_FE_4(F, x, ...) F(x) GRAPH_FE_3(F, __VA_ARGS__)
#define GRAPH_FE_5(F, x, ...) F(x) GRAPH_FE_4(F, __VA_ARGS__)
#define GRAPH_FE_6(F, x, ...) F(x) GRAPH_FE_5(F, __VA_ARGS__)
#define GRAPH_FE_7(F, x, ...) F(x) GRAPH_FE_6(F, __VA_ARGS__)
#define GRAPH_FE_8(F, x, ...) F(x) GRAPH_FE_7(F, __VA_ARGS__)
#define GRAPH_FE_9(F, x, ...) F(x) GRAPH_FE_8(F, __VA_ARGS__)
#define GRAPH_FE_10(F, x, ...) F(x) GRAPH_FE_9(F, __VA_ARGS__)
#define GRAPH_FE_11(F, x, ...) F(x) GRAPH_FE_10(F, __VA_ARGS__)
#define GRAPH_FE_12(F, x, ...) F(x) GRAPH_FE_11(F, __VA_ARGS__)
#define GRAPH_FE_13(F, x, ...) F(x) GRAPH_FE_12(F, __VA_ARGS__)
#define GRAPH_FE_14(F, x, ...) F(x) GRAPH_FE_13(F, __VA_ARGS__)
#define GRAPH_FE_15(F, x, ...) F(x) GRAPH_FE_14(F, __VA_ARGS__)
#define GRAPH_FE_16(F, x, ...) F(x) GRAPH_FE_15(F, __VA_ARGS__)

#endif
