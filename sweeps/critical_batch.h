/* McCandlish et al.'s steps/batch relation (arXiv 1812.06162, eq. 2.11): the steps to a target
 * fall as S = S_min (1 + B_crit / B): perfect scaling (S halves as B doubles) well below
 * B_crit, no gain well above it. Fitted to measured steps per batch size (Shallue et al.'s
 * curves), B_crit is the measured critical batch that the gradient noise scale predicts. */
#ifndef BB_CRITICAL_BATCH_H
#define BB_CRITICAL_BATCH_H
#include <stdbool.h>

typedef struct {
    bool ok;         /* at least two batch sizes and S_min > 0; else the curve does not bend */
    double s_min;    /* the steps at an infinite batch */
    double b_crit;   /* the batch where S = 2 S_min, twice perfect scaling's steps */
    double rms_rel;  /* the fit's root-mean-square relative residual */
} CriticalFit;

/* Least squares of S = S_min + (S_min B_crit) / B, linear in 1/B, each point weighted by
 * 1/S^2: residuals relative to the steps, since the steps span orders of magnitude and plain
 * residuals would fit the smallest batches alone. batch > 0, steps > 0, n points. */
CriticalFit critical_batch_fit(const double *batch, const double *steps, int n);

/* The fitted steps at batch b. */
double critical_batch_steps(const CriticalFit *f, double b);

/* The first batch (ascending order assumed) whose steps exceed `factor` times perfect scaling
 * from the smallest batch (steps[0] * batch[0] / batch); NAN when none does. With factor 2, the
 * model's own curve leaves at B_crit (S / perfect = 1 + B / B_crit, perfect from B << B_crit). */
double critical_batch_departure(const double *batch, const double *steps, int n, double factor);

#endif
