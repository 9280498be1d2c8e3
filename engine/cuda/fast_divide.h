/* Division of 31-bit unsigned numbers by a divisor fixed at launch, as a multiply-high, an add
 * and a shift (Granlund & Montgomery, "Division by invariant integers using multiplication",
 * PLDI 1994; PyTorch's IntDivider does the same). A GPU has no integer divider: a 64-bit
 * `k / hw % C` per element costs well over a hundred instructions, which made batch norm's
 * elementwise passes compute-bound on the H200. Header-only and plain C so the host tests
 * (tests/test_fast_divide.c) check the very arithmetic the kernels run. */
#ifndef BB_FAST_DIVIDE_H
#define BB_FAST_DIVIDE_H
#include <stdint.h>

#include "../host_device.h"

/* The largest numerator (and divisor) the magic numbers are exact for. */
#define FAST_DIVIDE_MAX 0x7fffffffu

typedef struct {
    uint32_t divisor, magic, shift;
} FastDivide;

/* d in [1, FAST_DIVIDE_MAX]: shift = ceil(log2 d), magic = 2^32 (2^shift - d) / d + 1. */
static inline BB_HD FastDivide fast_divide_by(uint32_t d)
{
    FastDivide f;
    uint32_t shift = 0;
    while (shift < 31 && ((uint32_t)1 << shift) < d) shift++;
    f.divisor = d;
    f.shift = shift;
    f.magic = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << shift) - d)) / d + 1);
    return f;
}

static inline BB_HD uint32_t fast_divide(FastDivide f, uint32_t n)
{
#ifdef __CUDA_ARCH__
    const uint32_t high = __umulhi(n, f.magic);
#else
    const uint32_t high = (uint32_t)(((uint64_t)n * f.magic) >> 32);
#endif
    /* n, high < 2^31: the sum cannot overflow */
    return (high + n) >> f.shift;
}

/* The channel of flat index k of an N x C x hw tensor. `narrow` when every index and C * hw fit in
 * 31 bits (fast division), else the 64-bit division (tensors of more than 2^31 values). */
typedef struct {
    FastDivide by_hw, by_c;
    uint64_t hw, c;
    int narrow;
} ChannelOfIndex;

static inline BB_HD ChannelOfIndex channel_of_index(uint64_t count, uint64_t c, uint64_t hw)
{
    ChannelOfIndex m;
    m.hw = hw ? hw : 1;
    m.c = c ? c : 1;
    m.narrow = count <= FAST_DIVIDE_MAX && m.hw <= FAST_DIVIDE_MAX && m.c <= FAST_DIVIDE_MAX;
    m.by_hw = fast_divide_by(m.narrow ? (uint32_t)m.hw : 1);
    m.by_c = fast_divide_by(m.narrow ? (uint32_t)m.c : 1);
    return m;
}

static inline BB_HD int channel_at(ChannelOfIndex m, uint64_t k)
{
    if (!m.narrow) return (int)((k / m.hw) % m.c);
    const uint32_t plane = fast_divide(m.by_hw, (uint32_t)k);
    return (int)(plane - fast_divide(m.by_c, plane) * (uint32_t)m.c);
}

#endif
