/* rotor — a whole grouped graph on a GPU (docs/gpu.md, "A whole model").
 *
 * Each grouped operator is one kernel as TensorRT builds them: element-wise
 * epilogues (bias, activation, residual) already grouped into the GEMM
 * before it (model/group.c) cost their extra reads and no launch; an
 * activation the previous kernel wrote is read from L2 when it fits half of
 * it; with fused_attention, scores -> Softmax -> context is one flash-style
 * kernel (op/gpu.h).  The total is the sum of the kernels: one stream, no
 * overlap between kernels. */
#ifndef ROTOR_GPUCOMPILE_H
#define ROTOR_GPUCOMPILE_H

#include "rotor/base/error.h"
#include "rotor/base/gpu.h"
#include "rotor/model/graph.h"
#include "rotor/op/gpu.h"

typedef enum rotor_gpu_kernel_kind {
    ROTOR_GPU_KERNEL_GEMM = 0,
    ROTOR_GPU_KERNEL_MEMORY,    /* element-wise, reduction or a vendor op */
    ROTOR_GPU_KERNEL_ATTENTION, /* flash-style: this op, the Softmax and the context GEMM */
    ROTOR_GPU_KERNEL_FUSED      /* inside an attention kernel of an earlier op: no time of its own */
} rotor_gpu_kernel_kind;

const char *rotor_gpu_kernel_kind_name(rotor_gpu_kernel_kind k); /* "gemm", "memory", "attention", "fused" */

typedef struct rotor_gpu_op_time {
    rotor_gpu_kernel_kind kind;
    int fused_into;          /* FUSED: the attention kernel's op; -1 otherwise */
    rotor_gpu_estimate est;  /* zero for FUSED */
} rotor_gpu_op_time;

typedef struct rotor_gpu_compile_result {
    int nops;
    rotor_gpu_op_time *ops;  /* per graph op */
    double total_s;
    double bound_s[4];       /* the time of the kernels each bound rules, by rotor_gpu_bound */
    int kernels;
    double hbm_bytes, flops;
    /* The most HBM holds at once, in the GPU's precision: every weight and
     * KV-cache value the whole run, each activation from the kernel that
     * writes it to the last that reads it (the model's inputs from the
     * start, its outputs to the end; an attention kernel's scores never
     * leave it).  A model over the GPU's hbm_bytes is refused. */
    double hbm_held;
    /* Contractions of two 8-bit integer inputs (model/elemtype.h): every
     * kernel runs in the GPU's dtype, so unless that is int8 the CLI says
     * these are timed in another precision than the model's. */
    int int8_ops;
} rotor_gpu_compile_result;

/* The kernels of g and their times; ROTOR_ERR_NOFIT, one line with the
 * bytes, when HBM cannot hold the model (hbm_held). */
rotor_status rotor_gpu_compile(const rotor_graph *g, const rotor_gpu *gpu, rotor_gpu_compile_result *out,
                               rotor_error *err);
void rotor_gpu_compile_free(rotor_gpu_compile_result *r);

#endif
