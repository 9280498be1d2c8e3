/* The device boundary. The backend owns tensor memory and runs every operation of a
 * training step on it: layers, the loss, the optimizer updates and the norms they need.
 * Code outside the backend implementation (engine/cpu/, later engine/cuda/) holds backend
 * addresses (Tensor.data, and the int32/double arrays below) and passes them to these
 * functions; it never reads or writes through them. Host values cross the boundary only
 * by bk_upload / bk_download, at named points: a batch in, checkpoints, statistics to log,
 * `compare`. `make BACKEND=guarded` builds a CPU backend whose memory is PROT_NONE except
 * while one of these functions runs, so any other access faults with a backtrace.
 *
 * A new backend implements everything declared here. The CPU implementation (OpenMP over
 * the batch + single-threaded OpenBLAS sgemm inside it: threads at one level only) is the
 * reference every other backend is tested against.
 *
 * Conventions: every backward operation ADDS into its input gradient (dx) and into
 * parameter gradients (dw, db), so that a tensor feeding two consumers (the residual
 * shortcut) and micro-batch accumulation need no special cases. Forward operations
 * overwrite their output. `n` is the number of images actually present. Operations run
 * in call order on one stream; bk_download waits for the operations before it. */
#ifndef BB_BACKEND_H
#define BB_BACKEND_H
#include <stddef.h>
#include <stdint.h>

#include "optim/opt_config.h"
#include "real.h"
#include "tensor.h"
#include "base/util.h"

typedef struct Backend Backend;

/* The backend of a device: "cpu", or "cuda" / "cuda:N" (the N-th GPU) in a build made with
 * `make GPU=1`. NULL with err set for an unknown name, a build without that backend or a
 * device that is not there. `threads` are the CPU backend's cores. */
Backend *backend_open(const char *device, int threads, Error *err);
/* This process's place among those sharing a node's devices, which a bare `--device cuda`
 * takes modulo the GPUs present: the sweep's worker slot (BIGBATCH_WORKER, set for each run
 * it starts) times the ranks a run has on the node, plus the local rank under mpirun or srun.
 * 0 for a process started by hand. */
int backend_local_slot(void);
/* 0 when this build has a backend for `device` (its syntax and kind; the device itself is
 * not opened, so a missing GPU shows only at backend_open); -1 with err set. */
int backend_device_check(const char *device, Error *err);
/* The device names this build opens, for help texts and errors. */
const char *backend_devices(void);
/* The CPU backend (what the tests, `models` and the host-side tools use). */
Backend *backend_create(int threads);
void backend_destroy(Backend *bk);
int backend_threads(const Backend *bk);
/* A backend of one thread on bk's device, whose memory bk's operations may read and write:
 * what one thread's replica of a net runs on (engine/dist/replicas.h). Process-wide settings (the
 * OpenMP and OpenBLAS thread counts) stay bk's. NULL when the backend has no such thing (a GPU
 * runs every operation across the whole device). Close it with backend_destroy. */
Backend *backend_open_thread(Backend *bk);
/* Workspace is planned once, before training: each operation's need is declared
 * here at build time so the step itself never allocates. Sizes are in elements:
 * `per_thread` for each thread's private buffers, `shared` once for what all threads
 * read (Winograd's transformed filters). */
typedef struct {
    size_t per_thread, shared;
} Workspace;
void backend_reserve(Backend *bk, Workspace need);
/* The arithmetic of convolutions and fully connected layers (the products):
 *   fp32  IEEE single precision, as the CPU computes (the default; results compare across devices)
 *   tf32  a GPU's tensor cores round the products' inputs to 10 bits of mantissa (faster;
 *         results differ in the third digit)
 *   bf16, fp16  mixed precision: the products take bf16 / fp16 working copies of their inputs,
 *         weights and incoming gradients and give bf16 / fp16 outputs and gradients; parameters,
 *         their gradients, optimizer state, batch norm, reductions and the loss stay fp32. The
 *         CPU emulates both by rounding at those points (round to nearest even; fp16 overflows to
 *         inf); CUDA converts there and runs the products on tensor cores with fp32 sums
 *         (engine/cuda/lowp.cu). fp16 needs loss scaling (engine/optim/loss_scale.h;
 *         backend_precision_scales_loss).
 * Set before the first operation. 0, or -1 with err naming the precisions when the name is
 * unknown or the backend has no such arithmetic (the CPU: no tf32). */
typedef enum { BK_PRECISION_FP32, BK_PRECISION_TF32, BK_PRECISION_BF16, BK_PRECISION_FP16 } BkPrecision;
int backend_set_precision(Backend *bk, const char *precision, Error *err);
/* 0 when `precision` is a name backend_set_precision knows, else -1 with err set. */
int backend_precision_check(const char *precision, Error *err);
/* Whether a precision's gradients need the loss scaled to stay in range (fp16). */
bool backend_precision_scales_loss(const char *precision);
/* "cpu", "cpu-guarded" for the guarded build, "cuda" (NULL: this build's CPU backend). */
const char *backend_name(const Backend *bk);
/* What the backend runs on, as recorded with a run: "cpu", or the GPU's name. */
const char *backend_device_name(const Backend *bk);
/* Whether that is a GPU (a "cuda" device), not the host's cores. */
bool backend_on_gpu(const Backend *bk);
/* Which physical device that is, the same string in every process on one host that uses it
 * (CUDA: its PCI bus id, whatever CUDA_VISIBLE_DEVICES numbers it); backend_device_name where
 * the backend has nothing finer. Ranks compare it to find those sharing a GPU. */
const char *backend_device_key(const Backend *bk);
/* The most backend memory held at once so far, in bytes (buffers and workspaces); 0 where
 * the backend does not count it (the CPU's is the process's resident memory). */
size_t backend_peak_bytes(const Backend *bk);

/* ---- memory ---- */
/* Zero-filled backend memory of `bytes` (exits with status 3 when out of memory, naming the
 * size, as the engine does for every allocation). */
BkBuffer *bk_buffer_alloc(Backend *bk, size_t bytes);
void bk_buffer_free(BkBuffer *b);
void *bk_buffer_address(const BkBuffer *b); /* backend address of the first byte */
Backend *bk_buffer_backend(const BkBuffer *b);
/* Host <-> backend copies; `dev` is a backend address (any offset into a buffer). */
void bk_upload(Backend *bk, void *dev, const void *host, size_t bytes);
void bk_download(Backend *bk, void *host, const void *dev, size_t bytes);
/* How often the host has read backend memory so far: bk_download and the operations that
 * return a host value (bk_sum_squares). Tests count a step's (one, issue 58). */
long backend_host_reads(const Backend *bk);
/* The host address of backend memory `dev` when the host may read and write it in place
 * between operations (the CPU backend: the same address), NULL when it may not (a GPU
 * backend; the guarded build, whose memory is closed outside backend calls). MPI reduces
 * gradients in place through it instead of through host staging, as ggml-backend asks a
 * buffer whether it is host memory. */
void *bk_host_address(Backend *bk, void *dev);
/* Host memory that bk_upload_async copies from without staging: page-locked on a GPU (so
 * the copy runs beside the host), ordinary aligned memory on the CPU. Never backend memory:
 * the host reads and writes it freely (the batch loader's thread fills it). Exits with
 * status 3 when out of memory. */
void *bk_host_alloc(Backend *bk, size_t bytes);
void bk_host_free(Backend *bk, void *host);
/* An upload in stream order that may return before it has read `host` (from bk_host_alloc):
 * the host leaves those bytes alone until an event recorded after this call has completed.
 * The CPU backend copies at once. */
void bk_upload_async(Backend *bk, void *dev, const void *host, size_t bytes);
/* Waits until every operation issued so far has finished. */
void bk_synchronize(Backend *bk);
/* An event marks a point in the stream of operations: recorded after the backward of a
 * layer, the gradient allreduce of that layer's bucket waits on it and no longer. The CPU
 * backend runs operations synchronously, so its events are complete when recorded. */
typedef struct BkEvent BkEvent;
BkEvent *bk_event_create(Backend *bk);
void bk_event_destroy(BkEvent *e);
void bk_event_record(Backend *bk, BkEvent *e);
void bk_event_wait(BkEvent *e);

/* ---- graphs: a sequence of operations recorded once and replayed ----
 * bk_graph_capture calls issue(ctx) once and records the operations it issues (which also run
 * this time); bk_graph_launch replays exactly those, with the arguments they had at capture, in
 * stream order. CUDA captures the backend's stream into a CUDA graph (cudaStreamBeginCapture
 * in thread-local mode, instantiated, then launched); the CPU has no graphs: its launch calls
 * issue(ctx) again and checks that the same operations with the same arguments (scalars by
 * value, addresses, the shape structs' contents) come out, so a host value that changes from
 * launch to launch, which a GPU's replay would silently freeze, makes launch fail there.
 * On every backend a capture refuses the calls that would wait for the device, read it from the
 * host or allocate (bk_download, bk_upload, bk_synchronize, bk_sum_squares, bk_buffer_alloc,
 * bk_event_wait, the collectives): the capture then returns NULL with err naming the call.
 * Capture only after a step has run eagerly (cuDNN's and the reductions' workspaces grown).
 * Written and checked on the CPU; not yet run on a GPU. */
typedef struct BkGraph BkGraph;
BkGraph *bk_graph_capture(Backend *bk, void (*issue)(void *ctx), void *ctx, Error *err);
/* 0, or -1 with err naming the operation's position and name and the argument that differs. */
int bk_graph_launch(BkGraph *g, Error *err);
void bk_graph_destroy(BkGraph *g);

/* ---- collectives among the ranks' devices ----
 * A backend may sum across the ranks of a job on the devices themselves (the CUDA backend:
 * NCCL, loaded when a job of several ranks opens it); the engine then reduces gradients and
 * synchronized-BN sums there, in the backend's streams, instead of through host memory and
 * MPI. Opening is collective: every rank calls it, and rank 0's handshake bytes reach the
 * others through `bcast` (an MPI broadcast). */
typedef struct BkCollective BkCollective;
typedef struct {
    int rank, size;
    void (*bcast)(void *ctx, void *bytes, size_t n); /* rank 0's n bytes to every rank */
    void *ctx;
} BkCollectiveSpec;
/* The collective of this rank, or NULL: with err->msg empty when the backend has none (the
 * CPU; NCCL not found on rank 0, said on stderr), so MPI on the host does the work; with err
 * set when it failed to start. */
BkCollective *bk_collective_open(Backend *bk, const BkCollectiveSpec *spec, Error *err);
void bk_collective_close(BkCollective *c);
/* Starts summing `count` values at dev (backend memory) over the ranks, in place, once the
 * operations issued before it have finished; it runs beside the operations issued after it
 * until bk_collective_join. */
void bk_collective_sum_async(BkCollective *c, real *dev, size_t count);
/* The operations issued from now on wait for every sum started so far. */
void bk_collective_join(BkCollective *c);
/* Sums `count` doubles at dev over the ranks in stream order (synchronized BN's partials). */
void bk_collective_sum_double(BkCollective *c, double *dev, size_t count);

/* ---- convolution (im2col + gemm on the CPU) ---- */
typedef struct {
    int in_c, in_h, in_w;
    int out_c, out_h, out_w;
    int k_h, k_w, stride, pad, groups;
} ConvShape;
/* What a convolution of up to `batch` images needs (the bias gradient's per-image sums among it). */
Workspace conv_workspace(const ConvShape *s, size_t weight_elems, int batch);
void bk_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                       const real *b, real *y);
/* dw and db are added to; dx is added to, or with `accumulate` false written (it held nothing
 * yet). dx may be NULL (first layer); db may be NULL (no bias). */
void bk_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                        const real *dy, real *dx, bool accumulate, real *dw, real *db);

/* ---- fully connected: y[n,out] = x[n,in] W[out,in]^T + b ---- */
void bk_linear_forward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                       const real *b, real *y);
void bk_linear_backward(Backend *bk, int n, int in, int out, const real *x, const real *w,
                        const real *dy, real *dx, real *dw, real *db);

/* ---- elementwise ---- */
/* y may be x, and the add's y may be a: the net runs ReLU and the residual add in place. */
void bk_relu_forward(Backend *bk, size_t count, const real *x, real *y);
/* dx += dy where y > 0; with `accumulate` false dx = that instead (dx held nothing yet) */
void bk_relu_backward(Backend *bk, size_t count, const real *y, const real *dy, real *dx, bool accumulate);
/* y = a + b, or with relu max(0, a + b): the add and the ReLU after it in one pass */
void bk_add_forward(Backend *bk, size_t count, const real *a, const real *b, bool relu, real *y);
void bk_accumulate(Backend *bk, size_t count, const real *dy, real *dx); /* dx += dy */
/* Inverted dropout: mask holds 0 or 1/(1-p). Element i of the tensor is dropped when the
 * Philox4x32-10 uniform of (seed, step, layer, first_element + i) is below p (see
 * philox.h), so a mask is a pure function of those and the same on every backend and any
 * number of threads; first_element places a micro-batch or a rank's share within the
 * step's whole batch. */
typedef struct {
    uint64_t seed, step, first_element;
    uint32_t layer;
} DropoutKey;
void bk_dropout_forward(Backend *bk, size_t count, real p, const DropoutKey *key, real *mask,
                        const real *x, real *y);
void bk_dropout_backward(Backend *bk, size_t count, const real *mask, const real *dy, real *dx);

/* A batch's pixels to the network's input: y = (x / 255 - mean[ch]) / std[ch] for each of
 * `images` images of c planes of hw uint8 pixels (x and y backend memory; mean and std host
 * arrays of c values), computed in `real` in that order, as pixel_normalize (engine/data/pixel.h)
 * does, so every backend gives the CPU's inputs bit for bit. */
void bk_normalize_pixels(Backend *bk, size_t images, int c, size_t hw, const uint8_t *x, const float *mean,
                         const float *std, real *y);

/* ---- pooling ---- */
typedef struct {
    int c, in_h, in_w, out_h, out_w, k, stride, pad;
} PoolShape;
/* argmax: one int32 per output element, the flat input index within its plane. */
void bk_maxpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y,
                        int32_t *argmax);
/* Adds each output's gradient into dx at its argmax; accumulate false: dx is written, not read
 * (zero where no window took the input). */
void bk_maxpool_backward(Backend *bk, const PoolShape *s, int n, const int32_t *argmax,
                         const real *dy, real *dx, bool accumulate);
/* Average pooling counts the padding in the divisor (PyTorch's default). */
void bk_avgpool_forward(Backend *bk, const PoolShape *s, int n, const real *x, real *y);
void bk_avgpool_backward(Backend *bk, const PoolShape *s, int n, const real *dy, real *dx);

/* ---- normalization ---- */
typedef struct {
    int c, hw;
    real eps, momentum; /* running = (1-momentum)*running + momentum*batch (PyTorch) */
    /* a ReLU fused after it: y = max(0, BN(x)), in the same pass; backward takes the ReLU's mask
     * from x and the forward's coefficients (gamma, beta and the saved statistics), recomputed
     * to the same bits, so nothing more is stored and values and gradients are those of the
     * two layers apart */
    bool relu;
} BatchNormShape;
/* Training: batch statistics; saves mean and 1/sqrt(var+eps) for backward and
 * updates the running statistics (unbiased variance, as PyTorch and Caffe).
 * gamma/beta may be NULL (no affine: NVCaffe's AlexNet-BN). Backward recomputes
 * the normalized input from x and the saved statistics, as PyTorch does, instead
 * of keeping another activation-sized tensor. */
/* Synchronized BN (--sync-bn): the statistics span the images of every rank. The backend
 * hands its per-channel partial sums to `sum` (an allreduce), which replaces them with the
 * sums over all ranks; NULL: this batch alone. */
typedef struct {
    void (*sum)(void *ctx, double *values, int n);
    void *ctx;
    double *scratch; /* backend memory: 2*c + 1 doubles, the partial sums handed to `sum` */
    BkCollective *device_sum; /* when set, the backend sums the scratch with it instead */
} BnSync;
/* The workspace batch normalization needs at a batch size (reserve it before the first step). */
Workspace batchnorm_workspace(const BatchNormShape *s, int batch);
void bk_batchnorm_forward_train(Backend *bk, const BatchNormShape *s, int n, const real *x,
                                const real *gamma, const real *beta, real *y, real *save_mean,
                                real *save_invstd, real *running_mean, real *running_var,
                                const BnSync *sync);
void bk_batchnorm_forward_eval(Backend *bk, const BatchNormShape *s, int n, const real *x,
                               const real *gamma, const real *beta, const real *running_mean,
                               const real *running_var, real *y);
/* dgamma/dbeta get this rank's share (the gradient allreduce sums them); dx uses the
 * sums over all ranks when sync is given. dx is added to, or with `accumulate` false written
 * (it held nothing yet; then dx may be dy, written in place). beta is read only with a fused
 * ReLU (s->relu). */
void bk_batchnorm_backward(Backend *bk, const BatchNormShape *s, int n, const real *x,
                           const real *gamma, const real *beta, const real *save_mean, const real *save_invstd,
                           const real *dy, real *dx, bool accumulate, real *dgamma, real *dbeta,
                           const BnSync *sync);

/* Local response normalization across channels (Caffe ACROSS_CHANNELS, PyTorch
 * LocalResponseNorm): y = x / (k + alpha/size * sum_{window} x^2)^beta. `scale`
 * keeps the denominator base for backward. */
typedef struct {
    int c, hw, size;
    real alpha, beta, k;
} LrnShape;
/* The workspace bk_lrn_backward needs (reserve it before the first step). */
Workspace lrn_workspace(const LrnShape *s);
void bk_lrn_forward(Backend *bk, const LrnShape *s, int n, const real *x, real *y, real *scale);
void bk_lrn_backward(Backend *bk, const LrnShape *s, int n, const real *x, const real *y,
                     const real *scale, const real *dy, real *dx);

/* ---- loss: mean softmax cross-entropy with optional label smoothing ----
 * Writes probabilities, and result[0] = the mean loss, result[1] = the number of correct
 * top-1 predictions (result and labels are backend memory).
 * Targets are (1-smoothing)*onehot + smoothing/classes, as PyTorch. */
void bk_softmax_xent_forward(Backend *bk, int n, int classes, const real *logits,
                             const int32_t *labels, real smoothing, real *probs, double *result);
/* dlogits += (probs - target) * scale; scale is 1/n for a mean over the batch. */
void bk_softmax_xent_backward(Backend *bk, int n, int classes, const real *probs,
                              const int32_t *labels, real smoothing, real scale, real *dlogits);

/* ---- optimizers ----
 * The parameters an optimizer updates, as backend addresses: tensor i has count[i] values
 * w[i] and gradients g[i], optimizer state slot[s][i] (NULL where the optimizer keeps
 * fewer slots) and a kind (ParamKind: what lars_exclude excludes). */
typedef struct {
    int n;
    real **w, **g, **slot[2];
    size_t *count;
    unsigned char *kind;
    real *scratch; /* backend memory of the largest count: w before the update (statistics) */
} BkParamList;
/* The fused multi-tensor norms: norms[2i] = ||w_i||, norms[2i+1] = ||g_i|| (backend memory,
 * 2n doubles), each summed in double in a fixed order. */
void bk_param_norms(Backend *bk, const BkParamList *pl, double *norms);
/* One update of every tensor by the optimizer `cfg` names (sgd, lars/larc with their
 * switches, adamw, lamb) at the global learning rate lr; `updates` is the number applied
 * before this one. `norms` holds bk_param_norms of this step's w and g (LARS and LAMB read
 * them; others may pass NULL when stats is NULL). With stats (backend memory, n entries)
 * the update also writes each tensor's statistics. With check (backend memory, one double;
 * NULL: always applied) the update happens only when *check is finite: otherwise weights,
 * optimizer state and statistics are left as they were. The backend reads it itself, so
 * fp16's skip of an inf/NaN step costs the host no wait (engine/optim/loss_scale.h). */
void bk_optimizer_update(Backend *bk, const OptConfig *cfg, const BkParamList *pl, double lr,
                         long updates, const double *norms, OptStats *stats, const double *check);

/* ---- vector operations ---- */
/* Sum of squares in double (a download of one value: statistics, the noise scale). */
double bk_sum_squares(Backend *bk, size_t count, const real *x);
/* The same sum, bit for bit, into backend memory *result, read by nobody on the host (fp16's
 * inf/NaN check before bk_optimizer_update). */
void bk_sum_squares_to(Backend *bk, size_t count, const real *x, double *result);
/* `bytes` from backend memory src to backend memory dst (they do not overlap), in stream order. */
void bk_copy_bytes(Backend *bk, void *dst, const void *src, size_t bytes);
void bk_copy(Backend *bk, size_t count, const real *x, real *y);
void bk_fill(Backend *bk, size_t count, real value, real *x);
void bk_scale(Backend *bk, size_t count, real alpha, real *x);               /* x *= alpha */
void bk_axpy(Backend *bk, size_t count, real alpha, const real *x, real *y); /* y += a x */

#endif
