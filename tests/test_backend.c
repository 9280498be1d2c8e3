/* The backend's memory contract and the operations the boundary added: buffers, copies,
 * events, the fused parameter norms, Philox dropout masks. In the guarded build (make test
 * BACKEND=guarded) also that touching tensor memory from outside the backend faults, with a
 * backtrace that names the file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../engine/backend.h"
#include "../engine/net/net.h"
#include "../engine/optim/optimizer.h"
#include "../engine/base/philox.h"
#include "tensor_access.h"

/* Random123's known answers for Philox4x32-10 (its tests/kat_vectors). */
Test(philox, random123_known_answers)
{
    const struct { uint32_t ctr[4], key[2], out[4]; } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        Philox4x32 c = {{kat[i].ctr[0], kat[i].ctr[1], kat[i].ctr[2], kat[i].ctr[3]}};
        Philox4x32 r = philox4x32_10(c, kat[i].key[0], kat[i].key[1]);
        for (int k = 0; k < 4; k++) cr_expect_eq(r.v[k], kat[i].out[k], "vector %zu word %d: %08x", i, k, r.v[k]);
    }
}

Test(memory, alloc_zero_filled_and_round_trip)
{
    Backend *bk = backend_create(2);
    Tensor t;
    tensor_alloc(&t, bk, 2, 3, 4, 5);
    real *host = tensor_to_host(&t);
    for (size_t i = 0; i < tensor_count(&t); i++) cr_assert_eq(host[i], 0, "element %zu not zero", i);
    for (size_t i = 0; i < tensor_count(&t); i++) host[i] = (real)i * (real)0.5;
    tensor_upload(&t, host);
    memset(host, 0, tensor_count(&t) * sizeof *host);
    tensor_download(&t, host);
    for (size_t i = 0; i < tensor_count(&t); i++) cr_assert_eq(host[i], (real)i * (real)0.5);
    bk_fill(bk, 7, 3, t.data + 10); /* fill and copy on backend addresses at offsets */
    bk_copy(bk, 5, t.data + 10, t.data);
    cr_expect_eq(tensor_get(&t, 4), 3);
    cr_expect_eq(tensor_get(&t, 5), (real)2.5); /* beyond the copy: unchanged */
    cr_expect_eq(tensor_get(&t, 16), 3);
    cr_expect_eq(tensor_get(&t, 17), (real)8.5);
    Tensor v = tensor_view(&t, 12, 1, 1, 2, 2);
    cr_expect_eq(tensor_get(&v, 0), 3);
    cr_expect_eq(tensor_backend(&v), bk);
    tensor_free(&v); /* a view frees nothing */
    cr_expect_eq(tensor_get(&t, 12), 3);
    BkEvent *e = bk_event_create(bk);
    bk_event_record(bk, e);
    bk_event_wait(e);
    bk_event_destroy(e);
    bk_synchronize(bk);
    free(host);
    tensor_free(&t);
    backend_destroy(bk);
}

/* The fused norms equal each tensor's own ||w|| and ||g||, computed here in double. */
Test(optimizer_norms, fused_norms_match_per_tensor)
{
    Backend *bk = backend_create(2);
    Net *net = net_create("norms", bk, 3, 4, 4);
    int x = nb_conv(net, "conv", NET_INPUT, 4, 3, 1, 1, 1, true, (Init){INIT_GAUSSIAN, 1}, (Init){INIT_GAUSSIAN, 1});
    nb_softmax_xent(net, nb_linear(net, "fc", x, 3, true, (Init){INIT_GAUSSIAN, 1}, (Init){INIT_GAUSSIAN, 1}));
    net_finalize(net);
    net_init_params(net, 3);
    real *g = malloc(net->n_weights * sizeof *g);
    for (size_t i = 0; i < net->n_weights; i++) g[i] = (real)(i % 11) - 5;
    tensor_upload(&net->grad_block, g);
    OptConfig cfg;
    opt_config_defaults(&cfg);
    Error err = {{0}};
    Optimizer *opt = optimizer_create(&cfg, net, &err);
    cr_assert_not_null(opt, "%s", err.msg);
    double *norms = malloc(2 * (size_t)net->n_params * sizeof *norms);
    bk_param_norms(bk, &opt->list, bk_buffer_address(opt->norms));
    bk_download(bk, norms, bk_buffer_address(opt->norms), 2 * (size_t)net->n_params * sizeof *norms);
    for (int p = 0; p < net->n_params; p++) {
        real *w = tensor_to_host(&net->params[p].value), *gp = tensor_to_host(&net->params[p].grad);
        double w2 = 0, g2 = 0;
        for (size_t i = 0; i < tensor_count(&net->params[p].value); i++) {
            w2 += (double)w[i] * w[i];
            g2 += (double)gp[i] * gp[i];
        }
        cr_expect(fabs(norms[2 * p] - sqrt(w2)) <= 1e-12 * sqrt(w2), "%s: ||w||", net->params[p].name);
        cr_expect(fabs(norms[2 * p + 1] - sqrt(g2)) <= 1e-12 * sqrt(g2), "%s: ||g||", net->params[p].name);
        free(w);
        free(gp);
    }
    free(norms);
    free(g);
    optimizer_destroy(opt);
    net_destroy(net);
    backend_destroy(bk);
}

/* The mask of elements [0, n) of a layer and step, drawn in one call on `threads`, or as
 * pieces at their offsets (micro-batches, ranks). */
static real *dropout_mask(int threads, size_t n, size_t piece, real p)
{
    Backend *bk = backend_create(threads);
    Tensor x, y, mask;
    tensor_alloc(&x, bk, 1, 1, 1, (int)n);
    tensor_alloc(&y, bk, 1, 1, 1, (int)n);
    tensor_alloc(&mask, bk, 1, 1, 1, (int)n);
    bk_fill(bk, n, 1, x.data);
    for (size_t at = 0; at < n; at += piece) {
        size_t count = n - at < piece ? n - at : piece;
        DropoutKey key = {42, 9, at, 3};
        bk_dropout_forward(bk, count, p, &key, mask.data + at, x.data + at, y.data + at);
    }
    real *host = tensor_to_host(&mask), *out = tensor_to_host(&y);
    for (size_t i = 0; i < n; i++) cr_assert_eq(host[i], out[i], "y = x * mask at %zu", i);
    free(out);
    tensor_free(&x);
    tensor_free(&y);
    tensor_free(&mask);
    backend_destroy(bk);
    return host;
}

/* A mask is a pure function of (seed, step, layer, element): threads and the split of the
 * batch into pieces at any offset (here not multiples of 4) change nothing. */
Test(dropout, mask_independent_of_threads_and_split)
{
    const size_t n = 1003;
    real *one = dropout_mask(1, n, n, (real)0.3), *two = dropout_mask(2, n, n, (real)0.3);
    real *split = dropout_mask(2, n, 77, (real)0.3);
    size_t dropped = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(one[i], two[i], "threads changed element %zu", i);
        cr_assert_eq(one[i], split[i], "the split changed element %zu", i);
        cr_assert(one[i] == 0 || fabs(one[i] - 1 / 0.7) < 1e-6, "mask value %g", (double)one[i]);
        dropped += one[i] == 0;
    }
    /* 30% of 1003 dropped: 301 expected, sd 14.5; 5 sd either side */
    cr_expect(dropped > 228 && dropped < 374, "%zu of %zu dropped", dropped, n);
    /* and the mask follows the documented stream: element 5 is word 1 of block 1 */
    Philox4x32 r = philox_dropout_block(42, 9, 3, 1);
    cr_expect_eq(one[5] == 0, philox_uniform24(r.v[1]) < 0.3);
    free(one);
    free(two);
    free(split);
}

#ifdef BB_GUARDED
/* Writing a tensor's backend address directly faults; the handler names this file. */
Test(guarded, direct_access_faults_with_a_backtrace)
{
    char path[] = "/tmp/bb-guard-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        Backend *bk = backend_create(1);
        Tensor t;
        tensor_alloc(&t, bk, 1, 1, 1, 16);
        tensor_set(&t, 0, 1); /* through the boundary: fine */
        t.data[1] = 2;        /* around it: faults */
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "the direct write did not fault (status %d)", status);
    char log[16384] = "";
    FILE *f = fdopen(fd, "r");
    rewind(f);
    size_t len = fread(log, 1, sizeof log - 1, f);
    log[len] = 0;
    fclose(f);
    unlink(path);
    cr_expect(strstr(log, "access to backend memory") != NULL, "no guard message in:\n%s", log);
    cr_expect(strstr(log, "test_backend.c") != NULL, "the backtrace does not name the file:\n%s", log);
}
#endif

/* A bare --device cuda takes GPU (slot mod count): the sweep's worker slot times the ranks per
 * node, plus the local rank. */
Test(devices, local_slot_from_the_launchers)
{
    static const char *const vars[] = {"BIGBATCH_WORKER", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                       "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "MPI_LOCALRANKID",
                                       "MPI_LOCALNRANKS", "PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
    cr_expect_eq(backend_local_slot(), 0, "a process started by hand");
    setenv("BIGBATCH_WORKER", "3", 1);
    cr_expect_eq(backend_local_slot(), 3, "sweep worker 3, one rank");
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    cr_expect_eq(backend_local_slot(), 7, "worker 3 of 2-rank runs, local rank 1: 3 * 2 + 1");
    unsetenv("BIGBATCH_WORKER");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    setenv("SLURM_LOCALID", "5", 1);
    cr_expect_eq(backend_local_slot(), 5, "srun's local id");
    setenv("SLURM_LOCALID", "x", 1);
    cr_expect_eq(backend_local_slot(), 0, "not a number: ignored");
    unsetenv("SLURM_LOCALID");
}

Test(devices, names_checked_without_opening)
{
    Error err = {{0}};
    cr_expect_eq(backend_device_check("cpu", &err), 0, "%s", err.msg);
    cr_expect_eq(backend_device_check("cpu:0", &err), 0, "%s", err.msg);
    cr_expect_neq(backend_device_check("gpu", &err), 0);
    cr_expect(strstr(err.msg, "unknown device 'gpu'"), "%s", err.msg);
    cr_expect_neq(backend_device_check("cuda:", &err), 0);
    cr_expect_neq(backend_device_check("cuda:-1", &err), 0);
    cr_expect_neq(backend_device_check("", &err), 0);
}
