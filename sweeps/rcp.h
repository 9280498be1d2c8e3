/* Reference convergence points (MLPerf's RCPs): per batch size, the hyperparameters of a
 * reference recipe and the epochs its runs took to reach the quality target; and MLPerf's rule
 * (mlcommons/logging, mlperf_logging/rcp_checker/rcp_checker.py) for whether a set of runs at one
 * batch converges as fast as the reference:
 *   - a submission is `runs` seeds (ResNet-50: 5); more than one that never reaches the target
 *     fails it, one counts as infinitely slow;
 *   - olympic means: the fastest and the slowest run are dropped, from the submission and from
 *     each reference point (whose stdev is then the population one, numpy's std);
 *   - each reference point's fastest acceptable mean is the smallest mean that a one-sided
 *     two-sample t-test (pooled variance, reference n - 2 against runs - 2 samples, both with
 *     the reference's stdev) does not call faster at alpha 0.05 (a bisection to 1e-4 epochs);
 *   - reference points are pruned: those at batches below the fastest point's are dropped, then
 *     every point slower than the interpolation of its two neighbours (its acceptable mean above
 *     theirs interpolated), repeatedly;
 *   - a batch between two kept points takes the linear interpolation of their means and stdevs
 *     (2 x runs reference samples); below the smallest kept point, that point's; above the
 *     largest, no reference: it fails ("missing RCP");
 *   - pass: the submission's olympic mean >= the fastest acceptable mean. */
#ifndef BB_RCP_H
#define BB_RCP_H
#include <stdbool.h>

#include "../engine/base/util.h"

typedef struct {
    char name[64];            /* the section, e.g. resnet_ref_1632 */
    double batch;
    double base_lr, warmup_epochs, momentum, weight_decay;
    double *epochs;           /* epochs to the target, one per reference run */
    int n_epochs;
    double mean, stdev;       /* olympic */
    double min_epochs;        /* the fastest acceptable olympic mean of a submission */
    bool kept;                /* survives pruning */
} Rcp;

typedef struct {
    char source[512];
    double target;            /* the quality target, e.g. 0.759 */
    int runs;                 /* a submission's seeds */
    double alpha;
    Rcp *points;              /* ascending batch */
    int n;
} RcpSet;

/* Reads a points file (results/mlperf-rcps.ini documents its keys) and computes every point's
 * statistics and the pruning. 0, or -1 with err naming the file, line and key. */
int rcp_load(const char *path, RcpSet *out, Error *err);
void rcp_free(RcpSet *s);

/* Statistics and pruning of s->points (rcp_load does this; tests set points by hand). */
void rcp_prepare(RcpSet *s);

typedef struct {
    bool pass;
    double mean;              /* the submission's olympic mean (NAN: too few runs converged) */
    double ref_mean, min_epochs; /* the reference it was held to (NAN: none) */
    char how[160];            /* "RCP found", "RCP interpolated between 4096 and 8192", ... */
} RcpVerdict;

/* MLPerf's verdict on runs at `batch`, each run's epochs to the target (INFINITY: never). */
RcpVerdict rcp_check(const RcpSet *s, double batch, const double *epochs, int n);

#endif
