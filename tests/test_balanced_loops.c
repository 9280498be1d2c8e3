/* The CPU backend's balanced loops (engine/cpu/threads.h): every iteration runs exactly once,
 * a thread that stops hands the rest of its share over, and others take a share from its far
 * end. Then what the balance allows (engine/cpu/conv_im2col.c, conv_direct.c): the convolution paths
 * whose weight gradient is summed in an order fixed by the batch alone give the same bits on 1,
 * 2 and 3 threads; and the im2col path keeps per-image partials only where its reservation
 * holds them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/cpu/conv_im2col.h"
#include "../engine/cpu/cpu.h"
#include "dev_array.h"

enum { ITEMS = 96, GRAIN = 3 }; /* 96 items on 2 threads: shares of 48, grains of 48 / 16 */

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Waits (at most 10 s, so that a loop that never balances fails rather than hangs) until
 * *done reaches `count`. */
static void wait_for(const int *done, int count)
{
    const double give_up = seconds_now() + 10;
    while (__atomic_load_n(done, __ATOMIC_ACQUIRE) < count && seconds_now() < give_up) {
    }
}

/* ITEMS iterations on 2 threads in which thread `stuck`, on the first item it takes, stays
 * until all but one grain's items are done: a core that stops, as a shared machine's do, for
 * as long as the loop lasts. who[i] is the thread that ran item i, counts[i] how often it ran. */
static void run_with_one_thread_stuck(int stuck, int *who, int *counts)
{
    Backend *bk = backend_create(2);
    int done = 0, waited = 0;
    memset(counts, 0, sizeof(int) * ITEMS);
    CPU_FOR_T(bk, t, int, i, ITEMS, {
        if (t == stuck && !waited) {
            waited = 1;
            wait_for(&done, ITEMS - GRAIN);
        }
        who[i] = t;
        __atomic_fetch_add(&counts[i], 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
    });
    backend_destroy(bk);
}

/* What thread `stuck` ran: at most the one grain it took first, and that one from the front of
 * its own share (it may have started late, when the other had taken everything already). */
static void check_stuck_thread(int stuck, const int *who, const int *counts)
{
    int first = -1, ran = 0;
    for (int i = 0; i < ITEMS; i++) {
        cr_assert_eq(counts[i], 1, "item %d ran %d times", i, counts[i]);
        if (who[i] != stuck) continue;
        if (first < 0) first = i;
        ran++;
    }
    cr_assert_leq(ran, GRAIN, "the stuck thread ran %d items, more than the grain it held", ran);
    if (ran) {
        cr_assert_eq(first, stuck * ITEMS / 2, "the stuck thread's first item was %d, not its share's front", first);
        for (int i = first; i < first + ran; i++) cr_assert_eq(who[i], stuck, "item %d", i);
    }
}

Test(balanced_loops, a_stuck_thread_hands_its_share_over)
{
    int who[ITEMS], counts[ITEMS];
    run_with_one_thread_stuck(1, who, counts);
    check_stuck_thread(1, who, counts);
}

Test(balanced_loops, shares_are_stolen_from_the_back)
{
    int who[ITEMS], counts[ITEMS];
    run_with_one_thread_stuck(0, who, counts);
    check_stuck_thread(0, who, counts);
    /* thread 1 ran its own share and thread 0's from the far end: only a front of share 0
     * (the grain thread 0 held) is thread 0's */
    for (int i = 1; i < ITEMS; i++)
        cr_assert(!(who[i - 1] == 1 && who[i] == 0), "item %d ran on thread 0 after item %d on thread 1", i, i - 1);
}

Test(balanced_loops, empty_and_tiny_loops)
{
    Backend *bk = backend_create(3);
    int counts[2] = {0, 0};
    CPU_FOR(bk, int, i, 0, { counts[0]++; });
    cr_assert_eq(counts[0], 0);
    CPU_FOR(bk, int, i, 2, { __atomic_fetch_add(&counts[i], 1, __ATOMIC_RELAXED); });
    cr_assert(counts[0] == 1 && counts[1] == 1, "2 items on 3 threads ran %d, %d times", counts[0], counts[1]);
    backend_destroy(bk);
}

typedef void (*Backward)(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                         real *dx, real *dw);

/* dx and dw (zeros before) of one backward call on `threads` threads, into host memory; every
 * tensor goes through the backend's own buffers. */
static void backward_on(int threads, Backward backward, Workspace need, const ConvShape *s, int n,
                        const real *x, const real *w, const real *dy, real **dx, real **dw)
{
    const size_t nx = (size_t)n * s->in_c * s->in_h * s->in_w, ny = (size_t)n * s->out_c * s->out_h * s->out_w;
    const size_t nw = (size_t)s->out_c * (s->in_c / s->groups) * s->k_h * s->k_w;
    Backend *bk = backend_create(threads);
    backend_reserve(bk, need);
    DevArray x_ = dev_array(bk, nx, x), w_ = dev_array(bk, nw, w), dy_ = dev_array(bk, ny, dy);
    DevArray dx_ = dev_array(bk, nx, NULL), dw_ = dev_array(bk, nw, NULL);
    backward(bk, s, n, x_.dev, w_.dev, dy_.dev, dx_.dev, dw_.dev);
    *dx = download(&dx_);
    *dw = download(&dw_);
    DevArray *all[] = {&x_, &w_, &dy_, &dx_, &dw_};
    for (int k = 0; k < 5; k++) bk_buffer_free(all[k]->buf);
    backend_destroy(bk);
}

static void same_bits_on_1_2_3_threads(const char *path, Backward backward, Workspace need, ConvShape s, int n)
{
    const size_t nx = (size_t)n * s.in_c * s.in_h * s.in_w, ny = (size_t)n * s.out_c * s.out_h * s.out_w;
    const size_t nw = (size_t)s.out_c * (s.in_c / s.groups) * s.k_h * s.k_w;
    unsigned seed = 7u;
    real *x = random_values(nx, &seed), *w = random_values(nw, &seed), *dy = random_values(ny, &seed);
    real *dx[3], *dw[3];
    for (int k = 0; k < 3; k++) backward_on(k + 1, backward, need, &s, n, x, w, dy, &dx[k], &dw[k]);
    for (int k = 1; k < 3; k++) {
        cr_assert(memcmp(dw[0], dw[k], nw * sizeof(real)) == 0, "%s: dw on %d threads differs from 1 thread's",
                  path, k + 1);
        cr_assert(memcmp(dx[0], dx[k], nx * sizeof(real)) == 0, "%s: dx on %d threads differs from 1 thread's",
                  path, k + 1);
    }
    for (int k = 0; k < 3; k++) {
        free(dx[k]);
        free(dw[k]);
    }
    free(x);
    free(w);
    free(dy);
}

static void direct_backward_adding(Backend *bk, const ConvShape *s, int n, const real *x, const real *w, const real *dy,
                                   real *dx, real *dw)
{
    direct_conv_backward(bk, s, n, x, w, dy, dx, true, dw);
}

Test(balanced_loops, direct_weight_gradient_same_bits_on_any_threads)
{
    /* 16 -> 24 channels, 3x3 on 10x10 (planes not whole vectors: dy padded) and 5x5 on 8x8,
     * both in image chunks; a first layer of 3 channels, whose tasks split the output channels
     * too; 64 -> 56 on 8x8, too many weights for image chunks (its input channels split); by
     * outer products: 16 -> 64 on 7x7, 64 -> 64 on 8x8 (its input channels split on 3 threads) */
    const ConvShape a = {16, 10, 10, 24, 10, 10, 3, 3, 1, 1, 1}, b = {16, 8, 8, 16, 8, 8, 5, 5, 1, 2, 1};
    const ConvShape c = {3, 12, 12, 32, 12, 12, 5, 5, 1, 2, 1};
    const ConvShape d = {16, 7, 7, 64, 7, 7, 3, 3, 1, 1, 1};
    const ConvShape e = {16, 10, 10, 24, 5, 5, 3, 3, 2, 1, 1}; /* stride 2 */
    const ConvShape f = {64, 8, 8, 56, 8, 8, 3, 3, 1, 1, 1}, g = {64, 8, 8, 64, 8, 8, 3, 3, 1, 1, 1};
    cr_assert(direct_applies(&a) && direct_applies(&b) && direct_applies(&c) && direct_applies(&d));
    cr_assert(direct_outer_gradient_applies(&d) && direct_outer_gradient_applies(&g));
    cr_assert(!direct_outer_gradient_applies(&a) && !direct_outer_gradient_applies(&f));
    same_bits_on_1_2_3_threads("direct 3x3", direct_backward_adding, direct_workspace(&a, 24 * 16 * 9, 13), a, 13);
    same_bits_on_1_2_3_threads("direct 5x5", direct_backward_adding, direct_workspace(&b, 16 * 16 * 25, 13), b, 13);
    same_bits_on_1_2_3_threads("direct first layer", direct_backward_adding, direct_workspace(&c, 32 * 3 * 25, 13), c,
                               13);
    same_bits_on_1_2_3_threads("direct 7x7, weight gradient by outer products", direct_backward_adding,
                               direct_workspace(&d, 64 * 16 * 9, 13), d, 13);
    cr_assert(direct_applies(&e));
    same_bits_on_1_2_3_threads("direct stride 2", direct_backward_adding, direct_workspace(&e, 24 * 16 * 9, 13), e, 13);
    cr_assert(direct_applies(&f) && direct_applies(&g));
    same_bits_on_1_2_3_threads("direct, input channels split", direct_backward_adding,
                               direct_workspace(&f, 56 * 64 * 9, 13), f, 13);
    same_bits_on_1_2_3_threads("direct 8x8, outer products, input channels split on 3 threads",
                               direct_backward_adding, direct_workspace(&g, 64 * 64 * 9, 13), g, 13);
    const ConvShape h = {16, 10, 10, 32, 5, 5, 1, 1, 2, 0, 1}; /* a 1x1 stride-2 shortcut */
    cr_assert(direct_applies(&h) && direct_outer_gradient_applies(&h));
    same_bits_on_1_2_3_threads("direct 1x1 stride-2 shortcut, input channels split on 3 threads",
                               direct_backward_adding, direct_workspace(&h, 32 * 16, 13), h, 13);
}

Test(balanced_loops, im2col_weight_gradient_same_bits_on_any_threads)
{
    /* a first layer (3 channels, stride 2) and a 1x1 one: both keep per-image partials */
    const ConvShape a = {3, 15, 15, 8, 7, 7, 3, 3, 2, 0, 1}, b = {8, 6, 6, 12, 6, 6, 1, 1, 1, 0, 1};
    same_bits_on_1_2_3_threads("im2col 3x3 stride 2", conv_im2col_backward, conv_im2col_workspace(&a, 8 * 3 * 9, 11),
                               a, 11);
    same_bits_on_1_2_3_threads("im2col 1x1", conv_im2col_backward, conv_im2col_workspace(&b, 12 * 8, 11), b, 11);
}

Test(balanced_loops, im2col_partials_only_where_reserved)
{
    /* 295 thousand weights: 16 images' partials pass the 16 MiB bound, 2 images' do not. A
     * backend reserved for 16 has no room for partials, and a call on 2 must not take them. */
    const ConvShape s = {256, 4, 4, 128, 2, 2, 3, 3, 2, 1, 1};
    const size_t nw = (size_t)128 * 256 * 9, nx = (size_t)2 * 256 * 16, ny = (size_t)2 * 128 * 4;
    unsigned seed = 11u;
    real *x = random_values(nx, &seed), *w = random_values(nw, &seed), *dy = random_values(ny, &seed);
    real *dw_copies, *dw_partials, *dx_copies, *dx_partials;
    backward_on(2, conv_im2col_backward, conv_im2col_workspace(&s, nw, 16), &s, 2, x, w, dy, &dx_copies, &dw_copies);
    backward_on(2, conv_im2col_backward, conv_im2col_workspace(&s, nw, 2), &s, 2, x, w, dy, &dx_partials,
                &dw_partials);
    double worst = 0, largest = 0;
    for (size_t j = 0; j < nw; j++) {
        const double d = dw_copies[j] - dw_partials[j];
        if (fabs(d) > worst) worst = fabs(d);
        if (fabs(dw_partials[j]) > largest) largest = fabs(dw_partials[j]);
    }
    cr_assert_gt(largest, 0, "no weight gradient at all");
    cr_assert_leq(worst / largest, 1e-6, "private copies and partials differ by %g of the largest", worst / largest);
    cr_assert(memcmp(dx_copies, dx_partials, nx * sizeof(real)) == 0, "dx differs between the two ways");
    free(x);
    free(w);
    free(dy);
    free(dw_copies);
    free(dw_partials);
    free(dx_copies);
    free(dx_partials);
}
