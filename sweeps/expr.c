/* Recursive descent over the text, evaluating as it parses (or only checking the syntax).
 *   sum   := prod (('+' | '-') prod)*
 *   prod  := unary (('*' | '/') unary)*
 *   unary := ('-' | '+') unary | power
 *   power := atom ('^' unary)?          right-associative; -2^2 = -(2^2)
 *   atom  := number | name | name '(' sum (',' sum)* ')' | '(' sum ')' */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/base/name_table.h"

#define EXPR_NAME_MAX 64
#define EXPR_MAX_DEPTH 64 /* nesting; keeps a hostile file from exhausting the stack */

typedef struct {
    const char *text, *p;
    bool eval; /* false: syntax only */
    ExprLookup lookup;
    int (*each)(void *ctx, const char *name, Error *err);
    void *ctx;
    Error *err;
    int depth;
} Parser;

static int sum(Parser *ps, double *v);
static int unary(Parser *ps, double *v);

static void skip_space(Parser *ps)
{
    while (*ps->p && isspace((unsigned char)*ps->p)) ps->p++;
}

static int fail(Parser *ps, const char *what)
{
    skip_space(ps);
    if (*ps->p) error_set(ps->err, "%s at column %d ('%s')", what, (int)(ps->p - ps->text) + 1, ps->p);
    else error_set(ps->err, "%s at the end", what);
    return -1;
}

/* Domain errors only matter when evaluating: a syntax check sees placeholder values. */
static int math_fail(Parser *ps, const char *what)
{
    if (!ps->eval) return 0;
    error_set(ps->err, "%s in '%s'", what, ps->text);
    return -1;
}

static bool name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* [A-Za-z_][A-Za-z0-9_]* then (-[A-Za-z][A-Za-z0-9_]*)*: `a-b` is one name, `a-1` is a - 1. */
static int read_name(Parser *ps, char name[EXPR_NAME_MAX])
{
    const char *s = ps->p;
    const char *e = s + 1;
    for (;;) {
        while (name_char(*e)) e++;
        if (e[0] == '-' && isalpha((unsigned char)e[1])) e += 2;
        else break;
    }
    if (e - s >= EXPR_NAME_MAX) return fail(ps, "name too long");
    memcpy(name, s, (size_t)(e - s));
    name[e - s] = 0;
    ps->p = e;
    return 0;
}

static int read_number(Parser *ps, double *v)
{
    /* Scanned by hand so that strtod's extras (inf, nan, hex) are not numbers here. */
    const char *s = ps->p, *e = s;
    while (isdigit((unsigned char)*e)) e++;
    if (*e == '.') {
        e++;
        while (isdigit((unsigned char)*e)) e++;
    }
    if (e == s + 1 && *s == '.') return fail(ps, "expected a number");
    if ((*e == 'e' || *e == 'E') &&
        (isdigit((unsigned char)e[1]) || ((e[1] == '+' || e[1] == '-') && isdigit((unsigned char)e[2])))) {
        e += 2;
        while (isdigit((unsigned char)*e)) e++;
    }
    char buf[64];
    if (e - s >= (long)sizeof buf) return fail(ps, "number too long");
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = 0;
    *v = strtod(buf, NULL);
    ps->p = e;
    if (!isfinite(*v)) return fail(ps, "number out of range");
    return 0;
}

typedef enum { F_SQRT, F_LOG2, F_LN, F_EXP, F_MIN, F_MAX, F_POW, F_FLOOR, F_CEIL, F_ROUND, F_ABS } Func;
static const struct {
    const char *name;
    Func f;
    int min_args, max_args;
} FUNCS[] = {
    {"sqrt", F_SQRT, 1, 1}, {"log2", F_LOG2, 1, 1}, {"ln", F_LN, 1, 1}, {"exp", F_EXP, 1, 1},
    {"min", F_MIN, 2, 16},  {"max", F_MAX, 2, 16},  {"pow", F_POW, 2, 2}, {"floor", F_FLOOR, 1, 1},
    {"ceil", F_CEIL, 1, 1}, {"round", F_ROUND, 1, 1}, {"abs", F_ABS, 1, 1},
};
static const NameTable FUNC_NAMES = NAME_TABLE(FUNCS);

static int apply(Parser *ps, Func f, const double *a, int n, double *v)
{
    switch (f) {
    case F_SQRT:
        if (a[0] < 0) return math_fail(ps, "sqrt of a negative number");
        *v = sqrt(a[0]);
        break;
    case F_LOG2:
    case F_LN:
        if (a[0] <= 0) return math_fail(ps, "logarithm of a number <= 0");
        *v = f == F_LOG2 ? log2(a[0]) : log(a[0]);
        break;
    case F_EXP: *v = exp(a[0]); break;
    case F_MIN:
    case F_MAX:
        *v = a[0];
        for (int i = 1; i < n; i++)
            if (f == F_MIN ? a[i] < *v : a[i] > *v) *v = a[i];
        break;
    case F_POW: *v = pow(a[0], a[1]); break;
    case F_FLOOR: *v = floor(a[0]); break;
    case F_CEIL: *v = ceil(a[0]); break;
    case F_ROUND: *v = round(a[0]); break;
    case F_ABS: *v = fabs(a[0]); break;
    }
    return 0;
}

static int call(Parser *ps, const char *name, double *v)
{
    int k = name_table_index(FUNC_NAMES, name);
    if (k < 0) return name_table_unknown(FUNC_NAMES, "function", name, "known: ", ", ", ps->err);
    ps->p++; /* '(' */
    double args[16];
    int n = 0;
    for (;;) {
        if (n == FUNCS[k].max_args) {
            error_set(ps->err, "%s takes at most %d argument%s", name, FUNCS[k].max_args,
                      FUNCS[k].max_args == 1 ? "" : "s");
            return -1;
        }
        if (sum(ps, &args[n])) return -1;
        n++;
        skip_space(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p != ')') return fail(ps, "expected ',' or ')'");
        ps->p++;
        break;
    }
    if (n < FUNCS[k].min_args) {
        error_set(ps->err, "%s takes %s%d arguments, not %d", name,
                  FUNCS[k].max_args > FUNCS[k].min_args ? "at least " : "", FUNCS[k].min_args, n);
        return -1;
    }
    return apply(ps, FUNCS[k].f, args, n, v);
}

static int atom(Parser *ps, double *v)
{
    skip_space(ps);
    char c = *ps->p;
    if (c == '(') {
        ps->p++;
        if (sum(ps, v)) return -1;
        skip_space(ps);
        if (*ps->p != ')') return fail(ps, "expected ')'");
        ps->p++;
        return 0;
    }
    if (isdigit((unsigned char)c) || c == '.') return read_number(ps, v);
    if (!name_start(c)) return fail(ps, "expected a number, a name or '('");
    char name[EXPR_NAME_MAX];
    if (read_name(ps, name)) return -1;
    skip_space(ps);
    if (*ps->p == '(') return call(ps, name, v);
    *v = 1.0; /* placeholder for a syntax check */
    if (ps->each && ps->each(ps->ctx, name, ps->err)) return -1;
    if (ps->eval && ps->lookup(ps->ctx, name, v, ps->err)) return -1;
    return 0;
}

static int power(Parser *ps, double *v)
{
    if (atom(ps, v)) return -1;
    skip_space(ps);
    if (*ps->p != '^') return 0;
    ps->p++;
    double e;
    if (unary(ps, &e)) return -1;
    *v = pow(*v, e);
    return 0;
}

static int unary(Parser *ps, double *v)
{
    if (++ps->depth > EXPR_MAX_DEPTH) return fail(ps, "expression nested too deeply");
    skip_space(ps);
    int rc;
    if (*ps->p == '-' || *ps->p == '+') {
        bool neg = *ps->p == '-';
        ps->p++;
        rc = unary(ps, v);
        if (neg) *v = -*v;
    } else {
        rc = power(ps, v);
    }
    ps->depth--;
    return rc;
}

static int prod(Parser *ps, double *v)
{
    if (unary(ps, v)) return -1;
    for (;;) {
        skip_space(ps);
        char op = *ps->p;
        if (op != '*' && op != '/') return 0;
        ps->p++;
        double r;
        if (unary(ps, &r)) return -1;
        if (op == '*') *v *= r;
        else if (r == 0) {
            if (math_fail(ps, "division by zero")) return -1;
        } else *v /= r;
    }
}

static int sum(Parser *ps, double *v)
{
    if (prod(ps, v)) return -1;
    for (;;) {
        skip_space(ps);
        char op = *ps->p;
        if (op != '+' && op != '-') return 0;
        ps->p++;
        double r;
        if (prod(ps, &r)) return -1;
        *v = op == '+' ? *v + r : *v - r;
    }
}

static int run(Parser *ps, double *out)
{
    double v = 0;
    skip_space(ps);
    if (!*ps->p) {
        error_set(ps->err, "empty expression");
        return -1;
    }
    if (sum(ps, &v)) return -1;
    skip_space(ps);
    if (*ps->p) return fail(ps, "unexpected text");
    if (ps->eval && !isfinite(v)) {
        error_set(ps->err, "'%s' is not a finite number", ps->text);
        return -1;
    }
    if (out) *out = v;
    return 0;
}

int expr_eval(const char *text, ExprLookup lookup, void *ctx, double *out, Error *err)
{
    Parser ps = {text, text, true, lookup, NULL, ctx, err, 0};
    return run(&ps, out);
}

int expr_names(const char *text, int (*each)(void *ctx, const char *name, Error *err), void *ctx,
               Error *err)
{
    Parser ps = {text, text, false, NULL, each, ctx, err, 0};
    return run(&ps, NULL);
}
