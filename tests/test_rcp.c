/* MLPerf's reference-convergence-point rule (sweeps/rcp_check.c), on MADE-UP points (test data,
 * not MLPerf's), and the real points file loading. */
#include <criterion/criterion.h>
#include <math.h>

#include "../sweeps/rcp.h"
#include "../sweeps/student_t.h"

/* Table values of Student's t: the 0.95 quantiles for 6 and 10 degrees of freedom. */
Test(rcp, student_t_quantiles)
{
    cr_expect(fabs(student_t_cdf(1.943180, 6) - 0.95) < 1e-6, "%.8f", student_t_cdf(1.943180, 6));
    cr_expect(fabs(student_t_cdf(-1.812461, 10) - 0.05) < 1e-6);
    cr_expect(fabs(student_t_cdf(0, 3) - 0.5) < 1e-12);
}

static double made_up[3][7] = {
    {10, 11, 12, 13, 14, 15, 16}, /* batch 1000: olympic mean 13, population stdev sqrt(2) */
    {30, 31, 31, 31, 31, 31, 40}, /* batch 2000: slower than the line between its neighbours */
    {20, 21, 22, 23, 24, 25, 26}, /* batch 4000: mean 23 */
};

static RcpSet made_up_set(Rcp *p)
{
    const double batch[3] = {1000, 2000, 4000};
    for (int i = 0; i < 3; i++) p[i] = (Rcp){.batch = batch[i], .epochs = made_up[i], .n_epochs = 7};
    RcpSet s = {.target = 0.5, .runs = 5, .alpha = 0.05, .points = p, .n = 3};
    rcp_prepare(&s);
    return s;
}

/* The bisection lands on the closed form m - t_0.95(df) s sqrt(1/n_ref + 1/n_subm). */
Test(rcp, fastest_acceptable_mean)
{
    Rcp p[3];
    made_up_set(p);
    cr_expect(fabs(p[0].mean - 13) < 1e-12);
    cr_expect(fabs(p[0].stdev - sqrt(2)) < 1e-12);
    double want = 13 - 1.943180 * sqrt(2) * sqrt(1.0 / 5 + 1.0 / 3);
    cr_expect(fabs(p[0].min_epochs - want) < 2e-4, "%g want %g", p[0].min_epochs, want);
}

Test(rcp, pruning_drops_slow_middle_point)
{
    Rcp p[3];
    made_up_set(p);
    cr_expect(p[0].kept && !p[1].kept && p[2].kept);
}

Test(rcp, verdicts)
{
    Rcp p[3];
    RcpSet s = made_up_set(p);
    double fast[5] = {5, 6, 7, 8, 9}, ok[5] = {12, 13, 13, 14, 30}, two_never[5] = {13, 13, 13, INFINITY, INFINITY};
    RcpVerdict v = rcp_check(&s, 1000, ok, 5);
    cr_expect(v.pass && fabs(v.mean - 40.0 / 3) < 1e-12 && strstr(v.how, "reference point"), "%s", v.how);
    cr_expect(!rcp_check(&s, 1000, fast, 5).pass);
    /* 2000 was pruned: interpolated between 1000 and 4000 (mean 13 + 10/3) */
    v = rcp_check(&s, 2000, ok, 5);
    cr_expect(strstr(v.how, "interpolated between batches 1000 and 4000"), "%s", v.how);
    cr_expect(fabs(v.ref_mean - (13 + 10.0 / 3)) < 1e-9);
    cr_expect(!v.pass);
    v = rcp_check(&s, 500, ok, 5);
    cr_expect(v.pass && strstr(v.how, "below the smallest"), "%s", v.how);
    v = rcp_check(&s, 8000, ok, 5);
    cr_expect(!v.pass && strstr(v.how, "missing RCP"), "%s", v.how);
    cr_expect(!rcp_check(&s, 1000, two_never, 5).pass);
    cr_expect(!rcp_check(&s, 1000, ok, 3).pass);
}

/* The real file (results/mlperf-rcps.ini): every point read, sorted, statistics in range. */
Test(rcp, mlperf_file_loads)
{
    RcpSet s;
    Error err = {{0}};
    cr_assert(rcp_load("results/mlperf-rcps.ini", &s, &err) == 0, "%s", err.msg);
    cr_expect(s.n == 10 && s.runs == 5 && s.target == 0.759);
    cr_expect(s.points[0].batch == 1632 && s.points[9].batch == 67840);
    cr_expect(s.points[0].n_epochs == 17 && s.points[9].n_epochs == 28);
    for (int i = 0; i < s.n; i++)
        cr_expect(s.points[i].min_epochs <= s.points[i].mean && s.points[i].min_epochs > s.points[i].mean - 3);
    rcp_free(&s);
}

Test(rcp, bad_file_names_line_and_key)
{
    Error err = {{0}};
    FILE *f = fopen("/tmp/bb_rcp_bad.ini", "w");
    cr_assert(f);
    fprintf(f, "[checker]\ntarget = 0.759\nruns = 5\nalpha = 0.05\n[p]\nbatch = 64\nepochs = 1, x, 3\n");
    fclose(f);
    RcpSet s;
    cr_expect(rcp_load("/tmp/bb_rcp_bad.ini", &s, &err) == -1);
    cr_expect(strstr(err.msg, "/tmp/bb_rcp_bad.ini:7: key 'epochs'"), "%s", err.msg);
}
