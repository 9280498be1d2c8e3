/* Convolution on cuDNN (the legacy cudnnConvolution* API). Each (shape, batch) gets a plan:
 * its tensor, filter and convolution descriptors and, per direction, the first algorithm in
 * cuDNN's ranking that is deterministic, computes in plain FP32 FMA (no TF32, so results
 * compare with the CPU's im2col + sgemm) and needs no more workspace than
 * st->workspace_limit. Each direction is chosen once, on its first use, so a layer that
 * never needs dx (the first) or never trains (evaluation) never asks for it.
 *
 * The ranking is cudnnGet*Algorithm_v7's heuristics by default: they depend only on the
 * shape, the GPU model and the cuDNN version, so every run of a configuration takes the same
 * algorithms and repeats itself bit for bit (and --resume continues exactly). With
 * BIGBATCH_CUDNN_FIND=1 it is cudnnFind*'s measured times instead (PyTorch's
 * cudnn.benchmark): often faster, but two processes may time two algorithms in a different
 * order and then differ in the last bits. The non-Ex cudnnFind* functions allocate their own
 * inputs and outputs, so the caller's y, dx and dw are never written by a trial run.
 * BIGBATCH_CUDNN_VERBOSE=1 prints each choice (direction, cuDNN's algorithm number, workspace).
 * BIGBATCH_CUDNN_DETERMINISTIC=0 also admits the algorithms whose sums use atomics (PyTorch's
 * default, torch.backends.cudnn.deterministic = False): a run no longer repeats bit for bit.
 *
 * 1x1 unpadded layers go to cuBLAS instead (conv_pointwise.cu) unless BIGBATCH_CUDA_POINTWISE=cudnn.
 *
 * Forward overwrites y (beta = 0) and adds the bias with cudnnAddTensor; backward adds into
 * dx, dw and db (beta = 1), as the CPU reference (engine/cpu/conv.c) does.
 *
 * --precision bf16/fp16: the plan's tensors and filter are bf16/fp16 (the convolution's sums
 * fp32: cuDNN's PSEUDO_BFLOAT16 / PSEUDO_HALF configurations) with tensor-op math, and the
 * operation runs on converted copies with the CPU emulation's roundings (lowp.cu). The
 * precision is part of the plan's key, so a backend that changes precision between
 * operations gets plans of the new one. Those copies are channels-last (NHWC, the filter
 * KRSC) where the plan's shape suits cuDNN's tensor-core kernels (layout_of), NCHW elsewhere:
 * the conversions transpose on the way in and back, so everything outside these functions
 * keeps fp32 NCHW. A layer for which cuDNN offers no NHWC algorithm in some direction goes
 * NCHW, with a warning (fall_back_to_nchw), rather than stopping the run. */
#include <string.h>

#include "cuda.h"

extern "C" {
#include "../base/util.h"
}

static_assert(sizeof(real) == sizeof(float), "the CUDA backend is float only");

struct CudaConvPlan {
    CudaConvPlan *next;
    ConvShape shape;
    int n;
    BkPrecision precision; /* the tensors' type and the math (fp32 FMA, tf32, bf16/fp16 tensor ops) */
    cudnnTensorFormat_t format; /* of x, y (dx, dy) and w: NHWC / KRSC or NCHW / KCRS (layout_of) */
    cudnnTensorDescriptor_t x, y, bias; /* bias: [1, out_c, 1, 1], broadcast over n, h, w */
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    /* per direction: found yet, the algorithm, and the workspace it needs */
    int have_fwd, have_bwd_data, have_bwd_filter;
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    size_t fwd_bytes, bwd_data_bytes, bwd_filter_bytes;
    cudnnMathType_t fwd_math, bwd_data_math, bwd_filter_math; /* each record's: the run's (set_math) */
};

static const float ONE = 1.0f, ZERO = 0.0f;

/* ConvShape is eleven ints (no padding bytes), so memcmp compares every field. */
static int plan_matches(const CudaConvPlan *p, const ConvShape *s, int n, BkPrecision precision)
{
    return p->n == n && p->precision == precision && memcmp(&p->shape, s, sizeof *s) == 0;
}

static const char *precision_name(BkPrecision p)
{
    return p == BK_PRECISION_BF16 ? "bf16" : p == BK_PRECISION_FP16 ? "fp16" : p == BK_PRECISION_TF32 ? "TF32" : "FP32";
}

/* FMA, not DEFAULT, for fp32: on Ampere and later DEFAULT_MATH lets FP32 convolutions use
 * TF32, which --precision tf32 asks for; bf16/fp16 data runs on tensor cores. */
static cudnnMathType_t math_of(BkPrecision p)
{
    return p == BK_PRECISION_FP32 ? CUDNN_FMA_MATH : p == BK_PRECISION_TF32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
}

/* The descriptor's math type. A ranking is asked for under math_of (TENSOR_OP_MATH only
 * permits tensor cores: cuDNN returns the algorithms without a tensor-op form as
 * DEFAULT_MATH); an algorithm then runs under its own record's math type, as PyTorch sets it,
 * since under another one it may need more workspace than the record says, or be refused
 * (CUDNN_STATUS_BAD_PARAM). fp32 keeps FMA whatever its record says (pick admits no tensor-op
 * record there, and DEFAULT_MATH would admit TF32). */
static void set_math(const CudaConvPlan *p, cudnnMathType_t math)
{
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, p->precision == BK_PRECISION_FP32 ? CUDNN_FMA_MATH : math));
}

/* Channels-last (NHWC x and y, KRSC filter) for the bf16/fp16 copies where cuDNN's
 * tensor-core kernels take it as it is. cuDNN's legacy-API guide lists channel counts that are
 * multiples of 8 among its Tensor Core requirements (8 two-byte values: the 16-byte vectors
 * the kernels load, which also keeps each group's channel slice 16-byte aligned) and pads
 * other counts itself only for packed NCHW data; a cuDNN 7 report (NVIDIA forum, 2018) had
 * NHWC fp16 layers with 9 output channels, or grouped ones, fail in the algorithm cuDNN
 * offered. So, per plan: NHWC when each group's input and output channels are multiples of 8
 * (ResNet's layers after the stem, AlexNet's grouped conv2/4/5 with 48 to 192 per group);
 * NCHW otherwise (the 3-channel first layers, whose padding cuDNN then does). Grouped NHWC
 * is what PyTorch's channels_last hands cuDNN 8 and 9; not yet run here. fp32 and tf32 plans
 * convolve the backend's own NCHW tensors. */
static cudnnTensorFormat_t layout_of(const CudaState *st, const ConvShape *s)
{
    const bool aligned = (s->in_c / s->groups) % 8 == 0 && (s->out_c / s->groups) % 8 == 0;
    return cuda_low_precision(st) && aligned ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

static bool nhwc(const CudaConvPlan *p) { return p->format == CUDNN_TENSOR_NHWC; }

static void plan_describe(const ConvShape *s, int n, char *buf, size_t size)
{
    snprintf(buf, size, "n=%d in=%dx%dx%d out=%dx%dx%d k=%dx%d stride=%d pad=%d groups=%d", n, s->in_c,
             s->in_h, s->in_w, s->out_c, s->out_h, s->out_w, s->k_h, s->k_w, s->stride, s->pad, s->groups);
}

/* The plan's descriptors in `format` (NHWC: x, y NHWC and the filter KRSC). */
static void plan_set_descriptors(const CudaState *st, CudaConvPlan *p, cudnnTensorFormat_t format)
{
    const ConvShape *s = &p->shape;
    const int n = p->n;
    p->format = format;
    /* x, y and w in the products' type; the sums fp32 (the convolution's compute type) */
    const cudnnDataType_t type = cuda_low_precision(st) ? cuda_lowp_cudnn_type(st) : CUDNN_DATA_FLOAT;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->x, p->format, type, n, s->in_c, s->in_h, s->in_w));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->y, p->format, type, n, s->out_c, s->out_h, s->out_w));
    /* fp32 only: bf16/fp16 add the bias in lowp.cu's kernels */
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, s->out_c, 1, 1));
    /* weight [out_c, in_c/groups, k_h, k_w], as the CPU stores it (NHWC: its KRSC copy) */
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(p->w, type, p->format, s->out_c, s->in_c / s->groups, s->k_h, s->k_w));
}

static CudaConvPlan *plan_create(const CudaState *st, const ConvShape *s, int n)
{
    CudaConvPlan *p = (CudaConvPlan *)xcalloc(1, sizeof *p, "convolution plan");
    p->shape = *s;
    p->n = n;
    p->precision = st->precision;
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->bias));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv));
    plan_set_descriptors(st, p, layout_of(st, s));
    /* cross-correlation (no kernel flip), as im2col + gemm computes */
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p->conv, s->pad, s->pad, s->stride, s->stride, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(p->conv, s->groups));
    CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, math_of(p->precision)));

    int on, oc, oh, ow;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(p->conv, p->x, p->w, &on, &oc, &oh, &ow));
    if (on != n || oc != s->out_c || oh != s->out_h || ow != s->out_w) {
        char what[256];
        plan_describe(s, n, what, sizeof what);
        fprintf(stderr, "bigbatch: cuDNN computes output %dx%dx%dx%d for convolution %s\n", on, oc, oh, ow, what);
        exit(3);
    }
    return p;
}

static void plan_destroy(CudaConvPlan *p)
{
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(p->x));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(p->y));
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(p->bias));
    CUDNN_CHECK(cudnnDestroyFilterDescriptor(p->w));
    CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(p->conv));
    free(p);
}

/* The plan of (s, n), created (without algorithms yet) on first use. */
static CudaConvPlan *plan_get(CudaState *st, const ConvShape *s, int n)
{
    for (CudaConvPlan *p = st->plans; p; p = p->next)
        if (plan_matches(p, s, n, st->precision)) return p;
    CudaConvPlan *p = plan_create(st, s, n);
    p->next = st->plans;
    st->plans = p;
    return p;
}

/* No algorithm passed: the configuration cannot run as this backend promises. */
[[noreturn]] static void no_algorithm(const CudaConvPlan *p, const char *direction, size_t limit)
{
    char what[256];
    plan_describe(&p->shape, p->n, what, sizeof what);
    fprintf(stderr,
            "bigbatch: cuDNN offers no %s %s %s algorithm within %zu bytes of workspace for convolution %s\n",
            precision_name(p->precision), nhwc(p) ? "NHWC" : "NCHW", direction, limit, what);
    exit(3);
}

static void nondeterministic_warning(const CudaConvPlan *p, const char *direction)
{
    char what[256];
    plan_describe(&p->shape, p->n, what, sizeof what);
    fprintf(stderr, "bigbatch: warning: no deterministic cuDNN %s algorithm for convolution %s; "
                    "its results will vary run to run\n", direction, what);
}

/* What every candidate of one direction must satisfy besides determinism. */
struct PickRule {
    size_t limit;   /* workspace bytes */
    bool tensor_ops; /* tf32, bf16, fp16: tensor-core algorithms allowed */
    int inexact;    /* an algorithm left out (-1: none), see inexact_in_fp32 */
};

/* The first (fastest) result that ran and meets the rule; with `strict`, also deterministic
 * and not `excluded` (the atomics-based ALGO_0 of the backward directions; -1: none). Index
 * into perf, or -1. Written for the three perf types, which share these fields. */
template <typename Perf>
static int pick(const Perf *perf, int count, const PickRule *rule, int excluded, int strict)
{
    const bool tensor_ops = rule->tensor_ops;
    for (int i = 0; i < count; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > rule->limit) continue;
        if ((int)perf[i].algo == rule->inexact) continue;
        /* In fp32 tensor-core results are out (TF32). The rest run with the descriptor's FMA
         * math; cuDNN may report them as DEFAULT_MATH, which PyTorch too takes as FMA for FP32. */
        if (!tensor_ops &&
            (perf[i].mathType == CUDNN_TENSOR_OP_MATH || perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
            continue;
        if (strict && (perf[i].determinism != CUDNN_DETERMINISTIC || (int)perf[i].algo == excluded)) continue;
        return i;
    }
    return -1;
}

/* On the H200 (2026-12-04) the one layer off the CPU's results was AlexNet's grouped 5x5
 * conv2: weight gradients 6e-4 and 2.4e-3 (relative to the largest) away, where every other
 * layer was within 2e-6. The suspect, not yet confirmed on a GPU: a Winograd-nonfused
 * algorithm, whose large transforms for filters above 3x3 lose digits in FP32 (the next run's
 * BIGBATCH_CUDNN_VERBOSE log names the algorithms). FP32 promises the CPU's results, so they
 * are left out there for such filters, and in bf16/fp16 too (which promise the CPU emulation's
 * results to about an ulp of fp16, finer than those losses); tf32 keeps them. */
static int inexact_in_fp32(const CudaConvPlan *p, int winograd_nonfused)
{
    return p->shape.k_h > 3 || p->shape.k_w > 3 ? winograd_nonfused : -1;
}

/* Deterministic if cuDNN offers it (unless BIGBATCH_CUDNN_DETERMINISTIC=0 lets the ranking
 * alone decide, atomics-based algorithms included, as PyTorch's default does); else (warned)
 * any result that meets the rule; else -1 for an NHWC plan, and an NCHW one stops the run. */
template <typename Perf>
static int pick_preferring_determinism(const CudaState *st, const CudaConvPlan *p, const char *direction,
                                       const Perf *perf, int count, int excluded, int winograd_nonfused)
{
    const PickRule rule = {st->workspace_limit, p->precision != BK_PRECISION_FP32,
                           p->precision == BK_PRECISION_TF32 ? -1 : inexact_in_fp32(p, winograd_nonfused)};
    int i = pick(perf, count, &rule, excluded, st->cudnn_deterministic);
    if (i < 0) {
        i = pick(perf, count, &rule, excluded, 0);
        if (i < 0) {
            if (nhwc(p)) return -1; /* the caller tries the layer in NCHW (fall_back_to_nchw) */
            no_algorithm(p, direction, rule.limit);
        }
        nondeterministic_warning(p, direction);
    }
    if (st->cudnn_verbose) {
        char what[256];
        plan_describe(&p->shape, p->n, what, sizeof what);
        fprintf(stderr, "bigbatch: cuDNN %s algorithm %d (%zu bytes of workspace) for %s convolution %s\n",
                direction, (int)perf[i].algo, perf[i].memory, nhwc(p) ? "NHWC" : "NCHW", what);
    }
    return i;
}

/* cuDNN's ranking of the algorithms of one direction: measured (cudnnFind*) or heuristic
 * (cudnnGet*_v7); both fill the same perf records. False when an NHWC plan gets none it can use
 * (the ranking call itself refused, or no record passed the rule). */
static bool ranked(const CudaConvPlan *p, cudnnStatus_t status)
{
    if (status == CUDNN_STATUS_SUCCESS) return true;
    if (!nhwc(p)) CUDNN_CHECK(status); /* stops the run, naming cuDNN's error */
    return false;
}

static bool find_forward(CudaState *st, CudaConvPlan *p)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    set_math(p, math_of(p->precision)); /* a run may have left its record's */
    const cudnnStatus_t status =
        st->cudnn_find ? cudnnFindConvolutionForwardAlgorithm(st->cudnn, p->x, p->w, p->conv, p->y,
                                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf)
                       : cudnnGetConvolutionForwardAlgorithm_v7(st->cudnn, p->x, p->w, p->conv, p->y,
                                                                CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf);
    if (!ranked(p, status)) return false;
    int i = pick_preferring_determinism(st, p, "forward", perf, count, -1,
                                        (int)CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED);
    if (i < 0) return false;
    p->fwd = perf[i].algo;
    p->fwd_bytes = perf[i].memory;
    p->fwd_math = perf[i].mathType;
    p->have_fwd = 1;
    return true;
}

static bool find_backward_data(CudaState *st, CudaConvPlan *p)
{
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int count = 0;
    set_math(p, math_of(p->precision)); /* a run may have left its record's */
    const cudnnStatus_t status =
        st->cudnn_find ? cudnnFindConvolutionBackwardDataAlgorithm(st->cudnn, p->w, p->y, p->conv, p->x,
                                                                   CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf)
                       : cudnnGetConvolutionBackwardDataAlgorithm_v7(st->cudnn, p->w, p->y, p->conv, p->x,
                                                                     CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count,
                                                                     perf);
    if (!ranked(p, status)) return false;
    int i = pick_preferring_determinism(st, p, "backward data", perf, count,
                                        (int)CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
                                        (int)CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED);
    if (i < 0) return false;
    p->bwd_data = perf[i].algo;
    p->bwd_data_bytes = perf[i].memory;
    p->bwd_data_math = perf[i].mathType;
    p->have_bwd_data = 1;
    return true;
}

static bool find_backward_filter(CudaState *st, CudaConvPlan *p)
{
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int count = 0;
    set_math(p, math_of(p->precision)); /* a run may have left its record's */
    const cudnnStatus_t status =
        st->cudnn_find ? cudnnFindConvolutionBackwardFilterAlgorithm(st->cudnn, p->x, p->y, p->conv, p->w,
                                                                     CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count,
                                                                     perf)
                       : cudnnGetConvolutionBackwardFilterAlgorithm_v7(st->cudnn, p->x, p->y, p->conv, p->w,
                                                                       CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                                       &count, perf);
    if (!ranked(p, status)) return false;
    int i = pick_preferring_determinism(st, p, "backward filter", perf, count,
                                        (int)CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
                                        (int)CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED);
    if (i < 0) return false;
    p->bwd_filter = perf[i].algo;
    p->bwd_filter_bytes = perf[i].memory;
    p->bwd_filter_math = perf[i].mathType;
    p->have_bwd_filter = 1;
    return true;
}

/* An NHWC plan that cuDNN cannot run in some direction (grouped NHWC in bf16/fp16 has not run
 * here; cuDNN pads odd channel counts itself only for NCHW data) runs the layer in NCHW from then
 * on, every direction chosen again for it: slower, said once on stderr, never a stopped run.
 * Its copies are laid out by the plan's format, so this is settled before any is made. */
static void fall_back_to_nchw(CudaState *st, CudaConvPlan *p, const char *direction)
{
    char what[256];
    plan_describe(&p->shape, p->n, what, sizeof what);
    fprintf(stderr, "bigbatch: warning: cuDNN offers no %s NHWC %s algorithm for convolution %s; "
                    "the layer runs NCHW\n", precision_name(p->precision), direction, what);
    plan_set_descriptors(st, p, CUDNN_TENSOR_NCHW);
    p->have_fwd = p->have_bwd_data = p->have_bwd_filter = 0;
}

/* The algorithms a call needs, found on first use (forward, or backward's filter and, with
 * dx, data), falling back to NCHW where an NHWC plan has none. */
static void ensure_forward(CudaState *st, CudaConvPlan *p)
{
    if (p->have_fwd || find_forward(st, p)) return;
    fall_back_to_nchw(st, p, "forward");
    if (!find_forward(st, p)) no_algorithm(p, "forward", st->workspace_limit);
}

static void ensure_backward(CudaState *st, CudaConvPlan *p, bool data)
{
    bool ok = (p->have_bwd_filter || find_backward_filter(st, p)) &&
              (!data || p->have_bwd_data || find_backward_data(st, p));
    if (ok) return;
    fall_back_to_nchw(st, p, p->have_bwd_filter ? "backward data" : "backward filter");
    if (!find_backward_filter(st, p)) no_algorithm(p, "backward filter", st->workspace_limit);
    if (data && !find_backward_data(st, p)) no_algorithm(p, "backward data", st->workspace_limit);
}

/* Whether a layer goes to cuBLAS (conv_pointwise.cu) rather than to cuDNN. */
static bool goes_to_cublas(const CudaState *st, const ConvShape *s)
{
    return st->pointwise_gemm && cuda_conv_is_pointwise(s);
}

/* The tensors' dims for lowp.cu's conversions, which lay out the copies in the plan's format. */
static Dims4 x_dims(const CudaConvPlan *p) { return Dims4{p->n, p->shape.in_c, p->shape.in_h, p->shape.in_w}; }
static Dims4 y_dims(const CudaConvPlan *p) { return Dims4{p->n, p->shape.out_c, p->shape.out_h, p->shape.out_w}; }
static Dims4 w_dims(const CudaConvPlan *p)
{
    const ConvShape *s = &p->shape;
    return filter_dims(s->out_c, s->in_c, s->groups, s->k_h, s->k_w);
}
/* The bias's broadcast plane in the low-precision y: NHWC's channel varies fastest. */
static size_t bias_plane(const CudaConvPlan *p) { return nhwc(p) ? 1 : (size_t)p->shape.out_h * p->shape.out_w; }

/* bf16/fp16 forward: y = r(conv(r(x), r(w)) + r(b)), the sum fp32. The bias is the
 * product's starting value (beta 1 on a y holding r(b)): cuDNN blends alpha * sum + beta * y
 * in its fp32 compute type and rounds once, where adding it afterwards would round twice. */
static void forward_lowp(Backend *bk, CudaConvPlan *p, const real *x, const real *w, const real *b, real *y)
{
    CudaState *st = cuda_state(bk);
    const size_t nx = dims_count(x_dims(p)), nw = dims_count(w_dims(p)), ny = dims_count(y_dims(p));
    const size_t bytes[3] = {nx * LOWP_BYTES, nw * LOWP_BYTES, ny * LOWP_BYTES};
    void *part[3]; /* x, w, y */
    ensure_forward(st, p); /* first: it settles the copies' layout */
    cuda_lowp_parts(bk, 3, bytes, part);
    cuda_lowp_convert_layout(bk, x_dims(p), nhwc(p), x, part[0]);
    cuda_lowp_convert_layout(bk, w_dims(p), nhwc(p), w, part[1]);
    if (b) cuda_lowp_fill_bias(bk, ny, p->shape.out_c, bias_plane(p), b, part[2], true);
    void *ws = cuda_workspace(bk, p->fwd_bytes);
    set_math(p, p->fwd_math);
    CUDNN_CHECK(cudnnConvolutionForward(st->cudnn, &ONE, p->x, part[0], p->w, part[1], p->conv, p->fwd, ws,
                                        p->fwd_bytes, b ? &ONE : &ZERO, p->y, part[2]));
    cuda_lowp_round_layout(bk, LOWP_COPY, y_dims(p), nhwc(p), part[2], y);
}

/* bf16/fp16 backward, as engine/cpu/low_precision.c: the products of r(x), r(w), r(dy) into
 * bf16/fp16 results (beta 0: each a whole fp32 sum rounded once), then dx = r(dx + that)
 * (accumulate) or that, dw += that, db += r(its fp32 sum). */
static void backward_lowp(Backend *bk, CudaConvPlan *p, const real *x, const real *w, const real *dy, real *dx,
                          bool accumulate, real *dw, real *db)
{
    CudaState *st = cuda_state(bk);
    const size_t nx = dims_count(x_dims(p)), nw = dims_count(w_dims(p)), ny = dims_count(y_dims(p));
    const size_t bytes[5] = {nx * LOWP_BYTES, dx ? nw * LOWP_BYTES : 0, ny * LOWP_BYTES, dx ? nx * LOWP_BYTES : 0,
                             nw * LOWP_BYTES};
    void *part[5]; /* x, w, dy, dx, dw */
    ensure_backward(st, p, dx != NULL); /* first: it settles the copies' layout */
    cuda_lowp_parts(bk, 5, bytes, part);
    cuda_lowp_convert_layout(bk, x_dims(p), nhwc(p), x, part[0]);
    if (dx) cuda_lowp_convert_layout(bk, w_dims(p), nhwc(p), w, part[1]);
    cuda_lowp_convert_layout(bk, y_dims(p), nhwc(p), dy, part[2]);

    void *ws = cuda_workspace(bk, p->bwd_filter_bytes);
    set_math(p, p->bwd_filter_math);
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(st->cudnn, &ONE, p->x, part[0], p->y, part[2], p->conv, p->bwd_filter,
                                               ws, p->bwd_filter_bytes, &ZERO, p->w, part[4]));
    cuda_lowp_round_layout(bk, LOWP_INTO_FP32, w_dims(p), nhwc(p), part[4], dw);
    if (dx) {
        ws = cuda_workspace(bk, p->bwd_data_bytes);
        set_math(p, p->bwd_data_math);
        CUDNN_CHECK(cudnnConvolutionBackwardData(st->cudnn, &ONE, p->w, part[1], p->y, part[2], p->conv, p->bwd_data,
                                                 ws, p->bwd_data_bytes, &ZERO, p->x, part[3]));
        cuda_lowp_round_layout(bk, accumulate ? LOWP_INTO_LOWP : LOWP_COPY, x_dims(p), nhwc(p), part[3], dx);
    }
    if (db) cuda_lowp_bias_grad(bk, ny / ((size_t)p->shape.out_c * bias_plane(p)), p->shape.out_c, bias_plane(p),
                                part[2], db);
}

void cuda_conv2d_forward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                         const real *b, real *y)
{
    if (n <= 0) return; /* no images: y is empty */
    CudaState *st = cuda_state(bk);
    CudaConvPlan *p = plan_get(st, s, n);
    if (cuda_low_precision(st)) {
        if (goes_to_cublas(st, s)) cuda_conv_pointwise_forward_lowp(bk, s, n, x, w, b, y);
        else forward_lowp(bk, p, x, w, b, y);
        return;
    }
    if (goes_to_cublas(st, s)) {
        cuda_conv_pointwise_forward(bk, s, n, x, w, y);
    } else {
        ensure_forward(st, p);
        void *ws = cuda_workspace(bk, p->fwd_bytes);
        set_math(p, p->fwd_math);
        CUDNN_CHECK(cudnnConvolutionForward(st->cudnn, &ONE, p->x, x, p->w, w, p->conv, p->fwd, ws, p->fwd_bytes,
                                            &ZERO, p->y, y));
    }
    if (b) CUDNN_CHECK(cudnnAddTensor(st->cudnn, &ONE, p->bias, b, &ONE, p->y, y));
}

void cuda_conv2d_backward(Backend *bk, const ConvShape *s, int n, const real *x, const real *w,
                          const real *dy, real *dx, bool accumulate, real *dw, real *db)
{
    if (n <= 0) return; /* nothing to add */
    CudaState *st = cuda_state(bk);
    CudaConvPlan *p = plan_get(st, s, n);
    if (cuda_low_precision(st)) {
        if (goes_to_cublas(st, s)) cuda_conv_pointwise_backward_lowp(bk, s, n, x, w, dy, dx, accumulate, dw, db);
        else backward_lowp(bk, p, x, w, dy, dx, accumulate, dw, db);
        return;
    }
    /* the paths below add into dx */
    if (dx && !accumulate) cuda_fill(bk, (size_t)n * s->in_c * s->in_h * s->in_w, 0, dx);
    if (goes_to_cublas(st, s)) {
        cuda_conv_pointwise_backward(bk, s, n, x, w, dy, dx, dw);
        if (db) CUDNN_CHECK(cudnnConvolutionBackwardBias(st->cudnn, &ONE, p->y, dy, &ONE, p->bias, db));
        return;
    }
    ensure_backward(st, p, dx != NULL);

    void *ws = cuda_workspace(bk, p->bwd_filter_bytes);
    set_math(p, p->bwd_filter_math);
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(st->cudnn, &ONE, p->x, x, p->y, dy, p->conv, p->bwd_filter, ws,
                                               p->bwd_filter_bytes, &ONE, p->w, dw));
    if (dx) {
        ws = cuda_workspace(bk, p->bwd_data_bytes);
        set_math(p, p->bwd_data_math);
        CUDNN_CHECK(cudnnConvolutionBackwardData(st->cudnn, &ONE, p->w, w, p->y, dy, p->conv, p->bwd_data, ws,
                                                 p->bwd_data_bytes, &ONE, p->x, dx));
    }
    /* db[c] += sum over n, h, w of dy[., c, ., .] */
    if (db) CUDNN_CHECK(cudnnConvolutionBackwardBias(st->cudnn, &ONE, p->y, dy, &ONE, p->bias, db));
}

void cuda_conv_plans_free(Backend *bk)
{
    CudaState *st = cuda_state(bk);
    while (st->plans) {
        CudaConvPlan *next = st->plans->next;
        plan_destroy(st->plans);
        st->plans = next;
    }
}
