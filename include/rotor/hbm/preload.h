/* rotor — Elk's HBM preload scheduling (Elk §4.2-§4.5, baselines of §6.1),
 * as an abstract library: a chip of four numbers and a sequence of operators,
 * each with its execute-state plans; no graph, no cost model.
 *
 * An operator runs in two states (§4.3): its weights come from HBM into a
 * *preload state* (a datum shared by P cores split into c chunks, c = 1,
 * 2, 4, ..., P, each chunk broadcast to P / c cores), then a data
 * distribution turns that into the *execute state* of its plan and it runs.
 * A schedule picks, per operator, an execute plan, a preload state, and a
 * preload number p (§4.2): how many later operators have their preloads
 * issued before it executes.  The preload order may differ from the
 * execution order (§4.4).  Times are int64 picoseconds, sizes int64 bytes
 * per core.  docs/preload.md has the model, its decisions and the tests.
 *
 * After an error, rotor_preload_model_create leaves *out NULL and rotor_preload_schedule/evaluate
 * leave out zeroed: nothing to free. */
#ifndef ROTOR_PRELOAD_H
#define ROTOR_PRELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"

typedef struct rotor_preload_chip {
    int64_t cores;          /* cores the operators are spread over */
    int64_t sram_bytes;     /* SRAM per core */
    int64_t hbm_bw;         /* bytes/s of all HBM together */
    int64_t link_bw;        /* bytes/s into one core over the interconnect */
    int64_t latency_ps;     /* an on-chip link's latency: a distribution round pays it once on
                               all-to-all (shift_load NULL), as T10's gathers do (cost.c);
                               0: none */
    bool sram_blocking;     /* inter-core writes into a core's SRAM pause its own accesses
                               (the IPU, Elk footnote 2); see docs/preload.md */
    /* HBM through edge ports (a mesh, Elk §5): port_load(mesh_ctx, m, &load, err)
       says what a preload into groups of m consecutive cores costs on the busiest
       path: its link time is space x load / link_bw (load > 0, in core-link widths;
       on a mesh the edge port's path carries several groups, and groups that
       straddle rows share mesh links).  NULL: every core has its own path
       (all-to-all, load 1).  Called by rotor_preload_model_create only, once per
       group size its preload states need (docs/preload.md, "Edge ports"). */
    rotor_status (*port_load)(void *mesh_ctx, int64_t m, double *load, rotor_error *err);
    /* Distribution on a mesh: a round in which every core fetches from the core
       d ahead moves its bytes in bytes x load / link_bw (shift_load(mesh_ctx, d,
       &load, err), load > 0; rows apart, the rounds share mesh links).  NULL:
       load 1 (all-to-all).  Called like port_load. */
    rotor_status (*shift_load)(void *mesh_ctx, int64_t d, double *load, rotor_error *err);
    void *mesh_ctx;
} rotor_preload_chip;

/* One execute-state plan of an operator, from the caller's cost model. */
typedef struct rotor_preload_plan {
    int64_t time_ps;        /* on-chip execution once in execute state (> 0), its own
                               inter-core exchange included */
    int64_t space_bytes;    /* execution space per core, the weights in execute state
                               included: at least ceil(hbm_bytes * share / cores) */
    int64_t share;          /* P: cores that hold each weight byte in execute state, 1..cores */
    int64_t traffic_bytes;  /* inter-core bytes one core receives while executing (>= 0) */
    int64_t link_bytes;     /* bytes the busiest link carries while it executes alone, or 0
                               for traffic_bytes (all-to-all: the busiest link is a core's
                               port).  On a mesh multi-hop routes load some links more than
                               any port, and the preloads entering at the edge ports share
                               them (docs/preload.md, "Edge ports") */
} rotor_preload_plan;

typedef struct rotor_preload_op_desc {
    const char *name;       /* optional, for messages (copied, truncated to 47 bytes) */
    int64_t hbm_bytes;      /* weights loaded from HBM (>= 0) */
    int layer;              /* 0: in no layer; identical layers share an id >= 1 (§4.4) */
    bool layer_begin;       /* starts a new instance of its layer (an id change also does) */
    int nplans;
    const rotor_preload_plan *plans;
} rotor_preload_op_desc;

/* One preload-state option of a plan (Elk §4.3). */
typedef struct rotor_preload_state {
    int64_t chunks;         /* c: the datum shared by P cores is split into c chunks */
    int64_t space_bytes;    /* preload space per core: ceil(d / c), d = ceil(hbm_bytes * P / cores) */
    int64_t dist_bytes;     /* fetched from peers at distribution: d - space */
    int64_t dist_intake_bytes; /* bytes' worth of link time the distribution takes: dist_bytes,
                               or with shift_load each round's bytes x shift_load(k m) */
    int64_t dist_ps;        /* distribution time: dist_intake_bytes over link_bw */
    int64_t intake_bytes;   /* bytes' worth of link time on the busiest path into a core:
                               space_bytes, or with port_load space x port_load(P / chunks) */
    int64_t preload_ps;     /* max(HBM time of hbm_bytes, intake_bytes over link_bw) (§4.2 roofline) */
} rotor_preload_state;

/* A validated model: chip, operators in execution order, their plans that
 * fit the SRAM, the Pareto frontiers and the preload states.  Immutable. */
typedef struct rotor_preload_model rotor_preload_model;

/* Checks everything and reports the first problem in words, naming the
 * field ("op 3 (q_proj): plan 1: share: 16 exceeds the 8 cores").  Plans
 * whose space exceeds the SRAM are dropped; ROTOR_ERR_NOFIT when an operator
 * has none left.  Identical layers (same id) must have the same operator
 * count and the same hbm_bytes position by position. */
rotor_status rotor_preload_model_create(const rotor_preload_chip *chip, const rotor_preload_op_desc *ops,
                                        int nops, rotor_preload_model **out, rotor_error *err);
void rotor_preload_model_free(rotor_preload_model *m);
int rotor_preload_model_nops(const rotor_preload_model *m);
const rotor_preload_chip *rotor_preload_model_chip(const rotor_preload_model *m);
/* The Pareto-optimal preload states of plan `plan` of operator `op`, most
 * space first (chunks ascending); NULL for a bad index or a dropped plan. */
const rotor_preload_state *rotor_preload_model_states(const rotor_preload_model *m, int op, int plan,
                                                      int *nstates);
/* Whether op is HBM-heavy (§4.4: hbm_bytes above the model's average). */
bool rotor_preload_model_heavy(const rotor_preload_model *m, int op);

/* ---- designs (§6.1) ------------------------------------------------------ */

typedef enum rotor_preload_design {
    ROTOR_PRELOAD_BASIC,    /* fastest plans, preload only the next op into what is left */
    ROTOR_PRELOAD_STATIC,   /* best static split of SRAM into execution and preload space */
    ROTOR_PRELOAD_DYN,      /* Elk without reordering: §4.2 + §4.3 */
    ROTOR_PRELOAD_FULL,     /* Elk: §4.2 + §4.3 + §4.4 */
    ROTOR_PRELOAD_IDEAL,    /* Elk §6.1: own interconnect and SRAM space for preload, free
                               distribution; a blocking SRAM still pauses for preload writes */
    ROTOR_PRELOAD_ROOFLINE, /* Ideal without SRAM access contention: no contention at all */
    ROTOR_PRELOAD_NDESIGNS
} rotor_preload_design;

typedef struct rotor_preload_design_info {
    rotor_preload_design design;
    const char *name;       /* "basic", "static", "dyn", "full", "ideal", "roofline" */
    const char *summary;
} rotor_preload_design_info;

extern const rotor_preload_design_info rotor_preload_designs[ROTOR_PRELOAD_NDESIGNS];
rotor_status rotor_preload_design_parse(const char *name, rotor_preload_design *out, rotor_error *err);

typedef struct rotor_preload_options {
    int64_t max_orders;     /* full, ideal, roofline: preload orders tried per layer id besides the
                               current best (0: 5040) */
    int64_t max_splits;     /* static: execution-space sizes tried (0: 512) */
    bool no_refine;         /* dyn, full: keep the induction's schedule as it is (Elk alone),
                               without the refinement against the forward timing and
                               without the static split as a candidate */
    /* static only: force the split instead of searching it (Elk Figure 6's "per-core preload
       space"): preload space preload_space_bytes per core (0..sram_bytes), execution space the
       rest; each operator runs its fastest plan within it (ROTOR_ERR_NOFIT naming the first
       that has none) and as many next operators are preloaded as fit the preload space, both
       state variants timed as in the search.  Any other design refuses it (ROTOR_ERR_INPUT). */
    bool fixed_preload_space;
    int64_t preload_space_bytes;
} rotor_preload_options;

/* ---- schedules and their timing (§4.5) -------------------------------------- */

/* The decisions for one operator, input of rotor_preload_evaluate. */
typedef struct rotor_preload_choice {
    int plan;               /* index into the operator's plans */
    int state;              /* index into that plan's preload states */
    int preload_number;     /* p: later operators whose preloads are issued before it executes */
} rotor_preload_choice;

typedef struct rotor_preload_op_result {
    int plan, state;        /* as in rotor_preload_choice */
    int64_t chunks;         /* of the preload state */
    int preload_number;
    int preload_pos;        /* its position in the preload order */
    int64_t pre_start_ps, pre_end_ps, exe_start_ps, exe_end_ps;
    int64_t stall_ps;       /* interconnect / SRAM access contention inside the execution: its
                               duration beyond what it takes alone (its own traffic included) */
    int64_t exec_space;     /* bytes per core of its plan */
    int64_t resident_bytes; /* preload space of the operators on chip while it executes */
} rotor_preload_op_result;

/* Total time split by what runs (Elk Figure 18a); the parts sum to the latency. */
typedef struct rotor_preload_breakdown {
    int64_t preload_ps;     /* HBM loading, no operator computing */
    int64_t execute_ps;     /* computing (or distributing), no preload */
    int64_t overlap_ps;     /* both */
    int64_t stall_ps;       /* an execution held up by contention */
    int64_t idle_ps;        /* nothing (never, under the three rules; kept as a check) */
} rotor_preload_breakdown;

/* The size of the search a design ran, in the factors of Elk Table 2
 * (§4.3-§4.4: O(C^H P K^2 N)), each counted where the scheduler enumerates
 * it (docs/reproduction.md, "Table 2").  N and P for every design; K 0
 * where no induction runs (basic, static), H and C 0 where no order is
 * permuted (basic, static, dyn). */
typedef struct rotor_preload_factors {
    int64_t ops;            /* N: operators scheduled */
    int64_t plans;          /* P: most execute-state plans of one operator (its Pareto list
                               that fits the SRAM, which the §4.3 allocation steps along) */
    int64_t preload_numbers; /* K: most preload numbers the §4.2 induction tried for one
                               operator (each one §4.3 allocation that fitted) */
    int64_t heavy;          /* H: most HBM-heavy operators of one layer id permuted (§4.4) */
    int64_t heavy_fit;      /* C: most heavy operators the suffix tree could place at one
                               position (its branching, <= H) */
} rotor_preload_factors;

typedef struct rotor_preload_result {
    rotor_preload_design design;
    int nops;
    rotor_preload_op_result *ops;   /* execution order */
    int *order;                     /* preload order: order[k] is the k-th operator preloaded */
    int64_t latency_ps;
    rotor_preload_breakdown breakdown;
    double hbm_util;                /* HBM busy time at full bandwidth / latency */
    int64_t alloc_calls;            /* §4.3 allocations run (one per operator and preload number) */
    int64_t alloc_steps;            /* plan or state steps those allocations took */
    int64_t schedules;              /* complete schedules timed: preload orders (dyn, full,
                                       ideal) or splits x state variants (static) */
    int64_t exec_cap_bytes;         /* static: the execution space of the split; else 0 */
    int64_t refine_moves;           /* dyn, full: refinement moves kept (0 with no_refine) */
    bool static_kept;               /* dyn, full: the best static split's schedule was as fast
                                       with fewer link bytes, or faster, and is reported */
    rotor_preload_factors factors;  /* Elk Table 2's factors of this design's search */
} rotor_preload_result;

/* Times a given schedule under the three rules of §4.5 (preloads in order,
 * one at a time; execute(i) waits for preload(i); an execute holds back every
 * later call until it ends).  order: the preload order (NULL: execution
 * order).  machine: ROTOR_PRELOAD_IDEAL times it on the Ideal machine of
 * §6.1 (no interconnect or space contention, no distribution, separate SRAM
 * space for preloads; the state is ignored and each preload takes the
 * operator's smallest footprint, whose writes still pause a blocking SRAM),
 * ROTOR_PRELOAD_ROOFLINE on Ideal without that pause, any other design on the
 * chip itself.  ROTOR_ERR_INPUT, naming the operator, when the schedule breaks
 * a rule or overflows the SRAM.  out->design is the machine's design, or
 * ROTOR_PRELOAD_DYN (a given schedule on the real chip). */
rotor_status rotor_preload_evaluate(const rotor_preload_model *m, const rotor_preload_choice *choices,
                                    const int *order, rotor_preload_design machine,
                                    rotor_preload_result *out, rotor_error *err);

/* Runs one design; opt may be NULL. */
rotor_status rotor_preload_schedule(const rotor_preload_model *m, rotor_preload_design design,
                                    const rotor_preload_options *opt, rotor_preload_result *out,
                                    rotor_error *err);
void rotor_preload_result_free(rotor_preload_result *r);

/* Bytes one core receives over the interconnect in result r of model m: each
 * operator's plan traffic and the weights it holds in execute state (its
 * preload space plus its distribution, whatever the state). */
int64_t rotor_preload_link_bytes(const rotor_preload_model *m, const rotor_preload_result *r);

/* ---- preload orders (§4.4) ------------------------------------------------- */

/* Called once per valid order (order[k] = operator preloaded k-th); return
 * false to stop the enumeration. */
typedef bool (*rotor_preload_order_fn)(const int *order, int n, void *ctx);

/* Enumerates the valid preload orders by the suffix tree of §4.4 (Figure
 * 14): positions are filled from the last, and a choice is kept only while
 * every operator forced on chip together fits (each at its smallest plan and
 * preload state).  layer 0: every order of every operator (up to K^N of
 * them, recursion N deep: for small models); layer >= 1: only
 * the HBM-heavy operators of that layer id are permuted, the same way in
 * every instance, the others keep their places in `base` (NULL: execution
 * order).  Stops after `limit` orders (0: no limit); *count gets the number
 * of valid orders visited. */
rotor_status rotor_preload_orders(const rotor_preload_model *m, int layer, const int *base, int64_t limit,
                                  rotor_preload_order_fn fn, void *ctx, int64_t *count, rotor_error *err);

#endif
