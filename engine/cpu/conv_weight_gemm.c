/* The weight gradient of a direct-path 3x3 layer whose planes are small and odd and whose output
 * channels are many (the CIFAR AlexNets' conv2-conv5: 15x15 and 7x7 planes, 64-96 channels) as
 * one gemm per chunk of images: the chunk's column matrices side by side
 * (rows images x pixels long, from the direct path's shifted copies) and its dy gathered the
 * same way, dw_chunk = dy col^T.
 * There the direct kernel ran at half its forward rate (rows of 7 or 15 floats put most of its
 * loads across cache lines, and planes of 49 pixels waste a quarter of their vectors), while
 * OpenBLAS's gemm with 64 or more rows and sums thousands long runs near its rate.
 *
 * The batch is cut into WEIGHT_GEMM_CHUNKS chunks whatever the threads (fewer images a chunk
 * where its columns would pass WEIGHT_GEMM_COL_MAX values); each chunk's gradient lands in its
 * own partial and the partials are added in chunk order, so results do not depend on the
 * number of threads. The direct kernel stays where this does not apply, and where a batch's
 * partials do not fit the reservation. */
#include <string.h>

#include "cpu.h"
#include "guard.h"

enum {
    WEIGHT_GEMM_CHUNKS = 8,         /* chunks a batch: work for up to 8 threads */
    WEIGHT_GEMM_COL_MAX = 1 << 21,  /* a chunk's column matrix: 8 MiB of floats at most */
    WEIGHT_GEMM_MIN_OUTPUTS = 64,   /* gemm rows: below 64, OpenBLAS fell below the kernel */
    WEIGHT_GEMM_MAX_PIXELS = 256,   /* planes of 16x16 and less (larger ones were not tried) */
};

static size_t pixels(const ConvShape *s) { return (size_t)s->out_h * s->out_w; }
static size_t col_rows(const ConvShape *s) { return (size_t)s->in_c * s->k_h * s->k_w; }

/* 3x3 filters only (simple-cnn's 5x5 conv2 on 14x14 ran 6% slower this way: 25 rows a
 * channel to copy), on rows that are not whole multiples of 8 (on 8x8 planes the kernel's loads
 * stay within cache lines and it beat the copies and the gemm). */
int weight_gemm_applies(const ConvShape *s)
{
    return s->groups == 1 && s->stride == 1 && s->k_h == 3 && s->out_c >= WEIGHT_GEMM_MIN_OUTPUTS &&
           pixels(s) <= WEIGHT_GEMM_MAX_PIXELS && s->out_w % 8 != 0;
}

/* Images a chunk: grows with the batch, so a reservation for a batch holds any smaller one. */
static int chunk_images(const ConvShape *s, int n)
{
    size_t per = ((size_t)n + WEIGHT_GEMM_CHUNKS - 1) / WEIGHT_GEMM_CHUNKS;
    const size_t most = WEIGHT_GEMM_COL_MAX / (col_rows(s) * pixels(s));
    if (per > most) per = most;
    return per < 1 ? 1 : (int)per;
}

static int chunk_count(const ConvShape *s, int n)
{
    const int per = chunk_images(s, n);
    return (n + per - 1) / per;
}

/* Per thread: a chunk's column matrix and its dy; shared: the chunks' partial gradients. */
Workspace weight_gemm_workspace(const ConvShape *s, size_t weight_elems, int batch)
{
    const size_t columns = (size_t)chunk_images(s, batch) * pixels(s);
    return (Workspace){(col_rows(s) + (size_t)s->out_c) * columns + direct_columns_scratch(s),
                       (size_t)chunk_count(s, batch) * weight_elems};
}

/* dw_c = chunk c's weight gradient, ws the thread's scratch. */
static void chunk_gradient(const ConvShape *s, int n, int c, const real *x, const real *dy, real *ws, real *dw_c)
{
    const int per = chunk_images(s, n), first = c * per, images = n - first < per ? n - first : per;
    const size_t px = pixels(s), ld = (size_t)images * px, rows = col_rows(s);
    const size_t in_item = (size_t)s->in_c * s->in_h * s->in_w, out_item = (size_t)s->out_c * px;
    real *col = ws, *dyc = ws + rows * ld, *scratch = dyc + (size_t)s->out_c * ld;
    for (int j = 0; j < images; j++) {
        direct_columns(s, x + (first + j) * in_item, scratch, col + j * px, ld);
        for (int o = 0; o < s->out_c; o++)
            memcpy(dyc + o * ld + j * px, dy + (first + j) * out_item + o * px, sizeof(real) * px);
    }
    gemm(CblasNoTrans, CblasTrans, s->out_c, (int)rows, (int)ld, 1, dyc, (int)ld, col, (int)ld, 0, dw_c, (int)rows);
}

/* dw += the weight gradient; 0 (nothing done) where the reservation has no room for the
 * batch's partials. */
int weight_gemm_gradient(Backend *bk, const ConvShape *s, int n, const real *x, const real *dy, real *dw)
{
    BK_GUARD(bk);
    const size_t w_elems = (size_t)s->out_c * col_rows(s);
    const int chunks = chunk_count(s, n);
    if (n <= 0 || (size_t)chunks * w_elems > cpu_shared_elems(bk)) return 0;
    real *partials = cpu_shared_workspace(bk);
    CPU_FOR_T(bk, t, int, c, chunks,
              { chunk_gradient(s, n, c, x, dy, cpu_workspace(bk, t), partials + (size_t)c * w_elems); });
    conv_add_partials(bk, partials, chunks, w_elems, dw);
    return 1;
}
