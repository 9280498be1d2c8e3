/* CPU backend lifetime and workspace. OpenBLAS (OpenMP build) runs single-threaded
 * when called inside our parallel regions and with `threads` threads outside them,
 * so every operation is threaded at exactly one level. */
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "cpu.h"

Backend *backend_create(int threads)
{
    if (threads < 1) threads = 1;
    Backend *bk = xcalloc(1, sizeof *bk, "backend");
    bk->threads = threads;
    bk->ws = xcalloc((size_t)threads, sizeof *bk->ws, "backend workspace table");
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    return bk;
}

void backend_destroy(Backend *bk)
{
    if (!bk) return;
    for (int t = 0; t < bk->threads; t++) free(bk->ws[t]);
    free(bk->ws);
    free(bk);
}

int backend_threads(const Backend *bk) { return bk->threads; }

const char *backend_name(const Backend *bk)
{
    (void)bk;
#ifdef BB_GUARDED
    return "cpu-guarded";
#else
    return "cpu";
#endif
}

void backend_reserve(Backend *bk, size_t elems_per_thread)
{
    if (elems_per_thread <= bk->ws_elems) return;
    for (int t = 0; t < bk->threads; t++) {
        free(bk->ws[t]);
        size_t bytes = (elems_per_thread * sizeof(real) + 63) & ~(size_t)63;
        bk->ws[t] = aligned_alloc(64, bytes);
        if (!bk->ws[t]) {
            fprintf(stderr, "bigbatch: out of memory reserving %zu bytes of workspace\n", bytes);
            exit(3);
        }
        memset(bk->ws[t], 0, bytes);
    }
    bk->ws_elems = elems_per_thread;
}
