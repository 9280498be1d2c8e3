/* Arithmetic for the [derived] keys of experiment files: numbers, names, + - * / ^,
 * unary minus, parentheses and a few functions (sqrt log2 ln exp min max pow floor ceil
 * round abs). A name may join parts with hyphens (`warmup-epochs`, like the train flags),
 * so subtraction between names needs spaces: `a - b`. */
#ifndef BB_EXPR_H
#define BB_EXPR_H
#include "../engine/base/util.h"

/* Value of a name: 0 with *value set, -1 with err set (unknown name, not a number). */
typedef int (*ExprLookup)(void *ctx, const char *name, double *value, Error *err);

/* Evaluates text: 0 with *out, -1 with err (syntax, unknown name or function, division by
 * zero, a result that is not finite). */
int expr_eval(const char *text, ExprLookup lookup, void *ctx, double *out, Error *err);

/* Checks the syntax without evaluating; each variable name (not function names) is passed
 * to `each` (may be NULL), which returns 0 to go on or -1 with err to stop. */
int expr_names(const char *text, int (*each)(void *ctx, const char *name, Error *err), void *ctx,
               Error *err);

#endif
