/* rotor — replaying a compiled program on the event-driven simulator (Elk §5;
 * issue "simulator", Replay).
 *
 * rotor_replay() turns a rotor-program (docs/program-format.md) into a
 * simulator task graph at tile granularity and runs it.  Per operator, in
 * program order:
 *   setup      every core of the active plan receives setup_bytes in
 *              setup_rounds transfers (the all-gather into the active layout);
 *   sub-tasks  one compute task per core per run of steps with no shift
 *              between them (the placement's loop order, place.c);
 *   shifts     at every step transition, one transfer per core for every
 *              tensor whose partition changes, from the ring neighbour
 *              rotor_place_sender names;
 *   reduction  the R_Y cores holding copies of one output partition run a
 *              ring reduce-scatter: R_Y - 1 rounds of bytes / R_Y each;
 *   barrier    the next operator starts when every core is done (BSP).
 * Vendor operators are one compute task of exec_s on every core.  Every
 * decision is in docs/simulator.md, "Replay".
 *
 * After an error, rotor_replay leaves out zeroed and *sim_out NULL; the single-plan, shift and
 * preload replays leave their times 0. */
#ifndef ROTOR_REPLAY_H
#define ROTOR_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/program.h"
#include "rotor/sim/sim.h"

/* One operator: the cost model's figures next to the simulator's, split into
 * the three phases (setup, compute and shifts, reduction). */
typedef struct rotor_replay_op {
    double predicted_s;          /* setup_s + exec_s from the program */
    double predicted_setup_s, predicted_main_s, predicted_reduction_s;
    double simulated_s;          /* first task start to the barrier */
    double simulated_setup_s, simulated_main_s, simulated_reduction_s;
    double wait_s;               /* longest a transfer of the op waited for a busy link */
    int64_t tasks;               /* tasks emitted for the op */
    int segment;                 /* 1 + the pipelined segment the op is a stage of (0: none).  The
                                    segment is one entry, on its first operator: predicted
                                    setup_s + run_s of the segment (main: its runs and moves,
                                    reductions inside), simulated likewise; its other operators'
                                    entries are zero */
} rotor_replay_op;

typedef struct rotor_replay_result {
    int nops;
    rotor_replay_op *ops;        /* in program order */
    double predicted_s, simulated_s;
    rotor_sim_stats stats;       /* the whole run */
    rotor_sim_trace_summary trace; /* with options.trace: what it wrote */
} rotor_replay_result;

/* Progress of a replay: operators replayed of the total, the simulated time
 * reached and the events taken; called at least every 2^20 events. */
typedef struct rotor_replay_progress {
    void (*fn)(void *ctx, int done_ops, int total_ops, int64_t now_ps, int64_t events);
    void *ctx;
} rotor_replay_progress;

/* How a replay reports (every field may be zero). */
typedef struct rotor_replay_options {
    rotor_replay_progress progress;             /* fn NULL: no progress */
    FILE *trace;                                /* non-NULL: the Chrome trace goes here */
    const rotor_sim_trace_filter *trace_filter; /* NULL: every task */
    int64_t *core_busy_ps;                      /* non-NULL: receives each core's compute busy time
                                                   (rotor_sim_core_busy_ps), one entry per core */
    int64_t reduction_hold;                     /* a streamed replay adds an operator's reduction
                                                   round by round, running each before the next,
                                                   when it has more transfers than this and its
                                                   rings share no resource (docs/simulator.md,
                                                   "Streaming a long reduction"); 0:
                                                   ROTOR_REPLAY_REDUCTION_HOLD.  The result is
                                                   the same either way */
} rotor_replay_options;

/* The default reduction_hold: 2^22 transfers, about 400 MB of the simulator's records. */
#define ROTOR_REPLAY_REDUCTION_HOLD ((int64_t)1 << 22)

/* Replays program p on chip (which may differ from the compile chip in its
 * network only: topology, mesh shape, latency; its core count must match).
 * If sim_out is non-NULL it receives the simulator after the run (for
 * rotor_sim_trace_json; the caller frees it), else the simulator is freed
 * and the replay streams (docs/simulator.md, "Streaming"), its trace too.
 * opt may be NULL. */
rotor_status rotor_replay(const rotor_program *p, const rotor_chip *chip, const rotor_replay_options *opt,
                          rotor_replay_result *out,
                          rotor_sim **sim_out, rotor_error *err);

void rotor_replay_result_free(rotor_replay_result *r);

/* Bytes per packet and per preload piece in the schedule replay
 * (docs/simulator.md, "Packets"). */
#define ROTOR_REPLAY_PACKET 1024

/* About how many tasks rotor_replay makes of p (an upper-leaning guess from
 * the plans, before building them): what a caller sizes a trace by. */
int64_t rotor_replay_task_estimate(const rotor_program *p);

/* The makespan of plan p (info from the cost model) of expression e replayed
 * alone on an idle chip, in *out_ps: its sub-tasks, shifts and reduction as
 * rotor_replay runs them, then a barrier; no setup.  Transfers move in
 * chained packets of `packet` bytes (0: whole), as the schedule replay's do.
 * *out_link_ps (unless NULL) is how long its busiest link (a core port or a
 * mesh link) was busy.  The schedule prices its plans on a mesh with both
 * (docs/schedule.md, "On a mesh"). */
rotor_status rotor_replay_plan(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                               const rotor_chip *chip, int64_t packet, int64_t *out_ps, int64_t *out_link_ps,
                               rotor_error *err);

/* The makespan of a preload of `bytes` from HBM alone on an idle chip, in
 * *out_ps: the datum goes to groups of m consecutive cores by multicast, in
 * pieces of ROTOR_REPLAY_PACKET, as the schedule replay sends every preload
 * (docs/simulator.md, "Replaying an HBM schedule").  On a mesh the schedule
 * measures each group size's cost through the edge ports with it
 * (docs/preload.md, "Edge ports"). */
rotor_status rotor_replay_preload(const rotor_chip *chip, int64_t bytes, int64_t m, int64_t *out_ps,
                                  rotor_error *err);

/* The makespan of one distribution round alone on an idle chip, in *out_ps:
 * every core fetches `bytes` from the core d ahead (mod the cores), in
 * packets of ROTOR_REPLAY_PACKET, as the schedule replay distributes a
 * preload state's chunks.  On a mesh the schedule measures each distance's
 * cost with it (docs/preload.md, "Edge ports"). */
rotor_status rotor_replay_shift(const rotor_chip *chip, int64_t d, int64_t bytes, int64_t *out_ps, rotor_error *err);

/* Where the simulated time of op departs most from the prediction, as one
 * short phrase ("setup +1.2 us, waited 1.1 us for links", "agrees"). */
void rotor_replay_explain(const rotor_replay_op *op, char *buf, size_t size);

#endif
