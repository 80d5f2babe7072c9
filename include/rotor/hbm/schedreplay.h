/* rotor — replaying an Elk HBM schedule on the event-driven simulator
 * (Elk §4.5, §5; docs/simulator.md, "Replaying an HBM schedule").  The hbm
 * stage's use of the simulator: it builds on the program replay's task
 * builders (sim/replay.c), which know nothing of schedules. */
#ifndef ROTOR_SCHEDREPLAY_H
#define ROTOR_SCHEDREPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/hbm/schedule.h"
#include "rotor/sim/replay.h"
#include "rotor/sim/sim.h"

/* One operator of a replayed schedule, simulated times from 0 (ps). */
typedef struct rotor_schedule_replay_op {
    int64_t pre_start_ps;   /* its first preload piece leaves HBM (no bytes: when the preload is due) */
    int64_t pre_end_ps;     /* its last piece has landed on every core */
    int64_t exe_start_ps;   /* preload done and the previous operator's barrier passed */
    int64_t exe_end_ps;     /* its barrier */
    int64_t tasks;          /* tasks emitted for its preload and its execution */
} rotor_schedule_replay_op;

typedef struct rotor_schedule_replay_result {
    rotor_preload_design design;   /* rep->result.design */
    int nops;
    rotor_schedule_replay_op *ops; /* execution order */
    int64_t simulated_ps;          /* the makespan */
    int64_t analytical_ps;         /* rep->result.latency_ps */
    double error;                  /* simulated / analytical - 1 */
    int64_t hbm_bytes;             /* sum of the operators' hbm_bytes (stats.hbm_bytes moves exactly these) */
    int64_t piece_bytes;           /* a core's preload arrives in pieces of at most this */
    rotor_sim_stats stats;         /* the whole run */
    rotor_sim_trace_summary trace; /* with options.trace: what it wrote */
    rotor_sim *sim;                /* with keep_sim, the simulator after the run (rotor_sim_trace_json,
                                      per-task timing); freed with the result.  Else NULL */
} rotor_schedule_replay_result;

/* Replays schedule s as run by rep (rotor_schedule_run on s) on one chip of
 * s, event by event: per operator, in program order, its preloads (HBM
 * controllers multicasting each datum once, in pieces, to the cores that
 * hold it; with s->pchip.sram_blocking the landing writes pause the
 * receiving core), then its execution (distribution from peers, the tile
 * replay of its chosen T10 plan, the inter-chip all-reduce as a delay on
 * every core, a barrier).  sim_chip (NULL: s->chip) may change the network
 * (topology, mesh shape, latency, HBM controllers) but not the core count;
 * it must have HBM.  keep_sim keeps the whole task graph and returns the
 * simulator in out->sim; without it the replay streams (docs/simulator.md,
 * "Streaming"): memory follows the tasks in flight, times are the same to
 * the picosecond, and its trace (opt->trace) is written as it goes.  opt may
 * be NULL.  Errors name the operator.  Free with
 * rotor_schedule_replay_result_free, also after an error. */
rotor_status rotor_schedule_replay(const rotor_schedule *s, const rotor_schedule_report *rep,
                                   const rotor_chip *sim_chip, bool keep_sim, const rotor_replay_options *opt,
                                   rotor_schedule_replay_result *out, rotor_error *err);
void rotor_schedule_replay_result_free(rotor_schedule_replay_result *r);
/* A lower bound on the tasks of a replay of s: one per preload piece (what a
 * caller sizes a trace by). */
int64_t rotor_schedule_replay_task_estimate(const rotor_schedule *s);

#endif
