/* The gradient noise scale of McCandlish et al. 2018 ("An Empirical Model of
 * Large-Batch Training", appendix A): from the squared norms of gradients measured
 * at a small batch b (micro-batches) and at the full batch B of the same step,
 *   |G|^2  ~ (B |G_B|^2 - b |G_b|^2) / (B - b)        (unbiased true-gradient norm)
 *   tr(S)  ~ (|G_b|^2 - |G_B|^2) / (1/b - 1/B)        (unbiased per-example variance)
 * Both are noisy, so each is smoothed by an exponential moving average before the
 * ratio B_simple = tr(S) / |G|^2 is taken: the batch size around which the gains
 * of a larger batch start to diminish (the critical batch size). */
#ifndef BB_NOISE_SCALE_H
#define BB_NOISE_SCALE_H
#include <stdbool.h>

typedef struct {
    double decay;      /* EMA decay per step, e.g. 0.95 */
    double g2_ema, trace_ema;
    long samples;
} NoiseScale;

void noise_scale_init(NoiseScale *ns, double decay);
/* One step: mean squared norm of the micro-batch gradients (each of size small),
 * squared norm of the full-batch gradient (size big > small). */
void noise_scale_add(NoiseScale *ns, double small_g2, int small, double big_g2, int big);
/* B_simple from the smoothed estimates; NAN before the first sample or while the
 * smoothed |G|^2 is not positive. */
double noise_scale_bsimple(const NoiseScale *ns);

#endif
