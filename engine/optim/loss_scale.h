/* Loss scaling: fp16's gradients underflow unless the loss is scaled up in backward
 * (--precision fp16). Dynamic scaling as PyTorch's torch.amp.GradScaler with its defaults: the
 * scale starts at 2^16; a step with any inf or NaN gradient is skipped and halves it; 2,000
 * steps in a row with finite gradients double it. fp32, tf32 and bf16 keep a fixed scale of 1,
 * which leaves their steps exactly as without a scaler.
 *
 * The gradients are unscaled (multiplied by 1/scale in fp32) before anything reads them: the
 * optimizer's norms (LARS/LARC trust ratios, LAMB), weight decay, statistics. A power-of-two
 * scale then leaves every update bit for bit as at scale 1, wherever the scaled gradients
 * neither overflow nor fall below float's normal range (tests/test_loss_scale.c).
 *
 * The skip is decided on the device, so a step never waits for it: loss_scaler_unscale leaves
 * the scaled gradients' sum of squares in backend memory (inf or NaN exactly when some
 * gradient is), optimizer_step is handed it and applies nothing when it is not finite, and the
 * host learns of it with the step's one download, then calls loss_scaler_update. */
#ifndef BB_LOSS_SCALE_H
#define BB_LOSS_SCALE_H
#include <stdbool.h>

#include "../net/net.h"

#define LOSS_SCALE_INIT 65536.0 /* GradScaler's init_scale, 2^16 */
enum { LOSS_SCALE_GROWTH_INTERVAL = 2000 }; /* GradScaler's growth_interval */

typedef struct {
    double scale;    /* the loss's gradient is multiplied by this in backward */
    bool dynamic;    /* GradScaler's rule; false: the scale stays as set */
    int good_steps;  /* finite steps in a row since the scale last changed (growth tracker) */
    long skipped;    /* steps skipped for inf/NaN gradients */
} LossScaler;

/* Dynamic (GradScaler's rule) or fixed, starting at `scale`; 0: LOSS_SCALE_INIT when dynamic,
 * else 1 (no scaling at all). */
void loss_scaler_init(LossScaler *ls, bool dynamic, double scale);
/* The net's loss scale for a batch of B images (net->loss_scale): scale / B. */
real loss_scaler_net_scale(const LossScaler *ls, int batch);
/* The gradient block back to the loss's own scale, before any norm is taken. A dynamic scaler
 * first writes the scaled gradients' sum of squares into *check (backend memory, one double)
 * and returns check, for optimizer_step to skip the update when it is not finite; a fixed
 * scale writes nothing and returns NULL (always applied). */
const double *loss_scaler_unscale(const LossScaler *ls, Net *net, double *check);
/* GradScaler.update after the step's check (the downloaded *check finite): an inf/NaN step
 * halves the scale and is counted skipped; a finite one counts, and the growth interval's
 * doubles the scale. True when the step was applied. */
bool loss_scaler_update(LossScaler *ls, bool finite);

#endif
