/* The chance level of a classification run (collapse.h). */
#include "collapse.h"

#include <math.h>

bool collapse_at_chance(int classes, double train_loss, double test_acc)
{
    if (classes < 2) return false;
    const double uniform_loss = log((double)classes);
    bool loss_at_chance = isfinite(train_loss) && fabs(train_loss - uniform_loss) <= COLLAPSE_LOSS_MARGIN * uniform_loss;
    if (!isfinite(test_acc)) return loss_at_chance;
    return test_acc <= COLLAPSE_ACC_FACTOR / classes || (loss_at_chance && test_acc < COLLAPSE_LOSS_ACC_FACTOR / classes);
}
