/* Experiment files: read with libinih through a line reader of our own (Debian's inih gives
 * the handler no line numbers), collected into entries, then checked section by section in
 * file order so that the first error reported is the first in the file where possible.
 * The selected scale's overrides are applied, the cross-key checks run, and a trial
 * expansion puts every run through the same flag parser and checks as `bigbatch train`. */
#include "experiment.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "../engine/base/name_table.h"
#include "figures.h"
#include "../engine/train/train.h"
#include "flags/train_flags.h"

const char *const EXPERIMENT_METRICS[] = {"test_acc", "test_loss", "train_loss", "loss_gap", "best_test_acc",
                                          NULL};

/* More runs than this is a typo in a grid, not an experiment. */
#define MAX_RUNS 100000

/* ------------------------------------------------------------------ small helpers */

typedef struct {
    char *s;
    size_t len, cap;
} Str;

static void str_vaddf(Str *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = 2 * (b->len + (size_t)n + 1);
        b->s = xrealloc(b->s, b->cap, "text");
    }
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

static void str_addf(Str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void str_addf(Str *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    str_vaddf(b, fmt, ap);
    va_end(ap);
}

static char *str_take(Str *b)
{
    return b->s ? b->s : xstrdup("");
}

static char *fmt_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_dup(const char *fmt, ...)
{
    Str b = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vaddf(&b, fmt, ap);
    va_end(ap);
    return str_take(&b);
}

static void push_str(char ***arr, int *n, char *s)
{
    *arr = xrealloc(*arr, sizeof **arr * (size_t)(*n + 1), "string list");
    (*arr)[(*n)++] = s;
}

/* The same, keeping a NULL after the last (for in_list). */
static void push_nt(char ***arr, int *n, char *s)
{
    *arr = xrealloc(*arr, sizeof **arr * (size_t)(*n + 2), "name list");
    (*arr)[(*n)++] = s;
    (*arr)[*n] = NULL;
}

static void free_strs(char **arr, int n)
{
    for (int i = 0; i < n; i++) free(arr[i]);
    free(arr);
}

static char *trim_dup(const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s)) s++, len--;
    while (len && isspace((unsigned char)s[len - 1])) len--;
    char *out = xmalloc(len + 1, "string");
    memcpy(out, s, len);
    out[len] = 0;
    return out;
}

static bool in_list(const char *s, const char *const *list)
{
    for (int i = 0; list && list[i]; i++)
        if (!strcmp(s, list[i])) return true;
    return false;
}

static int parse_bool(const char *s)
{
    static const char *const yes[] = {"yes", "true", "on", "1", NULL};
    static const char *const no[] = {"no", "false", "off", "0", NULL};
    return in_list(s, yes) ? 1 : in_list(s, no) ? 0 : -1;
}

/* Strict positive integer, for repeats. */
static bool parse_count(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 1 || v > 1000000) return false;
    *out = (int)v;
    return true;
}

static void *json_check(void *p)
{
    if (!p) {
        fprintf(stderr, "bigbatch: out of memory building JSON\n");
        exit(3);
    }
    return p;
}

/* ------------------------------------------------------------------ reading the file */

typedef enum { SEC_EXPERIMENT, SEC_TRAIN, SEC_GRID, SEC_ZIP, SEC_DERIVED, SEC_PAPER, SEC_SMOKE, SEC_PROXY,
               SEC_FULL, SEC_BAD } SecKind;
static const char *const SCALES[] = {"smoke", "proxy", "full", NULL}; /* SEC_SMOKE + i */

typedef struct {
    char *raw;   /* between [ and ] */
    char *title; /* for messages: "train", "zip batch" */
    char *axis;  /* [zip AXIS] */
    SecKind kind;
    int line;
} Header;

typedef struct {
    char *name, *value;
    int line, header;
} Entry;

typedef struct {
    char *name, *value;
    int line, scale;
} Override;

typedef struct {
    const char *path;
    Experiment *exp;
    Error *err;
    bool failed;
    int fail_line;
    /* the reader */
    const char *text;
    size_t pos;
    int line;
    bool indented;
    Header *headers;
    int n_headers;
    Entry *entries;
    int n_entries;
    /* pre-scanned: names used by [derived] expressions, and the [grid] keys */
    char **refs;
    int n_refs;
    char **grid_names;
    int n_grid_names;
    /* per key of exp->keys: the header it was defined under */
    int *key_header;
    Override *overrides;
    int n_overrides;
    int scale; /* 0 smoke, 1 proxy, 2 full */
    int experiment_line, tuned_line, columns_line, reference_batch_line;
    char *tuned_raw;
    int *row_lines;
} Loader;

static int fail_at(Loader *L, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(Loader *L, int line, const char *fmt, ...)
{
    if (L->failed) return -1; /* the first error is the one reported */
    Str m = {0};
    va_list ap;
    va_start(ap, fmt);
    str_vaddf(&m, fmt, ap);
    va_end(ap);
    if (line > 0) error_set(L->err, "%s:%d: %s", L->path, line, m.s);
    else error_set(L->err, "%s: %s", L->path, m.s);
    free(m.s);
    L->failed = true;
    L->fail_line = line;
    return -1;
}

static void classify(Header *h)
{
    char *t = trim_dup(h->raw, strlen(h->raw));
    h->kind = SEC_BAD;
    static const char *const names[] = {"experiment", "train", "grid", "", "derived", "paper",
                                        "smoke", "proxy", "full"};
    for (int k = 0; k <= SEC_FULL; k++)
        if (k != SEC_ZIP && !strcmp(t, names[k])) h->kind = (SecKind)k;
    if (!strncmp(t, "zip", 3) && isspace((unsigned char)t[3])) {
        h->axis = trim_dup(t + 3, strlen(t + 3));
        h->kind = SEC_ZIP;
        h->title = fmt_dup("zip %s", h->axis);
        free(t);
        return;
    }
    h->title = t;
}

/* fgets for inih over the text in memory, counting lines and noting section headers. */
static char *read_line(char *str, int num, void *stream)
{
    Loader *L = stream;
    const char *s = L->text + L->pos;
    if (!*s) return NULL;
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);
    L->pos += len;
    L->line++;
    size_t content = len - (nl != NULL);
    if (content && s[content - 1] == '\r') content--;
    L->indented = s[0] == ' ' || s[0] == '\t';
    if ((long)content > (long)num - 3) {
        /* inih would cut the line and read the rest as another line */
        fail_at(L, L->line, "line longer than %d characters (continue text on indented lines)", num - 3);
        snprintf(str, (size_t)num, "\n");
        return str;
    }
    memcpy(str, s, len);
    str[len] = 0;
    const char *t = s + strspn(s, " \t");
    if (*t == '[') {
        const char *close = memchr(t, ']', content - (size_t)(t - s));
        if (L->indented) fail_at(L, L->line, "section header is indented");
        else if (close) {
            L->headers = xrealloc(L->headers, sizeof *L->headers * (size_t)(L->n_headers + 1), "sections");
            Header *h = &L->headers[L->n_headers++];
            memset(h, 0, sizeof *h);
            h->raw = xmalloc((size_t)(close - t), "section");
            memcpy(h->raw, t + 1, (size_t)(close - t - 1));
            h->raw[close - t - 1] = 0;
            h->line = L->line;
            classify(h);
        }
    }
    return str;
}

/* The [experiment] keys that hold prose: they may continue on indented lines. */
static const struct {
    const char *name;
    size_t field; /* offset of its char * in Experiment */
} EXPERIMENT_TEXT[] = {
    {"title", offsetof(Experiment, title)},       {"source", offsetof(Experiment, source)},
    {"description", offsetof(Experiment, description)}, {"scaled", offsetof(Experiment, scaled)},
    {"findings", offsetof(Experiment, findings)}, {"reference_points", offsetof(Experiment, reference_points)},
    {"reference_batch", offsetof(Experiment, reference_batch)},
};
enum { N_EXPERIMENT_TEXT = (int)(sizeof EXPERIMENT_TEXT / sizeof EXPERIMENT_TEXT[0]) };
static const NameTable EXPERIMENT_TEXT_NAMES = NAME_TABLE(EXPERIMENT_TEXT);

static int experiment_text_index(const char *name)
{
    return name_table_index(EXPERIMENT_TEXT_NAMES, name);
}

static bool text_key(SecKind kind, const char *name)
{
    return (kind == SEC_EXPERIMENT && experiment_text_index(name) >= 0) ||
           (kind == SEC_PAPER && (!strcmp(name, "note") || !strcmp(name, "what")));
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    Loader *L = user;
    if (L->failed) return 0;
    Entry *last = L->n_entries ? &L->entries[L->n_entries - 1] : NULL;
    int cur = L->n_headers - 1;
    /* inih reads an indented line after a key as more of that key's value */
    if (L->indented && last && last->header == cur && cur >= 0) {
        if (!text_key(L->headers[cur].kind, last->name)) {
            fail_at(L, L->line, "indented line continues key '%s', which takes one line (remove the indentation)",
                    last->name);
            return 0;
        }
        char *joined = fmt_dup("%s %s", last->value, value);
        free(last->value);
        last->value = joined;
        return 1;
    }
    if (cur < 0 || !*section) {
        fail_at(L, L->line, "key '%s' is outside any [section]", name);
        return 0;
    }
    if (strncmp(section, L->headers[cur].raw, strlen(section)) != 0) { /* inih cuts long names */
        fail_at(L, L->line, "key '%s': its section header was not understood", name);
        return 0;
    }
    L->entries = xrealloc(L->entries, sizeof *L->entries * (size_t)(L->n_entries + 1), "entries");
    Entry *e = &L->entries[L->n_entries++];
    e->name = xstrdup(name);
    e->value = trim_dup(value, strlen(value));
    e->line = L->line;
    e->header = cur;
    return 1;
}

/* ------------------------------------------------------------------ keys and values */

static int find_key(const Experiment *exp, const char *name)
{
    for (int i = 0; i < exp->n_keys; i++)
        if (!strcmp(exp->keys[i].name, name)) return i;
    return -1;
}

static int add_ref(void *ctx, const char *name, Error *err)
{
    (void)err;
    Loader *L = ctx;
    if (!in_list(name, (const char *const *)L->refs)) push_nt(&L->refs, &L->n_refs, xstrdup(name));
    return 0;
}

/* Names used by any [derived] expression (every scale's), and the [grid] keys: needed before
 * the sections that use them may have been read. Syntax errors are reported later, in place. */
static void prescan(Loader *L)
{
    char **derived = NULL; /* names borrowed from the entries, as grid_names' */
    int n_derived = 0;
    for (int i = 0; i < L->n_entries; i++) {
        const Entry *e = &L->entries[i];
        SecKind k = L->headers[e->header].kind;
        if (k == SEC_DERIVED) push_nt(&derived, &n_derived, e->name);
        else if (k == SEC_GRID) push_nt(&L->grid_names, &L->n_grid_names, e->name);
    }
    for (int i = 0; i < L->n_entries; i++) {
        const Entry *e = &L->entries[i];
        SecKind k = L->headers[e->header].kind;
        bool scale = k == SEC_SMOKE || k == SEC_PROXY || k == SEC_FULL;
        if (k == SEC_DERIVED || (scale && in_list(e->name, (const char *const *)derived))) {
            Error ignored;
            expr_names(e->value, add_ref, L, &ignored);
        }
    }
    free(derived);
}

/* Keys the sweep sets for every run itself. */
static const char *const SWEEP_KEYS[] = {"db",   "run-id",     "record-stream", "help",   "threads",
                                         "quiet", "save", "save-every",    "resume", "device", NULL};

static int key_kind(Loader *L, const char *name, int line, bool *is_flag, bool *is_switch)
{
    if (in_list(name, SWEEP_KEYS))
        return fail_at(L, line, "key '%s' is set by the sweep runner, not by an experiment file", name);
    int t = train_flag_takes_value(name);
    *is_flag = t >= 0;
    *is_switch = t == 0;
    if (t < 0 && !in_list(name, (const char *const *)L->refs))
        return fail_at(L, line, "unknown key '%s' (not a bigbatch train flag; bigbatch train --help lists them; "
                                "nor a variable used in [derived])", name);
    return 0;
}

/* One value of a flag through the train parser. A few flags are checked against others
 * there; the context added after them makes any valid value pass on its own. */
static int check_flag_value(const char *name, const char *value, Error *err)
{
    char *opt = fmt_dup("--%s", name);
    char *argv[8];
    int argc = 0;
    argv[argc++] = (char *)"train";
    argv[argc++] = opt;
    argv[argc++] = (char *)value;
    if (!strcmp(name, "workers-emulated")) { /* the batch must divide by it */
        argv[argc++] = (char *)"--batch";
        argv[argc++] = (char *)value;
    } else if (!strcmp(name, "lars-variant")) { /* needs --opt lars or larc */
        argv[argc++] = (char *)"--opt";
        argv[argc++] = (char *)"lars";
    }
    argv[argc] = NULL;
    TrainFlags flags;
    int rc = train_flags_parse(argc, argv, &flags, err);
    /* names are checked by train_config_check, and these three need nothing else */
    if (rc == 0 && (!strcmp(name, "model") || !strcmp(name, "data") || !strcmp(name, "opt")))
        rc = train_config_check(&flags.cfg, err);
    free(opt);
    return rc != 0 ? -1 : 0;
}

static int check_value(Loader *L, const char *name, bool is_flag, bool is_switch, const char *item, int line,
                       char **out)
{
    if (is_switch) {
        int b = parse_bool(item);
        if (b < 0) return fail_at(L, line, "key '%s': '%s' is not yes or no (or true/false, on/off, 1/0)", name, item);
        *out = xstrdup(b ? "true" : "false");
        return 0;
    }
    char *v = run_config_value(item);
    double x;
    Error e = {{0}};
    if (!is_flag && !run_config_number(v, &x)) {
        fail_at(L, line, "key '%s': '%s' is not a number (a key that is not a train flag is a variable for "
                         "[derived])", name, item);
        free(v);
        return -1;
    }
    if (is_flag && check_flag_value(name, v, &e)) {
        fail_at(L, line, "key '%s': %s", name, e.msg);
        free(v);
        return -1;
    }
    *out = v;
    return 0;
}

/* A value or (list) a comma-separated list, each item checked and normalized. */
static int parse_values(Loader *L, const char *name, bool is_flag, bool is_switch, bool list, const char *raw,
                        int line, char ***vals, int *n)
{
    if (!*raw) return fail_at(L, line, "key '%s' has no value", name);
    for (const char *p = raw;;) {
        const char *comma = list ? strchr(p, ',') : NULL;
        char *item = trim_dup(p, comma ? (size_t)(comma - p) : strlen(p));
        char *v = NULL;
        int rc = *item ? check_value(L, name, is_flag, is_switch, item, line, &v)
                       : fail_at(L, line, "key '%s': empty item in the list '%s'", name, raw);
        free(item);
        if (rc) return -1;
        push_str(vals, n, v);
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

static int check_grid_unique(Loader *L, const char *name, char **vals, int n, int line)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(vals[i], vals[j]))
                return fail_at(L, line, "key '%s': '%s' appears twice in the grid", name, vals[i]);
    return 0;
}

static int check_expr_syntax(Loader *L, const char *name, const char *text, int line)
{
    Error e = {{0}};
    if (expr_names(text, NULL, NULL, &e)) return fail_at(L, line, "key '%s': %s", name, e.msg);
    return 0;
}

/* ------------------------------------------------------------------ sections */

/* Defined with the other list handling below. */
static int split_list(Loader *L, const char *what, const char *raw, int line, char ***out, int *n);

static int do_experiment(Loader *L, const Entry *en)
{
    Experiment *exp = L->exp;
    const char *v = en->value;
    int text = experiment_text_index(en->name);
    if (text >= 0) {
        char **field = (char **)((char *)exp + EXPERIMENT_TEXT[text].field);
        free(*field);
        *field = xstrdup(v);
        if (!strcmp(en->name, "reference_batch")) L->reference_batch_line = en->line;
        return 0;
    }
    if (!strcmp(en->name, "name")) {
        if (!*v || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(v))
            return fail_at(L, en->line, "key 'name': '%s' is not made of a-z, 0-9, '-' and '_'", v);
        free(exp->name);
        exp->name = xstrdup(v);
    } else if (!strcmp(en->name, "repeats")) {
        if (!parse_count(v, &exp->repeats))
            return fail_at(L, en->line, "key 'repeats': '%s' is not an integer from 1 to 1000000", v);
    } else if (!strcmp(en->name, "tuned")) {
        free(L->tuned_raw);
        L->tuned_raw = xstrdup(v);
        L->tuned_line = en->line;
    } else if (!strcmp(en->name, "figures")) {
        free_strs(exp->figures, exp->n_figures);
        exp->figures = NULL;
        exp->n_figures = 0;
        if (split_list(L, "figures", v, en->line, &exp->figures, &exp->n_figures)) return -1;
        for (int i = 0; i < exp->n_figures; i++)
            if (!figure_find(exp->figures[i])) {
                char kinds[256];
                return fail_at(L, en->line, "key 'figures': '%s' is not one of %s", exp->figures[i],
                               figure_names(kinds, sizeof kinds, ", "));
            }
    } else if (!strcmp(en->name, "target")) {
        if (!run_config_number(v, &exp->target))
            return fail_at(L, en->line, "key 'target': '%s' is not a number", v);
    } else if (!strcmp(en->name, "metric")) {
        if (!in_list(v, EXPERIMENT_METRICS))
            return fail_at(L, en->line, "key 'metric': '%s' is not one of test_acc, test_loss, train_loss, "
                                        "loss_gap, best_test_acc", v);
        free(exp->metric);
        exp->metric = xstrdup(v);
    } else {
        return fail_at(L, en->line, "unknown key '%s' in [experiment] (known: name, title, source, description, "
                                    "scaled, findings, reference_points, reference_batch, repeats, tuned, metric, figures, "
                                    "target)", en->name);
    }
    return 0;
}

static int do_key(Loader *L, const Entry *en, const Header *h)
{
    Experiment *exp = L->exp;
    bool is_flag, is_switch;
    if (key_kind(L, en->name, en->line, &is_flag, &is_switch)) return -1;
    int other = find_key(exp, en->name);
    if (other >= 0)
        return fail_at(L, en->line, "key '%s' is already in [%s] at line %d (a key has one role: [train], "
                                    "[grid], [zip] or [derived])", en->name,
                       L->headers[L->key_header[other]].title, exp->keys[other].line);
    exp->keys = xrealloc(exp->keys, sizeof *exp->keys * (size_t)(exp->n_keys + 1), "keys");
    L->key_header = xrealloc(L->key_header, sizeof *L->key_header * (size_t)(exp->n_keys + 1), "keys");
    L->key_header[exp->n_keys] = en->header;
    ExpKey *k = &exp->keys[exp->n_keys++];
    memset(k, 0, sizeof *k);
    k->name = xstrdup(en->name);
    k->line = en->line;
    k->is_flag = is_flag;
    k->is_switch = is_switch;
    switch (h->kind) {
    case SEC_TRAIN:
        k->role = KEY_FIXED;
        return parse_values(L, k->name, is_flag, is_switch, false, en->value, en->line, &k->values, &k->n_values);
    case SEC_GRID:
        k->role = KEY_GRID;
        if (parse_values(L, k->name, is_flag, is_switch, true, en->value, en->line, &k->values, &k->n_values))
            return -1;
        return check_grid_unique(L, k->name, k->values, k->n_values, en->line);
    case SEC_ZIP:
        k->role = KEY_ZIP;
        k->zip_with = xstrdup(h->axis);
        return parse_values(L, k->name, is_flag, is_switch, true, en->value, en->line, &k->values, &k->n_values);
    default:
        k->role = KEY_DERIVED;
        push_str(&k->values, &k->n_values, xstrdup(en->value));
        if (is_switch) return fail_at(L, en->line, "key '%s' is a switch: it cannot be [derived]", k->name);
        return check_expr_syntax(L, k->name, en->value, en->line);
    }
}

/* Splits a [paper] line; numbers normalized so that rows match the runs' values. */
static int split_row(Loader *L, const Entry *en, char ***out, int *n)
{
    for (const char *p = en->value;;) {
        const char *comma = strchr(p, ',');
        char *item = trim_dup(p, comma ? (size_t)(comma - p) : strlen(p));
        if (!*item) {
            free(item);
            return fail_at(L, en->line, "key '%s': empty item in '%s'", en->name, en->value);
        }
        push_str(out, n, run_config_value(item));
        free(item);
        if (!comma) return 0;
        p = comma + 1;
    }
}

static int do_paper(Loader *L, const Entry *en)
{
    Experiment *exp = L->exp;
    if (!strcmp(en->name, "columns")) {
        L->columns_line = en->line;
        return split_row(L, en, &exp->paper_cols, &exp->n_paper_cols);
    }
    if (!strcmp(en->name, "row")) {
        char **row = NULL;
        int n = 0;
        int rc = split_row(L, en, &row, &n);
        if (rc == 0 && n != exp->n_paper_cols)
            rc = L->columns_line ? fail_at(L, en->line, "key 'row' has %d value%s but columns (line %d) has %d", n,
                                           n == 1 ? "" : "s", L->columns_line, exp->n_paper_cols)
                                 : fail_at(L, en->line, "key 'row' comes before 'columns'");
        /* rows always have n_paper_cols cells, so that experiment_free knows their length */
        if (rc) {
            free_strs(row, n);
            return -1;
        }
        exp->paper_rows = xrealloc(exp->paper_rows, sizeof *exp->paper_rows * (size_t)(exp->n_paper_rows + 1),
                                   "paper rows");
        L->row_lines = xrealloc(L->row_lines, sizeof *L->row_lines * (size_t)(exp->n_paper_rows + 1), "rows");
        L->row_lines[exp->n_paper_rows] = en->line;
        exp->paper_rows[exp->n_paper_rows++] = row;
        double x;
        const char *metric = row[n - 1];
        if (strcmp(metric, "diverged") && strcmp(metric, "-") && !run_config_number(metric, &x))
            return fail_at(L, en->line, "key 'row': '%s' is not a number, 'diverged' or '-'", metric);
        return 0;
    }
    if (!strcmp(en->name, "note")) {
        push_str(&exp->paper_notes, &exp->n_paper_notes, xstrdup(en->value));
        return 0;
    }
    if (!strcmp(en->name, "what")) {
        free(exp->paper_what);
        exp->paper_what = xstrdup(en->value);
        return 0;
    }
    if (!strcmp(en->name, "scales")) {
        free_strs(exp->paper_scales, exp->n_paper_scales);
        exp->paper_scales = NULL;
        exp->n_paper_scales = 0;
        if (split_list(L, "scales", en->value, en->line, &exp->paper_scales, &exp->n_paper_scales)) return -1;
        for (int i = 0; i < exp->n_paper_scales; i++)
            if (!experiment_scale_known(exp->paper_scales[i]))
                return fail_at(L, en->line, "key 'scales': '%s' is not smoke, proxy or full", exp->paper_scales[i]);
        return 0;
    }
    return fail_at(L, en->line, "unknown key '%s' in [paper] (known: columns, row, note, scales, what)", en->name);
}

static int do_scale(Loader *L, const Entry *en, int scale)
{
    int r;
    double t;
    if (!strcmp(en->name, "repeats")) {
        if (!parse_count(en->value, &r))
            return fail_at(L, en->line, "key 'repeats': '%s' is not an integer from 1 to 1000000", en->value);
    } else if (!strcmp(en->name, "target")) {
        if (!run_config_number(en->value, &t)) return fail_at(L, en->line, "key 'target': '%s' is not a number", en->value);
    } else {
        bool is_flag, is_switch;
        if (key_kind(L, en->name, en->line, &is_flag, &is_switch)) return -1;
    }
    L->overrides = xrealloc(L->overrides, sizeof *L->overrides * (size_t)(L->n_overrides + 1), "overrides");
    Override *o = &L->overrides[L->n_overrides++];
    o->name = xstrdup(en->name);
    o->value = xstrdup(en->value);
    o->line = en->line;
    o->scale = scale;
    return 0;
}

static int do_header(Loader *L, int hi)
{
    const Header *h = &L->headers[hi];
    if (h->kind == SEC_BAD) {
        if (!strcmp(h->title, "zip")) return fail_at(L, h->line, "[zip] needs the grid key it zips with: [zip batch]");
        return fail_at(L, h->line, "unknown section [%s] (known: experiment, train, grid, zip AXIS, derived, paper, "
                                   "smoke, proxy, full)", h->title);
    }
    for (int j = 0; j < hi; j++)
        if (!strcmp(L->headers[j].title, h->title))
            return fail_at(L, h->line, "section [%s] appears twice (first at line %d)", h->title, L->headers[j].line);
    if (h->kind == SEC_ZIP && !in_list(h->axis, (const char *const *)L->grid_names))
        return fail_at(L, h->line, "[%s]: '%s' is not a [grid] key", h->title, h->axis);
    if (h->kind == SEC_EXPERIMENT) L->experiment_line = h->line;
    return 0;
}

static int do_sections(Loader *L)
{
    int e = 0;
    for (int hi = 0; hi < L->n_headers; hi++) {
        if (do_header(L, hi)) return -1;
        const Header *h = &L->headers[hi];
        for (; e < L->n_entries && L->entries[e].header == hi; e++) {
            const Entry *en = &L->entries[e];
            bool repeatable = h->kind == SEC_PAPER && (!strcmp(en->name, "row") || !strcmp(en->name, "note"));
            for (int j = e - 1; !repeatable && j >= 0 && L->entries[j].header == hi; j--)
                if (!strcmp(L->entries[j].name, en->name))
                    return fail_at(L, en->line, "key '%s' appears twice in [%s] (first at line %d)", en->name,
                                   h->title, L->entries[j].line);
            int rc;
            switch (h->kind) {
            case SEC_EXPERIMENT: rc = do_experiment(L, en); break;
            case SEC_PAPER: rc = do_paper(L, en); break;
            case SEC_SMOKE:
            case SEC_PROXY:
            case SEC_FULL: rc = do_scale(L, en, (int)(h->kind - SEC_SMOKE)); break;
            default: rc = do_key(L, en, h); break;
            }
            if (rc) return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ after the sections */

/* Every scale's overrides are checked; the selected scale's replace the values. */
static int apply_overrides(Loader *L)
{
    Experiment *exp = L->exp;
    int n_base = exp->n_keys;
    for (int i = 0; i < L->n_overrides; i++) {
        const Override *o = &L->overrides[i];
        bool mine = o->scale == L->scale;
        /* the [experiment] keys a scale may set (checked when read) */
        if (!strcmp(o->name, "repeats")) {
            if (mine) parse_count(o->value, &exp->repeats);
            continue;
        }
        if (!strcmp(o->name, "target")) {
            if (mine) run_config_number(o->value, &exp->target);
            continue;
        }
        int ki = find_key(exp, o->name);
        if (ki >= n_base) ki = -1; /* added by this scale: not a base key */
        char **vals = NULL;
        int n = 0;
        int rc;
        bool is_flag = false, is_switch = false;
        if (ki >= 0 && exp->keys[ki].role == KEY_DERIVED) {
            rc = check_expr_syntax(L, o->name, o->value, o->line);
            if (rc == 0) push_str(&vals, &n, xstrdup(o->value));
        } else {
            bool list = ki >= 0 && (exp->keys[ki].role == KEY_GRID || exp->keys[ki].role == KEY_ZIP);
            key_kind(L, o->name, o->line, &is_flag, &is_switch); /* checked when read */
            rc = parse_values(L, o->name, is_flag, is_switch, list, o->value, o->line, &vals, &n);
            if (rc == 0 && ki >= 0 && exp->keys[ki].role == KEY_GRID) rc = check_grid_unique(L, o->name, vals, n, o->line);
        }
        if (rc || !mine) {
            free_strs(vals, n);
            if (rc) return -1;
            continue;
        }
        if (ki < 0) { /* a key only this scale sets: a fixed setting */
            exp->keys = xrealloc(exp->keys, sizeof *exp->keys * (size_t)(exp->n_keys + 1), "keys");
            L->key_header = xrealloc(L->key_header, sizeof *L->key_header * (size_t)(exp->n_keys + 1), "keys");
            L->key_header[exp->n_keys] = -1;
            ki = exp->n_keys++;
            ExpKey *k = &exp->keys[ki];
            memset(k, 0, sizeof *k);
            k->name = xstrdup(o->name);
            k->role = KEY_FIXED;
            k->is_flag = is_flag;
            k->is_switch = is_switch;
        }
        ExpKey *k = &exp->keys[ki];
        free_strs(k->values, k->n_values);
        k->values = vals;
        k->n_values = n;
        k->line = o->line;
    }
    return 0;
}

typedef struct {
    const Experiment *exp;
    int self;
} RefCtx;

/* A [derived] expression may use any key but itself and the [derived] keys after it. */
static int check_ref(void *ctx, const char *name, Error *err)
{
    const RefCtx *c = ctx;
    int j = find_key(c->exp, name);
    if (j < 0) {
        error_set(err, "unknown name '%s' (not a key of this experiment; subtraction needs spaces: a - b)", name);
        return -1;
    }
    if (j == c->self) {
        error_set(err, "the expression uses '%s' itself", name);
        return -1;
    }
    if (c->exp->keys[j].role == KEY_DERIVED && j > c->self) {
        error_set(err, "'%s' is a [derived] key that comes later (line %d)", name, c->exp->keys[j].line);
        return -1;
    }
    return 0;
}

static int split_list(Loader *L, const char *what, const char *raw, int line, char ***out, int *n)
{
    for (const char *p = raw;;) {
        const char *comma = strchr(p, ',');
        char *item = trim_dup(p, comma ? (size_t)(comma - p) : strlen(p));
        if (!*item) {
            free(item);
            return fail_at(L, line, "key '%s': empty item in '%s'", what, raw);
        }
        push_str(out, n, item);
        if (!comma) return 0;
        p = comma + 1;
    }
}

static int check_whole(Loader *L)
{
    Experiment *exp = L->exp;
    if (!L->experiment_line) return fail_at(L, 0, "no [experiment] section (it needs at least name = ...)");
    if (!exp->name) return fail_at(L, L->experiment_line, "[experiment] has no name");
    for (int i = 0; i < exp->n_keys; i++) {
        const ExpKey *k = &exp->keys[i];
        if (k->role == KEY_DERIVED) {
            RefCtx c = {exp, i};
            Error e = {{0}};
            if (expr_names(k->values[0], check_ref, &c, &e)) return fail_at(L, k->line, "key '%s': %s", k->name, e.msg);
        } else if (k->role == KEY_ZIP) {
            int a = find_key(exp, k->zip_with);
            if (a < 0 || exp->keys[a].role != KEY_GRID)
                return fail_at(L, k->line, "key '%s' zips with '%s', which is not a [grid] key", k->name, k->zip_with);
            const ExpKey *axis = &exp->keys[a];
            if (k->n_values != axis->n_values)
                return fail_at(L, k->line, "key '%s' has %d values but the grid key '%s' it zips with has %d (line %d)",
                               k->name, k->n_values, axis->name, axis->n_values, axis->line);
        }
    }
    if (L->tuned_raw) {
        if (split_list(L, "tuned", L->tuned_raw, L->tuned_line, &exp->tuned, &exp->n_tuned)) return -1;
        for (int i = 0; i < exp->n_tuned; i++) {
            int j = find_key(exp, exp->tuned[i]);
            if (j < 0 || (exp->keys[j].role != KEY_GRID && exp->keys[j].role != KEY_ZIP))
                return fail_at(L, L->tuned_line, "key 'tuned': '%s' is not a [grid] or [zip] key", exp->tuned[i]);
        }
    }
    if (exp->reference_batch && *exp->reference_batch) {
        int j = find_key(exp, exp->reference_batch);
        if (j < 0 || (exp->keys[j].role != KEY_GRID && exp->keys[j].role != KEY_ZIP))
            return fail_at(L, L->reference_batch_line, "key 'reference_batch': '%s' is not a [grid] or [zip] key",
                           exp->reference_batch);
    }
    int s = find_key(exp, "seed");
    if (s >= 0 && exp->keys[s].role != KEY_FIXED && exp->repeats > 1)
        return fail_at(L, exp->keys[s].line, "key 'seed' varies by run, so repeats (%d) must be 1 (repeats get the "
                                             "fixed seed + the repeat index)", exp->repeats);
    if (exp->n_paper_rows && !exp->n_paper_cols) return fail_at(L, L->row_lines[0], "[paper] rows without columns");
    if (exp->n_paper_cols) {
        if (exp->n_paper_cols < 2)
            return fail_at(L, L->columns_line, "key 'columns': give the keys, then the metric (e.g. batch, test_acc)");
        for (int i = 0; i < exp->n_paper_cols - 1; i++)
            if (find_key(exp, exp->paper_cols[i]) < 0 && strcmp(exp->paper_cols[i], "seed") != 0)
                return fail_at(L, L->columns_line, "key 'columns': '%s' is not a key of this experiment",
                               exp->paper_cols[i]);
        const char *metric = exp->paper_cols[exp->n_paper_cols - 1];
        if (!in_list(metric, EXPERIMENT_METRICS))
            return fail_at(L, L->columns_line, "key 'columns': the last column '%s' is not a metric (test_acc, "
                                               "test_loss, train_loss, loss_gap, best_test_acc)", metric);
    }
    return 0;
}

static void loader_free(Loader *L)
{
    for (int i = 0; i < L->n_headers; i++) {
        free(L->headers[i].raw);
        free(L->headers[i].title);
        free(L->headers[i].axis);
    }
    free(L->headers);
    for (int i = 0; i < L->n_entries; i++) {
        free(L->entries[i].name);
        free(L->entries[i].value);
    }
    free(L->entries);
    free_strs(L->refs, L->n_refs);
    free(L->grid_names); /* borrowed strings */
    free(L->key_header);
    for (int i = 0; i < L->n_overrides; i++) {
        free(L->overrides[i].name);
        free(L->overrides[i].value);
    }
    free(L->overrides);
    free(L->tuned_raw);
    free(L->row_lines);
}

int experiment_load_string(const char *path, const char *text, const char *scale, Experiment *exp, Error *err)
{
    memset(exp, 0, sizeof *exp);
    if (!scale) scale = "proxy";
    int scale_index = -1;
    for (int i = 0; SCALES[i]; i++)
        if (!strcmp(scale, SCALES[i])) scale_index = i;
    if (scale_index < 0) {
        error_set(err, "unknown scale '%s' (smoke, proxy or full)", scale);
        return -1;
    }
    exp->path = xstrdup(path);
    exp->text = xstrdup(text);
    exp->scale = xstrdup(scale);
    exp->repeats = 1;
    exp->target = NAN;

    Loader L;
    memset(&L, 0, sizeof L);
    L.path = path;
    L.exp = exp;
    L.err = err;
    L.text = exp->text;
    L.scale = scale_index;
    /* A UTF-8 byte order mark (some editors write one) is not part of the first line. (UTF-16
     * never gets here: its NUL bytes make it "not a text file".) */
    if (!strncmp(L.text, "\xEF\xBB\xBF", 3)) L.pos = 3;
    int rc = ini_parse_stream(read_line, &L, on_entry, &L);
    if (rc == -2) {
        L.failed = false;
        fail_at(&L, 0, "out of memory reading the file");
    } else if (rc > 0 && (!L.failed || rc < L.fail_line)) {
        /* a line inih could not read, before any error of ours */
        L.failed = false;
        fail_at(&L, rc, "not a [section], 'key = value' or comment line");
    }
    if (!L.failed) {
        prescan(&L);
        if (do_sections(&L) == 0 && apply_overrides(&L) == 0) check_whole(&L);
    }
    bool failed = L.failed;
    loader_free(&L);
    if (!failed) {
        for (int i = 0; i < N_EXPERIMENT_TEXT; i++) {
            char **field = (char **)((char *)exp + EXPERIMENT_TEXT[i].field);
            if (!*field) *field = xstrdup("");
        }
        if (!exp->metric) exp->metric = xstrdup("test_acc");
        /* the trial expansion runs every run through the train flag checks */
        RunSpec *runs = NULL;
        int n = 0;
        if (experiment_expand(exp, &runs, &n, err) == 0) {
            runspecs_free(runs, n);
            return 0;
        }
    }
    experiment_free(exp);
    return -1;
}

int experiment_check_scales(const char *path, Error *err)
{
    for (int i = 0; SCALES[i]; i++) {
        Experiment exp;
        if (experiment_load(path, SCALES[i], &exp, err) != 0) {
            char scale[32];
            snprintf(scale, sizeof scale, "at --scale %s", SCALES[i]);
            error_prefix(err, scale);
            return -1;
        }
        experiment_free(&exp);
    }
    return 0;
}

int experiment_load(const char *path, const char *scale, Experiment *exp, Error *err)
{
    memset(exp, 0, sizeof *exp);
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t len = 0, cap = 4096;
    char *s = xmalloc(cap, "file");
    size_t got;
    while ((got = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) s = xrealloc(s, cap *= 2, "file");
    }
    s[len] = 0;
    bool bad = ferror(f);
    fclose(f);
    if (bad || memchr(s, 0, len)) {
        error_set(err, "%s: %s", path, bad ? "read error" : "contains a NUL byte (not a text file)");
        free(s);
        return -1;
    }
    int rc = experiment_load_string(path, s, scale, exp, err);
    free(s);
    return rc;
}

void experiment_free(Experiment *exp)
{
    if (!exp) return;
    for (int i = 0; i < N_EXPERIMENT_TEXT; i++) free(*(char **)((char *)exp + EXPERIMENT_TEXT[i].field));
    char *fields[] = {exp->path, exp->name, exp->scale, exp->metric, exp->text};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) free(fields[i]);
    free_strs(exp->tuned, exp->n_tuned);
    free_strs(exp->figures, exp->n_figures);
    free_strs(exp->paper_scales, exp->n_paper_scales);
    for (int i = 0; i < exp->n_keys; i++) {
        free(exp->keys[i].name);
        free(exp->keys[i].zip_with);
        free_strs(exp->keys[i].values, exp->keys[i].n_values);
    }
    free(exp->keys);
    free_strs(exp->paper_cols, exp->n_paper_cols);
    for (int i = 0; i < exp->n_paper_rows; i++) free_strs(exp->paper_rows[i], exp->n_paper_cols);
    free(exp->paper_rows);
    free_strs(exp->paper_notes, exp->n_paper_notes);
    free(exp->paper_what);
    memset(exp, 0, sizeof *exp);
}

/* ------------------------------------------------------------------ expansion */

typedef struct {
    const Experiment *exp;
    char **vals;     /* per key: this run's value */
    bool *ready;     /* [derived] keys computed so far */
} RunCtx;

static int lookup(void *ctx, const char *name, double *value, Error *err)
{
    const RunCtx *c = ctx;
    int j = find_key(c->exp, name);
    if (j < 0 || !c->ready[j]) {
        error_set(err, "unknown name '%s' (not a key of this experiment, or a [derived] key that comes later)", name);
        return -1;
    }
    if (!run_config_number(c->vals[j], value)) {
        error_set(err, "'%s' is '%s', not a number", name, c->vals[j]);
        return -1;
    }
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "batch=8192, micro-batch=1000": the keys that vary between cells. */
static char *cell_text(const Experiment *exp, char **vals, const char *sep, bool flags_only)
{
    Str b = {0};
    for (int i = 0; i < exp->n_keys; i++) {
        const ExpKey *k = &exp->keys[i];
        if (k->role == KEY_FIXED || (flags_only && !k->is_flag) || !vals[i]) continue; /* !vals: not derived yet */
        str_addf(&b, "%s%s=%s", b.len ? sep : "", k->name, vals[i]);
    }
    return str_take(&b);
}

static bool mentions(const char *msg, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(msg, "--"); p; p = strstr(p + 1, "--")) {
        char c = p[2 + n];
        if (!strncmp(p + 2, name, n) && !isalnum((unsigned char)c) && c != '-' && c != '_') return true;
    }
    return false;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const Experiment *exp;
    bool *seen;
} InputsCtx;

static void mark_key(const Experiment *exp, int i, bool *seen);

static int mark_input(void *ctx, const char *name, Error *err)
{
    (void)err;
    const InputsCtx *c = ctx;
    int j = find_key(c->exp, name);
    if (j >= 0) mark_key(c->exp, j, c->seen);
    return 0;
}

/* Key i and, for a [derived] key, the keys its value comes from: the bad value may be theirs
 * (a scale's override of a variable), on a line of its own. */
static void mark_key(const Experiment *exp, int i, bool *seen)
{
    if (seen[i]) return;
    seen[i] = true;
    if (exp->keys[i].role != KEY_DERIVED) return;
    InputsCtx c = {exp, seen};
    Error ignored = {{0}}; /* checked when the file was read */
    expr_names(exp->keys[i].values[0], mark_input, &c, &ignored);
}

/* Which lines to look at: the keys the message names (with what derived ones come from), else
 * the keys of the cell. */
static char *involved_lines(const Experiment *exp, const char *msg)
{
    int *lines = xcalloc((size_t)exp->n_keys + 1, sizeof *lines, "lines");
    bool *seen = xcalloc((size_t)exp->n_keys + 1, sizeof *seen, "lines");
    int n = 0;
    for (int i = 0; i < exp->n_keys; i++)
        if (exp->keys[i].is_flag && mentions(msg, exp->keys[i].name)) mark_key(exp, i, seen);
    for (int i = 0; i < exp->n_keys; i++)
        if (seen[i]) lines[n++] = exp->keys[i].line;
    for (int i = 0; i < exp->n_keys && n == 0; i++)
        if (exp->keys[i].role != KEY_FIXED) lines[n++] = exp->keys[i].line;
    free(seen);
    qsort(lines, (size_t)n, sizeof *lines, cmp_int);
    Str b = {0};
    for (int i = 0; i < n; i++)
        if (i == 0 || lines[i] != lines[i - 1]) str_addf(&b, "%s%d", b.len ? ", " : "", lines[i]);
    free(lines);
    if (!n) return xstrdup("");
    char *out = fmt_dup(" (key%s at line%s %s)", n > 1 ? "s" : "", n > 1 ? "s" : "", b.s);
    free(b.s);
    return out;
}

/* The run's flags, JSON and label from the values of every key. */
static void build_run(const Experiment *exp, char **vals, int seq, int repeat, RunSpec *r)
{
    memset(r, 0, sizeof *r);
    r->seq = seq;
    r->repeat = repeat;
    int seed_key = find_key(exp, "seed");
    char *seed;
    if (seed_key < 0) seed = fmt_dup("%d", 1 + repeat);
    else if (exp->keys[seed_key].role == KEY_FIXED)
        seed = fmt_dup("%llu", strtoull(vals[seed_key], NULL, 10) + (unsigned long long)repeat);
    else seed = xstrdup(vals[seed_key]); /* a seed axis allows one repeat only */
    char **names = xcalloc((size_t)exp->n_keys + 1, sizeof *names, "flags");
    int n = 0;
    for (int i = 0; i < exp->n_keys; i++) {
        const ExpKey *k = &exp->keys[i];
        if (k->is_flag && i != seed_key && !(k->is_switch && !strcmp(vals[i], "false"))) names[n++] = k->name;
    }
    names[n++] = (char *)"seed";
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    cJSON *config = json_check(cJSON_CreateObject());
    r->n_flags = n;
    r->flag_names = xcalloc((size_t)n, sizeof *r->flag_names, "flags");
    r->flag_values = xcalloc((size_t)n, sizeof *r->flag_values, "flags");
    r->flag_opts = xcalloc((size_t)n, sizeof *r->flag_opts, "flags");
    for (int i = 0; i < n; i++) {
        const char *v = !strcmp(names[i], "seed") ? seed : vals[find_key(exp, names[i])];
        r->flag_names[i] = xstrdup(names[i]);
        r->flag_values[i] = xstrdup(v);
        r->flag_opts[i] = fmt_dup("--%s", names[i]);
        if (!run_config_is_execution_detail(names[i])) json_check(cJSON_AddStringToObject(config, names[i], v));
    }
    free(names);
    free(seed);
    r->config_json = json_check(cJSON_PrintUnformatted(config));
    cJSON_Delete(config);
    cJSON *cell = json_check(cJSON_CreateObject());
    for (int i = 0; i < exp->n_keys; i++)
        if (exp->keys[i].role != KEY_FIXED) json_check(cJSON_AddStringToObject(cell, exp->keys[i].name, vals[i]));
    r->cell_json = json_check(cJSON_PrintUnformatted(cell));
    cJSON_Delete(cell);
    r->label = cell_text(exp, vals, " ", true);
    run_config_id(r->config_json, r->id);
}

/* The same checks as `bigbatch train` makes before it loads any data. */
static int check_run(const Experiment *exp, const RunSpec *r, char **vals, Error *err)
{
    char **argv = runspec_train_argv(r, "bigbatch", NULL, 0);
    int argc = 0;
    while (argv[argc]) argc++;
    TrainFlags flags;
    Error e = {{0}};
    int rc = train_flags_parse(argc - 1, argv + 1, &flags, &e); /* argv[0] of `train` is "train" */
    if (rc == 1) error_set(&e, "--help is not for experiment files");
    if (rc == 0) rc = train_config_check(&flags.cfg, &e);
    free(argv);
    if (rc == 0) return 0;
    char *cell = cell_text(exp, vals, ", ", false);
    char *lines = involved_lines(exp, e.msg);
    error_set(err, "%s: run %d%s%s%s: %s%s", exp->path, r->seq + 1, *cell ? " (" : "", cell, *cell ? ")" : "", e.msg,
              lines);
    free(cell);
    free(lines);
    return -1;
}

int experiment_expand(const Experiment *exp, RunSpec **runs, int *n_runs, Error *err)
{
    *runs = NULL;
    *n_runs = 0;
    int n_axes = 0;
    int *axes = xcalloc((size_t)exp->n_keys + 1, sizeof *axes, "axes"); /* key index of each grid axis */
    long long n_cells = 1;
    for (int i = 0; i < exp->n_keys; i++)
        if (exp->keys[i].role == KEY_GRID) {
            axes[n_axes++] = i;
            n_cells *= exp->keys[i].n_values;
            if (n_cells * exp->repeats > MAX_RUNS) break;
        }
    if (n_cells * exp->repeats > MAX_RUNS) {
        error_set(err, "%s: more than %d runs (a grid list too long?)", exp->path, MAX_RUNS);
        free(axes);
        return -1;
    }
    /* the grid position of each key: its own axis, or (zip) its axis' */
    int *axis_of = xcalloc((size_t)exp->n_keys + 1, sizeof *axis_of, "axes");
    for (int i = 0; i < exp->n_keys; i++) {
        const ExpKey *k = &exp->keys[i];
        int key = k->role == KEY_GRID ? i : k->role == KEY_ZIP ? find_key(exp, k->zip_with) : -1;
        axis_of[i] = -1;
        for (int a = 0; a < n_axes; a++)
            if (axes[a] == key) axis_of[i] = a;
    }
    int total = (int)n_cells * exp->repeats;
    RunSpec *rs = xcalloc((size_t)total, sizeof *rs, "runs");
    char **vals = xcalloc((size_t)exp->n_keys + 1, sizeof *vals, "values");
    char **owned = xcalloc((size_t)exp->n_keys + 1, sizeof *owned, "values"); /* derived results */
    bool *ready = xcalloc((size_t)exp->n_keys + 1, sizeof *ready, "values");
    int *idx = xcalloc((size_t)n_axes + 1, sizeof *idx, "grid position");
    int rc = 0, seq = 0;
    for (int rep = 0; rep < exp->repeats && rc == 0; rep++)
        for (long long c = 0; c < n_cells && rc == 0; c++) {
            long long rest = c; /* last axis fastest */
            for (int a = n_axes - 1; a >= 0; a--) {
                int len = exp->keys[axes[a]].n_values;
                idx[a] = (int)(rest % len);
                rest /= len;
            }
            for (int i = 0; i < exp->n_keys; i++) {
                const ExpKey *k = &exp->keys[i];
                free(owned[i]);
                owned[i] = NULL;
                ready[i] = k->role != KEY_DERIVED;
                vals[i] = k->role == KEY_DERIVED ? NULL : axis_of[i] >= 0 ? k->values[idx[axis_of[i]]] : k->values[0];
            }
            RunCtx ctx = {exp, vals, ready};
            for (int i = 0; i < exp->n_keys && rc == 0; i++) {
                const ExpKey *k = &exp->keys[i];
                if (k->role != KEY_DERIVED) continue;
                double v;
                Error e = {{0}};
                if (expr_eval(k->values[0], lookup, &ctx, &v, &e)) {
                    char *cell = cell_text(exp, vals, ", ", false);
                    error_set(err, "%s:%d: key '%s': %s (run %d%s%s)", exp->path, k->line, k->name, e.msg, seq + 1,
                              *cell ? ": " : "", cell);
                    free(cell);
                    rc = -1;
                    break;
                }
                owned[i] = fmt_dup("%.10g", v == 0 ? 0.0 : v); /* no "-0" */
                vals[i] = owned[i];
                ready[i] = true;
            }
            if (rc) break;
            build_run(exp, vals, seq, rep, &rs[seq]);
            rc = check_run(exp, &rs[seq], vals, err);
            seq++;
        }
    for (int i = 0; i < exp->n_keys; i++) free(owned[i]);
    free(owned);
    free(vals);
    free(ready);
    free(idx);
    free(axes);
    free(axis_of);
    if (rc) {
        runspecs_free(rs, seq);
        return -1;
    }
    *runs = rs;
    *n_runs = total;
    return 0;
}

void runspec_clear(RunSpec *r)
{
    free_strs(r->flag_names, r->n_flags);
    free_strs(r->flag_values, r->n_flags);
    free_strs(r->flag_opts, r->n_flags);
    free(r->config_json);
    free(r->cell_json);
    free(r->label);
    memset(r, 0, sizeof *r);
}

void runspecs_free(RunSpec *runs, int n)
{
    if (!runs) return;
    for (int i = 0; i < n; i++) runspec_clear(&runs[i]);
    free(runs);
}

char **runspec_train_argv(const RunSpec *r, const char *bin, const char *const *extra, int n_extra)
{
    char **argv = xcalloc((size_t)(2 + 2 * r->n_flags + n_extra + 1), sizeof *argv, "argv");
    int n = 0;
    argv[n++] = (char *)bin;
    argv[n++] = (char *)"train";
    for (int i = 0; i < r->n_flags; i++) {
        argv[n++] = r->flag_opts[i];
        /* a switch present in the list is on: it takes no value */
        if (train_flag_takes_value(r->flag_names[i]) != 0) argv[n++] = r->flag_values[i];
    }
    for (int i = 0; i < n_extra; i++) argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    return argv;
}

bool experiment_paper_applies(const Experiment *exp)
{
    if (exp->n_paper_scales == 0) return true;
    for (int i = 0; i < exp->n_paper_scales; i++)
        if (!strcmp(exp->paper_scales[i], exp->scale)) return true;
    return false;
}

bool experiment_scale_known(const char *scale)
{
    return in_list(scale, SCALES);
}
