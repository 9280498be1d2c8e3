/* Experiment files (sweeps/experiment.c) and their expressions (sweeps/expr.c): the expansion
 * (cross product order, zip alignment, derived values, scales, repeats and seeds), run ids,
 * train argv, and one malformed fixture per error, each naming its line and key. Fixtures are
 * in tests/fixtures/experiments; line numbers are looked up in them, not written here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sweeps/experiment.h"
#include "../sweeps/expr.h"

#define FIX "tests/fixtures/experiments/"

/* 1-based line of the first line of path containing needle. */
static int line_of(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    char buf[512];
    int line = 0, found = 0;
    while (!found && fgets(buf, sizeof buf, f)) {
        line++;
        if (strstr(buf, needle)) found = line;
    }
    fclose(f);
    cr_assert(found, "'%s' not in %s", needle, path);
    return found;
}

static void load_ok(const char *file, const char *scale, Experiment *exp, RunSpec **runs, int *n)
{
    Error err = {{0}};
    int rc = experiment_load(file, scale, exp, &err);
    cr_assert_eq(rc, 0, "%s: %s", file, err.msg);
    rc = experiment_expand(exp, runs, n, &err);
    cr_assert_eq(rc, 0, "%s: %s", file, err.msg);
}

static void done(Experiment *exp, RunSpec *runs, int n)
{
    runspecs_free(runs, n);
    experiment_free(exp);
}

/* The run's value of a train flag, NULL when it is not passed. */
static const char *flag(const RunSpec *r, const char *name)
{
    for (int i = 0; i < r->n_flags; i++)
        if (!strcmp(r->flag_names[i], name)) return r->flag_values[i];
    return NULL;
}

static void check_flag(const RunSpec *r, const char *name, const char *want)
{
    const char *got = flag(r, name);
    cr_assert(got, "run %d: no flag %s (%s)", r->seq, name, r->config_json);
    cr_assert_str_eq(got, want, "run %d: %s = %s, want %s", r->seq, name, got, want);
}

/* ---------------------------------------------------------------- expansion */

Test(experiment, cross_product_count_and_order)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "cross.ini", NULL, &exp, &runs, &n);
    cr_assert_eq(n, 12);
    static const char *opts[] = {"sgd", "lars"}, *batches[] = {"256", "512", "1024"}, *moms[] = {"0", "0.9"};
    int seq = 0;
    for (int o = 0; o < 2; o++)
        for (int b = 0; b < 3; b++)
            for (int m = 0; m < 2; m++, seq++) {
                cr_assert_eq(runs[seq].seq, seq);
                check_flag(&runs[seq], "opt", opts[o]);
                check_flag(&runs[seq], "batch", batches[b]);
                check_flag(&runs[seq], "momentum", moms[m]);
                check_flag(&runs[seq], "seed", "1");
            }
    cr_assert_str_eq(runs[0].label, "opt=sgd batch=256 momentum=0");
    cr_assert_str_eq(runs[0].cell_json, "{\"opt\":\"sgd\",\"batch\":\"256\",\"momentum\":\"0\"}");
    cr_assert_str_eq(runs[0].config_json, "{\"batch\":\"256\",\"data\":\"synthetic\",\"epochs\":\"1\","
                                          "\"model\":\"lenet\",\"momentum\":\"0\",\"opt\":\"sgd\",\"seed\":\"1\"}");
    for (int i = 1; i < runs[0].n_flags; i++)
        cr_assert(strcmp(runs[0].flag_names[i - 1], runs[0].flag_names[i]) < 0, "flags not sorted");
    cr_assert_str_eq(exp.name, "cross");
    cr_assert_str_eq(exp.title, "cross product order");
    cr_assert_str_eq(exp.scale, "proxy");
    cr_assert_str_eq(exp.metric, "test_acc");
    cr_assert_str_eq(exp.description, "");
    cr_assert_eq(exp.repeats, 1);
    done(&exp, runs, n);
}

Test(experiment, zip_pairs_stay_aligned)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "zip.ini", NULL, &exp, &runs, &n);
    cr_assert_eq(n, 6);
    static const char *lr[] = {"0.1", "0.2", "0.4"}, *warm[] = {"0", "1", "2"}, *batch[] = {"256", "512", "1024"};
    for (int i = 0; i < n; i++) {
        int b = i / 2; /* batch is the slower axis */
        check_flag(&runs[i], "batch", batch[b]);
        check_flag(&runs[i], "opt", i % 2 ? "lars" : "sgd");
        check_flag(&runs[i], "lr", lr[b]);
        check_flag(&runs[i], "warmup-epochs", warm[b]);
    }
    int k = -1;
    for (int i = 0; i < exp.n_keys; i++)
        if (!strcmp(exp.keys[i].name, "lr")) k = i;
    cr_assert(k >= 0);
    cr_assert_eq(exp.keys[k].role, KEY_ZIP);
    cr_assert_str_eq(exp.keys[k].zip_with, "batch");
    cr_assert_str_eq(runs[3].label, "batch=512 opt=lars lr=0.2 warmup-epochs=1");
    done(&exp, runs, n);
}

Test(experiment, derived_linear_scaling_exact)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "derived.ini", NULL, &exp, &runs, &n);
    cr_assert_eq(n, 3);
    check_flag(&runs[0], "lr", "0.1");
    check_flag(&runs[1], "lr", "0.4");
    check_flag(&runs[2], "lr", "3.2");
    check_flag(&runs[0], "warmup-epochs", "0.25");
    check_flag(&runs[1], "warmup-epochs", "1");
    check_flag(&runs[2], "warmup-epochs", "5");
    /* variables are not train flags: not passed, but a derived one is part of the cell */
    for (int i = 0; i < n; i++) {
        cr_assert_null(flag(&runs[i], "base_lr"));
        cr_assert_null(flag(&runs[i], "k"));
        cr_assert_null(strstr(runs[i].config_json, "base_lr"));
        cr_assert_null(strstr(runs[i].label, "k="));
    }
    cr_assert_str_eq(runs[2].cell_json, "{\"batch\":\"8192\",\"k\":\"32\",\"lr\":\"3.2\",\"warmup-epochs\":\"5\"}");
    cr_assert_eq(exp.n_tuned, 1);
    cr_assert_str_eq(exp.tuned[0], "batch");
    done(&exp, runs, n);
}

Test(experiment, scale_overrides)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    /* proxy is the default: its epochs, the base grid, three repeats */
    load_ok(FIX "scales.ini", NULL, &exp, &runs, &n);
    cr_assert_eq(exp.repeats, 3);
    cr_assert_eq(n, 9);
    check_flag(&runs[0], "epochs", "2");
    check_flag(&runs[2], "batch", "1024");
    check_flag(&runs[2], "lr", "0.4");
    cr_assert_null(flag(&runs[0], "train-subset"));
    done(&exp, runs, n);

    /* smoke: a shorter grid list (zip list too), a fixed value, a new fixed key, repeats */
    load_ok(FIX "scales.ini", "smoke", &exp, &runs, &n);
    cr_assert_str_eq(exp.scale, "smoke");
    cr_assert_eq(exp.repeats, 1);
    cr_assert_eq(n, 2);
    check_flag(&runs[0], "batch", "64");
    check_flag(&runs[0], "lr", "0.025");
    check_flag(&runs[1], "batch", "128");
    check_flag(&runs[1], "lr", "0.05");
    check_flag(&runs[1], "epochs", "1");
    check_flag(&runs[1], "train-subset", "512");
    for (int i = 0; i < exp.n_keys; i++)
        if (!strcmp(exp.keys[i].name, "batch")) {
            cr_assert_eq(exp.keys[i].role, KEY_GRID);
            cr_assert_eq(exp.keys[i].line, line_of(FIX "scales.ini", "batch = 64, 128"));
        }
    done(&exp, runs, n);

    load_ok(FIX "scales.ini", "full", &exp, &runs, &n);
    cr_assert_eq(n, 12);
    check_flag(&runs[3], "lr", "0.8");
    check_flag(&runs[3], "epochs", "90");
    done(&exp, runs, n);

    Error err = {{0}};
    cr_assert_eq(experiment_load(FIX "scales.ini", "huge", &exp, &err), -1);
    cr_assert(strstr(err.msg, "huge"), "%s", err.msg);
}

Test(experiment, repeats_give_seeds_and_one_cell)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "repeats.ini", NULL, &exp, &runs, &n);
    cr_assert_eq(n, 6);
    /* repeat-major: every cell once, then again with the next seed */
    for (int i = 0; i < n; i++) {
        char seed[16];
        snprintf(seed, sizeof seed, "%d", 1 + i / 2);
        cr_assert_eq(runs[i].repeat, i / 2);
        check_flag(&runs[i], "seed", seed);
        check_flag(&runs[i], "lr", i % 2 ? "0.2" : "0.1");
        cr_assert_str_eq(runs[i].cell_json, runs[i % 2].cell_json);
        cr_assert_null(strstr(runs[i].cell_json, "seed"));
        for (int j = 0; j < i; j++) cr_assert_str_neq(runs[i].id, runs[j].id, "runs %d and %d share an id", i, j);
    }
    done(&exp, runs, n);

    /* a fixed seed is the first repeat's */
    const char *text = "[experiment]\nname = s\nrepeats = 2\n[train]\nseed = 10\n";
    Error err = {{0}};
    cr_assert_eq(experiment_load_string("mem.ini", text, NULL, &exp, &err), 0, "%s", err.msg);
    cr_assert_eq(experiment_expand(&exp, &runs, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 2);
    check_flag(&runs[0], "seed", "10");
    check_flag(&runs[1], "seed", "11");
    done(&exp, runs, n);
}

/* The id of the only run of an experiment in text. */
static void id_of(const char *text, char id[17])
{
    Experiment exp;
    RunSpec *runs;
    int n;
    Error err = {{0}};
    cr_assert_eq(experiment_load_string("mem.ini", text, NULL, &exp, &err), 0, "%s", err.msg);
    cr_assert_eq(experiment_expand(&exp, &runs, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 1);
    memcpy(id, runs[0].id, 17);
    done(&exp, runs, n);
}

Test(experiment, run_ids_stable)
{
    Experiment exp;
    RunSpec *a, *b;
    int na, nb;
    load_ok(FIX "cross.ini", NULL, &exp, &a, &na);
    experiment_free(&exp);
    load_ok(FIX "cross.ini", NULL, &exp, &b, &nb);
    experiment_free(&exp);
    cr_assert_eq(na, nb);
    for (int i = 0; i < na; i++) {
        cr_assert_eq(strlen(a[i].id), 16);
        cr_assert_eq(strspn(a[i].id, "0123456789abcdef"), 16);
        cr_assert_str_eq(a[i].id, b[i].id);
        char want[17];
        snprintf(want, sizeof want, "%016llx", (unsigned long long)fnv1a64(a[i].config_json));
        cr_assert_str_eq(a[i].id, want);
    }
    runspecs_free(a, na);
    runspecs_free(b, nb);

    char x[17], y[17], z[17], w[17], v[17];
    id_of("[experiment]\nname = a\n[train]\nmodel = lenet\nlr = 0.1\n", x);
    id_of("[experiment]\nname = b\ntitle = another name, same runs\n[train]\nlr = 0.10\nmodel = lenet\n", y);
    id_of("[experiment]\nname = a\n[train]\nmodel = lenet\nlr = 1e-1\n", z);
    id_of("[experiment]\nname = a\n[train]\nmodel = lenet\nlr = 0.2\n", w);
    id_of("[experiment]\nname = a\n[train]\nmodel = lenet\nlr = 0.1\nnesterov = no\n", v);
    cr_assert_str_eq(x, y, "0.1 and 0.10 give different ids");
    cr_assert_str_eq(x, z);
    cr_assert_str_neq(x, w, "changing lr kept the id");
    cr_assert_str_eq(x, v, "a switch turned off changed the id");
    /* fnv1a64 itself: the published test vectors */
    cr_assert_eq(fnv1a64(""), 0xcbf29ce484222325ULL);
    cr_assert_eq(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

Test(experiment, switches_true_and_false)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "switches.ini", NULL, &exp, &runs, &n);
    cr_assert_eq(n, 2);
    check_flag(&runs[0], "nesterov", "true");
    check_flag(&runs[0], "decoupled-wd", "true");
    cr_assert_null(flag(&runs[0], "layer-stats"));
    cr_assert_null(flag(&runs[1], "decoupled-wd"));
    cr_assert_null(strstr(runs[1].config_json, "decoupled-wd"));
    cr_assert_str_eq(runs[1].cell_json, "{\"decoupled-wd\":\"false\"}");

    const char *extra[] = {"--db", "x.sqlite"};
    char **argv = runspec_train_argv(&runs[0], "bin/bigbatch", extra, 2);
    const char *want[] = {"bin/bigbatch", "train", "--data", "synthetic", "--decoupled-wd", "--model", "lenet",
                          "--momentum", "0.9", "--nesterov", "--seed", "1", "--db", "x.sqlite", NULL};
    for (int i = 0;; i++) {
        if (!want[i]) {
            cr_assert_null(argv[i], "argv[%d] = %s, want the end", i, argv[i]);
            break;
        }
        cr_assert(argv[i], "argv ends at %d", i);
        cr_assert_str_eq(argv[i], want[i], "argv[%d]", i);
    }
    free(argv);
    done(&exp, runs, n);
}

Test(experiment, paper_block_and_text)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "paper.ini", NULL, &exp, &runs, &n);
    cr_assert_str_eq(exp.description, "A description that goes on over two lines.");
    cr_assert_str_eq(exp.source, "Some paper, Table 1");
    cr_assert_eq(exp.n_paper_cols, 2);
    cr_assert_str_eq(exp.paper_cols[1], "test_acc");
    cr_assert_eq(exp.n_paper_rows, 2);
    cr_assert_str_eq(exp.paper_rows[0][1], "0.9");
    cr_assert_str_eq(exp.paper_rows[1][0], "512");
    cr_assert_str_eq(exp.paper_rows[1][1], "diverged");
    cr_assert_eq(exp.n_paper_notes, 2);
    cr_assert_str_eq(exp.paper_notes[1], "a second note");
    cr_assert_str_eq(exp.paper_what, "LeNet on a synthetic set");
    cr_assert(strstr(exp.text, "[paper]"));
    done(&exp, runs, n);
}

Test(experiment, example_file_loads_at_every_scale)
{
    static const char *scales[] = {"smoke", "proxy", "full"};
    for (int s = 0; s < 3; s++) {
        Experiment exp;
        RunSpec *runs;
        int n;
        load_ok("experiments/example.ini", scales[s], &exp, &runs, &n);
        cr_assert_str_eq(exp.name, "example");
        cr_assert_eq(n, 4 * exp.repeats, "%s: %d runs", scales[s], n);
        cr_assert(exp.n_paper_rows > 0);
        if (s == 0) {
            check_flag(&runs[0], "train-subset", "2048");
            check_flag(&runs[0], "test-subset", "1000");
            check_flag(&runs[0], "epochs", "1");
        }
        done(&exp, runs, n);
    }
}

/* ---------------------------------------------------------------- malformed files */

/* Loading fails with "FILE:LINE:" (LINE: the line holding at_text) and every `want`. */
static void expect_error(const char *file, const char *at_text, const char *want1, const char *want2)
{
    Experiment exp;
    Error err = {{0}};
    int rc = experiment_load(file, NULL, &exp, &err);
    cr_assert_eq(rc, -1, "%s loaded", file);
    char where[256];
    snprintf(where, sizeof where, "%s:%d:", file, line_of(file, at_text));
    cr_assert(strstr(err.msg, where), "error '%s' does not say %s", err.msg, where);
    cr_assert(strstr(err.msg, want1), "error '%s' does not say %s", err.msg, want1);
    if (want2) cr_assert(strstr(err.msg, want2), "error '%s' does not say %s", err.msg, want2);
}

Test(experiment_errors, unknown_key)
{
    expect_error(FIX "bad_unknown_key.ini", "learning-rate", "unknown key 'learning-rate'", "bigbatch train --help");
}

Test(experiment_errors, bad_value)
{
    expect_error(FIX "bad_value.ini", "lr = abc", "key 'lr'", "'abc'");
}

Test(experiment_errors, bad_value_in_grid)
{
    expect_error(FIX "bad_grid_value.ini", "momentum =", "key 'momentum'", "--momentum");
}

Test(experiment_errors, zip_length_mismatch)
{
    expect_error(FIX "bad_zip_length.ini", "lr = 0.1, 0.2", "key 'lr' has 2 values", "'batch'");
}

Test(experiment_errors, unknown_section)
{
    expect_error(FIX "bad_section.ini", "[trian]", "unknown section [trian]", NULL);
}

Test(experiment_errors, missing_name)
{
    expect_error(FIX "bad_missing_name.ini", "[experiment]", "no name", NULL);
}

Test(experiment_errors, micro_batch_not_dividing)
{
    const char *file = FIX "bad_micro_batch.ini";
    Experiment exp;
    Error err = {{0}};
    cr_assert_eq(experiment_load(file, NULL, &exp, &err), -1);
    char want[256];
    snprintf(want, sizeof want, "%s: run 2 (batch=8192): ", file);
    cr_assert(strstr(err.msg, want), "'%s' does not start with '%s'", err.msg, want);
    cr_assert(strstr(err.msg, "--micro-batch 1000"), "%s", err.msg);
    snprintf(want, sizeof want, "(keys at lines %d, %d)", line_of(file, "micro-batch ="), line_of(file, "batch = 1000, 8192"));
    cr_assert(strstr(err.msg, want), "'%s' does not name '%s'", err.msg, want);
}

Test(experiment_errors, expression_syntax)
{
    expect_error(FIX "bad_expr_syntax.ini", "lr = base_lr", "key 'lr'", "expected ')'");
}

Test(experiment_errors, expression_unknown_name)
{
    expect_error(FIX "bad_expr_name.ini", "lr = base_lr", "key 'lr'", "unknown name 'bacth'");
}

Test(experiment_errors, division_by_zero)
{
    expect_error(FIX "bad_div_zero.ini", "lr = base_lr", "key 'lr': division by zero", "batch=256");
}

Test(experiment_errors, key_in_two_roles)
{
    expect_error(FIX "bad_two_roles.ini", "lr = 0.1, 0.2", "key 'lr' is already in [train]", NULL);
}

Test(experiment_errors, db_is_the_sweeps)
{
    expect_error(FIX "bad_db.ini", "db =", "key 'db' is set by the sweep runner", NULL);
}

Test(experiment_errors, empty_list_item)
{
    expect_error(FIX "bad_empty_item.ini", "lr = 0.1,,0.2", "key 'lr': empty item", NULL);
}

Test(experiment_errors, duplicate_key)
{
    expect_error(FIX "bad_duplicate_key.ini", "lr = 0.2", "key 'lr' appears twice", NULL);
}

Test(experiment_errors, seed_axis_with_repeats)
{
    expect_error(FIX "bad_seed_repeats.ini", "seed = 1, 2", "key 'seed'", "repeats");
}

Test(experiment_errors, tuned_not_an_axis)
{
    expect_error(FIX "bad_tuned.ini", "tuned =", "key 'tuned': 'lr'", NULL);
}

Test(experiment_errors, paper_row_length)
{
    expect_error(FIX "bad_paper_row.ini", "row = 512", "key 'row' has 1 value but columns", NULL);
}

/* A derived value's error names the lines of the values it was computed from: here the full
 * scale's base_lr, the value at fault. */
Test(experiment_errors, derived_error_names_its_inputs_lines)
{
    const char *file = FIX "bad_full_derived_input.ini";
    Experiment exp;
    Error err = {{0}};
    cr_assert_eq(experiment_load(file, "full", &exp, &err), -1);
    char want[64];
    snprintf(want, sizeof want, "%d", line_of(file, "base_lr = -0.1"));
    const char *at = strstr(err.msg, "(keys at lines ");
    cr_assert(at && strstr(at, want), "'%s' does not name line %s", err.msg, want);
}

/* Every scale of the file, not only the one chosen: the error says which and names the line. */
Test(experiment_errors, every_scale_checked)
{
    const char *file = FIX "bad_full_batch.ini";
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(file, "proxy", &exp, &runs, &n);
    done(&exp, runs, n);
    Error err = {{0}};
    cr_assert_eq(experiment_check_scales(file, &err), -1);
    char want[64];
    snprintf(want, sizeof want, "%d", line_of(file, "batch = 64, 100"));
    cr_assert(strstr(err.msg, "--scale full"), "%s", err.msg);
    const char *at = strstr(err.msg, "(keys at lines ");
    cr_assert(at && strstr(at, want), "'%s' does not name line %s", err.msg, want);
    cr_assert_eq(experiment_check_scales("experiments/example.ini", &err), 0, "%s", err.msg);
}

Test(experiment_errors, other_scale_checked)
{
    expect_error(FIX "bad_smoke_key.ini", "epoch = 1", "unknown key 'epoch'", NULL);
}

Test(experiment_errors, unused_variable)
{
    expect_error(FIX "bad_unused_variable.ini", "base_lr", "unknown key 'base_lr'", NULL);
}

Test(experiment_errors, bad_name)
{
    expect_error(FIX "bad_name.ini", "name =", "key 'name'", "'Bad Name'");
}

Test(experiment_errors, not_a_key_value_line)
{
    expect_error(FIX "bad_syntax.ini", "no equals", "not a [section]", NULL);
}

Test(experiment_errors, zip_axis_not_in_grid)
{
    expect_error(FIX "bad_zip_axis.ini", "[zip lr]", "'lr' is not a [grid] key", NULL);
}

Test(experiment_errors, continuation_of_a_value)
{
    expect_error(FIX "bad_continuation.ini", "  0.2", "continues key 'lr'", NULL);
}

/* Errors from text in memory: "mem.ini:LINE: ..." and a fragment. */
static void expect_string_error(const char *text, const char *want)
{
    Experiment exp;
    Error err = {{0}};
    cr_assert_eq(experiment_load_string("mem.ini", text, NULL, &exp, &err), -1, "loaded:\n%s", text);
    cr_assert(strstr(err.msg, want), "error '%s' does not say '%s'", err.msg, want);
}

Test(experiment_errors, reader_edges)
{
    char long_line[400] = "[experiment]\nname = x\ndescription = ";
    for (int i = 0; i < 250; i++) strcat(long_line, "a");
    expect_string_error(long_line, "mem.ini:3: line longer than");
    expect_string_error("lr = 0.1\n[experiment]\nname = x\n", "mem.ini:1: key 'lr' is outside any [section]");
    expect_string_error("[experiment]\nname = x\n  [train]\n", "mem.ini:3: section header is indented");
    expect_string_error("[experiment]\nname = x\n[train\nlr = 0.1\n", "mem.ini:3: not a [section]");
    expect_string_error("[experiment]\nname = x\n[foo]\n", "mem.ini:3: unknown section [foo]");
    expect_string_error("[experiment]\nname = x\n[train]\nlr = 1\n[train]\n", "mem.ini:5: section [train] appears twice");
    expect_string_error("[train]\nlr = 0.1\n", "mem.ini: no [experiment] section");
    expect_string_error("[experiment]\nname = x\nmetric = top5\n", "mem.ini:3: key 'metric': 'top5'");
    expect_string_error("[experiment]\nname = x\n[train]\nnesterov = maybe\n", "mem.ini:4: key 'nesterov': 'maybe'");
    expect_string_error("[experiment]\nname = x\n[derived]\nnesterov = 1\n", "mem.ini:4: key 'nesterov' is a switch");
    expect_string_error("[experiment]\nname = x\n[grid]\nlr = 0.1, 0.10\n", "mem.ini:4: key 'lr': '0.1' appears twice");
    expect_string_error("[experiment]\nname = x\n[train]\nb = 2\n[derived]\nlr = a * 0.1\na = b * 2\n",
                        "mem.ini:6: key 'lr': 'a' is a [derived] key that comes later (line 7)");
    expect_string_error("[experiment]\nname = x\n[train]\nopt = sgd\n[derived]\nlr = opt * 2\n",
                        "mem.ini:6: key 'lr': 'opt' is 'sgd', not a number");
    expect_string_error("[experiment]\nname = x\n[train]\nmodel = lenett\n", "mem.ini:4: key 'model': unknown model");
    expect_string_error("[experiment]\nname = x\n[zip]\nlr = 1\n", "mem.ini:3: [zip] needs the grid key");
}

Test(experiment, reader_accepts)
{
    /* CRLF, "key: value", an inline comment, a spaced header, [zip] before [grid], a workers
     * count checked against the batch only in the run */
    const char *text = "[ experiment ]\r\nname = x\r\n[zip   batch]\r\nlr: 0.1, 0.2 ; comment\r\n"
                       "[train]\r\nworkers-emulated = 3\r\n[grid]\r\nbatch = 384, 768\r\n";
    Experiment exp;
    RunSpec *runs;
    int n;
    Error err = {{0}};
    cr_assert_eq(experiment_load_string("mem.ini", text, "smoke", &exp, &err), 0, "%s", err.msg);
    cr_assert_eq(experiment_expand(&exp, &runs, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 2);
    check_flag(&runs[1], "lr", "0.2");
    check_flag(&runs[1], "batch", "768");
    check_flag(&runs[1], "workers-emulated", "3");
    done(&exp, runs, n);
}

Test(experiment_errors, missing_file)
{
    Experiment exp;
    Error err = {{0}};
    cr_assert_eq(experiment_load(FIX "no_such_file.ini", NULL, &exp, &err), -1);
    cr_assert(strstr(err.msg, "no_such_file.ini"), "%s", err.msg);
}

/* ---------------------------------------------------------------- expressions */

static int table_lookup(void *ctx, const char *name, double *value, Error *err)
{
    (void)ctx;
    static const struct {
        const char *name;
        double v;
    } vars[] = {{"a", 10}, {"b", 3}, {"warmup-epochs", 5}, {"base_lr", 0.1}, {"batch", 1024}, {"a-b", 100}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (!strcmp(vars[i].name, name)) {
            *value = vars[i].v;
            return 0;
        }
    error_set(err, "unknown name '%s'", name);
    return -1;
}

static double eval(const char *text)
{
    double v = NAN;
    Error err = {{0}};
    cr_assert_eq(expr_eval(text, table_lookup, NULL, &v, &err), 0, "'%s': %s", text, err.msg);
    return v;
}

#define EVAL(text, want) cr_assert_float_eq(eval(text), (want), 1e-12, "%s = %.17g, want %.17g", text, eval(text), (double)(want))

Test(expr, precedence)
{
    EVAL("1 + 2 * 3", 7);
    EVAL("(1 + 2) * 3", 9);
    EVAL("10 - 4 - 3", 3);
    EVAL("12 / 3 / 2", 2);
    EVAL("2 * 3 ^ 2", 18);
    EVAL("-2 ^ 2", -4);
    EVAL("(-2) ^ 2", 4);
    EVAL("2 ^ -1", 0.5);
    EVAL("--3", 3);
    EVAL("1.5e2 + .5", 150.5);
    EVAL("  7  ", 7);
}

Test(expr, power_is_right_associative)
{
    EVAL("2 ^ 3 ^ 2", 512);
    EVAL("(2 ^ 3) ^ 2", 64);
}

Test(expr, functions)
{
    EVAL("sqrt(16)", 4);
    EVAL("log2(1024)", 10);
    EVAL("ln(exp(2))", 2);
    EVAL("min(5, 3, 4)", 3);
    EVAL("max(5, 3 * 3)", 9);
    EVAL("pow(2, 10)", 1024);
    EVAL("floor(2.7) + ceil(2.1)", 5);
    EVAL("round(2.5)", 3);
    EVAL("abs(-3)", 3);
    EVAL("base_lr * batch / 256", 0.4);
    EVAL("min(5, batch / 1024)", 1);
    EVAL("base_lr * sqrt(batch / 256)", 0.2);
}

Test(expr, hyphenated_names)
{
    EVAL("warmup-epochs * 2", 10);
    EVAL("a-b", 100);     /* one name */
    EVAL("a - b", 7);     /* subtraction */
    EVAL("a-1", 9);       /* a name part starts with a letter */
    EVAL("a -b", 7);
}

static void eval_fails(const char *text, const char *want)
{
    double v;
    Error err = {{0}};
    cr_assert_eq(expr_eval(text, table_lookup, NULL, &v, &err), -1, "'%s' evaluated", text);
    cr_assert(strstr(err.msg, want), "'%s': error '%s' does not say '%s'", text, err.msg, want);
}

Test(expr, errors)
{
    eval_fails("", "empty");
    eval_fails("1 +", "expected a number");
    eval_fails("(1 + 2", "expected ')'");
    eval_fails("1 2", "unexpected text");
    eval_fails("2 * * 3", "column 5");
    eval_fails("nope(1)", "unknown function 'nope'");
    eval_fails("min(1)", "at least 2");
    eval_fails("sqrt(1, 2)", "at most 1");
    eval_fails("1 / (a - 10)", "division by zero");
    eval_fails("sqrt(-1)", "negative");
    eval_fails("log2(0)", "logarithm");
    eval_fails("10 ^ 400", "not a finite number");
    eval_fails("c + 1", "unknown name 'c'");
    eval_fails("1 # 2", "unexpected text");
    char deep[200] = "";
    for (int i = 0; i < 70; i++) strcat(deep, "(");
    strcat(deep, "1");
    for (int i = 0; i < 70; i++) strcat(deep, ")");
    eval_fails(deep, "nested too deeply");
}

static int collect(void *ctx, const char *name, Error *err)
{
    (void)err;
    char *out = ctx;
    strcat(out, name);
    strcat(out, ";");
    return 0;
}

Test(expr, names_without_evaluating)
{
    char names[256] = "";
    Error err = {{0}};
    cr_assert_eq(expr_names("base_lr * max(1, batch / 0) - warmup-epochs", collect, names, &err), 0, "%s", err.msg);
    cr_assert_str_eq(names, "base_lr;batch;warmup-epochs;");
    cr_assert_eq(expr_names("min(a,", NULL, NULL, &err), -1);
}

/* A UTF-8 byte order mark at the top is skipped: the file reads as without it, and lines are
 * still counted from the first. */
Test(experiment, utf8_byte_order_mark_is_skipped)
{
    Experiment exp;
    RunSpec *runs;
    int n;
    load_ok(FIX "bom.ini", "proxy", &exp, &runs, &n);
    cr_assert_str_eq(exp.name, "with-bom");
    cr_assert_eq(n, 2);
    done(&exp, runs, n);
    expect_error(FIX "bad_bom_key.ini", "learning-rate", "unknown key 'learning-rate'", "bigbatch train --help");
}
