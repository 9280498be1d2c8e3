/* Rounding a float to the nearest bf16 or fp16 value (round to nearest, ties to even), kept
 * as a float: how the CPU backend emulates a GPU's bf16 / fp16 working copies
 * (--precision bf16|fp16). Bit arithmetic on the float's encoding (and, for fp16's subnormals,
 * one addition in the default rounding mode), so flushing float subnormals to zero
 * (engine/cpu/denormals.c) changes nothing: they round to zero in either format anyway.
 *   bf16: 8 exponent bits as float, 7 mantissa bits; a finite float past bf16's largest
 *         (3.3895e38) rounds to inf, as the conversion on a GPU does.
 *   fp16: 5 exponent bits, 10 mantissa bits; 65520 and up round to inf, below 2^-14 the
 *         subnormals (steps of 2^-24) and then zero, keeping the sign.
 * NaN stays NaN (quiet). */
#ifndef BB_CPU_ROUND_LOWP_H
#define BB_CPU_ROUND_LOWP_H
#include <stdint.h>
#include <string.h>

static inline uint32_t lowp_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float lowp_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Drops the low `bits` bits of a finite float's encoding, rounding to nearest even (a carry
 * into the exponent is the right answer, up to inf). */
static inline uint32_t lowp_drop_bits(uint32_t u, int bits)
{
    const uint32_t half = (1u << (bits - 1)) - 1, lsb = (u >> bits) & 1u;
    return (u + half + lsb) & ~((1u << bits) - 1u);
}

static inline float round_bf16(float f)
{
    uint32_t u = lowp_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return lowp_float(u | 0x00400000u); /* NaN */
    return lowp_float(lowp_drop_bits(u, 16));
}

static inline float round_fp16(float f)
{
    const uint32_t u = lowp_bits(f), sign = u & 0x80000000u, a = u ^ sign;
    if (a > 0x7F800000u) return lowp_float(u | 0x00400000u); /* NaN */
    if (a >= 0x477FF000u) return lowp_float(sign | 0x7F800000u); /* >= 65520: inf */
    if (a >= 0x38800000u) return lowp_float(sign | lowp_drop_bits(a, 13)); /* normal: >= 2^-14 */
    /* Subnormal fp16: a multiple of 2^-24. Floats in [0.5, 1) are 2^-24 apart, so adding 0.5
     * rounds to one (ties to even, exactly as the encoding's last bit) and the subtraction is exact.
     * The mantissa's bits give it without the FPU: 2^-24 is the 23rd bit below 0.5's. */
    const uint32_t in_half = lowp_bits(0.5f + lowp_float(a)) - lowp_bits(0.5f);
    return lowp_float(sign | lowp_bits((float)in_half * 0x1p-24f));
}

#endif
