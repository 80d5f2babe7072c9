/* rotor — GraphTurbo's schedules replayed instance by instance on the
 * event-driven simulator (issue 42, item 8: "the replay simulates sub-graph
 * instances"; docs/simulator.md, "GraphTurbo's instances").
 *
 * The schedule is the one rotor_dsa_run times (rotor_gt_schedule_build with
 * rotor_dsa_limits, the step's mode).  Five resources, each a FIFO server of
 * the engine: the cluster's matrix units, its vector units (the matrix
 * units' server too when compute_units < 2), its share of the DDR channel
 * and its GB's read and write sides (gb_gbps each, as the chip file says).
 * Every instance, in the schedule's order, becomes
 *   weights   DDR -> GB (once per sub-graph when they fit half the GB, else
 *             every instance; their landing occupies the GB's write side, the
 *             LB reading right behind it), then GB -> LB on its read side;
 *   tiles     ROTOR_GTREPLAY_TILES of them, double-buffered: tile k reads its
 *             share of the inputs (and spills) from DDR and the GB once tile
 *             k - 2 has computed, computes on the matrix then the vector
 *             units, and writes its share of the output where its scope says;
 *   a join    when its last tile is written; an instance of a consumer waits
 *             for every earlier instance of each sub-graph it reads.
 * Without cross-layer scheduling (steps per-layer .. instances) an instance's
 * weights load after the previous instance's compute, its tiles after its
 * weights, and its matrix and vector work run one after the other.  With it
 * (graphturbo) an instance's weights and first tiles load once the instance
 * two before has computed (a prefetch depth of one instance: they load while
 * the previous one computes), and with compute_units >= 2 the matrix units
 * take the next instance while the vector units finish this one.  The
 * simulated time is the last task's end. */
#ifndef ROTOR_GTREPLAY_H
#define ROTOR_GTREPLAY_H

#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/compile/dsa.h"
#include "rotor/model/graph.h"

/* Tiles an instance streams in (the double buffering inside a kernel that
 * the model's max(compute, moves) assumes; the fill and drain of a pipeline
 * of n tiles costs about 1 / n of its shorter side). */
#define ROTOR_GTREPLAY_TILES 32

typedef enum rotor_gtreplay_res {
    ROTOR_GTREPLAY_MATRIX = 0,
    ROTOR_GTREPLAY_VECTOR,
    ROTOR_GTREPLAY_DDR,
    ROTOR_GTREPLAY_GB,       /* the GB's read side: tiles' reads, weights into the LB */
    ROTOR_GTREPLAY_GB_WRITE, /* its write side: tiles' writes, weights from DDR */
    ROTOR_GTREPLAY_NRES
} rotor_gtreplay_res;

/* "matrix", "vector", "DDR", "GB read", "GB write". */
const char *rotor_gtreplay_res_name(rotor_gtreplay_res r);

typedef struct rotor_gtreplay_result {
    rotor_dsa_step step;
    double model_s;                    /* rotor_dsa_run's time of the same schedule */
    double simulated_s;                /* the replay's: the last task's end */
    double busy_s[ROTOR_GTREPLAY_NRES]; /* each resource's work, summed */
    int64_t instances, tasks;
} rotor_gtreplay_result;

/* Builds g's schedule for step on cluster c, times it by the model and
 * replays it on the simulator. */
rotor_status rotor_gtreplay_run(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                                rotor_gtreplay_result *out, rotor_error *err);

/* The busiest resource's work: no schedule of these tasks ends earlier. */
double rotor_gtreplay_busiest_s(const rotor_gtreplay_result *r);

#endif
