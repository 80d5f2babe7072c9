/* T10 §6.6-6.7, Figures 21 and 22: the ICCA chip under T10 against a GPU
 * (an A100 with TensorRT in the paper) on the same graphs (issue 43).
 *
 * The GPU side is compile/gpucompile.h's model of the spec sheet; each
 * comparison keeps what explains its ratio: the GPU's HBM bytes (its L2
 * misses: every byte that is not served from the L2), the FLOP bound (the
 * FLOPs at the tensor cores' peak) and the time of the kernels each bound
 * rules.  Figure 22 runs the largest run of decoder layers one chip holds
 * (pipeline/llmfit.h), the same layers on both sides. */
#ifndef ROTOR_PIPELINE_T10GPU_H
#define ROTOR_PIPELINE_T10GPU_H

#include <stdbool.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/base/gpu.h"
#include "rotor/compile/compile.h"
#include "rotor/model/graph.h"
#include "rotor/model/zoo.h"
#include "rotor/pipeline/pipeline.h"

/* The GPU's side of one graph. */
typedef struct rotor_t10gpu_side {
    double total_s;
    double bound_s[4];      /* the kernels each bound rules (op/gpu.h's rotor_gpu_bound) */
    double hbm_bytes;       /* bytes from HBM: the L2's misses */
    double flops;
    double flop_bound_s;    /* flops at the tensor cores' peak in the GPU's precision */
    double hbm_bound_s;     /* hbm_bytes at the HBM's pin bandwidth */
    int kernels;
} rotor_t10gpu_side;

/* Prices the (grouped) graph g on gpu. */
rotor_status rotor_t10gpu_price(const rotor_graph *g, const rotor_gpu *gpu, rotor_t10gpu_side *out,
                                rotor_error *err);
/* po made the load of a model as TensorRT builds it: simplified
 * (BatchNormalization folded into its convolution, constants folded;
 * docs/simplify.md), then grouped, and no ICCA stage run.  The one owner
 * of that rule: `rotor compile MODEL --chip GPU` and Figures 21-22. */
void rotor_t10gpu_options(rotor_pipeline_options *po);

/* Prices the zoo model (zo) on gpu as TensorRT builds it: simplified
 * (BatchNormalization folded into its convolution, constants folded;
 * docs/simplify.md), then grouped, as `rotor compile MODEL --chip GPU`. */
rotor_status rotor_t10gpu_price_model(const char *model, const rotor_zoo_options *zo, const rotor_gpu *gpu,
                                      rotor_t10gpu_side *out, rotor_error *err);

/* One point of Figure 22: a model's layers at a batch and phase on both. */
typedef struct rotor_t10gpu_point {
    int64_t batch;
    rotor_phase phase;
    bool ipu_fits;          /* false: T10 cannot fit it (Figure 12's x) */
    double ipu_s;           /* T10's total on the ICCA chip */
    rotor_t10gpu_side gpu;
} rotor_t10gpu_point;

#define ROTOR_T10GPU_MAX_POINTS 16

/* Figure 22 for one LLM: the layers, why one more does not fit, and each
 * (phase, batch) point, prefill first. */
typedef struct rotor_t10gpu_llm {
    int64_t layers, model_layers;
    int64_t fit_batch;      /* the batch the layers were fitted at */
    rotor_error why;        /* why layers + 1 do not fit (empty when all fit) */
    int npoints;
    rotor_t10gpu_point points[ROTOR_T10GPU_MAX_POINTS];
} rotor_t10gpu_llm;

/* The decoder layers of the zoo LLM `model` that fit the ICCA chip, in
 * prefill and in decode, at the largest of the batches at which any fits
 * (decision: so that every batch and phase runs the same layers; the paper
 * does not say how it chose), then prefill (seq tokens) and decode (one
 * token over a context of seq) at each batch on both chips.  nbatches at
 * most ROTOR_T10GPU_MAX_POINTS / 2. */
rotor_status rotor_t10gpu_llm_run(const char *model, int64_t seq, const int64_t *batches, int nbatches,
                                  const rotor_chip *chip, const rotor_gpu *gpu, const rotor_compile_options *copt,
                                  rotor_t10gpu_llm *out, rotor_error *err);

#endif
