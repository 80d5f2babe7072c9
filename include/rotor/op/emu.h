/* rotor — a functional emulator of compute-shift plans: virtual cores with
 * private memories run a placed plan step by step on real data (float32),
 * shift partitions around their rings through the shift buffer, and reduce
 * the output's partial sums across rings at the end (T10 §4.2, §4.4;
 * cost-model-v1.md).  It also counts what it moved, so that its exchange
 * time can be checked against the cost model's communication time
 * (docs/emulator.md).
 *
 * Tensors outside the emulator are dense float arrays in row-major order over
 * their dimensions; a plain dimension over axis a has extent E_a and a compound
 * one c0*a0 + c1*a1 the window extent c0*(E_a0 - 1) + c1*(E_a1 - 1) + 1. */
#ifndef ROTOR_EMU_H
#define ROTOR_EMU_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/place.h"

/* The stated tolerance of `rotor verify`: a plan passes when every output
 * element satisfies |emulated - reference| <= ROTOR_EMU_TOLERANCE * (1 + m),
 * m = the sum of the absolute values of the terms accumulated into it (or
 * |reference| for '=').  float32 sums of n terms err by at most about
 * n * 6e-8 * m, so this holds up to reduction lengths of about 1600 in the
 * worst case and far beyond in practice; a misplaced partition errs by O(m). */
#define ROTOR_EMU_TOLERANCE 1e-4

/* Test hooks: each breaks one thing the placement guarantees, so that tests
 * can prove the verification detects it. */
typedef enum rotor_emu_mutation {
    ROTOR_EMU_MUTATE_NONE = 0,
    ROTOR_EMU_CORRUPT_PLACEMENT, /* mutate_core loads the next ring position's partition
                                    of mutate_tensor at step 0 */
    ROTOR_EMU_SKIP_SHIFT,        /* mutate_core does not receive mutate_tensor at that
                                    tensor's shift number mutate_transition (0-based) */
    ROTOR_EMU_REVERSE_RING       /* every ring of mutate_tensor walks the wrong way */
} rotor_emu_mutation;

typedef struct rotor_emu_options {
    int64_t sram_bytes;       /* per-core memory bound; 0: the chip's SRAM */
    bool no_tag_check;        /* compute with whatever a core holds, without checking
                                 that it is the partition its sub-task needs */
    rotor_emu_mutation mutation;
    int mutate_tensor;
    int64_t mutate_core;
    int64_t mutate_transition;
    int64_t *core_shifts;     /* optional, ntensors x cores: shifts each core received */
} rotor_emu_options;

typedef struct rotor_emu_result {
    int64_t cores;
    int64_t steps;                              /* sub-tasks each core computed (T) */
    int64_t transitions;                        /* step transitions with at least one shift */
    int64_t memory_per_core;                    /* bytes charged: partitions + shift buffer */
    int64_t shifts_min[ROTOR_MAX_TENSORS];      /* shifts a core received, min over cores */
    int64_t shifts_max[ROTOR_MAX_TENSORS];      /* ... max over cores */
    int64_t bytes_max[ROTOR_MAX_TENSORS];       /* bytes a core sent, max over cores */
    int64_t copies_max[ROTOR_MAX_TENSORS];      /* shift-buffer copies a core made, max */
    int64_t exchange_bytes; /* sum over transitions of the most bytes any core sent */
    double exchange_time;   /* exchange_bytes / beta + alpha * transitions (BSP lockstep) */
    double reduction_time;  /* reducing the output's R_Y partial sums (reduce-scatter) */
} rotor_emu_result;

/* Elements of tensor t's full (unpadded) array; dim_extent (nullable) gets
 * the extent of each dimension (rotor_tensor_extents counts them). */
int64_t rotor_emu_tensor_elems(const rotor_expr *e, int t, int64_t *dim_extent);

/* Runs the placed plan on chip.  in[t] for t >= 1 are the inputs (in[0] is
 * ignored); out receives the output tensor.  Errors: the plan needs more
 * memory per core than the bound (ROTOR_ERR_NOFIT, naming the bytes), the
 * right-hand side uses a function the evaluator lacks (ROTOR_ERR_INPUT,
 * naming it), a core lacks the partition its sub-task needs (ROTOR_ERR_INPUT,
 * naming step, core and tensor; only without no_tag_check). */
rotor_status rotor_emu_run(const rotor_place *pl, const rotor_chip *chip,
                           const rotor_emu_options *opt, const float *const *in, float *out,
                           rotor_emu_result *res, rotor_error *err);

/* The direct reference, in double, straight from the expression: ref gets
 * the output, mag the magnitude of each element (see ROTOR_EMU_TOLERANCE).
 * Refuses unknown functions like rotor_emu_run. */
rotor_status rotor_emu_reference(const rotor_expr *e, const float *const *in, double *ref,
                                 double *mag, rotor_error *err);

/* Fills in[t] (t >= 1, each of rotor_emu_tensor_elems elements) with
 * deterministic pseudo-random values: uniform in [-1, 1), or in [0.5, 1.5)
 * when the expression divides or calls log, sqrt, rsqrt or recip. */
void rotor_emu_random_inputs(const rotor_expr *e, uint64_t seed, float *const *in);

/* The largest |out - ref| / (1 + mag) over the output (infinity for NaN). */
double rotor_emu_max_error(const rotor_expr *e, const float *out, const double *ref,
                           const double *mag);

#endif
