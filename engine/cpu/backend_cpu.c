/* CPU backend lifetime, workspace and its table of operations. OpenBLAS (OpenMP build)
 * runs single-threaded when called inside our parallel regions and with `threads` threads
 * outside them, so every operation is threaded at exactly one level. */
#include <stdlib.h>
#include <string.h>

#include "../base/util.h"
#include "cpu.h"

static void cpu_destroy(Backend *bk)
{
    CpuState *cs = bk->impl;
    for (int t = 0; t < bk->threads; t++) free(cs->ws[t]);
    free(cs->ws);
    free(cs->shared);
    free(cs->spans);
    free(cs->lowp);
    free(cs);
    free(bk);
}

/* Its state and workspace table; the process-wide thread counts are the caller's business. */
static Backend *cpu_backend_new(const BackendOps *ops, int threads)
{
    Backend *bk = xcalloc(1, sizeof *bk, "backend");
    CpuState *cs = xcalloc(1, sizeof *cs, "backend state");
    bk->ops = ops;
    bk->threads = threads;
    bk->impl = cs;
    cs->ws = xcalloc((size_t)threads, sizeof *cs->ws, "backend workspace table");
    cs->spans = cpu_aligned_or_exit((size_t)threads * sizeof *cs->spans, "thread spans");
    return bk;
}

/* Host memory is every thread's: a one-thread backend needs only its own workspace (and
 * computes in bk's precision). */
static Backend *cpu_open_thread(Backend *bk)
{
    Backend *one = cpu_backend_new(bk->ops, 1);
    ((CpuState *)one->impl)->precision = ((CpuState *)bk->impl)->precision;
    return one;
}

/* fp32 and the emulated bf16 and fp16; tf32 is a GPU's (backend.c says so). */
static bool cpu_set_precision(Backend *bk, BkPrecision precision)
{
    if (precision == BK_PRECISION_TF32) return false;
    ((CpuState *)bk->impl)->precision = precision;
    return true;
}

static void cpu_reserve(Backend *bk, Workspace need)
{
    CpuState *cs = bk->impl;
    if (need.per_thread > cs->ws_elems) {
        for (int t = 0; t < bk->threads; t++) cpu_workspace_grow(&cs->ws[t], need.per_thread);
        cs->ws_elems = need.per_thread;
    }
    if (need.shared > cs->shared_elems) {
        cpu_workspace_grow(&cs->shared, need.shared);
        cs->shared_elems = need.shared;
    }
}

/* The device a run records: the guarded build computes on the same CPU. */
static const char *cpu_device_name(const Backend *bk)
{
    (void)bk;
    return "cpu";
}

#define CPU_OP_ENTRY(ret, name, params, args) .name = cpu_##name,
static const BackendOps CPU_OPS = {
#ifdef BB_GUARDED
    .name = "cpu-guarded",
#else
    .name = "cpu",
#endif
    .device_name = cpu_device_name,
    .destroy = cpu_destroy,
    .open_thread = cpu_open_thread,
    .reserve = cpu_reserve,
    .set_precision = cpu_set_precision,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .host_address = cpu_host_address,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .upload_async = cpu_upload, /* a synchronous stream: the copy is done on return */
    .synchronize = cpu_synchronize,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_wait = cpu_event_wait,
    BACKEND_OPERATIONS(CPU_OP_ENTRY)
};
#undef CPU_OP_ENTRY

const char *cpu_backend_name(void) { return CPU_OPS.name; }

Backend *cpu_backend_open(int device_index, int threads, Error *err)
{
    if (device_index > 0) {
        error_set(err, "device cpu:%d: the CPU backend has one device (cpu); --threads sets its cores",
                  device_index);
        return NULL;
    }
    if (threads < 1) threads = 1;
    Backend *bk = cpu_backend_new(&CPU_OPS, threads);
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    cpu_flush_denormals(threads);
    return bk;
}
