/* The fit of S = S_min (1 + B_crit / B) to steps per batch size (sweeps/critical_batch.c). */
#include <criterion/criterion.h>
#include <math.h>

#include "../sweeps/critical_batch.h"

#define N 8
static const double BATCH[N] = {32, 64, 128, 256, 512, 1024, 2048, 4096};

/* Points on a known curve: the fit gives its S_min and B_crit back. */
Test(critical_batch, recovers_known_curve)
{
    double steps[N];
    for (int i = 0; i < N; i++) steps[i] = 300 * (1 + 700 / BATCH[i]);
    CriticalFit f = critical_batch_fit(BATCH, steps, N);
    cr_assert(f.ok);
    cr_expect(fabs(f.s_min - 300) < 1e-6, "S_min %g", f.s_min);
    cr_expect(fabs(f.b_crit - 700) < 1e-6, "B_crit %g", f.b_crit);
    cr_expect(f.rms_rel < 1e-9);
    cr_expect(fabs(critical_batch_steps(&f, 700) - 600) < 1e-6);
}

/* Multiplicative noise of +-5% (alternating): still within 15% of the truth, where unweighted
 * least squares in S would let the small batches' large step counts decide. */
Test(critical_batch, noisy_curve_close)
{
    double steps[N];
    for (int i = 0; i < N; i++) steps[i] = 50 * (1 + 2000 / BATCH[i]) * (i % 2 ? 1.05 : 0.95);
    CriticalFit f = critical_batch_fit(BATCH, steps, N);
    cr_assert(f.ok);
    cr_expect(fabs(f.b_crit / 2000 - 1) < 0.15, "B_crit %g", f.b_crit);
    cr_expect(fabs(f.s_min / 50 - 1) < 0.15, "S_min %g", f.s_min);
    cr_expect(f.rms_rel > 0.01 && f.rms_rel < 0.1, "rms %g", f.rms_rel);
}

/* Perfect scaling throughout: no bend, no critical batch within reach. */
Test(critical_batch, perfect_scaling_does_not_bend)
{
    double steps[N];
    for (int i = 0; i < N; i++) steps[i] = 1e5 / BATCH[i];
    CriticalFit f = critical_batch_fit(BATCH, steps, N);
    cr_expect(!f.ok);
    cr_expect(isnan(critical_batch_departure(BATCH, steps, N, 2)));
}

Test(critical_batch, too_few_points)
{
    double b = 64, s = 100;
    cr_expect(!critical_batch_fit(&b, &s, 1).ok);
}

/* Departure from perfect scaling by a factor of 2: on the model's curve, near B_crit + 2 B_0. */
Test(critical_batch, departure_near_b_crit)
{
    double steps[N];
    for (int i = 0; i < N; i++) steps[i] = 10 * (1 + 500 / BATCH[i]);
    /* S / perfect = (B + 500) / (32 + 500) > 2 first at B = 1024 */
    cr_expect(critical_batch_departure(BATCH, steps, N, 2) == 1024);
    cr_expect(critical_batch_departure(BATCH, steps, N, 1.5) == 512);
}
