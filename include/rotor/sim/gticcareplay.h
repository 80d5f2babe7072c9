/* rotor — GraphTurbo's sub-graph instances on an ICCA chip's core groups
 * replayed on the event-driven simulator (issue 42 items 7 and 8: "the
 * replay agrees with the model within 5 %"; docs/graphturbo.md, "On an ICCA
 * chip", "The replay").
 *
 * The plan is compile/gticca.c's: T10's whole-chip schedule, with some
 * sub-graphs run as n instances along the batch on groups of N/n cores.
 * The replay:
 *  - T10's operators: the program replay (rotor_replay) of T10's program,
 *    in which an operator after a sub-graph that lost a hand-off the model
 *    charged gathers instead what gticca priced (its lost_bytes and
 *    lost_rounds), the simulator moving them;
 *  - each sub-graph: each instance's own program (T10's compile of the
 *    instance graph on the group chip, as gticca compiled it) replayed on
 *    its group.  The n instances are the same program on disjoint cores of
 *    an all-to-all chip, whose only shared resources are the cores' own
 *    ports (sim/simnet.c): they share nothing, so they end together and the
 *    sub-graph's time is one instance's replay (the slowest's).  gticca
 *    accepts no mesh (compile_gticca_check refuses it in one line), where
 *    instances would share links;
 *  - the boundary: where an instance's operator reads an activation from
 *    before the sub-graph, its input crosses the chip at no less than T10's
 *    hand-off into that operator, as the model says (gticca.c entry_cost):
 *    here the hand-off as the simulator's exchange replays it in T10's
 *    program, beyond the instance replay's own gather; the lost hand-offs
 *    after it, the gathers above, replayed.
 * Every figure is the simulator's; the model's stand beside them. */
#ifndef ROTOR_GTICCAREPLAY_H
#define ROTOR_GTICCAREPLAY_H

#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/model/graph.h"

/* One sub-graph run as instances: the model's figures beside the replay's. */
typedef struct rotor_gticca_replay_sg {
    int first, last;            /* graph operators */
    int64_t instances, group_cores;
    double model_s;             /* grouped_s + penalty_s (gticca.h) */
    double model_instance_s;    /* one instance's compile total */
    double model_entry_s;       /* the boundary above it (grouped_s - model_instance_s) */
    double model_lost_s;        /* penalty_s: the hand-offs lost after it */
    double simulated_s;         /* the three below */
    double simulated_instance_s; /* one instance's program replayed on its group */
    double simulated_entry_s;   /* T10's replayed hand-offs into its entry operators beyond the instance's setup */
    double simulated_lost_s;    /* the replayed setups of the operators it lost a hand-off of, over T10's */
} rotor_gticca_replay_sg;

typedef struct rotor_gticca_replay_result {
    int nsg;
    rotor_gticca_replay_sg *sg;
    double t10_model_s, t10_simulated_s; /* T10 alone: its program and plain replay */
    double model_s, simulated_s;         /* the chosen plan: gticca's total and the replay's */
    int64_t tasks;                       /* simulator tasks, every replay's together */
} rotor_gticca_replay_result;

/* Replays the plan r->gticca of graph g on chip: prog is T10's program of
 * g (rotor_pipeline's, from r), opt the compile's options (the instances
 * are compiled again with them, as gticca did).  r->gticca.done is
 * required. */
rotor_status rotor_gticca_replay(const rotor_graph *g, const rotor_chip *chip, const rotor_program *prog,
                                 const rotor_compile_result *r, const rotor_compile_options *opt,
                                 rotor_gticca_replay_result *out, rotor_error *err);

void rotor_gticca_replay_result_free(rotor_gticca_replay_result *r);

#endif
