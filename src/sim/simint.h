/* simint.h — internal: the simulator's state, shared by the engine (sim.c),
 * the network model (simnet.c) and the trace writer (simtrace.c).  Not
 * public API. */
#ifndef ROTOR_SIMINT_H
#define ROTOR_SIMINT_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/topology.h"
#include "rotor/sim/sim.h"
#include "simqueue.h"

/* Every time the simulator keeps is at most 2^50 ps (about 1126 s of chip
 * time), so a pool's busy time (lanes * makespan, lanes <= 2^12) and the sum
 * of a few times stay far inside int64. */
#define SIM_TIME_MAX ((int64_t)1 << 50)

typedef enum sim_kind { SIM_KIND_COMPUTE = 0, SIM_KIND_TRANSFER = 1 } sim_kind;

/* Flags of a transfer, fixed when it is added (they depend on src and dst only). */
enum { SIM_F_INTERCHIP = 1, SIM_F_HBM = 2, SIM_F_PAUSE = 4 /* a one-receiver multicast with pause_receivers */ };

typedef struct sim_tracer sim_tracer; /* simtrace.c: a trace being written */

/* A task: one record of one cache line (64 bytes, the array aligned to
 * 64), everything the event loop reads or writes of it in one place.  Its
 * place in the graph is inside: the first dependency to finish fetches the
 * line, so the task's READY finds it in cache; and its first two dependants
 * are inside too, so its READY can prefetch their records with no list to
 * read first (issue 23).  Further dependants are a list in rotor_sim.succ.
 * Its end is start + dur; its bytes or flops are in rotor_sim.amount (only
 * the statistics, summed as tasks join the run, and the trace read them). */
typedef struct sim_task {
    int64_t dur;      /* ps, fixed when added: compute duration or transfer time on an idle network */
    int64_t ready, start; /* the last run */
    int32_t a, b;     /* compute: core, -1; transfer: src, dst nodes */
    int32_t op;       /* operator index, -1 */
    int32_t mcast;    /* multicast: 1 + its index in sim->mcast; 0: compute or a plain transfer */
    int32_t pending;  /* dependencies not finished; -1 once the task has finished */
    int32_t next[2];  /* its first two dependants (task ids), -1 */
    int32_t head;     /* its further dependants: the first edge in rotor_sim.succ, -1 */
    int32_t lane;     /* pool lane that names its trace track (transfers through a pool), else -1 */
    uint8_t kind, cat, flags;
} sim_task;

static inline int64_t sim_task_end(const sim_task *t) { return t->start + t->dur; }

/* A multicast's route (the deduplicated union of its receivers' routes),
 * fixed when it is added: resources mres[off .. off + n). */
typedef struct sim_mcast {
    int64_t off;      /* route: mres[off .. off + n) */
    int64_t doff;     /* receivers: mdst[doff .. doff + ndsts) */
    int64_t pause;    /* ps each receiving core is paused (pause_receivers), else 0 */
    int32_t n;
    int32_t ndsts;
    int32_t hops;     /* the longest receiver's route */
} sim_mcast;

/* A dependency: task waits for dep. */
typedef struct sim_edge {
    int32_t task, dep;
} sim_edge;

/* A transfer duration remembered (rotor_sim.times). */
typedef struct sim_time_memo {
    int64_t bytes, hops, ps;
    double gbps;
} sim_time_memo;
#define SIM_TIME_MEMO_BITS 4

/* An operator's simulated span (rotor_sim.span). */
typedef struct sim_span {
    int64_t start, end; /* first start and last end of its tasks, -1 */
} sim_span;

/* One successor edge: `task` waits for the list's owner. */
typedef struct sim_succ {
    int32_t task, next;
} sim_succ;

/* The ranges of tasks a stream times as they finish (rotor_sim_watch):
 * range k is [b[k], b[k + 1]), the bounds past n are b[n]; a task is in
 * the watch when id - b[0] < len (unsigned: len 0 watches nothing). */
typedef struct sim_watch {
    int64_t b[ROTOR_SIM_WATCH_MAX + 1];
    uint64_t len;
    int64_t end[ROTOR_SIM_WATCH_MAX], wait[ROTOR_SIM_WATCH_MAX]; /* -1 and 0 until a task of the range finishes */
} sim_watch;

/* Kinds in tie order: at one instant, finishes free their dependants before
 * anything else happens, and every task that becomes ready at that instant
 * is queued before the first of them claims its resources. */
enum { EV_FINISH = 0, EV_START = 1, EV_READY = 2 };

/* The state of a run.  A whole run (rotor_sim_run) builds it afresh; a
 * streamed run (rotor_sim_stream_begin) keeps it while tasks are added. */
typedef struct sim_run {
    sim_queue q;                     /* at most one event per unfinished task */
    int64_t now;
    int64_t finished;
    int64_t active[ROTOR_SIM_NCATS]; /* tasks running, per category */
    int64_t waiting;                 /* transfers ready but not started */
    bool overflow;
    int64_t tick_at;                 /* events at which progress is next reported */
    rotor_sim_stats st;
} sim_run;

/* Network resources.  Ports and links are FIFO servers with one lane; the
 * inter-chip link and each HBM controller are pools of lanes (docs/simulator.md,
 * "Pools"). */
typedef enum sim_res_kind {
    SIM_RES_NONE = 0,  /* a mesh link off the edge: never on a route */
    SIM_RES_OUT,       /* all-to-all: a core's outbound port */
    SIM_RES_IN,        /* all-to-all: a core's inbound port */
    SIM_RES_LINK,      /* mesh: one directed link between neighbours */
    SIM_RES_INTERCHIP, /* the pool of chip-to-chip bandwidth */
    SIM_RES_HBM,       /* one HBM controller */
    SIM_RES_PORT,      /* mesh: one direction of an edge core's link to its HBM controller */
    SIM_RES_GB         /* one side (write or read) of a cluster's global buffer (GraphTurbo §1), a pool */
} sim_res_kind;

/* Lanes of one pool: enough for any pool a real chip has (the IPU-POD4
 * inter-chip link is 116 lanes of 5.5 GB/s); a faster pool gets faster lanes. */
#define SIM_MAX_LANES 4096
#define SIM_LANE_BITS 12

/* A lane of a pool: when it is next free, above its index in the pool, so
 * that the heap's order (free time, then lane) is one unsigned comparison
 * and a lane is 8 bytes.  A free time is a task's end, at most
 * 2 * SIM_TIME_MAX (a run stops at the first end past SIM_TIME_MAX), so
 * 51 + 12 bits fit. */
typedef uint64_t sim_lane;
_Static_assert(SIM_MAX_LANES <= 1 << SIM_LANE_BITS, "a lane's index fits its bits");
static inline sim_lane sim_lane_make(int64_t free, int32_t lane) {
    return (uint64_t)free << SIM_LANE_BITS | (uint64_t)lane;
}
static inline int64_t sim_lane_free(sim_lane l) { return (int64_t)(l >> SIM_LANE_BITS); }
static inline int32_t sim_lane_index(sim_lane l) { return (int32_t)(l & ((1u << SIM_LANE_BITS) - 1)); }

/* A resource's description.  What a claim reads and writes of it, when it
 * is next free and how long it was held, is in two dense arrays of the
 * simulator (res_free, res_busy): the claims of a large run touch 16 bytes
 * per resource, not a 40-byte record each (issue 23). */
typedef struct sim_res {
    int32_t lane0;    /* pool: its lanes are sim->lanes[lane0 ..], else -1 */
    int32_t nlanes;
    double gbps;      /* per lane, GB/s */
    uint8_t kind;
} sim_res;

/* The resources of one transfer; res points into the simulator's scratch. */
typedef struct sim_route {
    int32_t *res;
    int32_t *at;    /* per resource: the hops paid before the head reaches it */
    int64_t n;
    int64_t hops;   /* latencies paid */
} sim_route;

/* A topology fills the per-core resources and routes between two nodes of
 * one chip (house style: one table row per topology, simnet.c); its
 * geometry (hops between cores, to the grid's edge) is base/topology.c's. */
typedef struct sim_topology {
    rotor_topology id;
    int res_per_core;
    /* Nonzero: a route between two cores of one chip is the sender's
     * outbound port and the receiver's inbound one (sim_a2a_out,
     * sim_a2a_in), and it pays this many hops (the geometry's pair_hops:
     * all-to-all, one exchange, as its route function counts).  The loop takes such a route
     * without building it (sim_net_pair), and adding a transfer knows its
     * rate and hops without asking (sim_net_rate). */
    int pair_hops;
    void (*init)(rotor_sim *s);
    /* Appends the on-chip resources from node src to node dst (either may be
     * an HBM controller; dst may be on another chip, then the route runs on
     * src's chip to dst's position) and their hops.  A load from a controller
     * enters the network where it serves core `via` best (a multicast's
     * first receiver; dst itself for a transfer). */
    void (*route)(const rotor_sim *s, int64_t src, int64_t dst, int64_t via, sim_route *r);
    /* The hops of the route from src to dst (the latencies a transfer
     * pays), which sim_net_rate needs without the route itself. */
    int64_t (*hops)(const rotor_sim *s, int64_t src, int64_t dst);
    void (*name_res)(const rotor_sim *s, int64_t res, char *buf, size_t size);
} sim_topology;

struct rotor_sim {
    rotor_chip chip;
    const sim_topology *topo;
    int64_t cores, cpc, nodes, ctrl_per_chip;
    int32_t *node_chip;      /* per node: its chip (a table: adding a task asks it several times) */
    int64_t latency_ps;

    sim_res *res;
    int64_t nres;
    int64_t *res_free;       /* per resource: when it is next free (a pool: its earliest lane) */
    int64_t *res_busy;       /* per resource: ps held, summed over lanes */
    int64_t pool0, pool1;    /* the pools are resources pool0 .. pool1 - 1 */
    int64_t res_interchip;   /* -1 on one chip */
    int64_t res_hbm0;        /* first controller, -1 without HBM */
    int64_t nports;          /* mesh with HBM: edge ports per chip, 2 (W + H); else 0 */
    int64_t res_port0;       /* port p of chip q: in 2 (q nports + p), out + 1; -1 without */
    int32_t *port_ctrl;      /* per port of a chip: the controller it belongs to */
    int64_t res_gb0;         /* cluster k of chip q's GB: written res_gb0 + 2 (q clusters + k), read + 1; -1 without */
    int64_t gb_cluster;      /* cores a cluster (rotor_chip_cluster_cores), with a GB */
    sim_lane *lanes;         /* per pool, a 4-ary min-heap of its lanes by (free time, lane) */
    int64_t nlanes;
    int32_t *scratch;        /* a route */
    int32_t *scratch_at;     /* its resources' hop offsets (sim_route.at) */
    int64_t route_cap;

    sim_task *tasks;
    int64_t ntasks, task_cap;
    int64_t task_room;              /* kept tasks below which neither tasks, amount nor (streaming) the queue must grow */
    int64_t *amount;                /* per kept task: bytes (transfer) or flops (compute) */
    int64_t amount_cap;
    sim_time_memo times[1 << SIM_TIME_MEMO_BITS]; /* transfer durations by size (sim.c, transfer_time) */
    rotor_energy_counts energy;     /* the energy events of every task added (hbm and inter-chip bytes are the run's) */
    sim_edge *edges;
    int64_t nedges, edge_cap;
    char **op_names;
    int64_t nop_names;
    int32_t max_op;                 /* highest op index used by a task, -1 */
    sim_mcast *mcast;               /* multicasts' routes */
    int64_t nmcast, mcast_cap;
    int32_t *mres;                  /* their resources, concatenated */
    int64_t nmres, mres_cap;
    int32_t *mat;                   /* per resource of mres: its hop offset (sim_route.at) */
    int64_t mat_cap;
    int32_t *mdst;                  /* their receivers, concatenated */
    int64_t nmdst, mdst_cap;
    uint32_t *mark;                 /* per resource: the stamp of the last union it joined */
    uint32_t stamp;

    int64_t base;                   /* first task id kept (tasks[id - base]): streaming retires a finished prefix */
    sim_succ *succ;                 /* successor edges; a finished task's are dead */
    int64_t nsucc, succ_cap;
    int64_t live_succ;              /* edges of tasks that have not finished */
    sim_span *span;                 /* per operator 0..max_op: first start, last end, -1 */
    int64_t span_cap;
    int64_t *core_free;             /* per core: when its pipeline is next free */
    int64_t *core_busy;             /* per core: compute-kind time booked in the run */
    sim_run run;                    /* the run in progress (streaming) or the last run */
    int64_t unrun;                  /* streaming: no task from this id has run (the tasks added since the last advance) */
    sim_watch watch;                /* rotor_sim_watch */
    bool streaming;                 /* rotor_sim_stream_begin: tasks join the run as they are added */
    bool ran;                       /* a whole run finished: every task's timing is known */
    sim_tracer *tracer;             /* rotor_sim_trace_stream: tasks are written as they retire */
    rotor_sim_trace_summary trace_sum; /* what the streamed trace wrote, after rotor_sim_stream_end */
    rotor_sim_progress_fn progress; /* rotor_sim_set_progress */
    void *progress_ctx;
    int64_t hold_lo;                /* rotor_sim_advance_before: the run stops before a finish of */
    uint64_t hold_len;              /* a task of hold_lo .. hold_lo + hold_len - 1 (0: none) */
    const rotor_topo *geo;          /* the topology's geometry (base/topology.h); last: the hot fields keep their places */
};

/* Nodes are the cores, then the HBM controllers. */
static inline bool sim_node_is_hbm(const rotor_sim *s, int64_t node) { return node >= s->cores; }

/* The chip node (a core or an HBM controller) sits on. */
static inline int64_t sim_node_chip(const rotor_sim *s, int64_t node) { return s->node_chip[node]; }

/* The top lane of pool p changed: restore its heap (4-ary: its lanes'
 * order is total, so the lane taken does not depend on the arity). */
void sim_pool_sift(rotor_sim *s, const sim_res *p);

/* When res is next free: a pool's earliest-free lane.  (Inline: a transfer's
 * claim asks it of every resource on its route.) */
static inline int64_t sim_res_free_at(const rotor_sim *s, int64_t res) { return s->res_free[res]; }

/* Holds res until `end`; returns the pool lane taken (0-based), or -1. */
static inline int32_t sim_res_take(rotor_sim *s, int64_t res, int64_t end, int64_t dur) {
    s->res_busy[res] += dur; /* <= lanes * makespan <= 2^12 * SIM_TIME_MAX: fits */
    if (res < s->pool0 || res >= s->pool1) {
        s->res_free[res] = end;
        return -1;
    }
    const sim_res *p = &s->res[res];
    int32_t lane = sim_lane_index(s->lanes[p->lane0]);
    s->lanes[p->lane0] = sim_lane_make(end, lane);
    sim_pool_sift(s, p);
    s->res_free[res] = sim_lane_free(s->lanes[p->lane0]);
    return lane;
}

/* The bytes or flops of a kept task (t points into s->tasks). */
static inline int64_t sim_task_amount(const rotor_sim *s, const sim_task *t) { return s->amount[t - s->tasks]; }

/* simnet.c */
const sim_topology *sim_topology_find(rotor_topology id);
rotor_status sim_net_init(rotor_sim *s, rotor_error *err);
/* HBM node `node`'s controller resource. */
static inline int64_t sim_hbm_res(const rotor_sim *s, int64_t node) { return s->res_hbm0 + (node - s->cores); }

/* All-to-all: core c's outbound port is resource 2c, its inbound one 2c + 1. */
static inline int32_t sim_a2a_out(int64_t core) { return (int32_t)(2 * core); }
static inline int32_t sim_a2a_in(int64_t core) { return (int32_t)(2 * core + 1); }

/* A plain transfer's flags (SIM_F_INTERCHIP, SIM_F_HBM), from its endpoints. */
static inline uint8_t sim_transfer_flags(const rotor_sim *s, int64_t src, int64_t dst) {
    uint8_t flags = 0;
    if (sim_node_chip(s, src) != sim_node_chip(s, dst)) flags |= SIM_F_INTERCHIP;
    if (sim_node_is_hbm(s, src) || sim_node_is_hbm(s, dst)) flags |= SIM_F_HBM;
    return flags;
}

/* Whether a plain transfer with these flags runs over the topology's two
 * ports: between two cores of one chip (neither flag) on a topology with
 * pair_hops. */
static inline bool sim_net_paired(const rotor_sim *s, uint8_t flags) {
    return s->topo->pair_hops && !(flags & (SIM_F_HBM | SIM_F_INTERCHIP)) && s->res_gb0 < 0;
}

/* The GB of core `core`'s cluster (a chip with a GB): its write side
 * (read = 0), which the cluster's senders share, or its read side, which
 * its receivers share. */
static inline int32_t sim_gb_res(const rotor_sim *s, int64_t core, bool read) {
    int64_t chip = core / s->cpc, cluster = (core % s->cpc) / s->gb_cluster;
    return (int32_t)(s->res_gb0 + 2 * (chip * s->chip.clusters + cluster) + read);
}

/* The route of plain transfer t (not a multicast) when the topology knows
 * it without a search: between two cores of one chip on all-to-all, the
 * two ports (a2a_route builds the same).  False otherwise.  Inline: the
 * loop asks it of every transfer it starts, and building a route through
 * the topology's table cost 45 instructions. */
static inline bool sim_net_pair(const rotor_sim *s, const sim_task *t, int32_t res[2]) {
    if (!sim_net_paired(s, t->flags)) return false;
    res[0] = sim_a2a_out(t->a);
    res[1] = sim_a2a_in(t->b);
    return true;
}

/* Appends resource res to route r. */
static inline void sim_route_push(sim_route *r, int64_t res) {
    r->at[r->n] = (int32_t)r->hops; /* the head reaches it after the hops paid so far */
    r->res[r->n++] = (int32_t)res;
}

/* The route of a transfer (src, dst valid and distinct, not both HBM), a
 * load from a controller entering where it serves core `via` best (the
 * route of one receiver of a multicast to via and others).  Inline: the
 * loop asks it for every transfer it starts. */
static inline void sim_net_route_via(const rotor_sim *s, int64_t src, int64_t dst, int64_t via, sim_route *r) {
    r->res = s->scratch; /* the simulator's scratch: routes are used one at a time */
    r->at = s->scratch_at;
    r->n = 0;
    r->hops = 0;
    if (sim_node_is_hbm(s, src)) sim_route_push(r, sim_hbm_res(s, src));
    s->topo->route(s, src, dst, via, r);
    if (sim_node_is_hbm(s, dst)) sim_route_push(r, sim_hbm_res(s, dst));
    /* Between two cores of a chip with a GB, the sender writes the bytes
     * into its cluster's GB (when the head leaves, hop 0) and the receiver
     * reads them from its own cluster's (when the head arrives): the write
     * side of the one and the read side of the other, one GB's two sides
     * within a cluster (docs/simulator.md, "The global buffer").  Last on
     * the route, so that its first resource stays the topology's (the
     * trace's mesh track). */
    if (s->res_gb0 >= 0 && !sim_node_is_hbm(s, src) && !sim_node_is_hbm(s, dst)) {
        r->at[r->n] = 0;
        r->res[r->n++] = sim_gb_res(s, src, false);
        sim_route_push(r, sim_gb_res(s, dst, true));
    }
}

/* The route of a transfer to dst itself. */
static inline void sim_net_route(const rotor_sim *s, int64_t src, int64_t dst, sim_route *r) {
    sim_net_route_via(s, src, dst, dst, r);
}
/* A transfer's rate (its route's slowest resource) and hops (the latencies
 * it pays), without building its route: every port and link runs at the
 * link rate, and a route's only pools follow from its endpoints (the
 * inter-chip pool across chips, an endpoint's HBM controller), on every
 * topology.  Inline: it is asked once per transfer added. */
static inline void sim_net_rate(const rotor_sim *s, int64_t src, int64_t dst, double *gbps, int64_t *hops) {
    double g = s->chip.link_gbps;
    uint8_t flags = sim_transfer_flags(s, src, dst);
    if (sim_net_paired(s, flags)) {
        *gbps = g; /* two ports, each at the link rate */
        *hops = s->topo->pair_hops;
        return;
    }
    if ((flags & SIM_F_INTERCHIP) && s->res[s->res_interchip].gbps < g)
        g = s->res[s->res_interchip].gbps;
    if (sim_node_is_hbm(s, src) && s->res[sim_hbm_res(s, src)].gbps < g) g = s->res[sim_hbm_res(s, src)].gbps;
    if (sim_node_is_hbm(s, dst) && s->res[sim_hbm_res(s, dst)].gbps < g) g = s->res[sim_hbm_res(s, dst)].gbps;
    if (s->res_gb0 >= 0 && !(flags & SIM_F_HBM) && s->res[s->res_gb0].gbps < g) g = s->res[s->res_gb0].gbps; /* every GB's lanes alike */
    *gbps = g;
    *hops = s->topo->hops(s, src, dst);
}
/* Its duration on an idle network at that rate, or ROTOR_ERR_INPUT on overflow. */
rotor_status sim_net_time(const rotor_sim *s, int64_t bytes, double gbps, int64_t hops, int64_t *ps,
                          rotor_error *err);
/* Whether a transfer's endpoints are valid: existing nodes, distinct, not
 * both HBM controllers.  Inline: it is asked once per transfer added. */
static inline bool sim_net_ok(const rotor_sim *s, int64_t src, int64_t dst) {
    return (uint64_t)src < (uint64_t)s->nodes && (uint64_t)dst < (uint64_t)s->nodes && src != dst &&
           !(sim_node_is_hbm(s, src) && sim_node_is_hbm(s, dst));
}
/* Checks a transfer's endpoints (sim_net_ok); the message names the field. */
rotor_status sim_net_check(const rotor_sim *s, int64_t src, int64_t dst, rotor_error *err);
void sim_net_reset(rotor_sim *s);

/* simtrace.c: the streamed trace's steps (sim.c calls them) */
void sim_tracer_task(sim_tracer *tr, const rotor_sim *s, int64_t id);
rotor_status sim_tracer_end(sim_tracer *tr, const rotor_sim *s, rotor_sim_trace_summary *sum, rotor_error *err);
void sim_tracer_free(sim_tracer *tr);

#endif
