#include "noise_scale.h"

#include <math.h>

void noise_scale_init(NoiseScale *ns, double decay)
{
    ns->decay = decay;
    ns->g2_ema = 0;
    ns->trace_ema = 0;
    ns->samples = 0;
}

void noise_scale_add(NoiseScale *ns, double small_g2, int small, double big_g2, int big)
{
    double b = small, B = big;
    double g2 = (B * big_g2 - b * small_g2) / (B - b);
    double trace = (small_g2 - big_g2) / (1 / b - 1 / B);
    if (ns->samples == 0) {
        ns->g2_ema = g2;
        ns->trace_ema = trace;
    } else {
        ns->g2_ema = ns->decay * ns->g2_ema + (1 - ns->decay) * g2;
        ns->trace_ema = ns->decay * ns->trace_ema + (1 - ns->decay) * trace;
    }
    ns->samples++;
}

double noise_scale_bsimple(const NoiseScale *ns)
{
    if (ns->samples == 0 || !(ns->g2_ema > 0)) return NAN;
    return ns->trace_ema / ns->g2_ema;
}
