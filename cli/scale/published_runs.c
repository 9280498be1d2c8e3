/* Reading results/published-runs.ini (published_runs.h) with inih. */
#include "published_runs.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FIELD_TEXT, FIELD_COUNT, FIELD_REAL } FieldType;

/* Every key of a run: its field, its type, the factor from the file's unit to the field's. */
static const struct {
    const char *key;
    FieldType type;
    size_t offset;
    double unit;
    bool optional;
} FIELDS[] = {
    {"label", FIELD_TEXT, offsetof(ScalePaperRun, label), 1, false},
    {"title", FIELD_TEXT, offsetof(ScalePaperRun, title), 1, false},
    {"source", FIELD_TEXT, offsetof(ScalePaperRun, source), 1, false},
    {"model", FIELD_TEXT, offsetof(ScalePaperRun, model), 1, false},
    {"grad_bytes_per_param", FIELD_REAL, offsetof(ScalePaperRun, grad_bytes_per_param), 1, false},
    {"grad_note", FIELD_TEXT, offsetof(ScalePaperRun, grad_note), 1, false},
    {"hardware", FIELD_TEXT, offsetof(ScalePaperRun, hardware), 1, false},
    {"nodes", FIELD_COUNT, offsetof(ScalePaperRun, nodes), 1, false},
    {"devices_per_node", FIELD_COUNT, offsetof(ScalePaperRun, devices_per_node), 1, false},
    {"batch", FIELD_COUNT, offsetof(ScalePaperRun, batch), 1, false},
    {"epochs", FIELD_REAL, offsetof(ScalePaperRun, epochs), 1, false},
    {"latency_us", FIELD_REAL, offsetof(ScalePaperRun, latency_s), 1e-6, false},
    {"bandwidth_gbit_s", FIELD_REAL, offsetof(ScalePaperRun, bandwidth_Bps), 1e9 / 8, false},
    {"network", FIELD_TEXT, offsetof(ScalePaperRun, network), 1, false},
    {"calibration", FIELD_TEXT, offsetof(ScalePaperRun, calibration), 1, false},
    {"cal_nodes", FIELD_COUNT, offsetof(ScalePaperRun, cal_nodes), 1, false},
    {"cal_devices_per_node", FIELD_COUNT, offsetof(ScalePaperRun, cal_devices_per_node), 1, false},
    {"cal_batch", FIELD_COUNT, offsetof(ScalePaperRun, cal_batch), 1, false},
    {"cal_epochs", FIELD_REAL, offsetof(ScalePaperRun, cal_epochs), 1, false},
    {"cal_time_min", FIELD_REAL, offsetof(ScalePaperRun, cal_time_s), 60, false},
    {"device_factor", FIELD_REAL, offsetof(ScalePaperRun, device_factor), 1, false},
    {"factor_note", FIELD_TEXT, offsetof(ScalePaperRun, factor_note), 1, true},
    {"reported_min", FIELD_REAL, offsetof(ScalePaperRun, reported_s), 60, false},
    {"reported", FIELD_TEXT, offsetof(ScalePaperRun, reported), 1, false},
};
enum { N_FIELDS = (int)(sizeof FIELDS / sizeof FIELDS[0]), MAX_RUNS = 64 };

typedef struct {
    const char *path;
    FILE *f;
    int line;
    bool indented;     /* the line just read starts with blanks: it continues the last text key */
    int headers;       /* [section] lines read so far */
    int headers_used;  /* of them, the one the last run started at */
    PublishedRuns *out;
    bool seen[MAX_RUNS][N_FIELDS];
    int last_field;    /* of the last key, for continuation lines; -1: none */
    Error *err;
    bool failed;
} Reader;

static char *read_line(char *str, int num, void *stream)
{
    Reader *r = stream;
    if (!fgets(str, num, r->f)) return NULL;
    r->line++;
    r->indented = str[0] == ' ' || str[0] == '\t';
    if (str[0] == '[') r->headers++; /* inih reads an indented line as a continuation */
    return str;
}

static int fail(Reader *r, const char *key, const char *fmt, const char *value)
{
    char what[300];
    snprintf(what, sizeof what, fmt, value);
    error_set(r->err, "%s:%d: key '%s': %s", r->path, r->line, key, what);
    r->failed = true;
    return 0;
}

static int field_index(const char *key)
{
    for (int i = 0; i < N_FIELDS; i++)
        if (!strcmp(key, FIELDS[i].key)) return i;
    return -1;
}

/* A new [section] line starts a run. */
static ScalePaperRun *current_run(Reader *r, const char *section)
{
    PublishedRuns *p = r->out;
    if (p->count && r->headers == r->headers_used) return &p->runs[p->count - 1];
    r->headers_used = r->headers;
    for (int i = 0; i < p->count; i++)
        if (!strcmp(p->runs[i].id, section)) return NULL; /* a section given twice */
    if (p->count == MAX_RUNS) return NULL;
    p->runs = xrealloc(p->runs, sizeof *p->runs * (size_t)(p->count + 1), "published runs");
    ScalePaperRun *run = &p->runs[p->count++];
    memset(run, 0, sizeof *run);
    run->id = xstrdup(section);
    memset(r->seen[p->count - 1], 0, sizeof r->seen[0]);
    return run;
}

static int set_field(Reader *r, ScalePaperRun *run, int f, const char *key, const char *value)
{
    char *at = (char *)run + FIELDS[f].offset;
    if (FIELDS[f].type == FIELD_TEXT) {
        if (!*value) return fail(r, key, "%sis empty", "");
        *(char **)at = xstrdup(value);
        return 1;
    }
    char *end;
    errno = 0;
    double x = strtod(value, &end);
    if (end == value || *end || errno || !isfinite(x) || !(x > 0))
        return fail(r, key, "'%s' is not a number above 0", value);
    if (FIELDS[f].type == FIELD_COUNT) {
        if (x != floor(x) || x > 1e9) return fail(r, key, "'%s' is not a whole number up to 10^9", value);
        *(int *)at = (int)x;
    } else {
        *(double *)at = x * FIELDS[f].unit;
    }
    return 1;
}

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
    Reader *r = user;
    if (r->failed) return 0;
    PublishedRuns *p = r->out;
    if (r->indented) { /* a continuation line: inih passes it under the last key's name */
        ScalePaperRun *run = p->count ? &p->runs[p->count - 1] : NULL;
        if (!run || r->last_field < 0 || FIELDS[r->last_field].type != FIELD_TEXT)
            return fail(r, key, "%san indented line continues only a text key", "");
        char **text = (char **)((char *)run + FIELDS[r->last_field].offset);
        size_t len = strlen(*text) + strlen(value) + 2;
        char *joined = xmalloc(len, "published run text");
        snprintf(joined, len, "%s %s", *text, value);
        free(*text);
        *text = joined;
        return 1;
    }
    if (!*section) return fail(r, key, "%sis outside any [run] section", "");
    ScalePaperRun *run = current_run(r, section);
    if (!run) return fail(r, key, "section [%s] is given twice, or there are too many runs", section);
    int f = field_index(key);
    if (f < 0) return fail(r, key, "%sis not a key of a run (the file's header lists them)", "");
    if (r->seen[p->count - 1][f]) return fail(r, key, "%sis given twice in its run", "");
    r->seen[p->count - 1][f] = true;
    r->last_field = f;
    return set_field(r, run, f, key, value);
}

void published_runs_free(PublishedRuns *p)
{
    for (int i = 0; i < p->count; i++) {
        free(p->runs[i].id);
        for (int f = 0; f < N_FIELDS; f++)
            if (FIELDS[f].type == FIELD_TEXT) free(*(char **)((char *)&p->runs[i] + FIELDS[f].offset));
    }
    free(p->runs);
    p->runs = NULL;
    p->count = 0;
}

int published_runs_load(const char *path, PublishedRuns *out, Error *err)
{
    memset(out, 0, sizeof *out);
    Reader *r = xcalloc(1, sizeof *r, "published runs reader");
    r->path = path;
    r->out = out;
    r->err = err;
    r->last_field = -1;
    r->f = fopen(path, "r");
    if (!r->f) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        free(r);
        return -1;
    }
    int rc = ini_parse_stream(read_line, r, on_entry, r);
    fclose(r->f);
    if (rc > 0 && !r->failed) error_set(err, "%s:%d: not a [section], 'key = value' or comment line", path, rc);
    bool bad = rc != 0 || r->failed;
    for (int i = 0; !bad && i < out->count; i++)
        for (int f = 0; f < N_FIELDS && !bad; f++)
            if (!r->seen[i][f] && !FIELDS[f].optional) {
                error_set(err, "%s: run [%s] lacks key '%s'", path, out->runs[i].id, FIELDS[f].key);
                bad = true;
            }
    if (!bad && out->count == 0) {
        error_set(err, "%s: no runs", path);
        bad = true;
    }
    free(r);
    if (bad) published_runs_free(out);
    return bad ? -1 : 0;
}
