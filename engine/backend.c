/* The device boundary's dispatch: every bk_* call goes through the table of the backend it
 * is given (engine/backend_impl.h), and backend_open picks that backend by device name. */
#include "backend_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/name_table.h"
#include "graph_check.h"
#include "base/util.h"

/* The devices this build can open, one row each. */
typedef struct {
    const char *name;
    Backend *(*open)(int device_index, int threads, Error *err);
} DeviceKind;

static const DeviceKind DEVICES[] = {
    {"cpu", cpu_backend_open},
#ifdef BB_CUDA
    {"cuda", cuda_backend_open},
#endif
};
static const NameTable DEVICE_NAMES = NAME_TABLE(DEVICES);

const char *backend_devices(void)
{
#ifdef BB_CUDA
    return "cpu, cuda[:N]";
#else
    return "cpu (cuda: build with make GPU=1)";
#endif
}

/* An environment variable as a number >= 0, or -1 when it is unset or not one. */
static int env_count(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    long n = strtol(v, &end, 10);
    return *end || n < 0 || n > 1000000 ? -1 : (int)n;
}

/* The first of the launchers' variables that is set, or `dflt`. */
static int first_env(const char *const *names, int dflt)
{
    for (; *names; names++) {
        int n = env_count(*names);
        if (n >= 0) return n;
    }
    return dflt;
}

int backend_local_slot(void)
{
    static const char *const rank[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                                       "PMI_LOCAL_RANK", NULL};
    static const char *const size[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE", "MPI_LOCALNRANKS",
                                       "PMI_LOCAL_SIZE", NULL};
    static const char *const worker[] = {"BIGBATCH_WORKER", NULL};
    int ranks = first_env(size, 1);
    return first_env(worker, 0) * (ranks > 0 ? ranks : 1) + first_env(rank, 0);
}

/* Splits "cuda:1" into its kind and index (-1 for a bare "cuda": the backend chooses);
 * -1 when the text is not NAME or NAME:N. */
static int parse_device(const char *device, char *kind, size_t len, int *index)
{
    const char *colon = strchr(device, ':');
    size_t n = colon ? (size_t)(colon - device) : strlen(device);
    if (n == 0 || n >= len) return -1;
    memcpy(kind, device, n);
    kind[n] = 0;
    *index = -1;
    if (!colon) return 0;
    char *end;
    long v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || v < 0 || v > 1024) return -1;
    *index = (int)v;
    return 0;
}

/* The row of DEVICES that `device` names, or NULL with err set; *index as parse_device. */
static const DeviceKind *device_kind(const char *device, int *index, Error *err)
{
    char kind[16];
    if (!device || parse_device(device, kind, sizeof kind, index)) {
        error_set(err, "device '%s' is not NAME or NAME:N (devices: %s)", device ? device : "",
                  backend_devices());
        return NULL;
    }
    const DeviceKind *k = name_table_find(DEVICE_NAMES, kind);
    if (k) return k;
    if (!strcmp(kind, "cuda"))
        error_set(err, "device '%s': this bigbatch was built without CUDA (build it with make GPU=1)", device);
    else
        error_set(err, "unknown device '%s' (devices: %s)", device, backend_devices());
    return NULL;
}

int backend_device_check(const char *device, Error *err)
{
    int index;
    return device_kind(device, &index, err) ? 0 : -1;
}

Backend *backend_open(const char *device, int threads, Error *err)
{
    int index;
    const DeviceKind *k = device_kind(device, &index, err);
    return k ? k->open(index, threads, err) : NULL;
}

Backend *backend_create(int threads)
{
    Error err;
    Backend *bk = cpu_backend_open(-1, threads, &err);
    if (!bk) {
        fprintf(stderr, "bigbatch: %s\n", err.msg);
        exit(3);
    }
    return bk;
}

void backend_destroy(Backend *bk)
{
    if (bk) bk->ops->destroy(bk);
}

int backend_threads(const Backend *bk) { return bk->threads; }

Backend *backend_open_thread(Backend *bk) { return bk->ops->open_thread ? bk->ops->open_thread(bk) : NULL; }

const char *backend_name(const Backend *bk) { return bk ? bk->ops->name : cpu_backend_name(); }

const char *backend_device_name(const Backend *bk)
{
    return bk->ops->device_name ? bk->ops->device_name(bk) : bk->ops->name;
}

bool backend_on_gpu(const Backend *bk) { return strncmp(backend_device_name(bk), "cuda", 4) == 0; }

const char *backend_device_key(const Backend *bk)
{
    return bk->ops->device_key ? bk->ops->device_key(bk) : backend_device_name(bk);
}

/* The precisions, one row each: the name, the mode, and whether fp16's narrow range needs the
 * loss scaled. */
static const struct {
    const char *name;
    BkPrecision mode;
    bool scales_loss;
} PRECISIONS[] = {{"fp32", BK_PRECISION_FP32, false},
                  {"tf32", BK_PRECISION_TF32, false},
                  {"bf16", BK_PRECISION_BF16, false},
                  {"fp16", BK_PRECISION_FP16, true}};
static const NameTable PRECISION_NAMES = NAME_TABLE(PRECISIONS);

static int precision_index(const char *precision, Error *err)
{
    int i = name_table_index(PRECISION_NAMES, precision);
    return i >= 0 ? i : name_table_unknown(PRECISION_NAMES, "precision", precision, "", " or ", err);
}

int backend_precision_check(const char *precision, Error *err) { return precision_index(precision, err) < 0 ? -1 : 0; }

bool backend_precision_scales_loss(const char *precision)
{
    Error err;
    int i = precision_index(precision, &err);
    return i >= 0 && PRECISIONS[i].scales_loss;
}

int backend_set_precision(Backend *bk, const char *precision, Error *err)
{
    int i = precision_index(precision, err);
    if (i < 0) return -1;
    const BkPrecision mode = PRECISIONS[i].mode;
    if (bk->ops->set_precision ? bk->ops->set_precision(bk, mode) : mode == BK_PRECISION_FP32) return 0;
    if (mode == BK_PRECISION_TF32)
        error_set(err, "precision tf32 needs a GPU (--device cuda): the %s backend has no tf32", bk->ops->name);
    else
        error_set(err, "precision %s is not implemented on %s", precision, bk->ops->name);
    return -1;
}

size_t backend_peak_bytes(const Backend *bk) { return bk->ops->peak_bytes ? bk->ops->peak_bytes(bk) : 0; }

void backend_reserve(Backend *bk, Workspace need) { bk->ops->reserve(bk, need); }

/* ---- memory ---- */
/* A call a graph capture refuses (graph_check.h): true when one is running, the call is then
 * the capture's error and is not made (it would fail inside a CUDA capture). */
static bool refused(Backend *bk, const char *call)
{
    if (!bk->graph) return false;
    graph_check_refuse(bk->graph, call);
    return true;
}

BkBuffer *bk_buffer_alloc(Backend *bk, size_t bytes)
{
    /* refused, but made: its callers need the memory; a GPU's capture may fail on it */
    refused(bk, "bk_buffer_alloc");
    BkBuffer *b = xcalloc(1, sizeof *b, "backend buffer");
    b->bk = bk;
    b->address = bk->ops->buffer_alloc(bk, bytes, &b->block);
    if (!b->address) {
        fprintf(stderr, "bigbatch: out of memory allocating %zu bytes of %s memory\n", bytes, bk->ops->name);
        exit(3);
    }
    return b;
}

void bk_buffer_free(BkBuffer *b)
{
    if (!b) return;
    b->bk->ops->buffer_free(b->bk, b->address, b->block);
    free(b);
}

void *bk_buffer_address(const BkBuffer *b) { return b->address; }

Backend *bk_buffer_backend(const BkBuffer *b) { return b->bk; }

void bk_upload(Backend *bk, void *dev, const void *host, size_t bytes)
{
    if (!refused(bk, "bk_upload")) bk->ops->upload(bk, dev, host, bytes);
}

void bk_download(Backend *bk, void *host, const void *dev, size_t bytes)
{
    if (refused(bk, "bk_download")) return;
    bk->host_reads++;
    bk->ops->download(bk, host, dev, bytes);
}

long backend_host_reads(const Backend *bk) { return bk->host_reads; }

void *bk_host_address(Backend *bk, void *dev) { return bk->ops->host_address(bk, dev); }

void *bk_host_alloc(Backend *bk, size_t bytes)
{
    void *p = bk->ops->host_alloc(bk, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "bigbatch: out of memory allocating %zu bytes of %s host staging\n", bytes, bk->ops->name);
        exit(3);
    }
    return p;
}

void bk_host_free(Backend *bk, void *host)
{
    if (host) bk->ops->host_free(bk, host);
}

void bk_upload_async(Backend *bk, void *dev, const void *host, size_t bytes)
{
    if (!refused(bk, "bk_upload_async")) bk->ops->upload_async(bk, dev, host, bytes);
}

void bk_synchronize(Backend *bk)
{
    if (!refused(bk, "bk_synchronize")) bk->ops->synchronize(bk);
}

BkEvent *bk_event_create(Backend *bk)
{
    BkEvent *e = xcalloc(1, sizeof *e, "backend event");
    e->bk = bk;
    e->impl = bk->ops->event_create(bk);
    if (!e->impl) {
        fprintf(stderr, "bigbatch: %s: cannot create an event\n", bk->ops->name);
        exit(3);
    }
    return e;
}

void bk_event_destroy(BkEvent *e)
{
    if (!e) return;
    e->bk->ops->event_destroy(e->bk, e->impl);
    free(e);
}

void bk_event_record(Backend *bk, BkEvent *e) { bk->ops->event_record(bk, e->impl); }

void bk_event_wait(BkEvent *e)
{
    if (!refused(e->bk, "bk_event_wait")) e->bk->ops->event_wait(e->bk, e->impl);
}

/* ---- collectives ---- */
BkCollective *bk_collective_open(Backend *bk, const BkCollectiveSpec *spec, Error *err)
{
    err->msg[0] = 0;
    if (!bk->ops->collective_open) return NULL;
    void *impl = bk->ops->collective_open(bk, spec, err);
    if (!impl) return NULL;
    BkCollective *c = xcalloc(1, sizeof *c, "backend collective");
    c->bk = bk;
    c->impl = impl;
    return c;
}

void bk_collective_close(BkCollective *c)
{
    if (!c) return;
    c->bk->ops->collective_close(c->bk, c->impl);
    free(c);
}

void bk_collective_sum_async(BkCollective *c, real *dev, size_t count)
{
    if (!refused(c->bk, "bk_collective_sum_async")) c->bk->ops->collective_sum_async(c->bk, c->impl, dev, count);
}

void bk_collective_join(BkCollective *c)
{
    if (!refused(c->bk, "bk_collective_join")) c->bk->ops->collective_join(c->bk, c->impl);
}

void bk_collective_sum_double(BkCollective *c, double *dev, size_t count)
{
    if (!refused(c->bk, "bk_collective_sum_double")) c->bk->ops->collective_sum_double(c->bk, c->impl, dev, count);
}

/* ---- graphs ---- */
struct BkGraph {
    Backend *bk;
    void (*issue)(void *ctx);
    void *ctx;
    GraphCheck *check; /* the capture's operations (a CPU launch compares with them) */
    void *impl;        /* the backend's graph; NULL: the backend has none */
};

/* issue(ctx) with the backend's calls checked: recording, or comparing with the recording. */
static int issue_checked(BkGraph *g, bool compare, Error *err)
{
    graph_check_start(g->check, compare);
    g->bk->graph = g->check;
    g->issue(g->ctx);
    g->bk->graph = NULL;
    return graph_check_finish(g->check, err);
}

BkGraph *bk_graph_capture(Backend *bk, void (*issue)(void *ctx), void *ctx, Error *err)
{
    const BackendOps *ops = bk->ops;
    BkGraph *g = xcalloc(1, sizeof *g, "backend graph");
    *g = (BkGraph){bk, issue, ctx, graph_check_new(), NULL};
    if (ops->graph_begin && ops->graph_begin(bk, err) != 0) {
        bk_graph_destroy(g);
        return NULL;
    }
    int rc = issue_checked(g, false, err);
    if (ops->graph_begin) {
        Error end_err;
        g->impl = ops->graph_end(bk, rc == 0, &end_err);
        if (rc == 0 && !g->impl) {
            *err = end_err;
            rc = -1;
        }
        /* the capture only recorded: run what it captured this once */
        if (rc == 0) rc = ops->graph_launch(bk, g->impl, err);
    }
    if (rc == 0) return g;
    bk_graph_destroy(g);
    return NULL;
}

int bk_graph_launch(BkGraph *g, Error *err)
{
    if (g->impl) return g->bk->ops->graph_launch(g->bk, g->impl, err);
    return issue_checked(g, true, err);
}

void bk_graph_destroy(BkGraph *g)
{
    if (!g) return;
    if (g->impl) g->bk->ops->graph_destroy(g->bk, g->impl);
    graph_check_free(g->check);
    free(g);
}

/* ---- operations: the backend's own (backend_ops.h) ---- */
/* During a capture each operation is recorded with its arguments (graph_check.h); one that
 * returns a value returns it to the host: a host read, which a capture refuses. */
#define BK_GRAPH_ARG(x) GRAPH_ARG(bk->graph, x);
#define BK_GRAPH_void(name, args)                             \
    if (bk->graph) {                                          \
        graph_check_op(bk->graph, #name);                     \
        GRAPH_FOR_EACH(BK_GRAPH_ARG, GRAPH_EXPAND args)       \
    }
#define BK_GRAPH_double(name, args) \
    if (refused(bk, "bk_" #name)) return NAN;
#define BK_RETURN_void
#define BK_RETURN_double bk->host_reads++; return
#define BK_DISPATCH(ret, name, params, args) \
    ret bk_##name params                     \
    {                                        \
        BK_GRAPH_##ret(name, args)           \
        BK_RETURN_##ret bk->ops->name args;  \
    }
BACKEND_OPERATIONS(BK_DISPATCH)
#undef BK_DISPATCH
#undef BK_RETURN_void
#undef BK_RETURN_double
#undef BK_GRAPH_void
#undef BK_GRAPH_double
#undef BK_GRAPH_ARG
