/* What a backend implementation sees (engine/cpu/, engine/cuda/): the layout of a Backend,
 * a buffer and an event, and the table of operations that engine/backend.c dispatches
 * every bk_* call through. Nothing outside the implementations and backend.c includes it.
 *
 * Each member has the signature of the bk_* function of the same name (engine/backend.h); the
 * arithmetic's come from the one list in backend_ops.h. Memory and events differ: an
 * implementation allocates and frees addresses, and backend.c wraps them in BkBuffer and
 * BkEvent, so a buffer or event always knows its backend. */
#ifndef BB_BACKEND_IMPL_H
#define BB_BACKEND_IMPL_H
#include "backend.h"
#include "backend_ops.h"

typedef struct BackendOps BackendOps;

struct Backend {
    const BackendOps *ops;
    int threads;
    long host_reads; /* backend_host_reads */
    struct GraphCheck *graph; /* while a capture (or a CPU launch) issues: its checks (graph_check.h) */
    void *impl; /* the implementation's own state */
};

struct BkBuffer {
    Backend *bk;
    void *address;
    size_t block; /* bytes taken, what the implementation frees */
};

struct BkEvent {
    Backend *bk;
    void *impl;
};

struct BkCollective {
    Backend *bk;
    void *impl;
};

struct BackendOps {
    const char *name;                              /* "cpu", "cpu-guarded", "cuda" */
    const char *(*device_name)(const Backend *bk); /* "NVIDIA H200"; NULL: the name */
    const char *(*device_key)(const Backend *bk);  /* the physical device on its host; NULL: device_name */
    void (*destroy)(Backend *bk);
    /* a backend of one thread on bk's device and memory (backend_open_thread); NULL: none */
    Backend *(*open_thread)(Backend *bk);
    void (*reserve)(Backend *bk, Workspace need);
    size_t (*peak_bytes)(const Backend *bk);       /* NULL: not counted */
    /* the products' arithmetic (backend_set_precision): false when the backend has no such
     * mode (nothing changed); NULL: fp32 only */
    bool (*set_precision)(Backend *bk, BkPrecision precision);
    /* memory: zero-filled; *block receives the bytes taken (NULL when out of memory) */
    void *(*buffer_alloc)(Backend *bk, size_t bytes, size_t *block);
    void (*buffer_free)(Backend *bk, void *address, size_t block);
    void (*upload)(Backend *bk, void *dev, const void *host, size_t bytes);
    void (*download)(Backend *bk, void *host, const void *dev, size_t bytes);
    void *(*host_address)(Backend *bk, void *dev);
    void *(*host_alloc)(Backend *bk, size_t bytes); /* NULL when out of memory */
    void (*host_free)(Backend *bk, void *host);
    void (*upload_async)(Backend *bk, void *dev, const void *host, size_t bytes);
    void (*synchronize)(Backend *bk);
    void *(*event_create)(Backend *bk);
    void (*event_destroy)(Backend *bk, void *event);
    void (*event_record)(Backend *bk, void *event);
    void (*event_wait)(Backend *bk, void *event);
    /* collectives: NULL collective_open when the backend has none; the implementation's
     * open returns its state, or NULL with err set (or, with err->msg empty, none) */
    void *(*collective_open)(Backend *bk, const BkCollectiveSpec *spec, Error *err);
    void (*collective_close)(Backend *bk, void *impl);
    void (*collective_sum_async)(Backend *bk, void *impl, real *dev, size_t count);
    void (*collective_join)(Backend *bk, void *impl);
    void (*collective_sum_double)(Backend *bk, void *impl, double *dev, size_t count);
    /* graphs (bk_graph_capture): NULL graph_begin when the backend has none (the CPU, whose
     * launch issues the operations again, checked). begin starts capturing the stream; end stops,
     * and unless `keep` is false (the capture failed) returns the instantiated graph; launch
     * replays it in stream order. 0 / non-NULL, or -1 / NULL with err set. */
    int (*graph_begin)(Backend *bk, Error *err);
    void *(*graph_end)(Backend *bk, bool keep, Error *err);
    int (*graph_launch)(Backend *bk, void *graph, Error *err);
    void (*graph_destroy)(Backend *bk, void *graph);
    /* the arithmetic (backend_ops.h) */
#define BACKEND_OP_MEMBER(ret, name, params, args) ret(*name) params;
    BACKEND_OPERATIONS(BACKEND_OP_MEMBER)
#undef BACKEND_OP_MEMBER
};

/* The implementations' constructors (backend.c's device table calls them): a Backend with
 * its ops and state, or NULL with err set (no such device, or out of memory). device_index
 * is N of NAME:N, or -1 for a bare NAME (the backend's choice). */
Backend *cpu_backend_open(int device_index, int threads, Error *err);
const char *cpu_backend_name(void); /* "cpu", or "cpu-guarded" in the guarded build */
#ifdef BB_CUDA
Backend *cuda_backend_open(int device_index, int threads, Error *err);
#endif

#endif
