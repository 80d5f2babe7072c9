/* rotor — running a whole model on real data (docs/run.md).
 *
 * rotor_run executes a graph operator by operator.  With a program (the
 * compiled model: active plans, idle layouts, hand-offs) every expression
 * operator runs on the emulated cores (op/emu.h) in its active plan, with
 * the SRAM each core has left beside the other operators' idle layouts and
 * the live activations as its bound, so a run checks the compiler's memory
 * promise as well as the plans.  Vendor ops run a reference kernel
 * (run/kernels.c) on their even layouts.  Without a program every
 * expression operator is evaluated directly in double precision
 * (rotor_emu_reference): the unplanned execution plans are compared with.
 * An operator that is a stage of one of the program's pipelined segments
 * runs as the segment runs it: micro-batch by micro-batch, its stage plan on
 * its group's cores (docs/run.md, "Pipelined segments").
 *
 * Values are held in double; the emulator computes in float32.  The graph
 * must carry its weights' elements (rotor_onnx_options.keep_data) and every
 * expression tensor whose elements are not its value's in row-major order
 * an element view (graph.h, rotor_view).  What the run cannot execute is
 * refused naming the operator: "op 'n3' (MaxPool): ...".
 *
 * After an error, rotor_run leaves out zeroed: nothing to free. */
#ifndef ROTOR_RUN_H
#define ROTOR_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/program.h"
#include "rotor/model/graph.h"

typedef struct rotor_run_options {
    /* The compiled program, its operators named and ordered as the graph's;
     * NULL: direct execution in double, no plans. */
    const rotor_program *program;
    const rotor_chip *chip; /* with a program: the chip it was compiled for */
    /* GraphTurbo's sub-graph instances on core groups (compile/gticca.h;
     * docs/run.md, "Instances on core groups"): the sub-graphs the compile
     * chose (its result's gticca), each run as its n instances, instance i
     * on batch slice i, with T10's program of the instance graph on its
     * group chip, compiled with gticca_compile as gticca compiled it
     * (rotor_gticca_instance_program) and refused unless it is the one
     * priced (the sub-graph's compute_s and peak_bytes; a sub-graph with
     * neither runs as compiled), its plans given the SRAM the rest of T10's
     * schedule leaves them; program is T10's program of the same graph,
     * whose other operators run as it plans them.  NULL: none. */
    const rotor_gticca_result *gticca;
    const rotor_compile_options *gticca_compile;
    /* Called after each operator: done of total (NULL: none). */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
} rotor_run_options;

typedef struct rotor_run_result {
    int nvalues;
    double **values;        /* per graph value its elements, row-major; NULL where none */
    int ops_emulated;       /* expression operators run on the emulated cores */
    int ops_direct;         /* expression operators evaluated directly (no program) */
    int ops_vendor;         /* vendor ops run by a reference kernel */
    int segments_run;       /* pipelined segments run stage by stage on their groups */
    int subgraphs_run;      /* GraphTurbo sub-graphs run as instances on their groups */
    int64_t instance_runs;  /* their instances run (a sub-graph of n instances: n) */
    int64_t stage_runs;     /* the runs of their stages (a stage streamed in m micro-batches: m) */
    int64_t peak_bytes;     /* per core, the most any operator's plan held beside the rest */
    /* The emulated time: per operator the program's setup, the emulator's
     * exchange and reduction times and the cost model's compute time, and
     * vendor ops at the vector rate, summed (0 without a program); per
     * pipelined segment its setup and its runs' recursion
     * (rotor_segment_times) with the stages' emulated run times; per
     * GraphTurbo sub-graph its slowest instance's (they run at once), with
     * the instance program's own gathers (gticca prices each entry at no
     * less than T10's hand-off into it, and the gathers it makes after the
     * sub-graph: not counted here), the operators after it with the
     * program's setups. */
    double emulated_s;
} rotor_run_result;

/* Runs g.  inputs[v] (nullable entries) gives graph input v's elements
 * (values no operator produces and that carry no data); every input an
 * operator reads must be given.  Errors name the operator and what it
 * lacks: a view, a kernel, data, or SRAM (ROTOR_ERR_NOFIT, with the bytes). */
rotor_status rotor_run(const rotor_graph *g, const double *const *inputs, const rotor_run_options *opt,
                       rotor_run_result *out, rotor_error *err);
void rotor_run_result_free(rotor_run_result *r);

/* Runs vendor op `op` of g by its reference kernel: vals[v] are the values'
 * elements (the op's inputs filled, its outputs allocated).  ROTOR_ERR_INPUT
 * naming the type when rotor has no kernel for it, or an attribute it
 * needs is missing or out of range. */
rotor_status rotor_run_kernel(const rotor_graph *g, int op, double *const *vals, rotor_error *err);

/* The tolerance rotor run checks outputs with (docs/run.md, "Tolerance"):
 * a float element x passes against its reference r when
 * |x - r| <= ROTOR_RUN_ATOL + ROTOR_RUN_RTOL |r|. */
#define ROTOR_RUN_RTOL 1e-3
#define ROTOR_RUN_ATOL 1e-5

/* How values x compare with a reference, element by element.  NaN and the
 * infinities are compared before the tolerance, which neither can pass
 * honestly (|x - NaN| > tol is false for every x): two NaNs are equal, a NaN
 * against anything else differs, and an infinity must equal the other
 * exactly (+inf against +inf).  A differing element counts in `bad` whatever
 * the tolerance, and also in `nonfinite` when a NaN or an infinity made it
 * differ. */
typedef struct rotor_run_cmp {
    double max_abs;    /* the largest |x - ref|; infinite where NaN or an infinity differs */
    int64_t bad;       /* elements that differ beyond the tolerance (exact: at all) */
    int64_t nonfinite; /* of those, the ones where x or ref is NaN or infinite */
} rotor_run_cmp;
rotor_run_cmp rotor_run_compare(const double *x, const double *ref, int64_t n, bool exact);

/* The NaN and the infinite elements of x[0..n). */
void rotor_run_count_nonfinite(const double *x, int64_t n, int64_t *nan, int64_t *inf);

/* Whether rotor has a reference kernel for vendor ops of this type (its
 * kind in the ONNX importer's registry, rotor_onnx_kernel), or of this kind. */
bool rotor_run_has_kernel(const char *type);
bool rotor_run_kernel_kind(rotor_kernel kind);

#endif
