/* A template's page with its directives filled from the bench outputs (bench_page.h). */
#include "bench_page.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../engine/base/name_table.h"

typedef struct {
    char **items; /* without their line ends */
    int n;
} Lines;

static void lines_free(Lines *l)
{
    for (int i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
}

/* Every line of `path` into l (empty); 0, or -1 with err. */
static int lines_read(const char *path, Lines *l, Error *err)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0;
    int room = 0;
    ssize_t got;
    while ((got = getline(&buf, &cap, in)) >= 0) {
        while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r')) buf[--got] = '\0';
        if (l->n == room) {
            room = room ? 2 * room : 64;
            l->items = xrealloc(l->items, sizeof *l->items * (size_t)room, "lines");
        }
        l->items[l->n++] = xstrdup(buf);
    }
    int rc = ferror(in) ? -1 : 0;
    if (rc) error_set(err, "%s: read error", path);
    free(buf);
    fclose(in);
    return rc;
}

static bool blank(const char *s) { return s[strspn(s, " \t")] == '\0'; }

/* An ASCII table's rule under its header: dashes and pluses only, both present. */
static bool ascii_rule(const char *s)
{
    return s[strspn(s, "-+ ")] == '\0' && strchr(s, '-') && strchr(s, '+');
}

/* One ASCII table row ("a | b | c") as a Markdown row ("| a | b | c |"); the number of cells. */
static int ascii_row(FILE *out, const char *row)
{
    int cells = 1;
    for (const char *cell = row;; cells++) {
        size_t len = strcspn(cell, "|");
        const char *start = cell + strspn(cell, " "), *end = cell + len;
        while (end > start && end[-1] == ' ') end--;
        fprintf(out, "| %.*s ", (int)(end - start), start);
        if (!cell[len]) break;
        cell += len + 1;
    }
    fputs("|\n", out);
    return cells;
}

/* The table after line `at` (blank lines skipped), as Markdown; -1 when none follows. */
static int emit_table(FILE *out, const Lines *src, int at)
{
    int i = at + 1;
    while (i < src->n && blank(src->items[i])) i++;
    if (i < src->n && src->items[i][0] == '|') {
        for (; i < src->n && src->items[i][0] == '|'; i++) fprintf(out, "%s\n", src->items[i]);
        return 0;
    }
    if (i + 1 >= src->n || !strchr(src->items[i], '|') || !ascii_rule(src->items[i + 1])) return -1;
    int cells = ascii_row(out, src->items[i]);
    for (int c = 0; c < cells; c++) fputs("|---", out);
    fputs("|\n", out);
    for (i += 2; i < src->n && strchr(src->items[i], '|'); i++) ascii_row(out, src->items[i]);
    return 0;
}

static int emit_line(FILE *out, const Lines *src, int at)
{
    fprintf(out, "%s\n", src->items[at]);
    return 0;
}

/* The lines after line `at`, up to a blank one, as a text block; -1 when there are none. */
static int emit_block(FILE *out, const Lines *src, int at)
{
    int i = at + 1;
    if (i >= src->n || blank(src->items[i])) return -1;
    fputs("```text\n", out);
    for (; i < src->n && !blank(src->items[i]); i++) fprintf(out, "%s\n", src->items[i]);
    fputs("```\n", out);
    return 0;
}

typedef struct {
    const char *name;
    int (*emit)(FILE *out, const Lines *src, int at);
    const char *lack; /* what is missing when emit fails */
} Directive;

static const Directive DIRECTIVES[] = {
    {"table", emit_table, "no table follows it"},
    {"line", emit_line, ""},
    {"block", emit_block, "no lines follow it"},
};
static const NameTable NAMES = NAME_TABLE(DIRECTIVES);

/* What directive `d` names in bench/file: the first line starting with `text`, filled out. */
static int fill(const Directive *d, const char *bench, const char *file, const char *text, FILE *out, Error *err)
{
    char *path = path_join(bench, file);
    Lines src = {0};
    int rc = lines_read(path, &src, err), at = -1;
    for (int i = 0; rc == 0 && at < 0 && i < src.n; i++)
        if (!strncmp(src.items[i], text, strlen(text))) at = i;
    if (rc == 0 && at < 0) {
        error_set(err, "%s: no line starts with \"%s\"", path, text);
        rc = -1;
    } else if (rc == 0 && d->emit(out, &src, at) != 0) {
        error_set(err, "%s:%d (the line starting with \"%s\"): %s", path, at + 1, text, d->lack);
        rc = -1;
    }
    lines_free(&src);
    free(path);
    return rc;
}

/* `NAME FILE "TEXT"` (a directive between its braces, split in place): 0, or -1 with err. */
static int parse(char *s, char **name, char **file, char **text, Error *err)
{
    char *sp = strchr(s, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
    size_t len = sp2 ? strlen(sp2 + 1) : 0;
    if (!sp2 || len < 3 || sp2[1] != '"' || sp2[len] != '"' || strchr(sp2 + 2, '"') != sp2 + len || sp2 == sp + 1) {
        error_set(err, "malformed directive {{%s}} (want {{NAME FILE \"TEXT\"}})", s);
        return -1;
    }
    *sp = *sp2 = sp2[len] = '\0';
    *name = s;
    *file = sp + 1;
    *text = sp2 + 2;
    if (strchr(*file, '/')) {
        error_set(err, "{{%s %s ...}}: FILE is a file name in the bench folder, not a path", *name, *file);
        return -1;
    }
    return 0;
}

/* One line of the template: copied, dropped (a comment) or filled (a directive). */
static int fill_line(const char *line, const char *bench, FILE *out, Error *err)
{
    size_t len = strlen(line);
    if (strncmp(line, "{{", 2) != 0) {
        fprintf(out, "%s\n", line);
        return 0;
    }
    if (len < 4 || strcmp(line + len - 2, "}}") != 0) {
        error_set(err, "a line starting with {{ is a directive and must end with }}");
        return -1;
    }
    if (line[2] == '#') return 0;
    char *s = xmalloc(len - 3, "directive"), *name, *file, *text;
    memcpy(s, line + 2, len - 4);
    s[len - 4] = '\0';
    int rc = parse(s, &name, &file, &text, err);
    const Directive *d = rc == 0 ? name_table_find(NAMES, name) : NULL;
    if (rc == 0 && !d) rc = name_table_unknown(NAMES, "directive", name, "known: ", " and ", err);
    if (rc == 0) rc = fill(d, bench, file, text, out, err);
    free(s);
    return rc;
}

int bench_page_write(const char *tmpl, const char *bench, FILE *out, Error *err)
{
    Lines t = {0};
    int rc = lines_read(tmpl, &t, err);
    if (rc == 0)
        fprintf(out, "<!-- Generated by `bigbatch report --all` from %s and %s/: edit the template, not this page. -->\n",
                tmpl, bench);
    for (int i = 0; rc == 0 && i < t.n; i++)
        if ((rc = fill_line(t.items[i], bench, out, err)) != 0) {
            char where[32];
            snprintf(where, sizeof where, ":%d", i + 1);
            size_t len = strlen(tmpl) + sizeof where;
            char *prefix = xmalloc(len, "template line");
            snprintf(prefix, len, "%s%s", tmpl, where);
            error_prefix(err, prefix);
            free(prefix);
        }
    lines_free(&t);
    return rc;
}
