/* rotor — inter-operator pipelining over core groups (KAPLA §III-A, §IV-B;
 * issue 25 item 2; docs/kapla.md, "Pipelining").
 *
 * T10 gives every operator all the cores, one after another.  A *segment*
 * instead runs several consecutive operators at once, each a *stage* on its
 * own group of cores, and streams the activations between the groups as a
 * pipeline over *micro-batches*: slices of one output dimension (the stream
 * dimension) that every streamed stage computes in turn.  A stage's plan is
 * the same search's, for the operator at one micro-batch's extent on a chip
 * of the group's cores.
 *
 * The model of a segment (rotor_segment_times), which the replay follows
 * task for task, is bulk-synchronous, as the IPU runs its tiles: after the
 * setup (every group gathers its weights and outside inputs at once) the
 * segment runs in *steps*.  A step is a move phase, where every move into a
 * run of the step crosses the exchange at once (a core's port carries its
 * own moves in and out one after another), then a compute phase, where
 * every stage with a run in the step runs it (its plan's own shifts and
 * reduction included), each phase ending at a barrier.  Stage k's run i is
 * in step first[k] + i, first[k] being the step after its producers' runs
 * it reads (rotor_segment_steps).  So moves never share a port with a
 * plan's shifts: that sharing, in a first-come-first-served exchange, made
 * the runs of a freer schedule (moves overlapping runs) 46-127% slower than
 * a model that took the ports as free (docs/simulator.md, "Segments").
 *
 * On a 2D mesh (issue 41) a group is a band of whole rows, whose plan's
 * routes stay in its rows; a move is one exchange over the whole mesh's XY
 * routes (rotor_segment_xfer), and a step's moves follow each other
 * (rotor_segment.serial_moves): segment.c's header states the decisions. */
#ifndef ROTOR_SEGMENT_H
#define ROTOR_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/search.h"

/* What the segment choice minimises. */
typedef enum rotor_pipeline_objective {
    ROTOR_OBJECTIVE_LATENCY = 0, /* one batch's end-to-end time */
    ROTOR_OBJECTIVE_THROUGHPUT   /* the time per batch when batches follow each other back to back */
} rotor_pipeline_objective;

const char *rotor_pipeline_objective_name(rotor_pipeline_objective o);
bool rotor_pipeline_objective_find(const char *name, rotor_pipeline_objective *out);

/* A stage's input produced before the segment (or a model input): it waits
 * in the even layout, and moves into the group at setup, or run by run if
 * its slice differs per run. */
#define ROTOR_STAGE_OUTSIDE (-2)

/* One operator of a segment on its group of cores.  Its weights stay in
 * the group's layout for the whole run when weights_resident (its idle
 * layout, replacing the unpipelined one), else the group gathers them at
 * setup from the idle layout. */
typedef struct rotor_stage {
    int op;                    /* graph operator */
    int64_t first_core, cores; /* its group: cores [first_core, first_core + cores) */
    int axis;                  /* the streamed axis of its expression, -1: not streamed */
    int64_t runs;              /* the segment's micro-batches if streamed, else 1 */
    rotor_expr micro;          /* the expression of one run (the stream axis at extent / runs) */
    rotor_candidate plan;      /* the fastest plan of `micro` on `cores` cores within its SRAM */
    double exec_s;             /* one run: plan.cost.total */
    int64_t weight_bytes;      /* per core of the group: its partitions of the weights */
    int64_t setup_bytes;       /* received by its busiest core before the first run */
    int64_t setup_rounds;
    double setup_s;
    bool outside_first;        /* a mesh's: what it reads once from before the segment moves
                                  before run 0, one exchange from the even layout (every chip
                                  core a sender), not at setup (segment.c) */
    /* per expression tensor (inputs; [0] unused): */
    int from[ROTOR_MAX_TENSORS];        /* the stage of this segment producing it, or
                                           ROTOR_STAGE_OUTSIDE, or -1 (a weight) */
    bool streamed[ROTOR_MAX_TENSORS];   /* run i reads the producer's run i alone (else its last) */
    bool per_run[ROTOR_MAX_TENSORS];    /* moved before every run (else once: before run 0 from a
                                           stage, at setup from outside) */
    int64_t xfer_bytes[ROTOR_MAX_TENSORS]; /* one move: bytes through the busiest port, in or out */
    double xfer_s[ROTOR_MAX_TENSORS];   /* ... and its time (one gather round) */
} rotor_stage;

typedef struct rotor_segment {
    int first, last;     /* graph operators first .. last, one stage each */
    int dim;             /* the stream dimension of the stages' outputs */
    int64_t micro;       /* micro-batches */
    int nstages;
    rotor_stage *stages; /* stage k runs operator first + k */
    double setup_s;      /* the slowest group's setup */
    double run_s;        /* from the end of setup to the last run's end */
    double interval_s;   /* the busiest group's (or link's) time per batch, batches back to back */
    double total_s;      /* setup_s + run_s */
    int64_t peak_bytes;  /* per core, the fullest group's, with every idle layout and live value */
    bool weights_resident; /* every stage keeps its weights in its group (see rotor_stage) */
    int64_t idle_added;  /* then: per core, at most, beyond the unpipelined idle layouts */
    bool serial_moves;   /* a mesh's: the moves of a step one after another, each its own
                            exchange (rotor_segment_xfer), the phase their sum */
} rotor_segment;

/* The segment's steps (bulk-synchronous, as the IPU runs: the header
 * comment): first[k] gets the step of stage k's first run (after its
 * producers' runs it reads); returns the number of steps. */
int64_t rotor_segment_steps(const rotor_segment *s, int64_t *first);

/* Whether stage st's input t moves before its run i (from another stage,
 * or from outside run by run, or once on a mesh: outside_first). */
bool rotor_segment_moves(const rotor_stage *st, int t, int64_t i);

/* The model of the header comment, from the end of setup: *run_s, and
 * when not NULL the end of every run (fin[k * s->micro + i]: stage k's run
 * i) and of every transfer (xend[(k * ROTOR_MAX_TENSORS + t) * s->micro +
 * i]: stage k's tensor t before run i); entries that do not exist are -1.
 * Fails only when out of memory. */
rotor_status rotor_segment_times(const rotor_segment *s, double *fin, double *xend, double *run_s,
                                 rotor_error *err);

void rotor_segment_free(rotor_segment *s);

/* The buffers the pipeline adds beside a stage's plan, per core: one run's
 * partition of every tensor moved before each run, and of the output when
 * it runs more than once.  In steps the next run's input lands after this
 * run, so they are room to spare, kept for a schedule that would overlap
 * moves and runs.  The plan's memory plus these fit in what the unpipelined
 * schedule leaves the operator. */
int64_t rotor_stage_buffer_bytes(const rotor_stage *s);

/* The pieces of one move of consumer stage cs's input t from producer stage
 * ps, as the replay sends them and the energy model counts them
 * (docs/simulator.md, "Segments"): cs's plan cores each receive their
 * partition (recv bytes); laid end to end, those bytes are cut into one
 * equal range per producer plan core, and a piece is a receiver's range
 * met with a sender's.  fn(ctx, src, dst, bytes, port) gets each piece in
 * order, chip cores src and dst, and port: the index, within its group, of
 * the core on the busier side (the receiver when recv is at least a
 * sender's share), whose port the pieces take in turn.  Fails on overflow
 * or when fn fails. */
typedef rotor_status (*rotor_move_piece_fn)(void *ctx, int64_t src, int64_t dst, int64_t bytes, int64_t port,
                                            rotor_error *err);
rotor_status rotor_segment_move_pieces(const rotor_stage *ps, const rotor_stage *cs, int t, rotor_move_piece_fn fn,
                                       void *ctx, rotor_error *err);

/* The pieces of one move of a per-run input from before the segment into
 * stage cs, on a chip of n cores: the even layout spreads it over every
 * core, and the program does not record which holds what, so the
 * receivers' partitions, laid end to end, are cut into one equal range per
 * chip core (as rotor_segment_move_pieces with every core a sender; a
 * core's own range: no piece; port: the receiver's or the sender's index,
 * whichever side is busier). */
rotor_status rotor_segment_outside_pieces(const rotor_stage *cs, int t, int64_t n, rotor_move_piece_fn fn, void *ctx,
                                          rotor_error *err);

/* A chip of g of chip's cores (one chip) at the same per-core rates: the
 * chip a stage's plan is searched, costed and replayed on.  On a mesh g is
 * whole rows (a multiple of mesh_width): the band is a mesh of mesh_width x
 * g / mesh_width, and its core (x, y) is the chip's (x, y0 + y), chip core
 * first_core + local (first_core = y0 * mesh_width). */
rotor_chip rotor_segment_group_chip(const rotor_chip *chip, int64_t g);

/* Whether s runs in bands of whole rows of chip's mesh (a mesh's program on
 * its mesh): each stage laid out on its band (rotor_segment_group_chip),
 * each move rotor_segment_xfer's exchange.  A program for another chip
 * (replayed on a mesh: its network only differs) runs as on all-to-all,
 * plan core c on chip core first_core + c.  The replay and the energy
 * model ask it alike. */
bool rotor_segment_in_bands(const rotor_segment *s, const rotor_chip *chip);

/* One move of stage k's input t (rotor_segment_moves) priced on chip:
 * *bytes and *xfer_s, the figures rotor_stage.xfer_bytes and .xfer_s hold.
 * All-to-all: the busier side's bytes through one port (a receiver's
 * partition, or a sender's share) over the link rate plus one round.  A
 * mesh (docs/kapla.md, "Pipelining"): the move's pieces (as
 * rotor_segment_move_pieces or _outside_pieces cut them, each plan core at
 * its place in its band, rotor_mesh_map_cores) are one exchange over the
 * whole chip's mesh, rotor_mesh_exchange's schedule, which the replay
 * sends as is: *xfer_s its makespan, *bytes its busiest link's bytes.
 * When pk is not NULL it gets the schedule's packets (free()), *npk their
 * number (a mesh's only; else NULL and 0). */
rotor_status rotor_segment_xfer(const rotor_chip *chip, const rotor_segment *s, int k, int t, int64_t *bytes,
                                double *xfer_s, rotor_mesh_packet **pk, int64_t *npk, rotor_error *err);

/* e with axis at extent / runs (runs dividing it; axis -1 or runs 1: e
 * itself): the expression of one run of a stage. */
rotor_status rotor_segment_micro_expr(const rotor_expr *e, int axis, int64_t runs, rotor_expr *out,
                                      rotor_error *err);

/* The axis indexing dimension d of e's tensor t alone (coefficient 1), or
 * -1: the stream axis when t is the output. */
int rotor_segment_sole_axis(const rotor_expr *e, int t, int d);

#endif
