/* CUDA graphs for bk_graph_capture (engine/backend.h): the backend's stream captured in
 * thread-local mode (another thread's unsafe calls do not break it, this thread's fail), the
 * graph instantiated and replayed on the same stream, so it stays in order with the eager
 * operations around it. What the capture may not do is checked in backend.c before it reaches
 * here; the workspaces (cuDNN's, the reductions', the low-precision scratch, cuBLAS's, set at
 * open with cublasSetWorkspace) must already be grown: capture after an eager step. One that
 * grows later (an evaluation at a larger batch) leaves the old buffer to the live graphs, which
 * replay its address (cuda_scratch_free). */
#include "cuda.h"

extern "C" {
#include "../base/util.h"
}

/* A failed CUDA call as the capture's error (the capture may fail; the process goes on). */
static int graph_failed(cudaError_t e, const char *call, Error *err)
{
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError(); /* reported here: the next launch's check must not die of it */
    error_set(err, "%s: %s", call, cudaGetErrorString(e));
    return -1;
}

int cuda_graph_begin(Backend *bk, Error *err)
{
    return graph_failed(cudaStreamBeginCapture(cuda_state(bk)->stream, cudaStreamCaptureModeThreadLocal),
                        "cudaStreamBeginCapture", err);
}

void *cuda_graph_end(Backend *bk, bool keep, Error *err)
{
    cudaGraph_t graph = nullptr;
    if (graph_failed(cudaStreamEndCapture(cuda_state(bk)->stream, &graph), "cudaStreamEndCapture", err)) return nullptr;
    cudaGraphExec_t exec = nullptr;
    const bool made = keep && !graph_failed(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate", err);
    CUDA_CHECK(cudaGraphDestroy(graph)); /* the instance keeps what it needs */
    if (made) cuda_state(bk)->graphs++; /* its scratch addresses stay valid until it goes */
    return made ? (void *)exec : nullptr;
}

int cuda_graph_launch(Backend *bk, void *graph, Error *err)
{
    return graph_failed(cudaGraphLaunch((cudaGraphExec_t)graph, cuda_state(bk)->stream), "cudaGraphLaunch", err);
}

void cuda_graph_destroy(Backend *bk, void *graph)
{
    CudaState *st = cuda_state(bk);
    CUDA_CHECK(cudaGraphExecDestroy((cudaGraphExec_t)graph));
    if (--st->graphs == 0) cuda_retired_free(st); /* the scratch outgrown while it lived */
}
