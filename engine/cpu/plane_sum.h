/* Sums over a plane: in blocks of SUM_BLOCK values, each block in SUM_LANES interleaved lanes of
 * `real` added up in a fixed order, the blocks' totals added in double. A single running sum is
 * a chain of dependent adds that cannot vectorize (it made batch normalization 15% of a resnet8
 * step, and a convolution's bias gradient 4% of the CIFAR AlexNet-BN's); lanes of double cost
 * a conversion for every value and ran at a third of the rate of float lanes (9 against 24
 * values a nanosecond in cache, on the Intel Xeon), which made batch norm's sums a third of
 * its time; the blocks keep each float lane to 32 additions, and double keeps a
 * million-element sum exact to float. The result does not depend on the thread count: callers
 * add plane sums in a fixed order. */
#ifndef BB_CPU_PLANE_SUM_H
#define BB_CPU_PLANE_SUM_H
#include <stddef.h>

#include "../real.h"

enum { SUM_LANES = 32, SUM_BLOCK = 1024 };

/* What a sum adds for value j: p[j]; (p[j] - mu)^2; or p[j] * (q[j] - mu). */
typedef enum { TERM_VALUE, TERM_SQUARED_DEVIATION, TERM_PRODUCT_WITH_DEVIATION } SumTerm;

static inline real sum_term(SumTerm term, const real *p, const real *q, real mu, size_t j)
{
    if (term == TERM_VALUE) return p[j];
    if (term == TERM_SQUARED_DEVIATION) return (p[j] - mu) * (p[j] - mu);
    return p[j] * (q[j] - mu);
}

/* The sum of `term` over values 0 .. count - 1. `term` is a constant wherever this is inlined,
 * and the branches of sum_term fold away. */
static inline double plane_term_sum(SumTerm term, const real *p, const real *q, real mu, size_t count)
{
    double total = 0;
    for (size_t b = 0; b < count; b += SUM_BLOCK) {
        const size_t end = count - b < SUM_BLOCK ? count : b + SUM_BLOCK;
        real lane[SUM_LANES] = {0};
        size_t j = b;
        for (; j + SUM_LANES <= end; j += SUM_LANES)
            for (int k = 0; k < SUM_LANES; k++) lane[k] += sum_term(term, p, q, mu, j + k);
        for (; j < end; j++) lane[j % SUM_LANES] += sum_term(term, p, q, mu, j);
        /* lanes halved in a fixed tree: in line, where a chain of 32 adds cost more than
         * ResNet's 8x8 planes themselves */
        for (int half = SUM_LANES / 2; half > 0; half /= 2)
            for (int k = 0; k < half; k++) lane[k] += lane[k + half];
        total += lane[0];
    }
    return total;
}

static inline double plane_sum(const real *p, size_t count) { return plane_term_sum(TERM_VALUE, p, NULL, 0, count); }

/* total[c - from] for from <= c < to: the sum over images i < n, in image order, of part[i][c] (n rows
 * of c_count plane sums), the per-channel total that does not depend on which thread summed
 * which image's planes. Read row by row, in memory order: walking one channel down the images
 * fetched each line of part with no prefetch to hide it, and the lines the other core wrote
 * cost most. */
static inline void image_order_totals(const double *part, int n, size_t c_count, size_t from, size_t to,
                                      double *total)
{
    for (size_t c = from; c < to; c++) total[c - from] = 0;
    for (int i = 0; i < n; i++) {
        const double *row = part + (size_t)i * c_count;
        for (size_t c = from; c < to; c++) total[c - from] += row[c];
    }
}

#endif
