/* When a run has collapsed to the chance level: a result with its own name, beside diverged.
 * A model that predicts the uniform distribution scores a cross-entropy of ln(classes) and
 * the accuracy of a guess; a run that ends there learned nothing, though no step's loss was
 * NaN or large. One rule, used by the training loop and by the store for runs recorded
 * before it existed. */
#ifndef BB_COLLAPSE_H
#define BB_COLLAPSE_H
#include <stdbool.h>

/* At chance: the test accuracy at most COLLAPSE_ACC_FACTOR / classes (0.11 for 10 classes),
 * or the final training loss within COLLAPSE_LOSS_MARGIN of ln(classes) (0.046 for 10) while
 * the test accuracy is under COLLAPSE_LOSS_ACC_FACTOR / classes (0.15): an epoch's mean loss
 * lags what the run has learned by its end, so the loss alone does not decide. */
#define COLLAPSE_ACC_FACTOR 1.1
#define COLLAPSE_LOSS_MARGIN 0.02
#define COLLAPSE_LOSS_ACC_FACTOR 1.5

/* True when (train_loss, test_acc) is the chance level of a `classes`-way problem; a NaN
 * test accuracy leaves the loss to decide, a NaN loss the accuracy. False for classes < 2. */
bool collapse_at_chance(int classes, double train_loss, double test_acc);

#endif
