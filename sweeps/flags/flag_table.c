/* The machinery of flag tables (flag_table.h): parsing by type with ranges, getopt_long's
 * options, the help text and the Markdown tables, all from a command's one table. */
#include "flag_table.h"

#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"

void said(Said *s, const char *fmt, ...)
{
    char piece[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(piece, sizeof piece, fmt, ap);
    va_end(ap);
    size_t at = s->used < s->len ? s->used : s->len;
    int n = snprintf(s->buf + at, s->len - at, "%s%s", s->sep, piece);
    if (n > 0) s->used += (size_t)n;
    s->sep = "";
}

int flag_bad_choice(const FlagCall *c, const char *value, Error *err)
{
    error_set(err, "%s: '%s' is not one of %s", c->flag, value, c->f->expected);
    return -1;
}

const char *const FLAG_OFF_ON[] = {"off", "on", NULL};

static void *field(void *target, const Flag *f) { return (char *)target + f->at; }

static bool takes_value(const Flag *f) { return f->type != T_SWITCH && f->type != T_HELP && f->type != T_ACTION; }

/* ---- parsing ---- */

static int check_range(const FlagCall *c, const char *v, double x, Error *err)
{
    const Range *r = c->f->range;
    if (!r || ((r->lo_open ? x > r->lo : x >= r->lo) && (r->hi_open ? x < r->hi : x <= r->hi))) return 0;
    if (r->quote) error_set(err, "%s: '%s' %s", c->flag, v, r->bad);
    else error_set(err, "%s: %g %s", c->flag, x, r->bad);
    return -1;
}

static int set_integer(const FlagCall *c, void *p, const char *v, Error *err)
{
    const Flag *f = c->f;
    long n;
    if (cli_parse_long(c->flag, v, f->min, f->max, &n, err)) return -1;
    if (f->type == T_INT) *(int *)p = (int)n;
    else if (f->type == T_LONG) *(long *)p = n;
    else *(unsigned long long *)p = (unsigned long long)n;
    return 0;
}

/* Stores v by the flag's type: 0, 1 for --help, or -1 with err. */
static int set_by_type(void *target, const FlagCall *c, const char *v, Error *err)
{
    const Flag *f = c->f;
    void *p = field(target, f);
    int i;
    switch (f->type) {
    case T_STR: *(const char **)p = v; return 0;
    case T_SWITCH: *(bool *)p = true; return 0;
    case T_HELP: return 1;
    case T_DOUBLE: return cli_parse_double(c->flag, v, p, err) ? -1 : check_range(c, v, *(double *)p, err);
    case T_INT:
    case T_LONG:
    case T_ULL: return set_integer(c, p, v, err);
    case T_CHOICE:
        for (i = 0; f->names[i] && strcmp(v, f->names[i]); i++) {}
        if (!f->names[i]) return flag_bad_choice(c, v, err);
        *(int *)p = i;
        return 0;
    default: return 0; /* T_NONE, T_CHARS, T_ACTION: the setter's */
    }
}

/* One flag's value (NULL for a switch): 0, 1 for --help, -1 with err. */
static int set_flag(const Flag *f, const char *v, void *target, Error *err)
{
    FlagCall c = {f, ""};
    snprintf(c.flag, sizeof c.flag, "--%s", f->name);
    int rc = set_by_type(target, &c, v, err);
    if (rc != 0) return rc;
    return f->set ? f->set(target, &c, v, err) : 0;
}

/* getopt_long's options, from the table: the value is 256 + the row. Freed by the caller. */
static struct option *long_options(const FlagTable *t)
{
    struct option *opts = xmalloc(sizeof *opts * (size_t)(t->n_flags + 1), "flag options");
    int n = 0;
    for (int i = 0; i < t->n_flags; i++) {
        const Flag *f = &t->flags[i];
        if (f->name) opts[n++] = (struct option){f->name, takes_value(f) ? required_argument : no_argument, 0, 256 + i};
    }
    opts[n] = (struct option){0, 0, 0, 0};
    return opts;
}

/* The error of a flag getopt_long refused: unknown, or (with t->missing) its value missing. */
static int refused(const FlagTable *t, int c, const char *flag, Error *err)
{
    const char *fmt = c == ':' && t->missing ? t->missing : t->unknown ? t->unknown : "unknown option '%s' (bigbatch %s --help)";
    char msg[sizeof err->msg];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(msg, sizeof msg, fmt, flag, t->command);
#pragma GCC diagnostic pop
    error_set(err, "%s", msg);
    return -1;
}

static int parse_options(const FlagTable *t, int argc, char **argv, void *target, const struct option *opts, Error *err)
{
    optind = 1;
    opterr = 0;
    int c;
    /* ':' first: a missing value is told apart from an unknown flag, where the table says how */
    while ((c = getopt_long(argc, argv, t->missing ? ":" : "", opts, NULL)) != -1) {
        const char *flag = optind > 1 ? argv[optind - 1] : "?";
        if (c < 256 || c >= 256 + t->n_flags) return refused(t, c, flag, err);
        int rc = set_flag(&t->flags[c - 256], optarg, target, err);
        if (rc != 0) return rc;
    }
    return 0;
}

int flag_table_parse(const FlagTable *t, int argc, char **argv, void *target, int *rest, Error *err)
{
    struct option *opts = long_options(t);
    int rc = parse_options(t, argc, argv, target, opts, err);
    free(opts);
    *rest = optind < argc ? optind : argc;
    const int given = argc - *rest;
    if (rc == 0 && given < t->min_operands) {
        error_set(err, "give %s (bigbatch %s --help)", t->operands, t->command);
        rc = -1;
    } else if (rc == 0 && t->max_operands >= 0 && given > t->max_operands) {
        error_set(err, "unexpected argument '%s' (bigbatch %s --help)", argv[*rest + t->max_operands], t->command);
        rc = -1;
    }
    return rc;
}

int flag_table_takes_value(const FlagTable *t, const char *name)
{
    for (int i = 0; i < t->n_flags; i++) {
        const Flag *f = &t->flags[i];
        if (f->name && !strcmp(f->name, name)) return f->type == T_HELP ? -1 : takes_value(f);
    }
    return -1;
}

/* ---- the help text ---- */

/* The default of f as its `dflt` format prints it, into buf. */
static const char *default_text(const Flag *f, const void *defaults, char *buf, size_t len)
{
    const void *p = (const char *)defaults + f->at;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    switch (f->type) {
    case T_STR: snprintf(buf, len, f->dflt, *(const char *const *)p ? *(const char *const *)p : ""); break;
    case T_CHARS: snprintf(buf, len, f->dflt, (const char *)p); break;
    case T_INT: case T_CHOICE: snprintf(buf, len, f->dflt, *(const int *)p); break;
    case T_LONG: snprintf(buf, len, f->dflt, *(const long *)p); break;
    case T_ULL: snprintf(buf, len, f->dflt, *(const unsigned long long *)p); break;
    case T_DOUBLE: snprintf(buf, len, f->dflt, *(const double *)p); break;
    default: snprintf(buf, len, "%s", f->dflt); break;
    }
#pragma GCC diagnostic pop
    return buf;
}

/* f's accepted values, as " (lo to hi)" or " (in [lo, hi))", into buf ("" when any or when
 * the help says them in its own words: a range whose error quotes the value). */
static const char *range_text(const Flag *f, char *buf, size_t len)
{
    buf[0] = 0;
    bool capped = (f->type == T_INT && f->max != INT_MAX) || (f->type == T_LONG && f->max != LONG_MAX);
    const Range *r = f->type == T_DOUBLE && f->range && !f->range->quote ? f->range : NULL;
    if (capped) snprintf(buf, len, " (%ld to %ld)", f->min, f->max);
    else if (r && isinf(r->hi)) snprintf(buf, len, " (%s %g)", r->lo_open ? ">" : ">=", r->lo);
    else if (r) snprintf(buf, len, " (in %s%g, %g%s)", r->lo_open ? "(" : "[", r->lo, r->hi, r->hi_open ? ")" : "]");
    return buf;
}

/* "--name ARG" into buf. */
static const char *flag_head(const Flag *f, char *buf, size_t len)
{
    snprintf(buf, len, "--%s%s%s", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
    return buf;
}

/* f's text in the help: the choices first, then its help, the default and the range. */
static void flag_text(const Flag *f, const void *defaults, char *text, size_t len)
{
    char buf[256];
    text[0] = 0;
    Said s = {text, len, 0, ""};
    if (f->choices) said(&s, "%s", f->choices(buf, sizeof buf));
    if (f->help[0]) said(&s, "%s%s", s.used ? " " : "", f->help);
    if (f->dflt) said(&s, "%s[%s]", s.used ? " " : "", default_text(f, defaults, buf, sizeof buf));
    said(&s, "%s", range_text(f, buf, sizeof buf));
}

/* One flag: "  --name ARG" in the table's column (two blanks after a longer one), then its
 * text, continued lines indented as far. */
static void flag_usage(FILE *out, const FlagTable *t, const Flag *f, const void *defaults)
{
    char head[64], text[2048];
    int width = t->width ? t->width : 22;
    flag_head(f, head, sizeof head);
    flag_text(f, defaults, text, sizeof text);
    const char *line = text, *gap = (int)strlen(head) > width ? "  " : " ";
    for (const char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        fprintf(out, "  %-*s%s%.*s\n", width, head, gap, (int)(nl - line), line);
        head[0] = 0;
        gap = " ";
    }
    fprintf(out, "  %-*s%s%s\n", width, head, gap, line);
}

/* text into a table cell: lines joined, '|' escaped. */
static void md_cell(FILE *out, const char *text)
{
    for (int i = 0; text[i]; i++) {
        if (text[i] == '|') fputc('\\', out);
        fputc(text[i] == '\n' ? ' ' : text[i], out);
    }
}

/* One flag as a Markdown table row: its default (the docs' words, the format's, or the
 * help's closing "[words]") in a column of its own, the choices, help and range in another. */
static void flag_markdown(FILE *out, const FlagTable *t, const Flag *f, const void *defaults)
{
    (void)t;
    char head[64], meaning[2048] = "", dflt[256] = "", buf[256];
    flag_head(f, head, sizeof head);
    int n = (int)strlen(f->help);
    const char *open = n && f->help[n - 1] == ']' ? strrchr(f->help, '[') : NULL;
    if (f->dflt_doc) snprintf(dflt, sizeof dflt, "%s", f->dflt_doc);
    else if (f->dflt) default_text(f, defaults, dflt, sizeof dflt);
    else if (open) snprintf(dflt, sizeof dflt, "%.*s", (int)(f->help + n - 2 - open), open + 1);
    if (open && !f->dflt)
        for (n = (int)(open - f->help); n > 0 && isspace((unsigned char)f->help[n - 1]); n--) {}
    Said s = {meaning, sizeof meaning, 0, ""};
    if (f->choices) said(&s, "%s", f->choices(buf, sizeof buf));
    if (n) said(&s, "%s%.*s", s.used ? " " : "", n, f->help);
    said(&s, "%s", range_text(f, buf, sizeof buf) + !s.used);
    fputs("| `", out);
    md_cell(out, head);
    fputs("` | ", out);
    md_cell(out, meaning);
    fputs(" | ", out);
    md_cell(out, dflt);
    fputs(" |\n", out);
}

typedef struct {
    void (*heading)(FILE *, const char *);
    void (*print)(FILE *, const FlagTable *, const Flag *, const void *defaults);
} FlagPrinter;

/* Calls print for every flag of the help, and heading for every heading. */
static void each_flag(const FlagTable *t, FILE *out, const FlagPrinter *p)
{
    void *defaults = xcalloc(1, t->size ? t->size : 1, "flag defaults");
    if (t->defaults) t->defaults(defaults);
    for (int i = 0; i < t->n_flags; i++) {
        const Flag *f = &t->flags[i];
        if (!f->help) continue;
        if (!f->name) p->heading(out, f->help);
        else p->print(out, t, f, defaults);
    }
    free(defaults);
}

static void heading_usage(FILE *out, const char *text) { fprintf(out, "%s\n", text); }

void flag_table_usage(const FlagTable *t, FILE *out)
{
    if (t->head) fputs(t->head, out);
    each_flag(t, out, &(FlagPrinter){heading_usage, flag_usage});
    if (t->tail) fputs(t->tail, out);
}

static const char MD_TABLE[] = "| flag | meaning | default |\n|---|---|---|\n";

/* A heading ends the table before it (a blank line) and opens one of its own. */
static void heading_markdown(FILE *out, const char *text)
{
    int n = (int)strlen(text);
    if (n && text[n - 1] == ':') n--;
    fprintf(out, "\n**%.*s**\n\n%s", n, text, MD_TABLE);
}

void flag_table_markdown(const FlagTable *t, FILE *out)
{
    if (t->n_flags && t->flags[0].name) fputs(MD_TABLE, out); /* no heading: one table */
    each_flag(t, out, &(FlagPrinter){heading_markdown, flag_markdown});
}
