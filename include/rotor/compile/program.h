/* rotor — program files: a compiled model as versioned JSON ("rotor-program",
 * version 1, docs/program-format.md).  For every operator: its expression,
 * the active plan with its placement summary and loop order, the idle layout,
 * and the predicted setup, compute and communication times and memory.
 *
 * The reader trusts nothing: it re-derives every plan, recomputes its cost
 * and placement, and refuses a file whose recorded figures disagree, naming
 * the field ("p.json: operators[3].active.plan.f_t.B.k: expected a positive
 * integer", "... operators[0].exec_s: 1e-06 s does not match the plan's
 * 9.3e-06 s").
 *
 * After an error, rotor_program_write leaves *out NULL and rotor_program_parse/read leave out
 * zeroed: nothing to free. */
#ifndef ROTOR_PROGRAM_H
#define ROTOR_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/opelem.h"
#include "rotor/op/cost.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/model/graph.h"
#include "rotor/op/plan.h"

struct rotor_place;   /* rotor/op/place.h */
struct rotor_handoff; /* rotor/op/handoff.h */

#define ROTOR_PROGRAM_VERSION 1

typedef struct rotor_program_op {
    char *name;
    char type[ROTOR_OP_TYPE_MAX];
    bool vendor;
    rotor_expr expr;               /* bound; unused for vendor ops */
    /* "element_bytes", "int8_rate": the element size and rate its plans are
     * costed at (opelem.h); {0}: the chip's */
    rotor_op_elem elem;
    rotor_plan active;
    rotor_plan_info active_info;
    rotor_cost active_cost;
    rotor_plan idle_base;          /* the plan the idle layout refines */
    int64_t idle_split;            /* k */
    int64_t idle_bytes;
    int64_t live_bytes;            /* not derivable from the program (the graph's liveness): bounded only */
    int64_t active_bytes;          /* the active plan's memory (a vendor op's: bounded only) */
    double setup_s;
    int64_t setup_bytes;           /* received per core during setup (not vendor ops) */
    int64_t setup_rounds;          /* its gather rounds */
    int64_t setup_link_bytes;      /* on a mesh: its busiest link's bytes and longest route */
    int64_t setup_hops;            /* (rotor_mesh_setup_s); 0 elsewhere */
    double exec_s;
    /* per expression tensor: 1 + the index of the earlier operator whose
     * output it gathers from where that operator's plan left it (the
     * hand-off); 0: none, so that a zeroed operator has none */
    int handoff[ROTOR_MAX_TENSORS];
    rotor_view handoff_view[ROTOR_MAX_TENSORS]; /* ... and through which view (unset: none) */
    int segment;                   /* 1 + the pipelined segment it is a stage of (0: none):
                                      its active plan, setup and exec are then the
                                      unpipelined schedule's, and the segment's stage runs */
} rotor_program_op;

typedef struct rotor_program {
    char model[64];
    char chip[ROTOR_CHIP_NAME_MAX];
    int64_t cores;
    /* "topology": the network it was compiled for, "all-to-all" or "mesh WxH"
     * (rotor_chip_topology_text); "" in files written before 2026-12-03 */
    char topology[32];
    /* "chip_file": the whole chip it was compiled on, as a chip file
     * (docs/program-format.md), checked to name `chip` with its cores and
     * SRAM; has_compiled_chip false in files written before 2026-12-04 */
    bool has_compiled_chip;
    rotor_chip compiled_chip;
    rotor_solver solver; /* "solver": the plan search that found the plans (absent: exact) */
    int nops;
    rotor_program_op *ops;
    /* "segments": the pipelined segments (segment.h), by first operator;
     * every stage re-derived and costed on its group by the reader */
    int nsegments;
    rotor_segment *segments;
    rotor_pipeline_objective objective;
    double total_s, setup_s, compute_s, comm_s, reduction_s, vendor_s;
    double hidden_s; /* "hidden_s": shifts under compute (0 in files written before 2026-12-03) */
    int64_t idle_bytes, peak_bytes;
} rotor_program;

/* The program of a compiled graph as JSON text in *out (malloc'd, caller
 * frees).  Stable: the same compilation gives byte-identical text.  Fails
 * only when out of memory or when an active plan cannot be placed. */
rotor_status rotor_program_write(const rotor_graph *g, const rotor_chip *chip,
                                 const rotor_compile_result *r, char **out, rotor_error *err);

/* Reads and checks a program for chip.  label names the source in errors. */
rotor_status rotor_program_parse(const char *text, const char *label, const rotor_chip *chip,
                                 rotor_program *out, rotor_error *err);
rotor_status rotor_program_read(const char *path, const rotor_chip *chip, rotor_program *out,
                                rotor_error *err);

/* The chip a program's text was compiled on ("chip_file"), checked as a
 * chip file is: *found false (out untouched) for a file written before
 * 2026-12-04, which names its chip only.  `rotor simulate p.json` replays
 * on it, not on a preset of the same name (until 2026-12-04 a compile's
 * --set of static_w, or a chip file keeping a preset's name, was replaced
 * by the preset without a word: found by an audit helper). */
rotor_status rotor_program_chip(const char *text, const char *label, rotor_chip *out, bool *found,
                                rotor_error *err);

/* rotor_program_write, then rotor_program_parse of its text (label names it
 * in errors): what runs next is exactly what `rotor simulate FILE` would
 * run.  Each (shape, plan)'s placement is summarised once for both. */
rotor_status rotor_program_roundtrip(const rotor_graph *g, const rotor_chip *chip, const rotor_compile_result *r,
                                     const char *label, rotor_program *out, rotor_error *err);
void rotor_program_free(rotor_program *p);

/* An operator's setup exchange when some input is handed off
 * (docs/compile.md, "Hand-off"; docs/simulator.md, "Replay"): the pieces
 * (receiver, sender, bytes) the hand-off names, then the rest of
 * setup_bytes (weights, even-layout gathers) as replay_setup sends it,
 * round k into core c from (c + k) mod n.  most is the hand-off's busiest
 * port, in or out: the part of setup_bytes it accounts for.  The replay
 * moves these pieces and the energy model counts them, from this one
 * place.  Without a hand-off, handed is false and there are no pieces. */
typedef struct rotor_setup_pieces {
    bool handed;
    int64_t most;
    int64_t n, cap;
    int64_t (*v)[3];
} rotor_setup_pieces;

rotor_status rotor_setup_pieces_of(const rotor_program *p, int op, const rotor_chip *chip, int64_t n,
                                   rotor_setup_pieces *out, rotor_error *err);
/* The same pieces visited (rotor_setup_pieces_visit); *count 0 when the
 * setup is not an exchange (handed false). */
typedef rotor_status (*rotor_setup_visit)(void *ctx, int64_t dst, int64_t src, int64_t bytes);
/* A source of ready placements (the energy model keeps its last ones, issue
 * 45): program operator op's active plan placed (rotor_place_make), and with
 * h non-NULL its hand-off (rotor_handoff_make); both the placer's, alive
 * while the visit runs. */
typedef rotor_status (*rotor_setup_placer)(void *ctx, int op, const struct rotor_place **pl,
                                           const struct rotor_handoff **h, rotor_error *err);
/* The uniform rest at once: `rounds` rounds of `bytes` into each of plan
 * cores 0 .. cores - 1 (chip core c), round k from (c + k) mod n, as the
 * pieces would give it one by one (issue 45: a wide gather's pieces were
 * most of the program phase's energy count).  Asked only off a mesh. */
typedef void (*rotor_setup_gather)(void *ctx, int64_t cores, int64_t bytes, int64_t rounds);
/* placer NULL: each placement made and freed here; gather NULL: the
 * uniform rest visited piece by piece. */
rotor_status rotor_setup_pieces_visit_of(const rotor_program *p, int op, const rotor_chip *chip, int64_t n,
                                         rotor_setup_placer placer, void *pctx, rotor_setup_visit visit,
                                         rotor_setup_gather gather, void *ctx, int64_t *count, rotor_error *err);

/* The same from the plans themselves (what the program records), for the
 * compiler, which prices the exchange before any program exists: the
 * consumer's plan and setup, and each handed-off input's producer plan.
 * Each side's chip is the one its plan was costed on (opelem.h); chip is
 * the chip of n cores.  On a mesh every setup is an exchange of pieces,
 * its gathers included (handed is then set whenever setup_bytes > 0). */
typedef struct rotor_setup_consumer {
    const rotor_expr *expr;
    const rotor_plan *plan;
    const rotor_plan_info *info;
    const rotor_chip *chip;
    int64_t setup_bytes, setup_rounds;
    const struct rotor_place *place; /* the plan placed, the caller's; NULL: made here */
} rotor_setup_consumer;

typedef struct rotor_setup_input {
    const rotor_expr *expr; /* the producer's */
    const rotor_plan *plan;
    const rotor_plan_info *info;
    const rotor_chip *chip;
    const rotor_view *view; /* the consumer tensor's view of the producer's output */
    int t;                  /* the consumer's tensor */
    /* the plan placed and its hand-off, the caller's; NULL: made here */
    const struct rotor_place *place;
    const struct rotor_handoff *handoff;
} rotor_setup_input;

rotor_status rotor_setup_pieces_make(const rotor_setup_consumer *con, const rotor_setup_input *in, int nin,
                                     const rotor_chip *chip, int64_t n, rotor_setup_pieces *out, rotor_error *err);

/* The same pieces handed to visit one by one, in the same order, kept
 * nowhere (the energy model counts them as they come, issue 45): *handed
 * and *most as rotor_setup_pieces_make sets them, *count the pieces.  A
 * visitor's error stops the walk and is returned (ROTOR_ERR_NOMEM with
 * err filled). */
rotor_status rotor_setup_pieces_visit(const rotor_setup_consumer *con, const rotor_setup_input *in, int nin,
                                      const rotor_chip *chip, int64_t n, rotor_setup_visit visit,
                                      rotor_setup_gather gather, void *ctx, bool *handed, int64_t *most,
                                      int64_t *count, rotor_error *err);

/* Exchange packets (docs/simulator.md, "Packets"): 1/ROTOR_EXCHANGE_GRAIN of
 * the busiest port's bytes, whole 64 B lines, at least
 * ROTOR_EXCHANGE_PACKET_MIN.  The replay's port schedule (sim/exchange.c)
 * and a mesh's link schedule (rotor_mesh_exchange, which the compiler
 * prices) cut pieces by this one rule. */
#define ROTOR_EXCHANGE_PACKET_MIN 256
#define ROTOR_EXCHANGE_GRAIN 128
static inline int64_t rotor_exchange_packet(int64_t most) {
    int64_t p = (most + ROTOR_EXCHANGE_GRAIN - 1) / ROTOR_EXCHANGE_GRAIN;
    p = (p + 63) / 64 * 64;
    return p < ROTOR_EXCHANGE_PACKET_MIN ? ROTOR_EXCHANGE_PACKET_MIN : p;
}
void rotor_setup_pieces_free(rotor_setup_pieces *s);

#endif
