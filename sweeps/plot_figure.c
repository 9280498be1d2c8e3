/* `bigbatch plot`: the one skeleton every figure kind is drawn by (figure_draw, plot_parts.h).
 * A kind's parts read its data and write its blocks and variables; here are the files they go
 * to, the header and frame every script reads, and the gnuplot runs. Only this file opens a
 * figure's files or runs gnuplot on them (tests/cli/one_skeleton.sh checks). */
#include "plot_parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the files -------------------------------------------------------------------------- */

static FILE *open_out(const Plot *p, const char *kind, const char *suffix, char *path, size_t len, Error *err)
{
    if (plot_join_path(path, len, p->out_dir, kind, suffix, err)) return NULL;
    FILE *f = fopen(path, "w");
    if (!f) error_set(err, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, Error *err)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (bad) {
        error_set(err, "%s: writing failed", path);
        return -1;
    }
    return 0;
}

static void data_header(const Plot *p, FILE *f, const char *kind, const char *columns)
{
    fprintf(f, "# bigbatch plot %s: experiment %s, %s scale, metric %s, database %s\n", kind, p->exp->name,
            p->exp->scale, p->exp->metric, p->d.path);
    fprintf(f, "# blocks (gnuplot index) separated by two blank lines; columns: %s\n", columns);
}

/* The variables every script uses. */
static void write_frame(const Plot *p, FILE *v, const char *kind, const FigureFrame *fr)
{
    fprintf(v, "# Written by `bigbatch plot` for plots/%s.gp, which loads it; draw again with\n"
               "#   gnuplot -e \"dir='%s'; fmt='png'\" plots/%s.gp\n",
            kind, p->out_dir, kind);
    /* about 9.5 pixels per character of the title's 13-point sans font; 10 leaves a margin */
    int chars = (fr->width - 40) / 10;
    gp_wrapped_var(v, "figtitle", p->figtitle, chars);
    gp_wrapped_var(v, "subtitle", fr->subtitle, chars);
    gp_var(v, "xlabel", fr->xlabel);
    gp_var(v, "ylabel", fr->ylabel);
    fprintf(v, "width = %d\nheight = %d\n", fr->width, fr->height);
}

/* The side data file, written whole (and named on out) before the variables. */
static int write_side(Plot *p, const char *kind, const FigureSide *side, const void *s, Error *err)
{
    char path[1200];
    FILE *f = open_out(p, kind, side->suffix, path, sizeof path, err);
    if (!f) return -1;
    data_header(p, f, side->title, side->columns);
    side->write(p, s, f);
    if (close_out(f, path, err)) return -1;
    fprintf(p->out, "%s\n", path);
    return 0;
}

/* ---- running gnuplot -------------------------------------------------------------------- */

/* The last line of gnuplot's output (its error message). */
static void tail_line(const char *msg, char *out, size_t len)
{
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
    size_t start = n;
    while (start > 0 && msg[start - 1] != '\n') start--;
    snprintf(out, len, "%.*s", (int)(n - start), msg + start);
    for (char *c = out; *c; c++)
        if (*c == '\n') *c = ' ';
}

/* One gnuplot run: script, with dir (quoted) and fmt set, into DIR/<kind>.<fmt>. */
static int render_one(Plot *p, const char *kind, const char *script, const char *dir, const char *fmt, Error *err)
{
    char target[1200], expr[2300], msg[8192], suffix[8];
    int n = snprintf(expr, sizeof expr, "dir=%s; fmt='%s'", dir, fmt);
    if (n < 0 || (size_t)n >= sizeof expr) {
        error_set(err, "path too long: %s", p->out_dir);
        return -1;
    }
    snprintf(suffix, sizeof suffix, ".%s", fmt);
    if (plot_join_path(target, sizeof target, p->out_dir, kind, suffix, err)) return -1;
    if (unlink(target) != 0 && errno != ENOENT) {
        error_set(err, "%s: cannot replace: %s", target, strerror(errno));
        return -1;
    }
    char *argv[] = {(char *)p->o->gnuplot, "-e", expr, (char *)script, NULL};
    int rc = plot_run_capture(argv, msg, sizeof msg, err);
    if (rc < 0) return -1;
    struct stat st;
    if (rc != 0 || stat(target, &st) != 0 || st.st_size == 0) {
        char tail[600];
        tail_line(msg, tail, sizeof tail);
        error_set(err, "gnuplot %s %s failed (exit %d): %s", kind, fmt, rc, tail[0] ? tail : "no output file");
        return -1;
    }
    fprintf(p->out, "%s\n", target);
    return 0;
}

/* Draws one kind from its data files: one gnuplot run per format. */
static int render(Plot *p, const char *kind, Error *err)
{
    char script[1200], dir[2100];
    if (plot_join_path(script, sizeof script, p->scripts, kind, ".gp", err)) return -1;
    if (gp_string_buf(dir, sizeof dir, p->out_dir)) {
        error_set(err, "path too long: %s", p->out_dir);
        return -1;
    }
    if (p->o->png && render_one(p, kind, script, dir, "png", err)) return -1;
    if (p->o->svg && render_one(p, kind, script, dir, "svg", err)) return -1;
    return 0;
}

/* ---- the skeleton ----------------------------------------------------------------------- */

/* Closes both files (dat first, its error kept), names the data file on out, draws. */
static int finish(Plot *p, const char *kind, FILE *dat, const char *dat_path, FILE *vars, const char *vars_path,
                  Error *err)
{
    int rc = close_out(dat, dat_path, err);
    if (close_out(vars, vars_path, rc ? &(Error){{0}} : err)) rc = -1;
    if (rc) return -1;
    fprintf(p->out, "%s\n", dat_path);
    if (render(p, kind, err)) return -1;
    return 1;
}

/* The variables: the frame, then the kind's own. */
static void write_vars(const Plot *p, const char *kind, const FigureParts *fp, const void *s, FILE *vars)
{
    FigureFrame fr = {{0}, "", "", 960, 680};
    fp->frame(p, s, &fr);
    write_frame(p, vars, kind, &fr);
    fp->write_vars(p, s, vars);
}

/* The collected data written out and drawn: 1, or -1 with err. */
static int write_and_render(Plot *p, const char *kind, const FigureParts *fp, void *s, Error *err)
{
    char dat_path[1200], vars_path[1200];
    FILE *dat = open_out(p, kind, ".dat", dat_path, sizeof dat_path, err), *vars = NULL;
    if (!dat) return -1;
    data_header(p, dat, kind, fp->columns);
    if (fp->write_data(p, s, dat, err) || (fp->side && write_side(p, kind, fp->side, s, err)) ||
        !(vars = open_out(p, kind, ".vars.gp", vars_path, sizeof vars_path, err))) {
        fclose(dat);
        return -1;
    }
    write_vars(p, kind, fp, s, vars);
    return finish(p, kind, dat, dat_path, vars, vars_path, err);
}

int figure_draw(Plot *p, const FigureKind *kind, Error *err)
{
    const FigureParts *fp = kind->parts;
    void *s = xcalloc(1, fp->state_size, "figure state");
    int rc = fp->collect(p, s, err);
    if (rc > 0) rc = write_and_render(p, kind->name, fp, s, err);
    fp->release(s);
    free(s);
    return rc;
}
