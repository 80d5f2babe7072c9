/* rotor — one operator's time on a GPU (docs/gpu.md, "The model").
 *
 * A contraction runs as a GEMM kernel of thread-block tiles, as cuBLAS,
 * CUTLASS and TensorRT choose among them: every candidate tile (256x128 ...
 * 64x64, with split-K) is timed by wave quantisation over the SMs and by the
 * traffic its tiling makes through L2 and HBM, and the fastest is taken.
 * Anything else is a memory-bound kernel (element-wise, reduction: LayerNorm,
 * softmax).  Each is one function of the GPU's spec sheet: nothing is fitted
 * per shape or per GPU. */
#ifndef ROTOR_OP_GPU_H
#define ROTOR_OP_GPU_H

#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/base/gpu.h"
#include "rotor/op/expr.h"

/* What bounds a kernel's time: the max of its terms (docs/gpu.md). */
typedef enum rotor_gpu_bound {
    ROTOR_GPU_BOUND_COMPUTE = 0,
    ROTOR_GPU_BOUND_HBM,
    ROTOR_GPU_BOUND_L2,
    ROTOR_GPU_BOUND_LAUNCH
} rotor_gpu_bound;

const char *rotor_gpu_bound_name(rotor_gpu_bound b); /* "compute", "HBM", "L2", "launch" */

/* The sustained fraction of HBM's pin bandwidth a streaming kernel reaches
 * (refresh, read/write turnaround): one constant for every GPU.  Measured,
 * not fitted to docs/gpu.md's table: a device-to-device copy on an
 * A100-SXM4-40GB moves 1355 of its 1555 GB/s (the reference bandwidth of
 * github.com/PTsolvers/gpu-workshop-JuliaCon23, issue 7), and a read kernel
 * on an A100-SXM4-80GB reaches 1.80 of 2.04 TB/s, 88 %, with Nsight Compute
 * agreeing (forums.developer.nvidia.com/t/339083).  docs/gpu.md, "Constants". */
#define ROTOR_GPU_HBM_EFFICIENCY (1355.0 / 1555.0)

/* The sustained fraction of the L2's read bandwidth (the whitepaper's bytes a
 * clock) that cp.async loads (the GEMM's path to shared memory) reach: Nsight
 * Compute counts 1.5 sectors a cycle an L2 slice for cp.async.cg against the
 * 2 a slice the peak assumes, 3840 of 5120 bytes a clock on an A100
 * (github.com/smallscientist1/cuda_microbenchmark, analysis_A100.md).  One
 * constant for every GPU; docs/gpu.md, "Constants". */
#define ROTOR_GPU_L2_EFFICIENCY 0.75

/* The load-to-use latency, in SM clock cycles, of data in the far L2
 * partition, which a GEMM tile's pipeline fill waits before its first MMA
 * (op/gpu.c, exposed_prologue_s): a pointer chase of one warp on an
 * A100-SXM4-80GB at 1410 MHz takes 388 cycles a load for a buffer that spills
 * into the far partition (27-36 MB; 205 in the near one, 552 from DRAM)
 * (github.com/RRZE-HPC/gpu-benches, gpu-latency/a100_80.txt, the benchmark
 * "gpu-latency" of its README).  The same cycles for every GPU, at its clock
 * (0.28 us on an A100); docs/gpu.md, "Constants". */
#define ROTOR_GPU_L2_LATENCY_CYCLES 388.0

/* A contraction as a GEMM: batch x (M x K) . (K x N). */
typedef struct rotor_gemm_shape {
    int64_t batch, m, n, k;
    int64_t a_bytes, b_bytes, c_bytes; /* each operand's distinct bytes, all batches */
} rotor_gemm_shape;

/* How an operator sits in a graph (compile/gpucompile.c); zero for one alone. */
typedef struct rotor_gpu_context {
    /* inputs an earlier kernel left in L2 (they fit): read from L2, not HBM */
    int64_t l2_resident_bytes;
    /* extra bytes an element-wise epilogue fused in reads (bias, residual) */
    int64_t epilogue_bytes;
    double epilogue_flops;
} rotor_gpu_context;

typedef struct rotor_gpu_estimate {
    double seconds;          /* the kernel(s), launch included */
    double compute_s, hbm_s, l2_s, launch_s; /* the terms; seconds = max(compute, hbm, l2) + launch */
    rotor_gpu_bound bound;   /* the largest term (launch when it exceeds the rest) */
    double flops;
    double hbm_bytes, l2_bytes; /* bytes moved from HBM, and from L2 to the SMs */
    int kernels;             /* launches */
    /* GEMM only (tile_m 0 otherwise): the chosen tile and its quantisation */
    int64_t tile_m, tile_n, tile_k, split_k;
    int64_t tiles, ctas_per_sm, waves;
    rotor_gemm_shape gemm;
} rotor_gpu_estimate;

/* The GEMM view of a bound contraction: axes in Y, A and B are batch, in Y
 * and A only M, in Y and B only N, in neither output K.  Inputs 1 and 2 are
 * A and B.  Fails (ROTOR_ERR_INPUT, naming the expression) when it is not a
 * two-input contraction. */
rotor_status rotor_gpu_gemm_shape(const rotor_expr *e, const rotor_gpu *gpu, rotor_gemm_shape *out, rotor_error *err);

/* One GEMM's best tiling (ctx may be NULL). */
void rotor_gpu_gemm(const rotor_gemm_shape *s, const rotor_gpu *gpu, const rotor_gpu_context *ctx,
                    rotor_gpu_estimate *out);

/* A memory-bound kernel moving `bytes` (ctx->l2_resident_bytes of them from
 * L2) and doing `flops` on the CUDA cores. */
void rotor_gpu_memory_kernel(double bytes, double flops, const rotor_gpu *gpu, const rotor_gpu_context *ctx,
                             rotor_gpu_estimate *out);

/* Flash-style fused attention (one kernel): the score and context GEMMs
 * at the tensor rate, the softmax's flops on the CUDA cores and its
 * exponentials on the SFUs after them, and Q, K, V and O through HBM once.
 * flops_qk, flops_pv: the two contractions; softmax_flops: the softmax's
 * other arithmetic; exps: its exponentials (one a score); io_bytes: Q, K,
 * V and O. */
void rotor_gpu_fused_attention(double flops_qk, double flops_pv, double softmax_flops, double exps, double io_bytes,
                               const rotor_gpu *gpu, rotor_gpu_estimate *out);

/* One operator of --expr: a contraction as a GEMM, anything else as a
 * memory-bound kernel. */
rotor_status rotor_gpu_op(const rotor_expr *e, const rotor_gpu *gpu, const rotor_gpu_context *ctx,
                          rotor_gpu_estimate *out, rotor_error *err);

#endif
