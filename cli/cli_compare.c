/* `bigbatch compare A B --model M [--opt O] [--tol X]`: the largest difference between the
 * parameters of two checkpoints of one model, relative to each tensor's largest value. It
 * shows that K ranks and one process trained the same weights. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/backend.h"
#include "../engine/train/checkpoint.h"
#include "../sweeps/flags/flag_table.h"
#include "../engine/net/models.h"
#include "cli.h"

typedef struct {
    Net *net;
    Optimizer *opt;
} Loaded;

static int load(const char *path, const char *model, const char *opt_name, Backend *bk, Loaded *out, Error *err)
{
    memset(out, 0, sizeof *out);
    out->net = model_build(model, bk, 0, 1, err);
    if (!out->net) return -1;
    OptConfig oc;
    opt_config_defaults(&oc);
    snprintf(oc.name, sizeof oc.name, "%s", opt_name);
    const char *preset = optimizer_default_preset(opt_name);
    if (preset && optimizer_apply_preset(&oc, preset, NULL, 0, err) != 0) return -1;
    out->opt = optimizer_create(&oc, out->net, err);
    if (!out->opt) return -1;
    TrainPosition pos;
    return checkpoint_load(path, out->net, out->opt, &pos, err);
}

static void unload(Loaded *l)
{
    optimizer_destroy(l->opt);
    if (l->net) net_destroy(l->net);
}

typedef struct {
    const char *model, *opt;
    double tol;
} CompareFlags;

static void compare_defaults(void *target) { *(CompareFlags *)target = (CompareFlags){NULL, NULL, 1e-5}; }

static int check_tol(void *target, const FlagCall *c, const char *v, Error *err)
{
    (void)v;
    if (((CompareFlags *)target)->tol >= 0) return 0;
    error_set(err, "%s: a tolerance is not negative", c->flag);
    return -1;
}

static const char HEAD[] =
    "usage: bigbatch compare A.safetensors B.safetensors [--model NAME] [--opt NAME] [--tol X]\n"
    "Prints, per parameter tensor, max |a - b| / max |a|, and exits 1 when the largest\n"
    "exceeds --tol. The model and optimizer are read from A's metadata (as saved\n"
    "by train --save); --model and --opt, when given, must match it.\n"
    "\n"
    "options:\n";

#define AT(member) offsetof(CompareFlags, member)

static const Flag FLAGS[] = {
    {"model", "NAME", "the checkpoints' model [A's]", NULL, F_STR(AT(model))},
    {"opt", "NAME", "their optimizer [A's]", NULL, F_STR(AT(opt))},
    {"tol", "X", "the largest relative difference still the same", "%g", F_DBL(AT(tol)), .set = check_tol},
    FLAG_HELP_ROW,
};

#define UNEXPECTED "unexpected '%s' (bigbatch compare --help)"

static const FlagTable TABLE = {"compare", FLAGS, FLAG_COUNT(FLAGS), sizeof(CompareFlags), compare_defaults, HEAD, NULL,
                                0, UNEXPECTED, UNEXPECTED, "two checkpoints", 2, 2};

void compare_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* 0, 1 for --help, -1 with err; paths: the two checkpoints. */
static int parse_compare(int argc, char **argv, CompareFlags *f, const char **paths, Error *err)
{
    compare_defaults(f);
    int rest;
    int rc = flag_table_parse(&TABLE, argc, argv, f, &rest, err);
    if (rc != 0) return rc;
    paths[0] = argv[rest];
    paths[1] = argv[rest + 1];
    return 0;
}

int cli_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    CompareFlags f;
    Error err = {{0}};
    int parsed = parse_compare(argc, argv, &f, paths, &err);
    if (parsed == 1) flag_table_usage(&TABLE, stdout);
    if (parsed < 0) fprintf(stderr, "bigbatch compare: %s\n", err.msg);
    if (parsed != 0) return parsed < 0 ? 2 : 0;
    const char *model = f.model, *opt = f.opt;
    double tol = f.tol;
    char saved_model[64], saved_opt[64];
    if (checkpoint_describe(paths[0], saved_model, sizeof saved_model, saved_opt, sizeof saved_opt, &err) != 0) {
        fprintf(stderr, "bigbatch compare: %s\n", err.msg);
        return 2;
    }
    model = model ? model : saved_model;
    opt = opt ? opt : saved_opt;
    Backend *bk = backend_create(1);
    Loaded a = {0}, b = {0};
    int status = 0;
    if (load(paths[0], model, opt, bk, &a, &err) != 0 || load(paths[1], model, opt, bk, &b, &err) != 0) {
        fprintf(stderr, "bigbatch compare: %s\n", err.msg);
        status = 2;
    } else {
        double worst = 0;
        for (int p = 0; p < a.net->n_params; p++) {
            /* compare is a named crossing of the boundary: both tensors come to the host */
            real *x = tensor_to_host(&a.net->params[p].value), *y = tensor_to_host(&b.net->params[p].value);
            double diff = 0, scale = 0;
            size_t non_finite = 0;
            for (size_t k = 0; k < tensor_count(&a.net->params[p].value); k++) {
                /* a NaN or an infinity is never the same as anything (a NaN would also drop out
                 * of every comparison below, as "same") */
                if (!isfinite(x[k]) || !isfinite(y[k])) {
                    non_finite++;
                    continue;
                }
                double d = fabs((double)x[k] - (double)y[k]);
                if (d > diff) diff = d;
                if (fabs((double)x[k]) > scale) scale = fabs((double)x[k]);
            }
            free(x);
            free(y);
            double rel = non_finite ? INFINITY : scale > 0 ? diff / scale : diff;
            printf("%-28s max|a-b| %.3g  relative %.3g", a.net->params[p].name, diff, rel);
            if (non_finite) printf("  (%zu values NaN or infinite: never the same)", non_finite);
            printf("\n");
            if (rel > worst) worst = rel;
        }
        printf("largest relative difference %.3g (tolerance %.3g): %s\n", worst, tol, worst <= tol ? "same" : "DIFFERENT");
        status = worst <= tol ? 0 : 1;
    }
    unload(&a);
    unload(&b);
    backend_destroy(bk);
    return status;
}
