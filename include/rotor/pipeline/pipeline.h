/* rotor — the pipeline in one call, as chibicc's cc1() reads tokenize ->
 * preprocess -> parse -> codegen:
 *
 *   load     a zoo model (model/zoo.c) or an ONNX file (model/onnx.c)
 *   simplify BatchNormalization folded, constants folded (model/simplify.c),
 *            when asked
 *   group    epilogues fused, layout operators folded (model/group.c)
 *   compile  T10's idle/active plans and Algorithm 1 (compile/compile.c),
 *            and/or the VGM baseline (compile/vgm.c)
 *   program  the rotor-program written and read back (compile/program.c),
 *            exactly what `rotor simulate` replays from a file
 *   schedule the Elk HBM schedule input of the grouped graph (hbm/schedule.c)
 *
 * Every subcommand that takes a model is parse -> rotor_pipeline_run ->
 * print.  The stages a run goes through are chosen in the options; a stage's
 * result is in rotor_pipeline when it ran.  docs/architecture.md draws the
 * whole flow. */
#ifndef ROTOR_PIPELINE_H
#define ROTOR_PIPELINE_H

#include <stdbool.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/program.h"
#include "rotor/compile/vgm.h"
#include "rotor/hbm/schedule.h"
#include "rotor/model/graph.h"
#include "rotor/compile/dsa.h"
#include "rotor/model/group.h"
#include "rotor/model/onnx.h"
#include "rotor/model/simplify.h"
#include "rotor/model/train.h"
#include "rotor/model/zoo.h"
#include "rotor/sim/gtreplay.h"

typedef struct rotor_pipeline_options {
    const char *model;        /* a zoo name, or an ONNX file (rotor_model_is_onnx) */
    rotor_zoo_options zoo;    /* zoo models: batch, seq, layers, phase */
    rotor_onnx_options onnx;  /* ONNX files: --dim, --input and --value (onnx.h); zero: none */
    /* BatchNormalization folded into its convolution and constants folded
     * (docs/simplify.md), after load and before group; off by default */
    bool simplify;
    bool no_group;            /* the graph as imported, not grouped (rotor run executes it) */
    /* the training step instead (model/train.h, docs/training.md): the loss,
     * the backward pass and train_opt's optimizer, after load and before
     * group; an ONNX file's BatchNormalization is lowered in training mode
     * (set onnx.train too) */
    bool train;
    rotor_train_options train_opt;
    /* GraphTurbo's schedules on the chip's memory hierarchy, after grouping:
     * the per-layer baseline and the four steps of its Fig. 15 ablation
     * (compile/dsa.h, docs/graphturbo.md).  The graph is one cluster's
     * share.  Needs a chip with a global buffer and off-chip memory. */
    bool graphturbo;
    /* with graphturbo, a zoo model: each step also run as L passes of
     * batch / L a cluster, one after another, for every divisor L of the
     * batch (GraphTurbo §5.1's loop execution within a cluster), the
     * fastest into rotor_pipeline.loops (rotor_pipeline_dsa_loops) */
    bool dsa_loops;
    /* with graphturbo: where the graphturbo step keeps each activation value
     * (rotor_dsa_values), in the pass the loops chose, into
     * rotor_pipeline.values (rotor_pipeline_dsa_values) */
    bool dsa_values;
    /* the graph's values at the chip's element size, as GraphTurbo's DSA
     * schedules size them (rotor_graph_at_element_bytes): implied by
     * graphturbo; set alone where the schedules are replayed or run
     * without being timed here (rotor simulate --no-loops, which replays
     * the graph: without it a float32 file replayed at twice its bytes;
     * rotor run --group graphturbo, which builds the schedule itself) */
    bool dsa_sizes;
    bool t10;                 /* compile after T10 */
    bool vgm;                 /* compile with the VGM baseline (Roller) too; its failure is kept apart */
    bool vgm_oracle;          /* and with the VGM oracle (exhaustive), likewise */
    bool program;             /* write the program and read it back (needs t10) */
    /* with program: count its energy events into the result's energy
     * (rotor_energy_program_cached, compile.cache_dir keeping each
     * operator's counts; a damaged store file adds to t10.cache_damaged) */
    bool energy;
    /* A graph with no operators (an ONNX file whose every node folds to a
     * constant) compiles to an empty T10 result and an empty program (no
     * operators, every total zero), where the compile would refuse it: rotor
     * run executes such a graph all the same. */
    bool allow_empty;
    /* non-NULL: build the HBM schedule input of the grouped graph with these */
    const rotor_schedule_options *schedule;
    rotor_compile_options compile; /* threads, frontier ratio, progress of the T10 compile */
} rotor_pipeline_options;

/* The wall seconds of each stage that ran (issue 45, `--profile`); the T10
 * compile's own phases are in t10.profile. */
typedef struct rotor_pipeline_times {
    double load_s;           /* the zoo build or the ONNX import */
    double simplify_s, group_s;
    double train_s;          /* the training step's construction (--train) */
    double t10_s;            /* rotor_compile, whole */
    double vgm_s;            /* the VGM baseline and its oracle */
    double program_s, schedule_s, dsa_s;
    double total_s;
} rotor_pipeline_times;

typedef struct rotor_pipeline {
    rotor_graph graph;           /* loaded; grouped unless no_group */
    bool loaded;                 /* the load stage succeeded (a later stage failed when this is set) */
    rotor_onnx_stats onnx;       /* the import's statistics; zero for zoo models */
    rotor_simplify_stats simplify; /* zero without simplify */
    rotor_train_info train;      /* with train: what the training step holds; zero without */
    rotor_group_stats group;     /* zero with no_group */
    rotor_compile_result t10;    /* with t10 */
    /* With vgm: the baseline's own status and message.  A baseline that does
     * not fit does not fail the run (the caller reports it beside T10). */
    rotor_vgm_result vgm;
    rotor_status vgm_status;
    rotor_error vgm_err;
    rotor_vgm_result oracle;     /* with vgm_oracle, likewise */
    rotor_status oracle_status;
    rotor_error oracle_err;
    rotor_program program;       /* with program */
    rotor_energy_counts energy;  /* with energy: the program's events */
    bool has_energy;
    rotor_dsa_cluster cluster;   /* with graphturbo: the chip's cluster */
    rotor_dsa_result dsa[ROTOR_DSA_STEPS]; /* with graphturbo: each step's schedule, timed */
    /* with dsa_loops: each step's fastest number of passes (one pass: dsa) */
    rotor_dsa_loops loops;
    /* with dsa_values: the graphturbo step's values, in the graph's value
     * order (indices into graph, whose names and operators a pass's graph
     * shares), their bytes and blocks those of one of values_passes passes */
    rotor_dsa_value *values;
    int nvalues;
    int64_t values_passes;
    rotor_schedule *schedule;    /* with schedule */
    rotor_pipeline_times times;  /* always */
} rotor_pipeline;

/* GraphTurbo §5.1's loop execution within a cluster, on p, a run of opt
 * with graphturbo (its dsa steps; refused without): every step again at
 * batch / L a cluster for each divisor L > 1 of opt's zoo batch (the model
 * built and planned as opt says at that batch), each taken as L passes one
 * after another, the fastest of them and the single pass into p->loops
 * (ties to fewer passes).  An ONNX file's batch is the file's: one pass
 * only (p->loops.file_batch).  All or nothing: after an error p->loops is
 * empty.  opt->compile.progress, when set, hears of each number of passes
 * done (of the divisors but 1).  rotor_pipeline_run calls it when
 * opt->dsa_loops; docs/graphturbo.md, "Loop execution within a cluster". */
rotor_status rotor_pipeline_dsa_loops(const rotor_pipeline_options *opt, const rotor_chip *chip, rotor_pipeline *p,
                                      rotor_error *err);

/* The graphturbo step's values (rotor_dsa_values) into p->values, in the
 * pass p->loops chose for it (one pass when the loops did not run): the
 * model built again at that pass's batch as the loops built it, whose
 * values must be p->graph's by name (else refused), and its levels must
 * count to the step's tensors as the loops timed them.  rotor_pipeline_run
 * calls it when opt->dsa_values; docs/graphturbo.md, "Which values". */
rotor_status rotor_pipeline_dsa_values(const rotor_pipeline_options *opt, const rotor_chip *chip, rotor_pipeline *p,
                                       rotor_error *err);

/* p->loops replayed (after rotor_pipeline_dsa_loops; refused before): each
 * step's pass, the model built again at its batch as the loops built it,
 * replayed by rotor_gtreplay_run, its times (model, simulated, busy) taken
 * passes times over, since the passes carry nothing between them; its
 * instances and tasks are one pass's.  out[k] is step k; one, when not
 * NULL, is p's own steps replayed (rotor_gtreplay_run on p->graph), taken
 * for the steps in one pass.  A pass (replayed or taken from one) whose
 * model time is not the one the loops chose (other options than theirs,
 * another graph) is refused. */
rotor_status rotor_pipeline_dsa_loops_replay(const rotor_pipeline_options *opt, const rotor_chip *chip,
                                             const rotor_pipeline *p, const rotor_gtreplay_result *one,
                                             rotor_gtreplay_result out[ROTOR_DSA_STEPS], rotor_error *err);

/* The stages `rotor compile|simulate --group graphturbo` run on chip, set
 * in po (the one rule the CLI and rotor_doc share): the simplified graph
 * (§2.2); with a global buffer, the five DSA steps and §5.1's loops unless
 * no_loops, no T10 (simulate times the steps itself, so without the loops
 * it asks none); without one, T10's schedule with sub-graphs as instances
 * on core groups (compile/gticca.h), its program for simulate, no loops. */
void rotor_pipeline_graphturbo_options(rotor_pipeline_options *po, const rotor_chip *chip, bool simulate,
                                       bool no_loops);

/* --group's word (NULL: the default) as the two flags it sets: "fused"
 * (the default: epilogues fused, layout ops folded, docs/group.md), "none"
 * (the graph as imported, which rotor run executes: po.no_group) or
 * "graphturbo".  ROTOR_ERR_INPUT with one line otherwise: the one reading
 * of rotor compile's, rotor simulate's and rotor_doc's --group. */
rotor_status rotor_pipeline_group_parse(const char *group, bool *graphturbo, bool *no_group, rotor_error *err);

/* Whether GraphTurbo's flags fit, the one rule of rotor compile and
 * rotor_doc: no_loops and values need graphturbo, and values a chip with a
 * global buffer (chip NULL: not known yet, checked again once it is).
 * ROTOR_ERR_INPUT with one line otherwise. */
rotor_status rotor_pipeline_graphturbo_flags(bool graphturbo, bool no_loops, bool values, const rotor_chip *chip,
                                             rotor_error *err);

/* `rotor simulate --group graphturbo` on a chip with a global buffer: each
 * step of p (a run of opt: its graph, simplified; the steps themselves are
 * scheduled again here, so opt may leave graphturbo off) replayed on chip's
 * cluster (rotor_gtreplay_run) into r, and, when p's loops ran, each step
 * in its passes into lr (rotor_pipeline_dsa_loops_replay, r taken for the
 * one pass); *looped says whether lr was filled. */
rotor_status rotor_pipeline_dsa_replay(const rotor_pipeline_options *opt, const rotor_chip *chip,
                                       const rotor_pipeline *p, rotor_gtreplay_result r[ROTOR_DSA_STEPS],
                                       rotor_gtreplay_result lr[ROTOR_DSA_STEPS], bool *looped, rotor_error *err);

/* A model argument names an ONNX file when it contains '/' or ends in
 * ".onnx"; anything else is a zoo model. */
bool rotor_model_is_onnx(const char *spec);

/* Loads the model into g (the load stage alone; g is initialised either way:
 * free it with rotor_graph_free, also after an error).  ONNX options (any of
 * dims, input_shapes, values) are refused for zoo models.  onnx and stats
 * may be NULL; stats stays zero for zoo models. */
rotor_status rotor_model_load(const char *spec, const rotor_zoo_options *zo, const rotor_onnx_options *onnx,
                              rotor_graph *g, rotor_onnx_stats *stats, rotor_error *err);

/* Runs the stages opt asks for on chip (NULL when only loading and grouping)
 * in order, stopping at the first that fails; the vgm baseline runs even
 * when the T10 compile found no fit, so that both can be reported.  After
 * an error, out holds the stages that succeeded before it (the graph is
 * always initialised) and err names the failure.  Free out with
 * rotor_pipeline_free, also after an error. */
rotor_status rotor_pipeline_run(const rotor_pipeline_options *opt, const rotor_chip *chip, rotor_pipeline *out,
                                rotor_error *err);
void rotor_pipeline_free(rotor_pipeline *p);

#endif
