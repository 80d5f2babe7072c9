/* rotor — documents: the JSON that `rotor plan|compile|simulate|schedule|explore
 * --json` prints, built here and only here, so that the command line and
 * the Python package (python/rotor, over librotor.so with ctypes;
 * docs/python.md) get the same bytes by construction.  The library builds
 * and returns text; the CLI prints it.  Every document carries
 * "rotor_version" (ROTOR_VERSION, base/version.h).
 *
 * Two levels:
 *  - the builders (rotor_doc_compile, rotor_doc_simulation, ...) take what a
 *    stage computed and return the document, for the CLI, which has parsed
 *    its options itself;
 *  - rotor_doc runs a whole command from an options object, for callers
 *    without the CLI (Python). */
#ifndef ROTOR_PIPELINE_DOC_H
#define ROTOR_PIPELINE_DOC_H

#include <stdbool.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/program.h"
#include "rotor/hbm/schedreplay.h"
#include "rotor/hbm/schedule.h"
#include "rotor/op/expr.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/gticcareplay.h"
#include "rotor/sim/gtreplay.h"
#include "rotor/sim/replay.h"

/* `rotor compile --json`: p's T10 program (rotor_program_write) with its
 * energy per inference (docs/energy.md) and, with compare, the
 * "comparison" object against the VGM baselines p holds
 * (docs/program-format.md).  p was run with t10 and program (and vgm,
 * vgm_oracle for compare).  *out: a malloc'd string (rotor_free), NULL on
 * an error. */
rotor_status rotor_doc_compile(const rotor_pipeline *p, const rotor_chip *chip, bool compare, char **out,
                               rotor_error *err);

/* `rotor simulate --json` (format "rotor-simulation", docs/simulator.md):
 * the replay r of program p on chip, its breakdown, utilisation, energy
 * per inference and each operator's model against simulation. */
rotor_status rotor_doc_simulation(const rotor_program *p, const rotor_chip *chip, const rotor_replay_result *r,
                                  char **out, rotor_error *err);

/* One design of an HBM schedule, run, and replayed when simulated is set
 * (`rotor schedule --simulate`): its report, the seconds each took. */
typedef struct rotor_doc_schedule_run {
    rotor_preload_design design;
    rotor_schedule_report rep;
    double seconds;
    bool simulated;
    rotor_schedule_replay_result sim;
    double sim_seconds;
} rotor_doc_schedule_run;

/* Runs designs[0 .. ndesigns) of s into runs[0 .. *shown), then Basic and
 * Ideal when not among them (the percentage of Ideal and the speedup over
 * Basic are part of every report); runs has room for
 * ROTOR_PRELOAD_NDESIGNS + 2.  *nruns counts the runs that succeeded (runs
 * [0 .. *nruns) hold reports to free with rotor_schedule_report_free). */
rotor_status rotor_doc_schedule_designs(const rotor_schedule *s, const rotor_preload_design *designs, int ndesigns,
                                        rotor_doc_schedule_run *runs, int *nruns, int *shown, rotor_error *err);

/* --design: a comma list of design names, or "all" (NULL too), into out
 * (room for ROTOR_PRELOAD_NDESIGNS), *n of them; a name unknown or given
 * twice fails naming --design. */
rotor_status rotor_doc_designs(const char *list, rotor_preload_design *out, int *n, rotor_error *err);

/* One design's energy per token or step (docs/energy.md, "Schedules"):
 * the schedule's events over its latency, on the tensor-parallel chips. */
rotor_status rotor_doc_schedule_energy(const rotor_schedule *s, const rotor_doc_schedule_run *x, rotor_energy_counts *c,
                                       rotor_energy *e, rotor_error *err);

/* `rotor schedule --json` (format "rotor-schedule", docs/schedule.md):
 * the model g's schedule s, the designs runs[0 .. nruns) with their
 * percentage of ideal (NULL: none), each design's operators with per_op,
 * and simchip, the chip replayed, when the runs were simulated (NULL:
 * not); per is what one energy figure covers ("token", "step"). */
rotor_status rotor_doc_schedule(const rotor_graph *g, const rotor_schedule *s, const rotor_doc_schedule_run *runs,
                                int nruns, const rotor_doc_schedule_run *ideal, bool per_op, const rotor_chip *simchip,
                                const char *per, char **out, rotor_error *err);

/* `rotor compile MODEL --group graphturbo --json` (docs/graphturbo.md): on
 * a chip with a global buffer, p's five steps and, when they ran, §5.1's
 * loops (format "rotor-graphturbo"; p run with graphturbo); without one,
 * the sub-graphs run as instances on core groups against T10 alone
 * ("rotor-graphturbo-icca"; p run with compile.graphturbo).  model: as the
 * caller named it; batch: a cluster's (the chip's without a GB). */
rotor_status rotor_doc_graphturbo(const rotor_pipeline *p, const rotor_chip *chip, const char *model, int64_t batch,
                                  char **out, rotor_error *err);

/* `rotor simulate MODEL --group graphturbo --json` on a chip with a global
 * buffer ("rotor-graphturbo-sim", docs/simulator.md): each step's replay
 * r, and with lr (NULL: --no-loops) each step in the passes lp chose
 * (rotor_pipeline_dsa_replay). */
rotor_status rotor_doc_graphturbo_sim(const char *model, const rotor_chip *chip, int64_t batch,
                                      const rotor_gtreplay_result r[ROTOR_DSA_STEPS], const rotor_dsa_loops *lp,
                                      const rotor_gtreplay_result *lr, char **out, rotor_error *err);

/* The same without a global buffer ("rotor-graphturbo-icca-sim"): the
 * plan of g replayed (rotor_gticca_replay). */
rotor_status rotor_doc_graphturbo_icca_sim(const char *model, const rotor_chip *chip, int64_t batch,
                                           const rotor_graph *g, const rotor_gticca_replay_result *r, char **out,
                                           rotor_error *err);

/* A whole command as its --json prints it, for callers without the CLI.
 * command: "plan", "compile", "simulate", "schedule" or "explore".  options: a JSON object whose
 * keys are the command's long options with '-' or '_' ("dim", "chip",
 * "set", "batch", "pareto_within", ...; docs/python.md lists them), values
 * a string, a number, true for a flag, and a list of strings for a
 * repeatable option (set, sweep); the model of every command is "model",
 * simulate reads no program file (compile the model instead), and
 * schedule does not replay (no --simulate, --topology or --trace);
 * explore runs every point here (no MPI, no --resume) and writes no file,
 * so its document has no "csv" nor "svg" (pipeline/explore.h).  Why a
 * JSON object and not "key=value,...": an expression has commas
 * ("C[m,n]"), a value is typed, and every language that calls C has a
 * JSON writer.  An unknown key fails naming it.  No progress, no cache
 * (the plan cache gives the same documents: docs/compile.md).  The
 * document into *out (rotor_free), or the one-line error into err; the
 * status as the CLI's (ROTOR_ERR_NOFIT when no plan fits). */
rotor_status rotor_doc(const char *command, const char *options, char **out, rotor_error *err);

/* The chip of --chip SPEC (a preset or a chip file; NULL: ipu-mk2) with
 * each --set KEY=VALUE applied, then validated ("chip after --set: ..."):
 * the one reading of the chip options, the CLI's and rotor_doc's. */
rotor_status rotor_doc_chip(const char *spec, const char *const *sets, int nsets, rotor_chip *out, rotor_error *err);
/* Each --set KEY=VALUE applied to chip, then the whole validated ("chip
 * after --set: ..."): rotor_doc_chip's second half, for a chip a file
 * carried (a program's, a plan's). */
rotor_status rotor_doc_chip_sets(rotor_chip *chip, const char *const *sets, int nsets, rotor_error *err);
/* The chip a program's text carries (rotor_program_chip; label names the
 * file) with each --set applied, then validated: *carried false and *out
 * untouched for a file written before programs carried their chip.  The
 * one reading of a program's chip, rotor simulate's and rotor run's. */
rotor_status rotor_doc_program_chip(const char *text, const char *label, const char *const *sets, int nsets,
                                    rotor_chip *out, bool *carried, rotor_error *err);

/* --expr parsed and bound to --dim into e, the error prefixed with the
 * option it comes from ("--expr: column 3: ...", "--dim: ..."). */
rotor_status rotor_doc_expr(const char *expr, const char *dims, rotor_expr *e, rotor_error *err);

/* Frees a string the library returned (a caller in another language does
 * not share the C library's free). */
void rotor_free(void *p);

#endif
