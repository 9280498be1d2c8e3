/* The gradient-noise-scale estimator against its closed form, and on synthetic
 * gradients whose true |G|^2 and tr(Sigma) are known. */
#include <criterion/criterion.h>
#include <math.h>

#include "../engine/train/noise_scale.h"
#include "../engine/base/rng.h"

Test(noise_scale, closed_form_single_step)
{
    NoiseScale ns;
    noise_scale_init(&ns, 0.9);
    cr_expect(isnan(noise_scale_bsimple(&ns)));
    /* b = 32, B = 128: |G_b|^2 = 5, |G_B|^2 = 2 */
    noise_scale_add(&ns, 5.0, 32, 2.0, 128);
    double g2 = (128 * 2.0 - 32 * 5.0) / (128 - 32);         /* 1 */
    double tr = (5.0 - 2.0) / (1.0 / 32 - 1.0 / 128);         /* 128 */
    cr_expect(fabs(noise_scale_bsimple(&ns) - tr / g2) < 1e-9, "%g", noise_scale_bsimple(&ns));
    /* second step enters through the EMA */
    noise_scale_add(&ns, 4.0, 32, 3.0, 128);
    double g2b = (128 * 3.0 - 32 * 4.0) / 96, trb = 1.0 / (1.0 / 32 - 1.0 / 128);
    double want = (0.9 * tr + 0.1 * trb) / (0.9 * g2 + 0.1 * g2b);
    cr_expect(fabs(noise_scale_bsimple(&ns) - want) < 1e-9);
}

/* Per-example gradients g_i = G + noise with per-coordinate variance s2 in d
 * dimensions: tr(Sigma) = d*s2, B_simple = d*s2/|G|^2. Batch means are drawn
 * exactly, so the estimate converges to the truth as steps accumulate. */
Test(noise_scale, recovers_known_noise_scale)
{
    const int d = 50, b = 16, B = 256;
    const double s2 = 4.0, gval = 0.5; /* |G|^2 = 50 * 0.25 = 12.5, tr = 200 -> B_simple = 16 */
    NoiseScale ns;
    noise_scale_init(&ns, 0.999);
    Rng rng;
    rng_seed(&rng, 3, 3);
    for (int step = 0; step < 4000; step++) {
        double small = 0, big = 0;
        double sum_big[50] = {0};
        for (int m = 0; m < B / b; m++) {
            double sq = 0;
            for (int k = 0; k < d; k++) {
                double mean_b = gval + sqrt(s2 / b) * rng_normal(&rng); /* micro-batch mean */
                sq += mean_b * mean_b;
                sum_big[k] += mean_b;
            }
            small += sq / (B / b);
        }
        for (int k = 0; k < d; k++) big += (sum_big[k] / (B / b)) * (sum_big[k] / (B / b));
        noise_scale_add(&ns, small, b, big, B);
    }
    double est = noise_scale_bsimple(&ns);
    cr_expect(fabs(est - 16.0) < 1.6, "B_simple %g, want 16", est);
}
