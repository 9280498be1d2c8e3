/* Single-seed cells that a seed could flip. Where an experiment is too costly to repeat on a
 * CPU, each cell is one seed; the demo experiment (run with several seeds) measures how far
 * seeds alone move a result, and a cell is fragile when a neighbour along a tuned axis (the
 * next LR up or down, all else equal) differs from it by more than that, or ended otherwise
 * (collapsed or diverged where it did not): it sits on a slope or at an edge of stability. */
#ifndef BB_FRAGILE_H
#define BB_FRAGILE_H
#include <stdbool.h>

#include "cells.h"

/* The experiment whose seeds measure the spread: the demo (make demo), three seeds a cell. */
#define SEED_SPREAD_EXPERIMENT "lars-vs-linear-scaling"

/* The largest range (max - min) of one cell's complete, not collapsed seeds over the cells
 * that have two or more; NAN when none has. */
double fragile_seed_spread(const CellSet *set);
/* Whether cell c is fragile given the spread (see above; spread <= 0 or NAN: unknown, only
 * neighbours that ended otherwise count). */
bool fragile_cell(const CellSet *set, const Cell *c, double spread);

#endif
