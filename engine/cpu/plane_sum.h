/* Sums of a plane of floats in double over eight interleaved lanes, added up in a fixed order
 * at the end: a single running sum is a chain of dependent adds that cannot vectorize (it
 * made batch normalization 15% of a resnet8 step, and a convolution's bias gradient 4% of the
 * CIFAR AlexNet-BN's), and double keeps a million-element sum exact to float. The result does
 * not depend on the thread count: callers add plane sums in a fixed order. */
#ifndef BB_CPU_PLANE_SUM_H
#define BB_CPU_PLANE_SUM_H
#include <stddef.h>

#include "../real.h"

enum { SUM_LANES = 8 };

static inline double lanes_total(const double lane[SUM_LANES])
{
    double t = 0;
    for (int k = 0; k < SUM_LANES; k++) t += lane[k];
    return t;
}

static inline double plane_sum(const real *p, size_t count)
{
    double lane[SUM_LANES] = {0};
    size_t j = 0;
    for (; j + SUM_LANES <= count; j += SUM_LANES)
        for (int k = 0; k < SUM_LANES; k++) lane[k] += p[j + k];
    for (; j < count; j++) lane[j % SUM_LANES] += p[j];
    return lanes_total(lane);
}

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
