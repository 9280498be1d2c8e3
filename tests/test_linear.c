/* The fully connected layer, whose products the CPU backend splits across threads itself in
 * blocks of output units (and of inputs for dx): against plain loops in double, adding onto
 * gradients that already hold values, on 1, 2 and 3 threads, and the same bits when a run is
 * repeated on the same threads. Shapes cover one block (no parallel region), blocks that end
 * inside a cache line, and more blocks than threads. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/backend.h"
#include "tensor_access.h"

typedef struct {
    int n, in, out;
} LinearCase;

static const LinearCase CASES[] = {{3, 5, 10}, {7, 70, 130}, {33, 300, 64}, {2, 1000, 97}};

typedef struct {
    real *y, *dx, *dw, *db;
} LinearResult;

static real *filled(size_t count, unsigned seed, double scale)
{
    real *v = malloc(count * sizeof *v);
    cr_assert(v);
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (real)(scale * ((double)(seed >> 8 & 0xffff) / 32768.0 - 1));
    }
    return v;
}

static Tensor uploaded(Backend *bk, const real *host, size_t count)
{
    Tensor t;
    tensor_alloc(&t, bk, 1, 1, 1, (int)count);
    tensor_upload(&t, host);
    return t;
}

static real *downloaded(Tensor *t)
{
    real *host = malloc(tensor_count(t) * sizeof *host);
    cr_assert(host);
    tensor_download(t, host);
    tensor_free(t);
    return host;
}

/* Forward and backward on `threads` threads; dx, dw and db start from the given values. */
static LinearResult run_linear(const LinearCase *c, int threads, const real *x, const real *w, const real *b,
                               const real *dy, const real *dx0, const real *dw0, const real *db0)
{
    Backend *bk = backend_create(threads);
    const size_t nx = (size_t)c->n * c->in, nw = (size_t)c->out * c->in, ny = (size_t)c->n * c->out;
    Tensor tx = uploaded(bk, x, nx), tw = uploaded(bk, w, nw), tb = uploaded(bk, b, (size_t)c->out);
    Tensor tdy = uploaded(bk, dy, ny), tdx = uploaded(bk, dx0, nx), tdw = uploaded(bk, dw0, nw);
    Tensor tdb = uploaded(bk, db0, (size_t)c->out), ty = uploaded(bk, dy, ny); /* y overwritten */
    bk_linear_forward(bk, c->n, c->in, c->out, tx.data, tw.data, tb.data, ty.data);
    bk_linear_backward(bk, c->n, c->in, c->out, tx.data, tw.data, tdy.data, tdx.data, tdw.data, tdb.data);
    LinearResult r = {downloaded(&ty), downloaded(&tdx), downloaded(&tdw), downloaded(&tdb)};
    tensor_free(&tx);
    tensor_free(&tw);
    tensor_free(&tb);
    tensor_free(&tdy);
    backend_destroy(bk);
    return r;
}

static void expect_close(const char *what, const LinearCase *c, size_t i, real got, double want)
{
    cr_expect(fabs((double)got - want) <= 1e-5 * (1 + fabs(want)), "%dx%dx%d %s[%zu] = %.8g, plain loops %.8g", c->n,
              c->in, c->out, what, i, (double)got, want);
}

static void expect_plain_loops(const LinearCase *c, const LinearResult *r, const real *x, const real *w,
                               const real *b, const real *dy, const real *dx0, const real *dw0, const real *db0)
{
    for (int i = 0; i < c->n; i++)
        for (int o = 0; o < c->out; o++) {
            double acc = b[o];
            for (int k = 0; k < c->in; k++) acc += (double)x[i * c->in + k] * w[o * c->in + k];
            expect_close("y", c, (size_t)i * c->out + o, r->y[i * c->out + o], acc);
        }
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < c->in; k++) {
            double acc = dx0[i * c->in + k];
            for (int o = 0; o < c->out; o++) acc += (double)dy[i * c->out + o] * w[o * c->in + k];
            expect_close("dx", c, (size_t)i * c->in + k, r->dx[i * c->in + k], acc);
        }
    for (int o = 0; o < c->out; o++) {
        double bias = db0[o];
        for (int i = 0; i < c->n; i++) bias += dy[i * c->out + o];
        expect_close("db", c, (size_t)o, r->db[o], bias);
        for (int k = 0; k < c->in; k++) {
            double acc = dw0[o * c->in + k];
            for (int i = 0; i < c->n; i++) acc += (double)dy[i * c->out + o] * x[i * c->in + k];
            expect_close("dw", c, (size_t)o * c->in + k, r->dw[o * c->in + k], acc);
        }
    }
}

static void expect_same_bits(const LinearCase *c, const LinearResult *a, const LinearResult *b, int threads)
{
    const size_t nx = (size_t)c->n * c->in, nw = (size_t)c->out * c->in, ny = (size_t)c->n * c->out;
    cr_expect(memcmp(a->y, b->y, ny * sizeof(real)) == 0, "%dx%dx%d y differs run to run on %d threads", c->n, c->in, c->out,
              threads);
    cr_expect(memcmp(a->dx, b->dx, nx * sizeof(real)) == 0, "%dx%dx%d dx differs run to run on %d threads", c->n, c->in,
              c->out, threads);
    cr_expect(memcmp(a->dw, b->dw, nw * sizeof(real)) == 0, "%dx%dx%d dw differs run to run on %d threads", c->n, c->in,
              c->out, threads);
    cr_expect(memcmp(a->db, b->db, (size_t)c->out * sizeof(real)) == 0, "%dx%dx%d db differs run to run on %d threads", c->n,
              c->in, c->out, threads);
}

static void free_result(LinearResult *r)
{
    free(r->y);
    free(r->dx);
    free(r->dw);
    free(r->db);
}

Test(linear, split_matches_plain_loops_and_repeats)
{
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const LinearCase *c = &CASES[k];
        const size_t nx = (size_t)c->n * c->in, nw = (size_t)c->out * c->in, ny = (size_t)c->n * c->out;
        real *x = filled(nx, 1, 1), *w = filled(nw, 2, 0.1), *b = filled((size_t)c->out, 3, 0.5);
        real *dy = filled(ny, 4, 1), *dx0 = filled(nx, 5, 0.3), *dw0 = filled(nw, 6, 0.3);
        real *db0 = filled((size_t)c->out, 7, 0.3);
        for (int threads = 1; threads <= 3; threads++) {
            LinearResult first = run_linear(c, threads, x, w, b, dy, dx0, dw0, db0);
            LinearResult again = run_linear(c, threads, x, w, b, dy, dx0, dw0, db0);
            expect_plain_loops(c, &first, x, w, b, dy, dx0, dw0, db0);
            expect_same_bits(c, &first, &again, threads);
            free_result(&first);
            free_result(&again);
        }
        free(x), free(w), free(b), free(dy), free(dx0), free(dw0), free(db0);
    }
}
