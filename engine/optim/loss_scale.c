/* Dynamic loss scaling (loss_scale.h). */
#include "loss_scale.h"

void loss_scaler_init(LossScaler *ls, bool dynamic, double scale)
{
    *ls = (LossScaler){scale > 0 ? scale : dynamic ? LOSS_SCALE_INIT : 1, dynamic, 0, 0};
}

real loss_scaler_net_scale(const LossScaler *ls, int batch) { return (real)ls->scale / (real)batch; }

const double *loss_scaler_unscale(const LossScaler *ls, Net *net, double *check)
{
    Backend *bk = net->bk;
    /* a sum of squares is inf or NaN exactly when some gradient is (float's largest squared
     * times any parameter count stays far inside double); taken before unscaling, as the
     * scaled gradients are the ones that overflow */
    if (ls->dynamic) bk_sum_squares_to(bk, net->n_weights, net->grad_block.data, check);
    if (ls->scale != 1) bk_scale(bk, net->n_weights, (real)(1 / ls->scale), net->grad_block.data);
    return ls->dynamic ? check : NULL;
}

bool loss_scaler_update(LossScaler *ls, bool finite)
{
    if (!ls->dynamic) return finite;
    if (!finite) {
        ls->scale *= 0.5;
        ls->good_steps = 0;
        ls->skipped++;
        return false;
    }
    if (++ls->good_steps == LOSS_SCALE_GROWTH_INTERVAL) {
        ls->scale *= 2;
        ls->good_steps = 0;
    }
    return true;
}
