/* Fair tuning, checked: a group's best cell whose tuned value is the smallest or largest of its
 * grid may have its true optimum outside the grid (Nado et al., Shallue et al.: a comparison of
 * best runs is only as fair as the grids bracket the optima). */
#ifndef BB_EDGES_H
#define BB_EDGES_H
#include <stddef.h>

#include "cells.h"

typedef enum { EDGE_NONE, EDGE_BOTTOM, EDGE_TOP } EdgeSide;

/* Where `best` sits on the tuned axis `axis` among the values that axis takes in its group
 * (every cell of the group counts, diverged ones too: a diverged top LR brackets the best).
 * EDGE_NONE when inside, when the axis has fewer than two values in the group, or when its
 * values are not numbers (no order to be at the end of). */
EdgeSide edges_side(const CellSet *set, const Cell *best, const char *axis);

/* "lr_mult at top, warmup at bottom" for every tuned axis of `best` at an edge, "" when none;
 * returns how many. */
int edges_describe(const CellSet *set, const Cell *best, char *out, size_t len);

/* The group's key values of a cell: "opt = sgd, batch = 1280" ("" when no axis groups). */
void edges_group_text(const CellSet *set, const Cell *c, char *out, size_t len);

#endif
