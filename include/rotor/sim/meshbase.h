/* rotor — the mesh baselines (issue 41, deliverable 3): SUMMA and Cannon
 * GEMM and a row/column-reduction GEMV, each built as a task graph on the
 * event-driven simulator and run, beside an analytic prediction of the same
 * algorithm (docs/mesh.md, "Baselines").
 *
 * The operator is a GEMM C[m,n] += A[m,k] * B[k,n] in any spelling rotor's
 * expressions allow with plain axes: one reduced axis k, at most one axis m
 * of the output and the first input, at most one axis n of the output and
 * the second input (a GEMV is m = 1 or n = 1, or an expression without one
 * of them).  The chip is a 2D mesh; the baseline runs on a p x q
 * sub-rectangle of chip 0's cores at its corner (0,0).  Local tiles are
 * priced by rotor_cost_v1_subtask, as rotor's own plans are replayed
 * (sim/replay.c), transfers by the simulator's links, elements at the
 * chip's element_bytes.
 *
 * After an error the result is zeroed. */
#ifndef ROTOR_MESHBASE_H
#define ROTOR_MESHBASE_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/search.h"
#include "rotor/sim/sim.h"

typedef enum rotor_meshbase_kind {
    ROTOR_MESHBASE_SUMMA = 0,  /* k-panels multicast along grid rows and columns */
    ROTOR_MESHBASE_CANNON = 1, /* skew, then p compute steps and p - 1 shifts on a p x p grid */
    ROTOR_MESHBASE_GEMV = 2    /* vector multicast, local GEMV, reduce-scatter along rows then columns */
} rotor_meshbase_kind;

#define ROTOR_MESHBASE_NKINDS 3

/* "summa", "cannon", "gemv"; NULL for an unknown kind. */
const char *rotor_meshbase_name(rotor_meshbase_kind k);
/* The kind named `name`; false if none is. */
bool rotor_meshbase_find(const char *name, rotor_meshbase_kind *out);

/* A baseline's core grid: p rows by q columns of cores, grid core (i, j)
 * at mesh (x, y) = (j, i), or (i, j) when transposed (the grid's rows run
 * along the mesh's width).  GEMV: the p rows are p / pk groups of pk rows;
 * a group's rows share one block of the matrix's rows and split its k
 * (pk = 1: k over the columns only).  Cannon: p == q. */
typedef struct rotor_meshbase_grid {
    int64_t p, q, pk;
    bool transposed;
} rotor_meshbase_grid;

/* What to run: the grid (p = 0: the best grid of the algorithm, see
 * rotor_meshbase_run), and whether to run the simulation (false: the
 * choice and the prediction only, no simulator is built). */
typedef struct rotor_meshbase_options {
    rotor_meshbase_grid grid;
    bool predict_only;
} rotor_meshbase_options;

/* The largest task graph a baseline builds: above it the run is refused
 * (one line naming the count), as the simulator would need gigabytes. */
#define ROTOR_MESHBASE_MAX_TASKS ((int64_t)1 << 24)

typedef struct rotor_meshbase_result {
    rotor_meshbase_kind kind;
    rotor_meshbase_grid grid;
    int64_t m, k, n;           /* the GEMM's extents (1 for an absent axis) */
    int64_t tile[3];           /* a core's tile of m, k, n (SUMMA k: the widest panel; GEMV:
                                  of its own rows and k, n or m 1) */
    int64_t steps;             /* SUMMA: k-panels; Cannon: p; GEMV: 1 */
    int64_t sram_bytes;        /* what a core holds (docs/mesh.md says what), <= rotor_chip_sram */
    double predicted_s;        /* the analytic prediction */
    double compute_s;          /* its compute part: the local tiles one core runs, in sequence */
    double simulated_s;        /* the simulator's makespan; 0 with predict_only */
    int64_t tasks;             /* tasks of the graph (without predict_only) */
    /* What moves, counted as the graph is built (a multicast's bytes once): */
    int64_t transfers;         /* point-to-point transfers and multicasts */
    int64_t bytes;             /* every transfer's and multicast's bytes */
    int64_t broadcasts;        /* multicasts: SUMMA's panels, GEMV's vector */
    int64_t broadcast_bytes;
    int64_t shifts;            /* Cannon: skew transfers and rotations of A and B */
    int64_t shift_bytes;
    int64_t reductions;        /* GEMV: reduce-scatter transfers, rows and columns */
    int64_t reduction_bytes;
    int64_t reduction_hops;    /* GEMV: the sum of their routes' hops */
    int64_t max_hops;          /* the longest route of any transfer (a multicast: to its farthest receiver) */
    rotor_sim_stats stats;     /* the simulator's (zero with predict_only) */
} rotor_meshbase_result;

/* Runs baseline `kind` of the GEMM e on mesh chip `chip`.
 * The grid: opt->grid when given (p > 0; checked: it fits the mesh, every
 * core has rows and columns of the output to compute, its tiles fit the
 * SRAM), else the grid of least predicted time among every p x q
 * sub-rectangle at the corner, both orientations on a non-square mesh,
 * whose tiles fit the SRAM and give every core work (Cannon: p = q; GEMV:
 * every pk dividing p); ties go to fewer cores, then fewer rows, then the
 * untransposed grid.  Then, unless opt->predict_only, its task graph on a
 * new simulator, run from idle.  opt may be NULL.
 * Errors: ROTOR_ERR_INPUT for a chip that is not a mesh, an expression that
 * is not a GEMM, a GEMV baseline on m > 1 and n > 1, a grid that does not
 * fit the mesh or leaves a core without work, a graph over
 * ROTOR_MESHBASE_MAX_TASKS; ROTOR_ERR_NOFIT when no grid's (or the given
 * grid's) tiles fit the SRAM, naming the smallest need. */
rotor_status rotor_meshbase_run(const rotor_expr *e, const rotor_chip *chip, rotor_meshbase_kind kind,
                                const rotor_meshbase_options *opt, rotor_meshbase_result *out, rotor_error *err);

/* The chip is a 2D mesh and e a GEMM (the rules above), or
 * ROTOR_ERR_INPUT with the line rotor_meshbase_run would give, prefixed
 * with `who`. */
rotor_status rotor_meshbase_check(const rotor_expr *e, const rotor_chip *chip, const char *who, rotor_error *err);

/* ---- rotor's own plan beside the baselines (src/sim/meshcompare.c;
 * docs/mesh.md, "rotor against the baselines on 32 x 32") ---- */

/* One baseline of a comparison: its run, or why it does not apply. */
typedef struct rotor_meshbase_entry {
    rotor_status status;        /* ROTOR_OK: res holds the run; else why holds the baseline's one line */
    char why[ROTOR_ERROR_MAX];
    rotor_meshbase_result res;  /* zero unless status is ROTOR_OK */
} rotor_meshbase_entry;

/* rotor's GEMM compiled as a one-operator program whose inputs start in the
 * even layout (each element once, spread over every core, as the compiler
 * keeps a value between operators), replayed with its setup. */
typedef struct rotor_meshbase_compiled {
    rotor_plan plan;            /* the program's active plan (Algorithm 1 weighs its setup) */
    rotor_plan_info info;
    double predicted_s;         /* the program's setup + execution */
    double simulated_s;         /* rotor_replay's makespan of the program */
    double setup_s;             /* ... of which the simulated setup */
} rotor_meshbase_compiled;

typedef struct rotor_meshbase_compare {
    rotor_candidate rotor;      /* the exact search's fastest plan on the chip (its mesh layout priced) */
    rotor_mesh_map map;         /* that plan laid on the mesh (op/meshmap.h), as the replay lays it */
    double predicted_s;         /* the plan's cost-model time, rotor.cost.total */
    double simulated_s;         /* rotor_replay_plan's makespan from the plan's step-0 layout, no setup,
                                   transfers whole, as the baselines' */
    int64_t link_busy_ps;       /* the replay's busiest link's busy time */
    rotor_meshbase_compiled compiled; /* with options' with_setup; zero otherwise */
    rotor_meshbase_entry base[ROTOR_MESHBASE_NKINDS]; /* by kind */
    int applied;                /* baselines that ran */
    int faster;                 /* ... and simulated faster than rotor's plan (simulated_s) */
    int faster_than_compiled;   /* ... faster than the compiled program (with_setup only) */
} rotor_meshbase_compare;

typedef struct rotor_meshbase_compare_options {
    int threads;                /* search threads; 0: OpenMP's default (the plans do not depend on it) */
    bool with_setup;            /* also compile and replay the one-operator program (compiled) */
} rotor_meshbase_compare_options;

/* rotor's plan and every baseline of GEMM e on mesh chip `chip`, each
 * simulated from idle: the exact search's best plan replayed by
 * rotor_replay_plan from its step-0 layout, then rotor_meshbase_run of
 * each kind on its best grid from its own layout; with opt->with_setup
 * also the compiled program (rotor_meshbase_compiled).  opt may be NULL.
 * A baseline that does not apply (the GEMV on m, n > 1, no grid's tiles fit
 * the SRAM, a graph over ROTOR_MESHBASE_MAX_TASKS) is an entry with its
 * status and line, not an error.
 * Errors: ROTOR_ERR_INPUT for a chip that is not a mesh or an expression
 * that is not a GEMM (rotor_meshbase_check); the search's or the
 * compiler's ROTOR_ERR_NOFIT when rotor has no plan; ROTOR_ERR_NOMEM.
 * After an error *out is zeroed. */
rotor_status rotor_meshbase_compare_run(const rotor_expr *e, const rotor_chip *chip,
                                        const rotor_meshbase_compare_options *opt, rotor_meshbase_compare *out,
                                        rotor_error *err);

#endif
