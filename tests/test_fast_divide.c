/* The CUDA kernels' division by a launch-time divisor (engine/cuda/fast_divide.h), run here on
 * the host with the same arithmetic: against the C operators at the edges of the 31-bit range,
 * for every divisor the models use and a spread of random ones, and the channel of an index. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "../engine/cuda/fast_divide.h"

/* A fixed xorshift stream: the test is the same on every run. */
static uint32_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 11);
}

static void check_divisor(uint32_t d, uint64_t *rng)
{
    const FastDivide f = fast_divide_by(d);
    const uint32_t twice_less_one = 2 * (uint64_t)d <= FAST_DIVIDE_MAX ? 2 * d - 1 : d;
    const uint32_t edges[] = {0, 1, d - 1, d, d + 1, twice_less_one, FAST_DIVIDE_MAX, FAST_DIVIDE_MAX - 1,
                              FAST_DIVIDE_MAX / d * d, FAST_DIVIDE_MAX / d * d - 1};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        const uint32_t n = edges[i] > FAST_DIVIDE_MAX ? FAST_DIVIDE_MAX : edges[i];
        cr_assert_eq(fast_divide(f, n), n / d, "%u / %u: got %u, want %u", n, d, fast_divide(f, n), n / d);
    }
    for (int i = 0; i < 2000; i++) {
        const uint32_t n = next_random(rng) & FAST_DIVIDE_MAX;
        cr_assert_eq(fast_divide(f, n), n / d, "%u / %u: got %u, want %u", n, d, fast_divide(f, n), n / d);
    }
}

Test(fast_divide, model_divisors_and_random_ones)
{
    /* plane sizes and channel counts of the models (49 = 7x7, 3136 = 56x56, 12544 = 112x112,
     * 51529 = 227x227), powers of two and their neighbours, the largest divisor */
    const uint32_t fixed[] = {1,    2,     3,     7,     10,    49,      64,         96,
                              196,  256,   784,   1000,  2048,  3136,    12544,      50176,
                              51529, 65535, 65536, 65537, 1u << 30, (1u << 30) + 1, FAST_DIVIDE_MAX};
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) check_divisor(fixed[i], &rng);
    for (int i = 0; i < 3000; i++) {
        uint32_t d = next_random(&rng) >> (next_random(&rng) % 31); /* every magnitude */
        d &= FAST_DIVIDE_MAX;
        check_divisor(d ? d : 1, &rng);
    }
}

Test(fast_divide, every_numerator_for_small_divisors)
{
    for (uint32_t d = 1; d <= 64; d++) {
        const FastDivide f = fast_divide_by(d);
        for (uint32_t n = 0; n < (1u << 16); n++) cr_assert_eq(fast_divide(f, n), n / d, "%u / %u", n, d);
    }
}

Test(fast_divide, channel_of_an_index)
{
    /* ResNet-50's first BN at batch 256 (64 x 112 x 112), a 7x7 plane, and a tensor past 2^31
     * values, which takes the 64-bit division */
    const struct {
        uint64_t n, c, hw;
    } shapes[] = {{256, 64, 12544}, {256, 2048, 49}, {3, 5, 7}, {1024, 64, 50176}};
    uint64_t rng = 12345;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const uint64_t count = shapes[s].n * shapes[s].c * shapes[s].hw;
        const ChannelOfIndex m = channel_of_index(count, shapes[s].c, shapes[s].hw);
        cr_assert_eq(m.narrow, count <= FAST_DIVIDE_MAX, "shape %zu: narrow %d for %llu values", s, m.narrow,
                     (unsigned long long)count);
        for (int i = 0; i < 20000; i++) {
            const uint64_t k = i < 4 ? (i < 2 ? (uint64_t)i : count - 1 - (uint64_t)(i - 2))
                                     : (((uint64_t)next_random(&rng) << 32) | next_random(&rng)) % count;
            const int want = (int)((k / shapes[s].hw) % shapes[s].c);
            cr_assert_eq(channel_at(m, k), want, "shape %zu, index %llu: got %d, want %d", s, (unsigned long long)k,
                         channel_at(m, k), want);
        }
    }
}
