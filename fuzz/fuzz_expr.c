/* libFuzzer target: the expressions of derived keys (sweeps/expr.c), with every name bound. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sweeps/expr.h"

static int lookup(void *ctx, const char *name, double *value, Error *err)
{
    (void)ctx, (void)err;
    *value = (double)strlen(name);
    return 0;
}

static int each(void *ctx, const char *name, Error *err)
{
    (void)ctx, (void)name, (void)err;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    double v;
    Error err = {{0}};
    expr_eval(text, lookup, NULL, &v, &err);
    expr_names(text, each, NULL, &err);
    free(text);
    return 0;
}
