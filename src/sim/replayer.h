/* replayer.h — the replay's task-graph builders, shared by the program
 * replay (sim/replay.c) and the HBM-schedule replay (hbm/schedreplay.c).
 * Private to the library: the sim stage defines them, the hbm stage above it
 * uses them (docs/architecture.md, "Stages").  Every function returns
 * ROTOR_OK or an error with err filled; after an error the replayer is
 * still freed by its *_free. */
#ifndef ROTOR_SIM_REPLAYER_H
#define ROTOR_SIM_REPLAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/program.h"
#include "rotor/op/expr.h"
#include "rotor/op/place.h"
#include "rotor/op/plan.h"
#include "rotor/sim/replay.h"
#include "rotor/sim/sim.h"

/* A replay's progress as the simulator reports it: the operators done so
 * far (the replay moves `done`) and the total. */
typedef struct replay_ticker {
    const rotor_replay_progress *p;
    int done, total;
} replay_ticker;

/* The start of a replay's run: a stream (with its trace, opt->trace) when
 * `stream`, else nothing until the end; opt's progress reported through t,
 * which must outlive the run. */
rotor_status replay_run_begin(rotor_sim *sim, bool stream, const rotor_replay_options *opt, int total,
                              replay_ticker *t, rotor_error *err);
/* Its end: the stream's end or the whole run, into *stats; the progress
 * detached; *sum says what the trace wrote (the streamed one, or the whole
 * run's written now). */
rotor_status replay_run_end(rotor_sim *sim, bool stream, const rotor_replay_options *opt, rotor_sim_stats *stats,
                            rotor_sim_trace_summary *sum, rotor_error *err);

/* A growable list of task ids. */
typedef struct idlist {
    int64_t *v;
    int64_t n, cap;
} idlist;

rotor_status replay_idlist_push(idlist *l, int64_t id, rotor_error *err);

/* exchange.c: a hand-off exchange's packet schedule, cached by its pieces. */
/* Hand-off pieces travel in packets.  The IPU's compiled exchange
 * interleaves at word level, so the packet is only the list schedule's
 * grain, and each busiest port ends about two packets past the bound the
 * model charges.  So a packet is 1/EXCHANGE_GRAIN of the busiest port's
 * bytes (whole 64 B lines), and at least EXCHANGE_PACKET_MIN: the tail stays
 * within a few percent of the exchange, and a large exchange does not
 * become millions of packets.  Measured (docs/simulator.md): fixed 512 B
 * packets left BERT-Large b8's attention scores 4.6% over the model once Q
 * and K came by hand-off (13,904 against 12,864 B through the busiest
 * port), 256 B 2.3%; fixed 256 B packets made a DiT-XL b256 layer 11 M
 * packets, whose schedules no longer fitted the cache (165 s to replay). */
#define EXCHANGE_PACKET_MIN ROTOR_EXCHANGE_PACKET_MIN
static inline int64_t exchange_packet(int64_t most) { return rotor_exchange_packet(most); } /* program.h */

/* One packet: sender, receiver, bytes; its place in the schedule is its
 * order (the replay adds the packets in it: exchange.c). */
typedef struct xpacket {
    int32_t src, dst, bytes;
} xpacket;

typedef struct xschedule {
    int64_t cores, npieces;
    int64_t (*pieces)[3];  /* the key: (receiver, sender, bytes), sorted */
    xpacket *v;
    int64_t n, cap;
    /* the last hand-off that led here (exchange_tag): what its pieces were
     * computed from, and their busiest port; none: tag NULL */
    int64_t *tag, ntag;
    uint64_t tag_hash;
    int64_t most;
} xschedule;

typedef struct xcache {
    xschedule *e;          /* oldest first */
    int n, cap;
    int64_t bytes;
} xcache;

/* The schedule of pieces[0..npieces) (sorted in place) on receivers
 * 0..cores-1 of a chip of n cores: the cached one if these pieces were
 * scheduled before, else computed and cached.  *out stays valid until the
 * next call. */
rotor_status exchange_schedule(xcache *cache, int64_t (*pieces)[3], int64_t npieces, int64_t cores, int64_t n,
                               const xschedule **out, rotor_error *err);
void exchange_cache_free(xcache *cache);
/* A model's layers repeat their hand-offs, and computing the pieces costs
 * more than their schedule (DiT-XL b256 on ipu-pod4: a seventh of the
 * replay), so a schedule is also found by what its pieces were computed
 * from, tag[0..ntag) (the replay's hand-off key): exchange_find gives the
 * schedule tagged so, and its busiest port in *most, or NULL;
 * exchange_tag tags x, a schedule exchange_schedule just gave (its old tag
 * goes).  Errors: out of memory. */
const xschedule *exchange_find(const xcache *cache, const int64_t *tag, int64_t ntag, int64_t *most);
rotor_status exchange_tag(xcache *cache, const xschedule *x, const int64_t *tag, int64_t ntag, int64_t most,
                          rotor_error *err);

/* A placement the replay made, by its key (replay.c, place_of); it keeps
 * the REPLAY_PLACES newest within REPLAY_PLACE_BYTES. */
#define REPLAY_PLACES 64
#define REPLAY_PLACE_BYTES ((int64_t)64 << 20)
typedef struct replay_place {
    int64_t *key, nkey;
    int64_t bytes; /* its per-core tables, estimated */
    rotor_place *pl;
} replay_place;

/* Scratch shared by every operator, sized for the chip's N cores. */
typedef struct replayer {
    rotor_sim *sim;
    int64_t n;           /* cores */
    int64_t barrier;     /* the previous operator's barrier task, -1 before the first */
    int64_t *last;       /* per core: its last task of the current operator */
    int64_t *cur;        /* per core: its compute task of the current run */
    idlist *inbox;       /* per core: transfers the next run waits for */
    /* a plan with overlap (op/plan.h): per core, what its current run waited
     * for (its partitions' arrivals) and its compute task of the run before */
    idlist *gate;
    int64_t *prev;
    idlist scratch;      /* a transfer's dependencies */
    idlist finals;       /* the barrier's dependencies */
    int64_t *pairs;      /* reduction grouping: (key, core) pairs */
    int64_t packet;      /* > 0: transfers move in chained packets of at most this many bytes */
    xcache xcache;       /* hand-off exchange schedules seen so far */
    idlist key;          /* scratch: the current operator's hand-off or placement key */
    replay_place *places; /* placements made so far (place_of), oldest first */
    int nplaces;
    int64_t place_bytes; /* their estimated bytes */
    rotor_chip chip;     /* the replayed chip: its energy events (docs/energy.md) */
    int64_t core0;       /* replay_tiles' plan runs on cores core0 .. core0 + cores - 1 (a
                            pipelined stage's group; 0 otherwise) */
    int64_t *phys;       /* on a mesh, while an operator is laid out (replay_lay_out):
                            the chip core of each of its plan cores; NULL: the identity */
    int64_t *phys_buf;   /* a mesh's room for phys */
    /* rotor_replay's stream (docs/simulator.md, "Streaming a long
     * reduction"): the current operator's task bounds (setup, main phase,
     * reduction, barrier, end: what it watches), NULL when the replay does
     * not stream; a reduction of more than `hold` transfers whose rings
     * share no resource is added and run round by round, and then watches
     * the operator itself (watched; the bounds it set in wb) */
    int64_t *opids;
    int64_t hold;
    bool watched;
    int64_t wb[5];
} replayer;

/* Lays the plan out on the mesh (op/meshmap.h) for what follows: r->phys
 * holds its cores' chip cores until replay_lay_out_end.  Nothing on a chip
 * that is not a mesh.  chip: the one the plan was chosen for. */
rotor_status replay_lay_out(replayer *r, const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                            const rotor_chip *chip, rotor_error *err);
static inline void replay_lay_out_end(replayer *r) { r->phys = NULL; }

/* The chip core plan core c of the current operator runs on. */
static inline int64_t replay_at(const replayer *r, int64_t c) { return r->core0 + (r->phys ? r->phys[c] : c); }

/* A replayer on a new simulator of chip, its scratch sized for the cores. */
rotor_status replay_init(replayer *r, const rotor_chip *chip, int64_t packet, rotor_error *err);
/* Frees the scratch; the simulator too unless keep_sim. */
void replay_free(replayer *r, bool keep_sim);
/* A transfer of more than r->packet bytes, as a chain of packets. */
rotor_status replay_add_packets(replayer *r, const rotor_sim_transfer *x, int64_t *id, rotor_error *err);
/* One transfer of the replay; *id receives the task its receiver waits for.
 * With r->packet, a transfer of more bytes is a chain of packets
 * (replay_add_packets).  Inline: a replay adds hundreds of millions. */
static inline rotor_status replay_add_transfer(replayer *r, const rotor_sim_transfer *x, int64_t *id,
                                               rotor_error *err) {
    if (r->packet <= 0 || x->bytes <= r->packet) return rotor_sim_add_transfer(r->sim, x, id, err);
    return replay_add_packets(r, x, id, err);
}
void replay_inbox_clear(replayer *r, int64_t cores);
/* A zero-time task on core 0 after every core's last task of op; it becomes r->barrier. */
rotor_status replay_add_barrier(replayer *r, int op, int64_t cores, rotor_error *err);
/* Sub-tasks, shifts and the reduction of one plan (expression e, plan p,
 * info) on cores r->core0 .. r->core0 + info->cores - 1 (the plan's core c is
 * the chip's core0 + c).  The first run of a core waits for its inbox, else
 * for r->barrier; r->last receives each core's last task (indexed by the
 * chip's core).
 * ids[0..1] receive the first task id of the main phase and the reduction. */
rotor_status replay_tiles(replayer *r, int op, const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                          const rotor_chip *chip, int64_t *ids, rotor_error *err);

/* A core's preload arrives in pieces of at most this many bytes, so that the
 * execution's shifts interleave with it on the core's in port (each piece
 * claims its route FIFO, like any transfer). */
#define REPLAY_PIECE_BYTES ROTOR_REPLAY_PACKET
#define REPLAY_WINDOW_MAX 64 /* pieces a preload stream keeps in flight at most (stream_window) */

typedef struct preload_replayer {
    replayer r;               /* the tile replay's scratch; r.barrier is the current start */
    int64_t n, nctrl;
    bool blocking;
    int64_t nstreams;         /* HBM streams: lanes of every controller (mesh: one per edge port) */
    bool ports;               /* mesh: a group's pieces enter through the port nearest it */
    int64_t w;                /* mesh: its width, else 0 */
    int64_t win;              /* pieces a stream keeps in flight (stream_window) */
    int64_t *stail;           /* per stream, win slots: its last win pieces, -1 (slot: piece count mod win) */
    int64_t *stail_seq;       /* per stream, alike: 1 + the preload (in issue order) of that piece, 0 */
    int64_t *scount;          /* per stream: pieces it has sent */
    int64_t *sgroups;         /* mesh, per port: groups of the current preload it feeds */
    int64_t *sround;          /* mesh, per port: the round of its last piece of the current preload */
    int64_t *gport, *gctrl;   /* mesh, per group of the current preload: its port and controller */
    bool *grev;               /* mesh, per group: its path runs from its last core to its first */
    int64_t pre_seq;          /* preloads issued so far */
    int64_t last_pre_join;    /* the last issued preload's join, -1 */
    idlist deps;              /* scratch */
    int64_t *dsts;            /* scratch: one group's receivers */
    int64_t prev_barrier;     /* the previous execution's barrier, -1 */
    int64_t *pre_join;        /* per op: zero-time join after its preload, -1 until issued */
    int64_t (*pre_ids)[2];    /* per op: its preload's tasks [from, to) */
    int64_t (*exe_ids)[3];    /* per op: its start join, its barrier, the end of its tasks */
} preload_replayer;

/* The preload replay's scratch on `chip` (one chip) for n_ops operators;
 * replay_preload_free releases it (keep_sim: the simulator stays, owned by
 * the caller). */
rotor_status replay_preload_init(preload_replayer *sr, const rotor_chip *chip, bool blocking, int n_ops,
                                   rotor_error *err);
void replay_preload_free(preload_replayer *sr, bool keep_sim);
/* Appends id to sr->deps unless it is negative or equal to the last one. */
rotor_status replay_dep_add(preload_replayer *sr, int64_t id, rotor_error *err);
/* A zero-time task on core 0 after sr->deps; its id (status in *st). */
int64_t replay_zero_join(preload_replayer *sr, int op, rotor_status *st, rotor_error *err);
/* A preload of W bytes to groups of m consecutive cores as sim op `op`,
 * issued after the task `after` (-1: none); *join is the zero-time task that
 * ends it (the definition in replay.c says how the pieces flow). */
rotor_status replay_preload_groups(preload_replayer *sr, int64_t W, int64_t m, int64_t op, int64_t after, int64_t *join,
                                   rotor_error *err);
/* The cores lo .. hi-1 of a preload group in the order its multicast path
 * visits them on a mesh of width w (w = 0: not a mesh, core order);
 * reversed when rev.  The schedule's energy model (hbm/schedenergy.c)
 * walks the same path. */
void replay_group_path(int64_t w, int64_t lo, int64_t hi, bool rev, int64_t *out);
/* A group's path starts from its end nearer the grid's edge
 * (rotor_topo_mesh_edge_hops, base/topology.h). */

#endif
