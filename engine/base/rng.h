/* A small seeded generator (PCG32) so that initialization, shuffling, dropout and
 * augmentation are reproducible from one seed, with no hidden global state. */
#ifndef BB_RNG_H
#define BB_RNG_H
#include <stdint.h>

typedef struct {
    uint64_t state;
    uint64_t inc;
} Rng;

void rng_seed(Rng *r, uint64_t seed, uint64_t stream);
uint32_t rng_u32(Rng *r);
double rng_uniform(Rng *r);              /* [0, 1) */
uint32_t rng_below(Rng *r, uint32_t n);  /* [0, n) without modulo bias */
double rng_normal(Rng *r);               /* N(0, 1) */
void rng_shuffle(Rng *r, uint32_t *items, uint32_t n);

#endif
