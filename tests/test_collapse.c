/* The chance-level rule (engine/train/collapse.h) on known answers: a uniform predictor's loss is
 * ln(classes) and a guess's accuracy 1/classes. */
#include <criterion/criterion.h>
#include <math.h>

#include "../engine/train/collapse.h"

Test(collapse, uniform_predictor_is_at_chance)
{
    cr_assert(collapse_at_chance(10, log(10.0), 0.10));
    cr_assert(collapse_at_chance(1000, log(1000.0), 0.001));
    cr_assert(collapse_at_chance(10, 2.3420, 0.0920)); /* lenet at LR 1: dead after one epoch */
}

Test(collapse, accuracy_at_chance_decides_alone)
{
    cr_assert(collapse_at_chance(10, 0.5, 0.11));      /* 1.1 / 10: at the edge, included */
    cr_assert_not(collapse_at_chance(10, 0.5, 0.1101));
    cr_assert(collapse_at_chance(10, NAN, 0.09));
}

Test(collapse, chance_loss_needs_low_accuracy)
{
    /* an epoch's mean loss lags: 2.30 with 20% test accuracy learned something by its end */
    cr_assert_not(collapse_at_chance(10, 2.3016, 0.20));
    cr_assert(collapse_at_chance(10, 2.3016, 0.149));
    cr_assert_not(collapse_at_chance(10, 2.3016, 0.15));
    /* within 2% of ln 10 = 2.3026 (2.2565 to 2.3486) */
    cr_assert(collapse_at_chance(10, 2.2570, 0.12));
    cr_assert(collapse_at_chance(10, 2.3480, 0.12));
    cr_assert_not(collapse_at_chance(10, 2.2500, 0.12));
    cr_assert_not(collapse_at_chance(10, 2.3500, 0.12));
    cr_assert(collapse_at_chance(10, 2.30, NAN)); /* no evaluation: the loss decides */
}

Test(collapse, learned_runs_and_degenerate_problems_are_not)
{
    cr_assert_not(collapse_at_chance(10, 0.6431, 0.7380));
    cr_assert_not(collapse_at_chance(1, 0.0, 1.0));
    cr_assert_not(collapse_at_chance(10, NAN, NAN));
}
