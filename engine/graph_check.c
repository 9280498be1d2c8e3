/* Graph capture checks (graph_check.h). */
#include "graph_check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* One argument: its name in the operation's list, its value (or its contents' hash) and how to
 * print it. */
typedef struct {
    const char *name;
    uint64_t value;
    char kind; /* 'i' integer, 'u' size, 'b' bool, 'f' real, 'p' address, 'h' contents */
} GraphArg;

typedef struct {
    const char *op;
    size_t first, n; /* its arguments in GraphCheck.args */
} GraphOp;

struct GraphCheck {
    GraphOp *ops;
    size_t n_ops, cap_ops;
    GraphArg *args;
    size_t n_args, cap_args;
    bool compare;
    size_t at_op, at_arg; /* comparing: the operation issued now, and its next argument */
    bool failed;
    char error[512];
};

GraphCheck *graph_check_new(void) { return xcalloc(1, sizeof(GraphCheck), "graph check"); }

void graph_check_free(GraphCheck *g)
{
    if (!g) return;
    free(g->ops);
    free(g->args);
    free(g);
}

void graph_check_start(GraphCheck *g, bool compare)
{
    g->compare = compare;
    if (!compare) g->n_ops = g->n_args = 0;
    g->at_op = 0;
    g->at_arg = 0;
    g->failed = false;
    g->error[0] = 0;
}

static void fail(GraphCheck *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(GraphCheck *g, const char *fmt, ...)
{
    if (g->failed) return; /* the first difference is the one to name */
    g->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof g->error, fmt, ap);
    va_end(ap);
}

void graph_check_refuse(GraphCheck *g, const char *call)
{
    fail(g, "%s inside a graph capture (operation %zu): it would wait for the device, read it or allocate", call,
         g->compare ? g->at_op : g->n_ops);
}

void graph_check_op(GraphCheck *g, const char *op)
{
    if (!g->compare) {
        if (g->n_ops == g->cap_ops) {
            g->cap_ops = g->cap_ops ? 2 * g->cap_ops : 256;
            g->ops = xrealloc(g->ops, g->cap_ops * sizeof *g->ops, "graph check");
        }
        g->ops[g->n_ops++] = (GraphOp){op, g->n_args, 0};
        return;
    }
    const size_t i = g->at_op++;
    if (i >= g->n_ops)
        fail(g, "operation %zu (%s) was not issued at capture, which issued %zu", i, op, g->n_ops);
    else if (strcmp(g->ops[i].op, op) != 0)
        fail(g, "operation %zu is %s, at capture it was %s", i, op, g->ops[i].op);
    else
        g->at_arg = g->ops[i].first;
}

static void print_value(char *buf, size_t len, const GraphArg *a)
{
    switch (a->kind) {
    case 'i': snprintf(buf, len, "%" PRId64, (int64_t)a->value); break;
    case 'u': snprintf(buf, len, "%" PRIu64, a->value); break;
    case 'b': snprintf(buf, len, "%s", a->value ? "true" : "false"); break;
    case 'f': {
        double d;
        memcpy(&d, &a->value, sizeof d);
        snprintf(buf, len, "%.9g", d);
        break;
    }
    case 'p': snprintf(buf, len, "address %#" PRIx64, a->value); break;
    default: snprintf(buf, len, "contents %016" PRIx64, a->value);
    }
}

static void arg(GraphCheck *g, const char *name, uint64_t value, char kind)
{
    const GraphArg a = {name, value, kind};
    if (!g->compare) {
        if (g->n_args == g->cap_args) {
            g->cap_args = g->cap_args ? 2 * g->cap_args : 1024;
            g->args = xrealloc(g->args, g->cap_args * sizeof *g->args, "graph check");
        }
        g->args[g->n_args++] = a;
        g->ops[g->n_ops - 1].n++;
        return;
    }
    if (g->failed || g->at_op == 0 || g->at_op > g->n_ops) return;
    const GraphOp *op = &g->ops[g->at_op - 1];
    const GraphArg *was = &g->args[g->at_arg++];
    if (was->value == a.value && was->kind == a.kind) return;
    char then[64], now[64];
    print_value(then, sizeof then, was);
    print_value(now, sizeof now, &a);
    fail(g, "operation %zu (%s): argument '%s' differs (%s at capture, %s now)", g->at_op - 1, op->op, name, then,
         now);
}

int graph_check_finish(GraphCheck *g, Error *err)
{
    if (!g->failed && g->compare && g->at_op != g->n_ops)
        fail(g, "the launch issued %zu operations, the capture %zu", g->at_op, g->n_ops);
    if (!g->failed) return 0;
    error_set(err, "%s", g->error);
    return -1;
}

/* A struct's fields hashed one by one (never its padding). */
#define HASH(h, field) h = fnv1a64_bytes(h, &(field), sizeof(field))

void graph_arg_int(GraphCheck *g, const char *name, long long v) { arg(g, name, (uint64_t)v, 'i'); }
void graph_arg_size(GraphCheck *g, const char *name, size_t v) { arg(g, name, (uint64_t)v, 'u'); }
void graph_arg_bool(GraphCheck *g, const char *name, bool v) { arg(g, name, v, 'b'); }

void graph_arg_real(GraphCheck *g, const char *name, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    arg(g, name, bits, 'f');
}

void graph_arg_ptr(GraphCheck *g, const char *name, const void *v) { arg(g, name, (uint64_t)(uintptr_t)v, 'p'); }

/* ConvShape and PoolShape are ints only, LrnShape ints then floats: no padding to skip. */
void graph_arg_conv(GraphCheck *g, const char *name, const ConvShape *s)
{
    arg(g, name, fnv1a64_bytes(FNV1A64_START, s, sizeof *s), 'h');
}
void graph_arg_pool(GraphCheck *g, const char *name, const PoolShape *s)
{
    arg(g, name, fnv1a64_bytes(FNV1A64_START, s, sizeof *s), 'h');
}
void graph_arg_lrn(GraphCheck *g, const char *name, const LrnShape *s)
{
    arg(g, name, fnv1a64_bytes(FNV1A64_START, s, sizeof *s), 'h');
}

void graph_arg_bn(GraphCheck *g, const char *name, const BatchNormShape *s)
{
    uint64_t h = FNV1A64_START;
    HASH(h, s->c);
    HASH(h, s->hw);
    HASH(h, s->eps);
    HASH(h, s->momentum);
    HASH(h, s->relu);
    arg(g, name, h, 'h');
}

void graph_arg_dropout(GraphCheck *g, const char *name, const DropoutKey *k)
{
    uint64_t h = FNV1A64_START;
    HASH(h, k->seed);
    HASH(h, k->step);
    HASH(h, k->first_element);
    HASH(h, k->layer);
    arg(g, name, h, 'h');
}

void graph_arg_opt(GraphCheck *g, const char *name, const OptConfig *c)
{
    uint64_t h = fnv1a64_bytes(FNV1A64_START, c->name, strnlen(c->name, sizeof c->name));
    h = fnv1a64_bytes(h, c->lars_variant, strnlen(c->lars_variant, sizeof c->lars_variant));
    HASH(h, c->momentum);
    HASH(h, c->dampening);
    HASH(h, c->nesterov);
    HASH(h, c->weight_decay);
    HASH(h, c->decoupled_wd);
    HASH(h, c->lars_denom);
    HASH(h, c->lars_wd_in_update);
    HASH(h, c->lars_momentum);
    HASH(h, c->larc_policy);
    HASH(h, c->lars_guard);
    HASH(h, c->lars_adapt_if_wd);
    HASH(h, c->lars_exclude);
    HASH(h, c->eta);
    HASH(h, c->lars_eps);
    HASH(h, c->beta1);
    HASH(h, c->beta2);
    HASH(h, c->adam_eps);
    arg(g, name, h, 'h');
}
