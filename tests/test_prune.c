/* ASHA's rungs and decisions (sweeps/prune.h) on known metrics: which cells go on at each
 * rung, what an ended cell and a tie count as, and when a rung is not decided yet. */
#include <criterion/criterion.h>
#include <math.h>

#include "../sweeps/prune.h"

static PruneRungs rungs_of(int eta, int min_epochs, int epochs)
{
    PruneOptions o;
    prune_options_defaults(&o);
    o.eta = eta;
    o.min_epochs = min_epochs;
    PruneRungs r;
    prune_rungs_of(&o, epochs, &r);
    return r;
}

Test(prune, default_rungs_are_epochs_over_eta_squared_then_times_eta)
{
    PruneRungs r = rungs_of(3, 0, 10); /* ceil(10 / 9) = 2, then 6; 18 is past the end */
    cr_assert_eq(r.n, 2);
    cr_assert_eq(r.epoch[0], 2);
    cr_assert_eq(r.epoch[1], 6);
    r = rungs_of(3, 0, 100); /* 12, 36 */
    cr_assert_eq(r.n, 2);
    cr_assert_eq(r.epoch[0], 12);
    r = rungs_of(2, 1, 8); /* 1, 2, 4: not 8, the end */
    cr_assert_eq(r.n, 3);
    cr_assert_eq(r.epoch[2], 4);
}

Test(prune, given_rungs_past_the_end_are_dropped)
{
    PruneOptions o;
    prune_options_defaults(&o);
    Error err = {{0}};
    cr_assert_eq(prune_parse_rungs("2,5,12", &o, &err), 0);
    PruneRungs r;
    prune_rungs_of(&o, 10, &r);
    cr_assert_eq(r.n, 2);
    cr_assert_eq(r.epoch[1], 5);
    cr_assert_eq(prune_parse_rungs("5,2", &o, &err), -1);
    cr_assert(strstr(err.msg, "--prune-rungs"));
    cr_assert_eq(prune_parse_rungs("2,x", &o, &err), -1);
    cr_assert_eq(prune_parse_rungs("", &o, &err), -1);
}

Test(prune, keep_the_top_third_nan_last_ties_to_the_first)
{
    double m[7] = {0.4, 0.7, NAN, 0.7, 0.5, 0.1, 0.6};
    bool keep[7];
    prune_keep(m, 7, 3, keep); /* floor(7/3) = 2: the two 0.7s */
    bool want[7] = {false, true, false, true, false, false, false};
    for (int i = 0; i < 7; i++) cr_assert_eq(keep[i], want[i], "cell %d", i);
    double tie[4] = {0.5, 0.5, 0.5, 0.5};
    prune_keep(tie, 4, 3, keep); /* one goes on: the first in the grid */
    cr_assert(keep[0] && !keep[1] && !keep[2] && !keep[3]);
    double all_nan[2] = {NAN, NAN};
    prune_keep(all_nan, 2, 3, keep); /* at least one always goes on */
    cr_assert(keep[0] && !keep[1]);
}

static PruneCell at(double a, double b)
{
    PruneCell c = {{PRUNE_AT, PRUNE_AT}, {a, b}};
    return c;
}

Test(prune, group_walks_rungs_in_order)
{
    PruneRungs r = {2, {2, 6}};
    /* six cells: at rung 0 the best two (1 and 3) go on; at rung 1 the better of them */
    PruneCell c[6] = {at(0.30, 0), at(0.50, 0.60), at(0.20, 0), at(0.45, 0.65), at(0.10, 0), at(0.40, 0)};
    c[5].state[0] = PRUNE_ENDED; /* diverged before the rung: the worst, whatever its number */
    c[5].metric[0] = 0.99;
    int stop[6], open;
    prune_group(&r, 3, c, 6, stop, &open);
    int want[6] = {0, 1, 0, -1, 0, 0};
    for (int i = 0; i < 6; i++) cr_assert_eq(stop[i], want[i], "cell %d: %d", i, stop[i]);
    cr_assert_eq(open, 2);
}

Test(prune, a_rung_waits_for_every_cell_in_it)
{
    PruneRungs r = {2, {2, 6}};
    PruneCell c[3] = {at(0.3, 0.0), at(0.5, 0.0), at(0.2, 0.0)};
    c[2].state[0] = PRUNE_NOT_YET;
    int stop[3], open;
    prune_group(&r, 3, c, 3, stop, &open);
    cr_assert_eq(open, 0);
    cr_assert(stop[0] == -1 && stop[1] == -1 && stop[2] == -1);
    /* once it is there, rung 0 decides; rung 1 waits only for the one that went on */
    c[2].state[0] = PRUNE_AT;
    c[1].state[1] = PRUNE_NOT_YET;
    c[0].state[1] = PRUNE_NOT_YET; /* stopped at rung 0: not waited for */
    prune_group(&r, 3, c, 3, stop, &open);
    cr_assert_eq(stop[0], 0);
    cr_assert_eq(stop[1], -1);
    cr_assert_eq(stop[2], 0);
    cr_assert_eq(open, 1);
}
