#include "rng.h"

#include <math.h>

void rng_seed(Rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0;
    r->inc = (stream << 1u) | 1u;
    rng_u32(r);
    r->state += seed;
    rng_u32(r);
}

uint32_t rng_u32(Rng *r)
{
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

double rng_uniform(Rng *r)
{
    uint64_t hi = rng_u32(r) >> 5, lo = rng_u32(r) >> 6; /* 53 random bits */
    return ((double)hi * 67108864.0 + (double)lo) / 9007199254740992.0;
}

uint32_t rng_below(Rng *r, uint32_t n)
{
    uint32_t threshold = (uint32_t)(-n) % n;
    for (;;) {
        uint32_t x = rng_u32(r);
        if (x >= threshold) return x % n;
    }
}

double rng_normal(Rng *r)
{
    /* Box-Muller; the second value is dropped so the stream stays stateless. */
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void rng_shuffle(Rng *r, uint32_t *items, uint32_t n)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = rng_below(r, i);
        uint32_t t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
}
