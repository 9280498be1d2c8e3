/* conv_winograd.c's two forms, F(2x2, 3x3) and F(2x2, 5x5) (Lavin & Gray, arXiv 1509.09308):
 * a 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A over an n x n input tile, n = taps + 1, its
 * n^2 transformed values indexed xi = n * row + column. The input transforms work on a row of
 * tiles at a time from a channel's padded plane held with its columns split into even and odd,
 * so that every loop over the tiles reads and writes with unit stride and vectorizes: tile
 * (th, k) covers plane rows 2 th .. 2 th + n - 1 and columns even[k], odd[k], even[k + 1], ...
 * A form's functions live in winograd_tiles_3x3.c and winograd_tiles_5x5.c. Internal to
 * engine/cpu. */
#ifndef BB_CPU_WINOGRAD_TILES_H
#define BB_CPU_WINOGRAD_TILES_H
#include <stddef.h>

#include "real.h"

/* The adjoint of the input transform adds a tile's columns 2 and 3 (and 4 and 5) into the next
 * tile's (and the one after's) even and odd columns: in planes of their own, spills 1 and 2,
 * since the tiles of one vector would otherwise add into each other's. */
enum { WINO_MAX_SPILLS = 2 };

typedef struct {
    size_t len;                                 /* tiles_w + spills: a padded row, deinterleaved */
    int rows;                                   /* 2 tiles_h + 2 spills: the padded plane's rows */
    int spills;                                 /* n / 2 - 1 */
    real *even[1 + WINO_MAX_SPILLS], *odd[1 + WINO_MAX_SPILLS]; /* [0]: the plane; [s]: spill s */
} WinoPlane;

typedef struct {
    int taps, side, xis; /* r, n = r + 1, n^2 */
    /* u[xi] = (G g G^T)[xi] of an r x r filter g (row by row) */
    void (*filter)(const real *g, real *u);
    /* g += G^T du G: the filter transform's adjoint */
    void (*filter_adjoint)(const real *du, real *g);
    /* v[xi stride + k] = (B^T d B)[xi] of tile (th, k), k < tiles_w */
    void (*input_rows)(int tiles_w, const WinoPlane *p, int th, real *v, size_t stride);
    /* the plane rows under tile row th += B dV B^T, columns past a tile's first two in the spills */
    void (*input_rows_adjoint)(int tiles_w, const real *d, size_t stride, int th, const WinoPlane *p);
    /* output rows y0, y1 (2 tiles_w each) = A^T m A + bias of a tile row */
    void (*output_rows)(int tiles_w, const real *m, size_t stride, real bias, real *y0, real *y1);
    /* m[xi stride + k] = (A dy A^T)[xi] of a tile row, from dy's two rows g0, g1 (2 tiles_w each) */
    void (*output_rows_adjoint)(int tiles_w, const real *g0, const real *g1, real *m, size_t stride);
} WinoForm;

extern const WinoForm wino_tiles_3x3, wino_tiles_5x5;

#endif
