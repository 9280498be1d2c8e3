/* Graph capture (bk_graph_*, engine/backend.h) on the CPU, which has no graphs: a launch issues
 * the captured function again and must issue the same operations with the same arguments, and a
 * capture refuses the calls that would wait for the device, read it or allocate. */
#include <criterion/criterion.h>
#include <string.h>

#include "../engine/backend.h"
#include "../engine/net/models.h"
#include "tensor_access.h"

typedef struct {
    Backend *bk;
    real *x;
    double *sum;
    int calls;
} Planted;

/* A fill whose value is a host value that changes every call: a GPU's replay would keep the first. */
static void fill_changing(void *ctx)
{
    Planted *p = ctx;
    bk_fill(p->bk, 16, (real)p->calls++, p->x);
}

Test(graph, a_changing_host_value_fails_the_launch_naming_the_argument)
{
    Backend *bk = backend_create(1);
    BkBuffer *buf = bk_buffer_alloc(bk, 16 * sizeof(real));
    Planted p = {bk, bk_buffer_address(buf), NULL, 0};
    Error err = {{0}};
    BkGraph *g = bk_graph_capture(bk, fill_changing, &p, &err);
    cr_assert_not_null(g, "%s", err.msg);
    cr_assert_eq(bk_graph_launch(g, &err), -1, "a changed value replayed unnoticed");
    cr_assert(strstr(err.msg, "operation 0 (fill)") && strstr(err.msg, "'value'") &&
                  strstr(err.msg, "0 at capture, 1 now"),
              "%s", err.msg);
    bk_graph_destroy(g);
    bk_buffer_free(buf);
    backend_destroy(bk);
}

static void fill_fixed(void *ctx)
{
    Planted *p = ctx;
    p->calls++;
    bk_fill(p->bk, 16, 3, p->x);
    bk_sum_squares_to(p->bk, 16, p->x, p->sum);
}

Test(graph, the_same_operations_launch_and_run_each_time)
{
    Backend *bk = backend_create(1);
    BkBuffer *buf = bk_buffer_alloc(bk, 16 * sizeof(real) + sizeof(double));
    Planted p = {bk, bk_buffer_address(buf), (double *)((char *)bk_buffer_address(buf) + 16 * sizeof(real)), 0};
    Error err = {{0}};
    BkGraph *g = bk_graph_capture(bk, fill_fixed, &p, &err);
    cr_assert_not_null(g, "%s", err.msg);
    for (int i = 0; i < 3; i++) cr_assert_eq(bk_graph_launch(g, &err), 0, "%s", err.msg);
    cr_assert_eq(p.calls, 4, "the capture and each launch run the operations");
    double sum;
    bk_download(bk, &sum, p.sum, sizeof sum);
    cr_assert_eq(sum, 16 * 9);
    bk_graph_destroy(g);
    bk_buffer_free(buf);
    backend_destroy(bk);
}

static void download_inside(void *ctx)
{
    Planted *p = ctx;
    double host;
    bk_fill(p->bk, 16, 1, p->x);
    bk_download(p->bk, &host, p->x, sizeof(real));
}

static void sum_squares_inside(void *ctx)
{
    Planted *p = ctx;
    (void)bk_sum_squares(p->bk, 16, p->x);
}

static void alloc_inside(void *ctx)
{
    Planted *p = ctx;
    bk_buffer_free(bk_buffer_alloc(p->bk, 64));
}

static void sync_inside(void *ctx)
{
    Planted *p = ctx;
    bk_synchronize(p->bk);
}

/* Each call a capture refuses: the capture returns NULL naming it. */
Test(graph, a_capture_refuses_downloads_syncs_host_reads_and_allocations)
{
    static const struct {
        void (*issue)(void *);
        const char *call;
    } cases[] = {{download_inside, "bk_download"},
                 {sum_squares_inside, "bk_sum_squares"},
                 {alloc_inside, "bk_buffer_alloc"},
                 {sync_inside, "bk_synchronize"}};
    Backend *bk = backend_create(1);
    BkBuffer *buf = bk_buffer_alloc(bk, 16 * sizeof(real));
    Planted p = {bk, bk_buffer_address(buf), NULL, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Error err = {{0}};
        cr_assert_null(bk_graph_capture(bk, cases[i].issue, &p, &err), "%s was captured", cases[i].call);
        cr_assert(strstr(err.msg, cases[i].call) && strstr(err.msg, "inside a graph capture"), "%s: %s",
                  cases[i].call, err.msg);
    }
    double host;
    bk_download(bk, &host, p.x, sizeof(real)); /* outside a capture: allowed again */
    bk_buffer_free(buf);
    backend_destroy(bk);
}

typedef struct {
    Net *net;
    int n;
} Pass;

static void train_pass(void *ctx)
{
    Pass *p = ctx;
    net_forward(p->net, p->n, true);
    net_backward(p->net, p->n);
}

/* A net's training pass (loss left on the device) captures and replays: every launch issues the
 * same operations, and gives the eager pass's gradients. */
Test(graph, a_net_pass_replays_to_the_eager_bits, .timeout = 60)
{
    static const char *const models[] = {"lenet", "resnet8"};
    for (int k = 0; k < 2; k++) {
        Error err = {{0}};
        Backend *bk = backend_create(1);
        Net *net = model_build(models[k], bk, 0, 3, &err);
        cr_assert_not_null(net, "%s", err.msg);
        net_plan(net, 4);
        net_upload_random_batch(net, 4, 9, 0);
        net->defer_loss = true;
        Pass p = {net, 4};
        net_zero_grad(net);
        train_pass(&p); /* eager: the workspaces are grown */
        real *eager = malloc(net->n_weights * sizeof(real)), *replay = malloc(net->n_weights * sizeof(real));
        tensor_download(&net->grad_block, eager);
        net_zero_grad(net);
        BkGraph *g = bk_graph_capture(bk, train_pass, &p, &err);
        cr_assert_not_null(g, "%s: %s", models[k], err.msg);
        for (int i = 0; i < 2; i++) {
            net_zero_grad(net);
            cr_assert_eq(bk_graph_launch(g, &err), 0, "%s: %s", models[k], err.msg);
            tensor_download(&net->grad_block, replay);
            cr_assert(!memcmp(eager, replay, net->n_weights * sizeof(real)), "%s: launch %d", models[k], i);
        }
        p.n = 3; /* a partial batch is another pass: the launch says so */
        cr_assert_eq(bk_graph_launch(g, &err), -1);
        cr_assert(strstr(err.msg, "argument 'n' differs (4 at capture, 3 now)"), "%s", err.msg);
        bk_graph_destroy(g);
        free(eager);
        free(replay);
        net_destroy(net);
        backend_destroy(bk);
    }
}
