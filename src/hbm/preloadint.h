/* preloadint.h — what the files of Elk's preload scheduler share (private
 * to src/hbm): the model's types, checked arithmetic, a schedule's
 * decisions, the timing, the induction's workspace and window.
 *
 *   preload.c     preload states and the model (Elk §4.3), the designs table
 *   timing.c      a schedule's forward timing under the three rules (§4.5)
 *   allocation.c  cost-aware on-chip memory allocation (§4.3)
 *   induction.c   two-level inductive operator scheduling (§4.2)
 *   orders.c      valid preload orders by the suffix tree (§4.4)
 *   designs.c     the Basic/Static/Elk-Dyn/Elk-Full/Ideal designs (§6.1)
 *
 * Functions that return a rotor_status leave err with one line on failure;
 * the *_alloc functions return false when out of memory, with nothing left
 * to free. */
#ifndef ROTOR_HBM_PRELOADINT_H
#define ROTOR_HBM_PRELOADINT_H

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/hbm/preload.h"

#define NAME_LEN 48
#define INF_PS (INT64_MAX / 2)
#define DEFAULT_MAX_ORDERS 5040
#define DEFAULT_MAX_SPLITS 512

typedef struct pl_plan {
    rotor_preload_plan in;
    bool fits;
    int64_t weights;                /* d */
    int nstates;
    rotor_preload_state *states;
} pl_plan;

typedef struct pl_op {
    char name[NAME_LEN];
    int64_t hbm, hbm_ps;
    int layer;
    int nplans;
    pl_plan *plans;
    int npareto;
    int *pareto;                    /* plan indices: time ascending, space descending */
    int64_t espace_min;             /* smallest fitting execution space */
    int64_t lb;                     /* smallest preload space of any fitting plan */
    int64_t lb_pre_ps;              /* preload time at lb */
    bool heavy;
} pl_op;

typedef struct pl_kind {
    int id, len, ninst, nheavy;
    int *start;                     /* first op of each instance */
    int *heavy;                     /* offsets of the heavy ops in an instance */
} pl_kind;

struct rotor_preload_model {
    rotor_preload_chip chip;
    int n;
    pl_op *ops;
    int64_t total_hbm, total_lb;
    int64_t *pref_lb;               /* pref_lb[i] = sum of lb over ops < i */
    int nkinds;
    pl_kind *kinds;
    int log_cap;                    /* bound on the steps of one allocation window */
};

/* ---- arithmetic ---- */

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* ceil(bytes * 1e12 / bw) picoseconds; false if it exceeds int64. */
static inline bool xfer_checked(int64_t bytes, int64_t bw, int64_t *out) {
    unsigned __int128 num = (unsigned __int128)(uint64_t)bytes * 1000000000000u;
    unsigned __int128 q = (num + (uint64_t)bw - 1) / (uint64_t)bw;
    if (q > (unsigned __int128)INT64_MAX) return false;
    *out = (int64_t)q;
    return true;
}

/* The same, for sizes the model has bounded (no overflow possible). */
static inline int64_t xfer(int64_t bytes, int64_t bw) {
    if (bytes <= 0) return 0;
    if (bytes < 18000000) { /* bytes * 1e12 < 2^64 */
        uint64_t num = (uint64_t)bytes * 1000000000000u;
        return (int64_t)((num + (uint64_t)bw - 1) / (uint64_t)bw);
    }
    int64_t t = 0;
    xfer_checked(bytes, bw, &t);
    return t;
}

/* ---- the model (preload.c) ---- */

/* Link time, in bytes at link_bw, on the busiest path into a core when each
 * core receives `space` in groups of m (docs/preload.md, "Edge ports"). */
rotor_status preload_intake_bytes(const rotor_preload_chip *c, int64_t space, int64_t m, int64_t *out, rotor_error *err);

static inline const rotor_preload_state *st_of(const rotor_preload_model *m, int op, int plan, int state) {
    return &m->ops[op].plans[plan].states[state];
}

/* ---- schedules and their timing (timing.c) ---- */

/* The decisions of a complete schedule; arrays of n. */
typedef struct sched {
    int *order, *pos, *plan, *state, *q;
} sched;

void preload_sched_free(sched *s);
bool preload_sched_alloc(sched *s, int n);
void preload_sched_copy(sched *d, const sched *s, int n);
/* The order 0, 1, ..., n - 1. */
void preload_identity(sched *s, int n);
bool preload_result_alloc(rotor_preload_result *r, int n);
void preload_result_copy(rotor_preload_result *d, const rotor_preload_result *s);
/* The machine a schedule is timed on: the chip itself, Elk's Ideal (§6.1:
 * preload and execution each have their own interconnect and SRAM space,
 * distribution is free, but a blocking SRAM still pauses a core while the
 * preload writes into it: contention 3 of Figure 2, which Ideal does not
 * name), or the roofline (no contention of any kind). */
typedef enum pl_machine { PL_CHIP, PL_IDEAL, PL_ROOFLINE } pl_machine;

/* Forward timing of schedule s under the three rules into r (hbm_total:
 * the HBM busy time), on machine `mach`. */
rotor_status preload_time_forward(const rotor_preload_model *m, const sched *s, pl_machine mach, rotor_preload_result *r,
                          int64_t *hbm_total, rotor_error *err);
/* Checks schedule s (plans fit, states exist, q valid, SRAM) and times it
 * forwards under the three rules.  `tmp` holds 6 n int64 of scratch. */
rotor_status preload_eval_sched(const rotor_preload_model *m, const sched *s, pl_machine mach, rotor_preload_result *r,
                        int64_t *tmp, rotor_error *err);

/* The backward estimate of an execution (docs/preload.md): own plan and
 * state, the preload space `pin` of op i+1 charged whole to it. */
static inline int64_t exec_len(const rotor_preload_model *m, const pl_plan *p, const rotor_preload_state *s,
                        int64_t pin, int64_t *busy) {
    int64_t b = p->in.time_ps + s->dist_ps;
    int64_t a = m->chip.sram_blocking ? xfer(pin, m->chip.link_bw) : 0;
    int64_t ic = xfer(p->in.traffic_bytes + s->dist_intake_bytes + pin, m->chip.link_bw);
    if (busy) *busy = b;
    return max64(b + a, ic);
}

/* ---- the induction (induction.c) and its allocation (allocation.c) ---- */

typedef struct logent {
    int op, old;
} logent;

/* The induction's workspace, sized for one model. */
typedef struct dyn_ws {
    int64_t *tse, *tsp;             /* n + 1: exec start by op, preload start by position */
    int *lo;                        /* 1 + max pos(0..i) */
    char *inM;                      /* op is in the base window M_i */
    int *mlist, *mpos;
    int mn;
    int *steppers;                  /* the window's operators that can still shrink */
    int nsteppers;
    logent *log;                    /* the allocation's steps, to undo */
} dyn_ws;

typedef struct counters {
    int64_t calls, steps;
    int64_t pnum_max;               /* K: most preload numbers one operator tried (Table 2) */
} counters;

void preload_dyn_ws_free(dyn_ws *w);
bool preload_dyn_ws_alloc(dyn_ws *w, const rotor_preload_model *m);

/* Runs the induction for the preload order in s->order / s->pos and fills
 * s->plan, s->state, s->q.  ROTOR_ERR_NOFIT if an operator cannot fit with
 * the ones the order forces on chip with it. */
rotor_status preload_dyn_run(const rotor_preload_model *m, sched *s, dyn_ws *w, counters *cnt, rotor_error *err);

/* rotor_preload_orders, and the most choices the suffix tree had at one
 * position (Elk Table 2's C) into *branch_max when not NULL. */
rotor_status preload_orders_count(const rotor_preload_model *m, int layer, const int *base, int64_t limit,
                                  rotor_preload_order_fn fn, void *ctx, int64_t *count, int64_t *branch_max,
                                  rotor_error *err);

/* The allocation window of operator i while the induction tries its
 * preload numbers. */
typedef struct alloc_window {
    int i;                    /* the executing operator */
    int e;                    /* its plan: index into its Pareto list */
    const pl_plan *pe;
    int64_t resid, resid_min; /* preload space the window holds: now, at the smallest states */
    bool nx_in;               /* op i + 1 is preloaded in the window */
    int64_t pin;              /* then its preload space */
    int64_t L;                /* op i's execution estimate (exec_len) */
    int64_t ddist;            /* distribution time the shrunk states add */
    int nlog;                 /* steps logged in w->log */
} alloc_window;

/* §4.3: takes the most cost-effective step until window a fits the SRAM,
 * or nothing can shrink any more (the caller checks the fit). */
void preload_alloc_fit(const rotor_preload_model *m, sched *s, dyn_ws *w, alloc_window *a, counters *cnt);

/* Preload space of op j's state k under plan[j], and its last state. */
static inline int64_t psp(const rotor_preload_model *m, const int *plan, int j, int k) {
    return m->ops[j].plans[plan[j]].states[k].space_bytes;
}
static inline int last_state(const rotor_preload_model *m, const int *plan, int j) {
    return m->ops[j].plans[plan[j]].nstates - 1;
}

#endif
