#include "critical_batch.h"

#include <math.h>

CriticalFit critical_batch_fit(const double *batch, const double *steps, int n)
{
    CriticalFit f = {false, NAN, NAN, NAN};
    /* weighted normal equations of S = a + c x, x = 1/B, weight w = 1/S^2 */
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = 1 / batch[i], y = steps[i], w = 1 / (y * y);
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
    }
    double det = sw * sxx - sx * sx;
    if (n < 2 || !(fabs(det) > 1e-300 * sw * sxx)) return f;
    double a = (sxx * sy - sx * sxy) / det, c = (sw * sxy - sx * sy) / det;
    f.s_min = a;
    f.b_crit = a > 0 ? c / a : NAN;
    f.ok = a > 0 && c > 0;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double r = (steps[i] - (a + c / batch[i])) / steps[i];
        ss += r * r;
    }
    f.rms_rel = sqrt(ss / n);
    return f;
}

double critical_batch_steps(const CriticalFit *f, double b) { return f->s_min * (1 + f->b_crit / b); }

double critical_batch_departure(const double *batch, const double *steps, int n, double factor)
{
    for (int i = 1; i < n; i++)
        if (steps[i] > factor * steps[0] * batch[0] / batch[i]) return batch[i];
    return NAN;
}
