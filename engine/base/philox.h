/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011),
 * the counter-based generator of cuRAND and of PyTorch's CUDA dropout: four 32-bit words
 * that are a pure function of a 128-bit counter and a 64-bit key, so any element of a
 * random stream can be computed alone, on any device and thread, in any order.
 * Header-only so every backend computes it the same way. */
#ifndef BB_PHILOX_H
#define BB_PHILOX_H
#include <stdint.h>

#include "../host_device.h"

typedef struct {
    uint32_t v[4];
} Philox4x32;

static inline BB_HD Philox4x32 philox4x32_10(Philox4x32 ctr, uint32_t key0, uint32_t key1)
{
    for (int round = 0; round < 10; round++) {
        if (round) {
            key0 += 0x9E3779B9u; /* the Weyl sequence bumps the key between rounds */
            key1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * ctr.v[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * ctr.v[2];
        Philox4x32 next = {{(uint32_t)(p1 >> 32) ^ ctr.v[1] ^ key0, (uint32_t)p1,
                            (uint32_t)(p0 >> 32) ^ ctr.v[3] ^ key1, (uint32_t)p0}};
        ctr = next;
    }
    return ctr;
}

/* A uniform in [0, 1) with 24 bits, exact in float and double. */
static inline BB_HD double philox_uniform24(uint32_t word) { return (double)(word >> 8) * (1.0 / 16777216.0); }

/* The dropout stream: element e of layer `layer` at training step `step` under `seed`.
 * Counter (e/4 low, e/4 high, layer, step low), key (seed low, seed high ^ step high);
 * the element takes word e%4 of its block. */
static inline BB_HD Philox4x32 philox_dropout_block(uint64_t seed, uint64_t step, uint32_t layer, uint64_t block)
{
    Philox4x32 ctr = {{(uint32_t)block, (uint32_t)(block >> 32), layer, (uint32_t)step}};
    return philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32) ^ (uint32_t)(step >> 32));
}

#endif
