/* rotor — the event-driven chip simulator (Elk §5 "Simulation framework").
 *
 * A simulator holds one chip's network and a task graph.  Tasks are compute
 * on a core (serialised on that core's pipeline) and transfers between nodes
 * (cores and HBM controllers) that occupy every network resource on their
 * route for their whole duration.  rotor_sim_run() plays the graph event by
 * event: a task becomes ready when its dependencies have finished, then waits
 * FIFO for its resources, then runs.  Time is integer picoseconds.
 *
 * The task API is what a program replay emits: one compute task per sub-task
 * of an operator, one transfer per shift, reduction step, setup transfer or
 * HBM load, each tagged with a category and the operator's index.  The model,
 * its units and what it leaves out are in docs/simulator.md.
 *
 * After an error, rotor_sim_create leaves *out NULL. */
#ifndef ROTOR_SIM_H
#define ROTOR_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/energy.h"

/* What a task's time is accounted as.  The order is the priority of the
 * exclusive breakdown (rotor_sim_stats.exposed_ps): compute hides everything
 * that overlaps it, and so on down. */
typedef enum rotor_sim_category {
    ROTOR_SIM_COMPUTE = 0, /* sub-task compute, reductions' arithmetic */
    ROTOR_SIM_COMM = 1,    /* shifts and reduction transfers between cores */
    ROTOR_SIM_SETUP = 2,   /* setup (all-gather) transfers between operators */
    ROTOR_SIM_HBM = 3      /* loads from and stores to HBM */
} rotor_sim_category;

#define ROTOR_SIM_NCATS 4

/* Categories by name: "compute", "communication", "setup", "hbm". */
const char *rotor_sim_category_name(rotor_sim_category c);

/* The events of a compute task that the energy model prices (docs/energy.md):
 * FLOPs on the matrix unit and on the vector unit, and the operand bytes it
 * reads from and writes to its core's SRAM.  The simulator only sums them
 * (rotor_sim_stats); zero: none. */
typedef struct rotor_sim_work {
    int64_t matrix_flops, vector_flops;
    int64_t sram_read, sram_write;
} rotor_sim_work;

/* A compute task: `duration_ps` on `core`'s pipeline.  `flops` is optional (0:
 * unknown) and only feeds rotor_sim_stats.flops_util; `work` only feeds the
 * energy counts. */
typedef struct rotor_sim_compute {
    int64_t core;
    int64_t duration_ps;
    int64_t flops;
    rotor_sim_work work;
    rotor_sim_category category;
    int op;                /* operator index (rotor_sim_set_op_name), -1: none */
    const int64_t *deps;   /* tasks that must finish first: ids already added */
    int ndeps;
} rotor_sim_compute;

/* A transfer of `bytes` from node `src` to node `dst` (src != dst, not both HBM
 * controllers).  Nodes 0 .. cores-1 are cores (chip c holds c*cores_per_chip
 * ..); HBM controllers follow (rotor_sim_hbm_node). */
typedef struct rotor_sim_transfer {
    int64_t src, dst;
    int64_t bytes;
    rotor_sim_category category;
    int op;
    const int64_t *deps;
    int ndeps;
} rotor_sim_transfer;

/* A multicast: `bytes` from node `src` to every node of `dsts` (ndsts >= 1,
 * distinct, none equal to src, not HBM controllers when src is one) as ONE
 * task.  Its route is the union of the routes src -> dsts[k], each resource
 * once: the source side (the out port or the HBM controller lane) is held and
 * charged once, every receiver's in port (or mesh link) is held for the same
 * interval.  On a mesh, a multicast from an HBM controller is one tree: it
 * enters through the controller's port nearest dsts[0] and follows the XY
 * routes from there.  Duration: the longest route's hops * latency + bytes over the
 * slowest resource of the union.  Statistics count its bytes once (what the
 * source sends).  With one receiver it is exactly a transfer.
 * path: a path multicast instead of a tree: dsts[0] is reached from src as
 * above and every later receiver through the one before, dsts[k-1] ->
 * dsts[k], each receiver forwarding the data; hops add up along the chain.
 * pause_receivers: the writes landing in a receiver's SRAM pause its core
 * (Elk footnote 2): when the multicast starts, every receiving core's
 * pipeline is also booked for bytes / link_gbps, FIFO behind what the core
 * has already booked, as a compute task that became ready at that instant
 * would be (stats.pause_ps). */
typedef struct rotor_sim_multicast {
    int64_t src;
    const int64_t *dsts;
    int ndsts;
    int64_t bytes;
    bool pause_receivers;
    bool path;                 /* receivers in order, each reached through the one before */
    rotor_sim_category category;
    int op;
    const int64_t *deps;
    int ndeps;
} rotor_sim_multicast;

/* Results of the last run, all in picoseconds. */
typedef struct rotor_sim_stats {
    int64_t makespan_ps;               /* end of the last task */
    int64_t events;                    /* events taken off the queue (3 per task) */
    int64_t tasks, transfers;
    int64_t busy_ps[ROTOR_SIM_NCATS];  /* sum of the category's task durations (resource time) */
    int64_t active_ps[ROTOR_SIM_NCATS];/* wall time with >= 1 task of the category running */
    int64_t exposed_ps[ROTOR_SIM_NCATS];/* wall time by priority: compute, then comm, setup, hbm */
    int64_t idle_ps;                   /* nothing running; sum(exposed_ps) + idle_ps == makespan */
    int64_t stall_ps;                  /* sum over transfers of start - ready (waiting on busy resources) */
    int64_t contended_ps;              /* wall time with >= 1 transfer waiting */
    int64_t compute_wait_ps;           /* sum over compute tasks of start - ready (core busy) */
    int64_t pause_ps;                  /* core time booked by multicasts' pause_receivers */
    int64_t bytes;                     /* bytes moved by all transfers */
    int64_t hbm_bytes;                 /* bytes to or from HBM controllers */
    int64_t interchip_bytes;           /* bytes crossing chips */
    int64_t flops;                     /* sum of compute tasks' flops */
    /* Energy events (docs/energy.md), counted as tasks are added: */
    int64_t matrix_flops, vector_flops;/* sum of compute tasks' work */
    int64_t sram_read_bytes;           /* compute work + every transfer whose source is a core, once */
    int64_t sram_write_bytes;          /* compute work + bytes landing in each receiving core */
    int64_t byte_hops;                 /* sum over transfers and receivers of bytes * route hops */
    double compute_util;   /* compute-kind busy core time / (cores * makespan): FLOPS-equivalent */
    double flops_util;     /* flops / (matrix peak of all chips * makespan); 0 without flops */
    double link_util_mean; /* over every core link (ports or mesh links): busy / makespan */
    double link_util_peak; /* the busiest link */
    double interchip_util; /* inter-chip lanes busy / (lanes * makespan); 0 on one chip */
    double hbm_util;       /* hbm_bytes / (hbm_gbps * chips * makespan); 0 without HBM */
} rotor_sim_stats;

/* The energy events of a run (docs/energy.md), as the energy model counts them. */
rotor_energy_counts rotor_sim_energy_counts(const rotor_sim_stats *st);

/* Timing of one task in the last run. */
typedef struct rotor_sim_timing {
    int64_t ready_ps;  /* its last dependency finished */
    int64_t start_ps;  /* it got its core or every resource on its route */
    int64_t end_ps;
} rotor_sim_timing;

typedef struct rotor_sim rotor_sim;

/* A simulator for a valid chip (rotor_chip_validate is run again: the struct
 * may have been edited).  Refuses chips whose network does not fit int32
 * resource ids. */
rotor_status rotor_sim_create(const rotor_chip *chip, rotor_sim **out, rotor_error *err);
void rotor_sim_free(rotor_sim *s);

int64_t rotor_sim_cores(const rotor_sim *s);   /* cores_per_chip * chips */
int64_t rotor_sim_nodes(const rotor_sim *s);   /* cores + HBM controllers */
int64_t rotor_sim_task_count(const rotor_sim *s); /* tasks added so far: the next id */
/* Node of controller `ctrl` of chip `chip`, or -1 if there is none. */
int64_t rotor_sim_hbm_node(const rotor_sim *s, int64_t chip, int64_t ctrl);
/* Lanes of one HBM controller's pool (docs/simulator.md, "Pools"); 0 without HBM. */
int64_t rotor_sim_hbm_lanes(const rotor_sim *s);
/* HBM ports per chip (docs/simulator.md, "HBM on the mesh"): on a mesh with
 * HBM, the 2 (W + H) edge links its controllers inject through, in ring
 * order from (0,0) clockwise; 0 on all-to-all, where a controller is a node
 * on the exchange. */
int64_t rotor_sim_hbm_ports(const rotor_sim *s);
/* The port nearest `core` over all of its chip's ports (ties: the first in
 * ring order), and in *ctrl (if non-NULL) the controller it belongs to: a
 * load from that controller to that core enters through that port.  -1
 * (and *ctrl = -1) without ports or for a node that is not a core. */
int64_t rotor_sim_hbm_port_nearest(const rotor_sim *s, int64_t core, int64_t *ctrl);

/* Add a task; *id (if non-NULL) receives its id, 0, 1, 2, ... in order.
 * Errors name the task and the field: unknown node, negative bytes or
 * duration, a dependency that does not exist, a time that overflows.
 * A compute task of duration 0 is a synchronisation point (a barrier or a
 * join): it starts as soon as it is ready and does not queue for its core. */
rotor_status rotor_sim_add_compute(rotor_sim *s, const rotor_sim_compute *c, int64_t *id,
                                   rotor_error *err);
rotor_status rotor_sim_add_transfer(rotor_sim *s, const rotor_sim_transfer *t, int64_t *id,
                                    rotor_error *err);
rotor_status rotor_sim_add_multicast(rotor_sim *s, const rotor_sim_multicast *m, int64_t *id,
                                     rotor_error *err);
/* Make `task` also wait for `dep` (both must exist).  This can close a
 * cycle: rotor_sim_run reports it. */
rotor_status rotor_sim_add_dep(rotor_sim *s, int64_t task, int64_t dep, rotor_error *err);

/* Names operator `op` (>= 0) in the trace; the name is copied. */
rotor_status rotor_sim_set_op_name(rotor_sim *s, int op, const char *name, rotor_error *err);

/* Runs the whole graph from time 0.  May be called again (after adding more
 * tasks, or not): every run starts from idle resources and gives the same
 * result for the same graph.  A dependency cycle is ROTOR_ERR_INPUT with the
 * cycle in the message. */
rotor_status rotor_sim_run(rotor_sim *s, rotor_sim_stats *out, rotor_error *err);

/* Called every 2^20 events of a run with the simulated time reached and
 * the events taken so far (NULL fn: none). */
typedef void (*rotor_sim_progress_fn)(void *ctx, int64_t now_ps, int64_t events);
void rotor_sim_set_progress(rotor_sim *s, rotor_sim_progress_fn fn, void *ctx);

/* Streaming (docs/simulator.md, "Streaming"): the run goes on while tasks
 * are added, and finished tasks can be dropped, so memory follows the tasks
 * in flight rather than the whole graph.  The result is the whole run's, to
 * the picosecond, provided each task is added before the run passes the
 * instant it becomes ready:
 *  - rotor_sim_stream_begin, on a simulator with no tasks, starts the run;
 *    from then on an added task joins it (rotor_sim_add_dep is refused);
 *  - rotor_sim_advance(until) processes events until task `until` has
 *    finished and every event of that instant is done.  A task added after
 *    that must wait for a task that has not finished or finished exactly
 *    then; one whose dependencies all finished earlier is refused, naming
 *    the instants (a task with no dependencies only before the first advance);
 *  - rotor_sim_retire(below) drops tasks 0..below-1, which must have
 *    finished; their timing and trace are gone.  A later task may still
 *    name one (it is finished), beside a dependency that decides when the
 *    task is ready;
 *  - rotor_sim_stream_end runs what is left and fills the statistics. */
rotor_status rotor_sim_stream_begin(rotor_sim *s, rotor_error *err);
rotor_status rotor_sim_advance(rotor_sim *s, int64_t until, rotor_error *err);
rotor_status rotor_sim_retire(rotor_sim *s, int64_t below, rotor_error *err);
rotor_status rotor_sim_stream_end(rotor_sim *s, rotor_sim_stats *out, rotor_error *err);

/* Streaming inside a long stretch of tasks (docs/simulator.md, "Streaming a
 * long reduction"): rotor_sim_advance_before(lo, hi) processes events until
 * the next one would finish a task of ids [lo, hi) (or none is left), and
 * stops before it: every task of [lo, hi) not finished before is still
 * unfinished after, so a task added then that waits for one of them is in
 * time.  rotor_sim_retire_finished drops the kept tasks up to the first
 * that has not finished, once they are at least as many as the tasks kept
 * after them (so the copying stays linear in the tasks added). */
rotor_status rotor_sim_advance_before(rotor_sim *s, int64_t lo, int64_t hi, rotor_error *err);
rotor_status rotor_sim_retire_finished(rotor_sim *s, rotor_error *err);

/* Timing of task `id` in the last run (streaming: a kept task that has
 * finished); ROTOR_ERR_INPUT before a run or for an
 * unknown id. */
rotor_status rotor_sim_task_timing(const rotor_sim *s, int64_t id, rotor_sim_timing *out,
                                   rotor_error *err);

/* Over the tasks [from, to) that rotor_sim_task_timing would answer for
 * (others are passed over): *end_ps rises to the latest end, and *wait_ps
 * (if not NULL) to the longest wait from ready to start.  One call for a
 * range instead of a call per task: a replay reads every task's timing. */
void rotor_sim_range_timing(const rotor_sim *s, int64_t from, int64_t to, int64_t *end_ps, int64_t *wait_ps);

/* Streaming: the same, gathered as tasks finish, for the tasks
 * [bounds[0], bounds[n]) in the n <= ROTOR_SIM_WATCH_MAX ranges
 * [bounds[k], bounds[k + 1]).  A replay reads each operator's phases once it
 * has run; rotor_sim_range_timing would read every record once more, a
 * pass over memory as large as the operator.  No task of the ranges may have
 * run: bounds[0] is at or after the first task added since the last
 * rotor_sim_advance (the stream's start).  A new watch replaces the last.
 * rotor_sim_watch_timing(k) then answers as rotor_sim_range_timing over
 * range k would: *end_ps and *wait_ps (if not NULL) rise to the latest end
 * and the longest wait among the range's finished tasks. */
#define ROTOR_SIM_WATCH_MAX 4
rotor_status rotor_sim_watch(rotor_sim *s, const int64_t *bounds, int n, rotor_error *err);
void rotor_sim_watch_timing(const rotor_sim *s, int k, int64_t *end_ps, int64_t *wait_ps);

/* What task `id` is: a transfer (src and dst nodes, bytes; a multicast has
 * dst -1) or a compute task (core in src, dst -1, flops), its category and
 * operator.  ROTOR_ERR_INPUT for an unknown id. */
typedef struct rotor_sim_task_info {
    bool transfer;
    int64_t src, dst;
    int64_t amount;
    rotor_sim_category category;
    int op;
} rotor_sim_task_info;
rotor_status rotor_sim_task_info_of(const rotor_sim *s, int64_t id, rotor_sim_task_info *out, rotor_error *err);

/* First start and last end over operator op's tasks in the last run (both -1
 * if it has none): the simulated time of the operator. */
void rotor_sim_op_span(const rotor_sim *s, int op, int64_t *start_ps, int64_t *end_ps);
/* The compute-kind time booked on core `core` in the run so far (a stream)
 * or the last run, in ps: what the core's pipeline was busy with.  0 for a
 * node that is not a core.  Kept per core, so a streamed run has it too. */
int64_t rotor_sim_core_busy_ps(const rotor_sim *s, int64_t core);

/* The duration of a transfer on an idle network: hops * latency +
 * bytes / (slowest resource on the route), rounded to the nearest ps. */
rotor_status rotor_sim_transfer_ps(const rotor_sim *s, int64_t src, int64_t dst, int64_t bytes,
                                   int64_t *ps, rotor_error *err);
/* The resources a transfer occupies, in route order, and its hop count (the
 * number of latencies it pays).  Fills at most cap ids; *nres is the full
 * count. */
rotor_status rotor_sim_route(const rotor_sim *s, int64_t src, int64_t dst, int64_t *res,
                             int64_t cap, int64_t *nres, int64_t *hops, rotor_error *err);
/* "out c0.3", "in c0.5", "link c0 (0,0)->(1,0)", "inter-chip", "hbm c1.2",
 * "port c0.1 (-1,5)->(0,5)" (an HBM port of chip 0, controller 1, inward). */
void rotor_sim_resource_name(const rotor_sim *s, int64_t res, char *buf, size_t size);
/* How many resources the network has (ids 0 .. count - 1, as rotor_sim_route names them). */
int64_t rotor_sim_resource_count(const rotor_sim *s);

/* What a trace keeps (docs/simulator.md, "Trace"); zero fields keep all.
 * A task is kept when it passes every filter given. */
typedef struct rotor_sim_trace_filter {
    const char *const *ops;  /* operator names; "l0.*" names every operator starting "l0." */
    int nops;
    int64_t from_ps, to_ps;  /* to_ps > 0: tasks overlapping [from_ps, to_ps) */
    const int64_t *cores;    /* compute on these cores, transfers from or to them */
    int64_t ncores;
    int64_t counter_buckets; /* counter samples over the span; 0: 1000 */
} rotor_sim_trace_filter;

typedef struct rotor_sim_trace_summary {
    int64_t tasks;  /* in the run */
    int64_t kept;   /* written as events */
    int64_t bytes;  /* written (when the stream can tell its position) */
} rotor_sim_trace_summary;

/* Chrome trace-event JSON of the last run (opens in Perfetto and
 * chrome://tracing), printed to out: one "X" event per kept task, ts and
 * dur in microseconds, cores grouped by 64 into processes, transfers on
 * link-class processes, operator names in args; counter tracks for
 * transfers in flight, links busy and HBM GB/s; the run and the filter in
 * otherData.  filter may be NULL; sum (if non-NULL) says what was written.
 * ROTOR_ERR_INPUT before a run, after a stream retired tasks, or for a
 * filter naming no operator or an unknown core; ROTOR_ERR_IO if out fails. */
rotor_status rotor_sim_trace_write(const rotor_sim *s, const rotor_sim_trace_filter *filter, FILE *out,
                                   rotor_sim_trace_summary *sum, rotor_error *err);
/* A streamed run's trace (docs/simulator.md, "Trace"): called right after
 * rotor_sim_stream_begin, before any task; each task is written as it
 * retires and the rest by rotor_sim_stream_end, which then writes the
 * metadata, counters and otherData (an operator filter naming nothing fails
 * it there).  The caller's filter arrays and out must outlive the stream.
 * Without a window, the counters' buckets double in width as the run goes
 * on (500 to 1,000 of them at the end, for counter_buckets 1,000). */
rotor_status rotor_sim_trace_stream(rotor_sim *s, const rotor_sim_trace_filter *filter, FILE *out, rotor_error *err);
/* What the streamed trace wrote, after rotor_sim_stream_end. */
rotor_sim_trace_summary rotor_sim_trace_summary_of(const rotor_sim *s);
/* The same, unfiltered, as malloc'd text the caller frees; NULL with err set. */
char *rotor_sim_trace_json(const rotor_sim *s, rotor_error *err);

#endif
