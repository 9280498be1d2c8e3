/* Reading a reference-convergence-points file: [checker] (source, target, runs, alpha), then one
 * section per point (batch, base_lr, warmup_epochs, momentum, weight_decay, epochs; other keys of
 * the published record are kept in the file for the reader and skipped here). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcp.h"

typedef struct {
    const char *path;
    int line;
    Error *err;
} Where;

static int bad(const Where *w, const char *key, const char *what, const char *value)
{
    error_set(w->err, "%s:%d: key '%s': %s '%s'", w->path, w->line, key, what, value);
    return -1;
}

static int number(const Where *w, const char *key, const char *v, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(*out) || *out < 0) return bad(w, key, "not a number >= 0:", v);
    return 0;
}

static int epochs_list(const Where *w, const char *v, Rcp *p)
{
    char *copy = xstrdup(v), *save = NULL;
    for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        p->epochs = xrealloc(p->epochs, (size_t)(p->n_epochs + 1) * sizeof *p->epochs, "rcp epochs");
        if (number(w, "epochs", tok, &p->epochs[p->n_epochs])) {
            free(copy);
            return -1;
        }
        p->n_epochs++;
    }
    free(copy);
    return 0;
}

static int checker_key(const Where *w, RcpSet *s, const char *key, const char *v)
{
    double x;
    if (!strcmp(key, "source")) snprintf(s->source, sizeof s->source, "%s", v);
    else if (!strcmp(key, "target")) return number(w, key, v, &s->target);
    else if (!strcmp(key, "alpha")) return number(w, key, v, &s->alpha);
    else if (!strcmp(key, "runs")) {
        if (number(w, key, v, &x) || x != floor(x) || x < 3 || x > 1000) return bad(w, key, "not a count 3..1000:", v);
        s->runs = (int)x;
    } else return bad(w, key, "unknown in [checker] (source, target, runs, alpha):", v);
    return 0;
}

static int point_key(const Where *w, Rcp *p, const char *key, const char *v)
{
    static const struct { const char *key; size_t off; } NUM[] = {
        {"batch", offsetof(Rcp, batch)},         {"base_lr", offsetof(Rcp, base_lr)},
        {"warmup_epochs", offsetof(Rcp, warmup_epochs)}, {"momentum", offsetof(Rcp, momentum)},
        {"weight_decay", offsetof(Rcp, weight_decay)},
    };
    static const char *const KEPT[] = {"creator", "when", "platform", "decay_steps", "bn_span"};
    for (size_t i = 0; i < sizeof NUM / sizeof NUM[0]; i++)
        if (!strcmp(key, NUM[i].key)) return number(w, key, v, (double *)((char *)p + NUM[i].off));
    if (!strcmp(key, "epochs")) return epochs_list(w, v, p);
    for (size_t i = 0; i < sizeof KEPT / sizeof KEPT[0]; i++)
        if (!strcmp(key, KEPT[i])) return 0;
    return bad(w, key, "not a key of a point (the file's header lists them):", v);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = 0;
    return s;
}

/* One line: a comment, a [section] or key = value. */
static int parse_line(Where *w, RcpSet *s, char *line, bool *in_checker)
{
    char *t = trim(line);
    if (!*t || *t == ';' || *t == '#') return 0;
    if (*t == '[') {
        char *close = strchr(t, ']');
        if (!close || close[1]) return bad(w, "[section]", "not a section header:", t);
        *close = 0;
        *in_checker = !strcmp(t + 1, "checker");
        if (*in_checker) return 0;
        s->points = xrealloc(s->points, (size_t)(s->n + 1) * sizeof *s->points, "rcp points");
        memset(&s->points[s->n], 0, sizeof s->points[0]);
        snprintf(s->points[s->n++].name, sizeof s->points[0].name, "%s", t + 1);
        return 0;
    }
    char *eq = strchr(t, '=');
    if (!eq) return bad(w, t, "not 'key = value':", t);
    *eq = 0;
    char *key = trim(t), *v = trim(eq + 1);
    if (*in_checker) return checker_key(w, s, key, v);
    if (s->n == 0) return bad(w, key, "outside any section:", v);
    return point_key(w, &s->points[s->n - 1], key, v);
}

static int by_batch(const void *a, const void *b)
{
    double x = ((const Rcp *)a)->batch, y = ((const Rcp *)b)->batch;
    return (x > y) - (x < y);
}

static int check_points(const char *path, RcpSet *s, Error *err)
{
    if (s->n == 0) return error_set(err, "%s: no reference points", path), -1;
    if (!(s->target > 0) || s->runs == 0 || !(s->alpha > 0 && s->alpha < 1))
        return error_set(err, "%s: [checker] needs target, runs and alpha (0 < alpha < 1)", path), -1;
    for (int i = 0; i < s->n; i++) {
        const Rcp *p = &s->points[i];
        if (!(p->batch > 0)) return error_set(err, "%s: [%s] lacks key 'batch'", path, p->name), -1;
        if (p->n_epochs < 3) return error_set(err, "%s: [%s]: key 'epochs' needs 3 runs or more", path, p->name), -1;
        if (i && p->batch == s->points[i - 1].batch)
            return error_set(err, "%s: [%s]: batch %.10g given twice", path, p->name, p->batch), -1;
    }
    return 0;
}

int rcp_load(const char *path, RcpSet *out, Error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return error_set(err, "%s: cannot open: %s", path, strerror(errno)), -1;
    Where w = {path, 0, err};
    char line[4096];
    bool in_checker = false;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        w.line++;
        rc = parse_line(&w, out, line, &in_checker);
    }
    if (rc == 0 && ferror(f)) {
        error_set(err, "%s: read error", path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0) {
        qsort(out->points, (size_t)out->n, sizeof *out->points, by_batch);
        rc = check_points(path, out, err);
    }
    if (rc) rcp_free(out);
    else rcp_prepare(out);
    return rc;
}

void rcp_free(RcpSet *s)
{
    for (int i = 0; i < s->n; i++) free(s->points[i].epochs);
    free(s->points);
    s->points = NULL;
    s->n = 0;
}
