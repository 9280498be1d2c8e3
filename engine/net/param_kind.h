/* What a parameter tensor is: optimizers exclude kinds from weight decay and from
 * layer-wise adaptation (OptConfig.lars_exclude). */
#ifndef BB_PARAM_KIND_H
#define BB_PARAM_KIND_H

typedef enum { PARAM_WEIGHT, PARAM_BIAS, PARAM_BN_SCALE, PARAM_BN_SHIFT } ParamKind;
const char *param_kind_name(ParamKind k);

#endif
