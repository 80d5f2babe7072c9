/* rotor — a GPU as a chip kind (docs/gpu.md, docs/chip-format.md "GPU chips").
 *
 * A GPU is not an inter-core connected chip: its SMs share an L2 and HBM,
 * and an operator runs as kernels of thread-block tiles (op/gpu.h).  So it
 * is its own value type, read from a chip file of "kind": "gpu" or from a
 * preset (a100-80gb, a100-40gb, h100-sxm), and only `rotor plan` and
 * `rotor compile` take it; rotor_chip_resolve refuses it with one line.
 * Like rotor_chip, a rotor_gpu that exists is valid.  Units are SI in the
 * struct (bytes, bytes/s, FLOP/s, seconds) and unit-suffixed in the file. */
#ifndef ROTOR_GPU_H
#define ROTOR_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"

/* The precision operators run in; the file's "dtype" key by these names
 * ("fp16", "bf16", "tf32", "fp32", "int8").  fp32 runs on the CUDA cores
 * (no tensor core takes fp32 operands); tf32 takes fp32 operands (4 bytes)
 * on the tensor cores. */
typedef enum rotor_gpu_dtype {
    ROTOR_GPU_FP16 = 0,
    ROTOR_GPU_BF16,
    ROTOR_GPU_TF32,
    ROTOR_GPU_FP32,
    ROTOR_GPU_INT8,
    ROTOR_GPU_NDTYPES
} rotor_gpu_dtype;

typedef struct rotor_gpu {
    char name[ROTOR_CHIP_NAME_MAX];
    int64_t sms;             /* streaming multiprocessors */
    double clock_mhz;        /* boost clock, at which the peak rates below are quoted */
    double fp16_tflops;      /* dense tensor-core rates, TFLOP/s (TOP/s for int8) */
    double bf16_tflops;
    double tf32_tflops;
    double int8_tops;
    double fp32_tflops;      /* CUDA cores (non-tensor) FP32: element-wise work and fp32 GEMMs */
    int64_t sfu_per_sm;      /* special-function units an SM (exp, rcp: one a clock each) */
    int64_t hbm_bytes;       /* HBM capacity */
    double hbm_gbps;         /* HBM bandwidth, GB/s */
    int64_t l2_bytes;        /* L2 capacity */
    double l2_gbps;          /* L2 bandwidth to the SMs, GB/s */
    int64_t smem_bytes;      /* shared memory per SM (the configurable maximum) */
    int64_t regs_per_sm;     /* 32-bit registers per SM */
    double launch_us;        /* one kernel's fixed cost: launch and ramp, microseconds */
    rotor_gpu_dtype dtype;   /* the precision operators run in (default fp16) */
    /* 1: attention (scores, softmax, context) is one flash-style kernel
     * (TensorRT's fused MHA, FlashAttention); 0: three kernels, the scores
     * through L2 or HBM.  docs/gpu.md, "Fusion". */
    int64_t fused_attention;
} rotor_gpu;

/* Built-in GPUs by name; unknown: ROTOR_ERR_INPUT listing them. */
rotor_status rotor_gpu_preset(const char *name, rotor_gpu *out, rotor_error *err);
int rotor_gpu_preset_count(void);
const char *rotor_gpu_preset_name(int i);

/* Whether a --chip spec names a GPU: a GPU preset's name, or a chip file
 * whose "kind" is "gpu" (a file that cannot be read is not one: the ICCA
 * reader then reports it). */
bool rotor_gpu_spec_is_gpu(const char *spec);

/* Reads a chip file of kind gpu (format "rotor-chip", version 1, "kind":
 * "gpu"; "base": PRESET starts from a GPU preset).  Errors name the file
 * and the key: "path: l2_bytes: expected ..., got ...". */
rotor_status rotor_gpu_parse(const char *text, size_t len, const char *label, rotor_gpu *out, rotor_error *err);
rotor_status rotor_gpu_load(const char *path, rotor_gpu *out, rotor_error *err);
/* A GPU preset name or a chip file (the rule of rotor_chip_resolve). */
rotor_status rotor_gpu_resolve(const char *spec, rotor_gpu *out, rotor_error *err);

/* --set KEY=VALUE on a GPU; errors start with "--set: ". */
rotor_status rotor_gpu_set(rotor_gpu *gpu, const char *assignment, rotor_error *err);
/* Every field's range, by key. */
rotor_status rotor_gpu_validate(const rotor_gpu *gpu, rotor_error *err);

const char *rotor_gpu_dtype_name(rotor_gpu_dtype d);
/* Bytes of one operand element in dtype d (fp16 2, tf32 and fp32 4, int8 1). */
int64_t rotor_gpu_dtype_bytes(rotor_gpu_dtype d);
/* The peak FLOP/s of a contraction in dtype d (tensor cores; fp32: CUDA cores). */
double rotor_gpu_matrix_rate(const rotor_gpu *gpu, rotor_gpu_dtype d);

#endif
