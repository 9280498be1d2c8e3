/* `bigbatch plot`: the helpers every figure kind shares (plot_parts.h). */
#include "plot_parts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- small helpers ---------------------------------------------------------------------- */


/* The index of s in l; appended when absent. */
int strlist_add(StrList *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return i;
    l->v = xrealloc(l->v, sizeof *l->v * (size_t)(l->n + 1), "plot names");
    l->v[l->n] = xstrdup(s);
    return l->n++;
}

int strlist_find(const StrList *l, const char *s)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return i;
    return -1;
}

void strlist_free(StrList *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Appends to a bounded buffer; the text is cut (never overflowing) when it does not fit. */
void plot_append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void plot_append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

int plot_join_path(char *buf, size_t len, const char *dir, const char *name, const char *suffix, Error *err)
{
    int n = snprintf(buf, len, "%s/%s%s", dir, name, suffix);
    if (n < 0 || (size_t)n >= len) {
        error_set(err, "path too long: %s/%s%s", dir, name, suffix);
        return -1;
    }
    return 0;
}

int plot_mkdir_p(const char *path, Error *err)
{
    char dir[1024];
    int n = snprintf(dir, sizeof dir, "%s", path);
    if (n < 0 || (size_t)n >= sizeof dir) {
        error_set(err, "path too long: %s", path);
        return -1;
    }
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) goto fail;
        *p = '/';
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) goto fail;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        goto fail;
    }
    return 0;
fail:
    error_set(err, "cannot create directory %s: %s", dir, strerror(errno));
    return -1;
}

/* The first n characters of s as a gnuplot single-quoted string, into out (NULL: only counts):
 * '' stands for a quote, no other escapes; with flatten, line breaks and tabs become spaces.
 * Returns the quoted length, without a terminator. */
static size_t gp_quote(const char *s, size_t n, bool flatten, char *out)
{
    size_t k = 0;
    if (out) out[k] = '\'';
    k++;
    for (size_t i = 0; i < n && s[i]; i++) {
        char c = s[i];
        if (flatten && (c == '\n' || c == '\t' || c == '\r')) c = ' ';
        if (c == '\'') {
            if (out) out[k] = '\'';
            k++;
        }
        if (out) out[k] = c;
        k++;
    }
    if (out) out[k] = '\'';
    return k + 1;
}

static void gp_string_n(FILE *f, const char *s, size_t n)
{
    size_t len = gp_quote(s, n, true, NULL);
    char *quoted = xmalloc(len, "gnuplot string");
    gp_quote(s, n, true, quoted);
    fwrite(quoted, 1, len, f);
    free(quoted);
}

void gp_string(FILE *f, const char *s)
{
    gp_string_n(f, s, strlen(s));
}

int gp_string_buf(char *buf, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (gp_quote(s, n, false, NULL) + 1 > len) return -1;
    buf[gp_quote(s, n, false, buf)] = 0;
    return 0;
}

/* A label in a data file: one double-quoted column, without quotes inside. */
void data_label(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : *s == '\n' ? ' ' : *s, f);
    fputc('"', f);
}

void gp_var(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s = ", name);
    gp_string(f, value);
    fputc('\n', f);
}

/* A title line too long for the figure's width: broken at spaces into lines of at most
 * max_chars, joined with gnuplot's "\n" (a single-quoted string cannot hold a line break). */
void gp_wrapped_var(FILE *f, const char *name, const char *value, int max_chars)
{
    fprintf(f, "%s = ", name);
    const char *s = value;
    do {
        size_t len = strlen(s), cut = len;
        if ((int)len > max_chars) {
            cut = 0;
            for (size_t i = 1; i <= (size_t)max_chars; i++)
                if (s[i] == ' ') cut = i;
            if (cut == 0) cut = strcspn(s, " "); /* one word longer than a line: keep it whole */
        }
        if (s != value) fputs(".\"\\n\".", f);
        gp_string_n(f, s, cut);
        s += cut;
        while (*s == ' ') s++;
    } while (*s);
    fputc('\n', f);
}

void gp_array(FILE *f, const char *name, char *const *items, int n)
{
    fprintf(f, "array %s[%d] = [", name, n > 0 ? n : 1);
    if (n == 0) fputs("''", f);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", f);
        gp_string(f, items[i]);
    }
    fputs("]\n", f);
}

void gp_num_array(FILE *f, const char *name, const double *x, int n)
{
    fprintf(f, "array %s[%d] = [", name, n > 0 ? n : 1);
    if (n == 0) fputs("0", f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%.10g", i ? ", " : "", x[i]);
    fputs("]\n", f);
}

bool plot_is_number(const char *s, double *x)
{
    char *end;
    if (!s || !*s) return false;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno) return false;
    if (x) *x = v;
    return true;
}

bool metric_is_acc(const char *metric) { return strstr(metric, "acc") != NULL; }

double metric_scale(const char *metric) { return metric_is_acc(metric) ? 100.0 : 1.0; }

const char *metric_label(const char *metric)
{
    if (!strcmp(metric, "test_acc")) return "test accuracy (%)";
    if (!strcmp(metric, "best_test_acc")) return "best test accuracy over the epochs (%)";
    if (!strcmp(metric, "test_loss")) return "test loss (cross-entropy)";
    if (!strcmp(metric, "train_loss")) return "training loss (cross-entropy)";
    if (!strcmp(metric, "loss_gap")) return "loss gap, test - train (cross-entropy)";
    return metric;
}

/* The epochs column a metric is read from for steps-to-target. */
const char *metric_epoch_column(const char *metric)
{
    if (!strcmp(metric, "test_loss")) return "test_loss";
    if (!strcmp(metric, "train_loss")) return "train_loss";
    if (!strcmp(metric, "loss_gap")) return "loss_gap";
    return "test_acc";
}

const char *key_label(const char *key)
{
    static const char *const names[][2] = {
        {"batch", "batch size (images)"},  {"lr", "learning rate"},
        {"warmup-epochs", "warmup (epochs)"}, {"weight-decay", "weight decay"},
        {"opt", "optimizer"},             {"eta", "LARS trust coefficient eta"},
        {"epochs", "epochs"},             {"label-smoothing", "label smoothing"},
        {"momentum", "momentum"},         {"base_lr", "base learning rate"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i][0], key)) return names[i][1];
    return key;
}

const char *tuned_list(const Experiment *exp, char *buf, size_t len)
{
    buf[0] = 0;
    for (int t = 0; t < exp->n_tuned; t++) plot_append(buf, len, "%s%s", t ? ", " : "", exp->tuned[t]);
    return buf;
}

/* The key is the axis, or a list zipped with it (one value per value of the axis). */
bool follows_axis(const Experiment *exp, const char *key, const char *axis)
{
    if (!strcmp(key, axis)) return true;
    const ExpKey *k = cells_find_key(exp, key);
    return k && k->role == KEY_ZIP && k->zip_with && !strcmp(k->zip_with, axis);
}

/* A [grid] key that is a group axis: the keys that name a group (its zipped lists follow). */
bool is_group_grid_key(const Experiment *exp, const char *key)
{
    const ExpKey *k = cells_find_key(exp, key);
    return k && k->role == KEY_GRID && cells_is_group_axis(exp, key);
}

/* "k=v k=v" of a cell's keys: group axes only, tuned axes only, or every key; the axis `skip`
 * and the lists zipped with it left out. */
void cell_keys(const Experiment *exp, const cJSON *cell, bool group_only, bool tuned_only, const char *skip,
               char *buf, size_t len)
{
    buf[0] = 0;
    for (const cJSON *it = cell->child; it; it = it->next) {
        if (!cJSON_IsString(it)) continue;
        if (skip && follows_axis(exp, it->string, skip)) continue;
        if (group_only && !is_group_grid_key(exp, it->string)) continue;
        if (tuned_only && !cells_is_tuned(exp, it->string)) continue;
        plot_append(buf, len, "%s%s=%s", buf[0] ? " " : "", it->string, it->valuestring);
    }
}

bool plot_trained(const Cell *c) { return c->complete > 0 && c->diverged == 0; }


Group *collect_groups(const CellSet *set, int *n_groups)
{
    Group *g = xcalloc((size_t)(set->n_cells > 0 ? set->n_cells : 1), sizeof *g, "plot groups");
    int n = 0;
    for (int i = 0; i < set->n_cells; i++) {
        const Cell *c = &set->cells[i];
        int k = 0;
        while (k < n && !cells_same_group(set, &set->cells[g[k].first], c)) k++;
        if (k == n) g[n++].first = i;
        g[k].n_cells++;
        if (c->diverged > 0) g[k].n_diverged++;
        if (plot_trained(c) && (!g[k].best || cells_better(set, c->mean, g[k].best->mean))) g[k].best = c;
    }
    *n_groups = n;
    return g;
}

bool group_diverged(const Group *g) { return !g->best && g->n_diverged > 0; }

/* The first complete run of a cell, else NULL. */
const char *first_complete(const Cell *c)
{
    for (int r = 0; r < c->runs; r++)
        if (c->run_list[r].complete) return c->run_list[r].id;
    return NULL;
}

/* ---- running gnuplot -------------------------------------------------------------------- */

/* Runs argv with stdout and stderr captured (the start of it) in msg. The exit status, 127
 * when it could not be started, or -1 with err. */
int plot_run_capture(char *const argv[], char *msg, size_t msg_len, Error *err)
{
    int fds[2];
    if (pipe(fds) != 0) {
        error_set(err, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        error_set(err, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[1], STDERR_FILENO) < 0) _exit(126);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    char chunk[4096];
    for (;;) {
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        size_t take = (size_t)got;
        if (used + take + 1 > msg_len) take = msg_len > used + 1 ? msg_len - used - 1 : 0;
        memcpy(msg + used, chunk, take);
        used += take;
    }
    if (msg_len) msg[used < msg_len ? used : msg_len - 1] = 0;
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            error_set(err, "waiting for %s: %s", argv[0], strerror(errno));
            return -1;
        }
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int check_gnuplot(const char *gnuplot, Error *err)
{
    char msg[512];
    char *argv[] = {(char *)gnuplot, "--version", NULL};
    int rc = plot_run_capture(argv, msg, sizeof msg, err);
    if (rc < 0) return -1;
    if (rc != 0 || strncmp(msg, "gnuplot", 7) != 0) {
        error_set(err, "gnuplot %s ('%s'): the figures need it; install gnuplot-nox "
                       "(apt-get install gnuplot-nox, or make deps)",
                  rc == 127 ? "not found" : "does not run", gnuplot);
        return -1;
    }
    return 0;
}

/* ---- series along the batch axis (accuracy-vs-batch, steps-to-target) -------------------- */


int cmp_point(const void *a, const void *b)
{
    const Point *x = a, *y = b;
    if (x->series != y->series) return x->series < y->series ? -1 : 1;
    return x->batch < y->batch ? -1 : x->batch > y->batch;
}

bool batch_axis_ok(const Plot *p, const char *kind)
{
    const ExpKey *k = cells_find_key(p->exp, "batch");
    if (!k || k->role == KEY_FIXED || !cells_is_group_axis(p->exp, "batch")) {
        fprintf(p->warn, "bigbatch plot: %s skipped: batch is not an axis of %s (a [grid] key that is not tuned)\n",
                kind, p->exp->name);
        return false;
    }
    return true;
}

/* x tics at every batch value shown, and the x range around them. */
void write_batch_tics(FILE *v, const char *prefix, const Point *pts, int n, const Point *more, int n_more)
{
    double lo = INFINITY, hi = -INFINITY;
    char tics[2048] = "";
    double seen[256];
    int n_seen = 0;
    for (int i = 0; i < n + n_more; i++) {
        double b = i < n ? pts[i].batch : more[i - n].batch;
        bool dup = false;
        for (int j = 0; j < n_seen && !dup; j++) dup = seen[j] == b;
        if (dup || n_seen == 256) continue;
        seen[n_seen++] = b;
        if (b < lo) lo = b;
        if (b > hi) hi = b;
    }
    for (int i = 0; i < n_seen; i++) /* sorted for the reader of the file */
        for (int j = i + 1; j < n_seen; j++)
            if (seen[j] < seen[i]) {
                double t = seen[i];
                seen[i] = seen[j];
                seen[j] = t;
            }
    for (int i = 0; i < n_seen; i++) plot_append(tics, sizeof tics, "%s%.10g", i ? " " : "", seen[i]);
    char name[64];
    snprintf(name, sizeof name, "%sxticks", prefix);
    gp_var(v, name, tics);
    /* No points (an experiment whose paper gives no accuracies): a finite range all the same,
     * since gnuplot has no "inf" and loads every variable even for a panel it does not draw. */
    if (n_seen == 0) lo = 1.5, hi = 2 / 1.5;
    fprintf(v, "%sxmin = %.10g\n%sxmax = %.10g\n", prefix, lo / 1.5, prefix, hi * 1.5);
}
