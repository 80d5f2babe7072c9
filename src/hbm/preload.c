/* preload.c — Elk's HBM preload scheduling (Elk §4.2-§4.5, §6.1).
 *
 * The model (docs/preload.md gives the reasons; "Elk is silent" marks a
 * decision of ours):
 *
 *  - Preload states (§4.3).  A plan with share P holds d = ceil(W P / cores)
 *    weight bytes per core in execute state.  A preload state splits the
 *    datum shared by P cores into c chunks, c = 1, 2, 4, ... (powers of two
 *    dividing P) and P itself; a core receives ceil(d / c) at preload and
 *    fetches the rest, d - ceil(d / c), from its peers at distribution.
 *    States with equal space are dominated; the rest are the Pareto set.
 *  - Durations.  A preload takes max(W / hbm_bw, space / link_bw) alone
 *    (§4.2: HBM roofline against interconnect); with HBM behind edge ports
 *    (a mesh, Elk §5) the chip measures each group size m:
 *    space x port_load(m) / link_bw.  The reported timing is a
 *    fluid on the core's link (time_forward): the running preload and the
 *    running execution share it max-min fairly (Elk is silent), and with
 *    blocking SRAM (footnote 2) the execution's compute runs only in its
 *    share.  The backward induction, before times are known, estimates an
 *    execution as
 *        L = max(B + a, traffic / link_bw),  B = time + dist
 *    with traffic = the plan's own + the distribution's + the preload space
 *    of the operator executed next if its preload was issued before this
 *    execution (charged whole to the execution it must overlap at the
 *    latest; Elk is silent), a = that preload space / link_bw when the SRAM
 *    blocks, else 0 (exec_len).  L - B is the stall.
 *  - Refinement (ours): dyn and full polish the induction's schedule by
 *    coordinate descent on the forward latency (refine), since the estimate
 *    cannot see what the timing does; no_refine turns it off.
 *  - Memory.  While operator i executes, its execution space plus the
 *    preload space of every operator whose preload is issued but which has
 *    not executed yet must fit the SRAM.  This is the largest footprint:
 *    between executions only preload spaces are held, and a preload space
 *    never exceeds its execution space.
 *  - Preload number p_i (§4.2): with q_i = i + 1 + p_i preloads issued
 *    before execute(i), q is non-decreasing and q_{N-1} = N.  A preload
 *    order is valid when every operator fits with the ones forced on chip
 *    with it (§4.4), at their smallest footprints.
 *  - Induction (§4.2, Lemma 4.1, Theorem 4.2): backwards from the last
 *    operator, as-late-as-possible times relative to the end;
 *    T_e-exe(i) = min(T_s-exe(i+1), T_s-pre(the first preload issued after
 *    execute(i))), one §4.3 allocation per preload number.  The allocation
 *    for p + 1 continues from the one for p (the same steps as starting
 *    over when step ratios are separable); the allocation may shrink the
 *    preload states of operators already scheduled, never grow them, so an
 *    earlier window never overflows.  The induction's times are estimates;
 *    the reported timing is recomputed forwards from the final choices.
 *  - The ideal machine is evaluated on every order full visits, so it is a
 *    lower bound of every design (docs/preload.md has the argument). */
#include "rotor/hbm/preload.h"

#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- arithmetic -------------------------------------------------------------- */

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* ceil(bytes * 1e12 / bw) picoseconds; false if it exceeds int64. */
static bool xfer_checked(int64_t bytes, int64_t bw, int64_t *out) {
    unsigned __int128 num = (unsigned __int128)(uint64_t)bytes * 1000000000000u;
    unsigned __int128 q = (num + (uint64_t)bw - 1) / (uint64_t)bw;
    if (q > (unsigned __int128)INT64_MAX) return false;
    *out = (int64_t)q;
    return true;
}

/* The same, for sizes the model has bounded (no overflow possible). */
static int64_t xfer(int64_t bytes, int64_t bw) {
    if (bytes <= 0) return 0;
    if (bytes < 18000000) { /* bytes * 1e12 < 2^64 */
        uint64_t num = (uint64_t)bytes * 1000000000000u;
        return (int64_t)((num + (uint64_t)bw - 1) / (uint64_t)bw);
    }
    int64_t t = 0;
    xfer_checked(bytes, bw, &t);
    return t;
}

/* ---- the model ----------------------------------------------------------------- */

static const char *desc_name(const rotor_preload_op_desc *d) { return d->name ? d->name : "unnamed"; }

static int cmp_plan_idx(const pl_plan *plans, int a, int b) {
    const rotor_preload_plan *x = &plans[a].in, *y = &plans[b].in;
    if (x->time_ps != y->time_ps) return x->time_ps < y->time_ps ? -1 : 1;
    if (x->space_bytes != y->space_bytes) return x->space_bytes < y->space_bytes ? -1 : 1;
    if (x->traffic_bytes != y->traffic_bytes) return x->traffic_bytes < y->traffic_bytes ? -1 : 1;
    if (x->share != y->share) return x->share < y->share ? -1 : 1;
    return a < b ? -1 : (a > b);
}

/* Insertion sort of plan indices (few plans per operator). */
static void sort_plans(const pl_plan *plans, int *idx, int n) {
    for (int i = 1; i < n; i++) {
        int v = idx[i], j = i;
        while (j > 0 && cmp_plan_idx(plans, idx[j - 1], v) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

static rotor_status check_chip(const rotor_preload_chip *c, rotor_error *err) {
    if (!c) return rotor_fail(err, ROTOR_ERR_INPUT, "chip: missing");
    if (c->cores <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: cores: expected a positive count, got %lld",
                          (long long)c->cores);
    if (c->sram_bytes <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: sram_bytes: expected a positive size, got %lld",
                          (long long)c->sram_bytes);
    if (c->hbm_bw <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: hbm_bw: expected positive bytes/s, got %lld",
                          (long long)c->hbm_bw);
    if (c->link_bw <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: link_bw: expected positive bytes/s, got %lld",
                          (long long)c->link_bw);
    return ROTOR_OK;
}

/* Link time, in bytes at link_bw, on the busiest path into a core when each
 * core receives `space` in groups of m: the core's own link, or on a mesh
 * space x port_load(m) (docs/preload.md, "Edge ports").  Overflow gives
 * INT64_MAX, which xfer_checked refuses. */
static rotor_status intake_bytes(const rotor_preload_chip *c, int64_t space, int64_t m, int64_t *out,
                                 rotor_error *err) {
    *out = space;
    if (!c->port_load) return ROTOR_OK;
    double load = 0;
    rotor_status st = c->port_load(c->mesh_ctx, m, &load, err);
    if (st) return st;
    if (!(load > 0) || !isfinite(load))
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: port_load(%lld): expected a positive number, got %g",
                          (long long)m, load);
    double b = ceil((double)space * load);
    *out = b < 9.2e18 ? (int64_t)b : INT64_MAX;
    return ROTOR_OK;
}

/* Link time, in bytes at link_bw, of a distribution of `dist` bytes per
 * core in c - 1 rounds, round k fetching its share from the core k m ahead
 * (docs/preload.md, "Edge ports"): dist itself, or on a mesh each round's
 * share x shift_load(k m).  Overflow gives INT64_MAX. */
static rotor_status dist_intake(const rotor_preload_chip *c, int64_t dist, int64_t m, int64_t chunks, int64_t *out,
                                rotor_error *err) {
    *out = dist;
    if (!c->shift_load || dist <= 0 || chunks < 2) return ROTOR_OK;
    int64_t rounds = chunks - 1;
    double b = 0;
    for (int64_t k = 1; k <= rounds; k++) {
        double load = 0;
        rotor_status st = c->shift_load(c->mesh_ctx, k * m, &load, err);
        if (st) return st;
        if (!(load > 0) || !isfinite(load))
            return rotor_fail(err, ROTOR_ERR_INPUT, "chip: shift_load(%lld): expected a positive number, got %g",
                              (long long)(k * m), load);
        b += (double)(dist / rounds + (k <= dist % rounds)) * load;
    }
    b = ceil(b);
    *out = b < 9.2e18 ? (int64_t)b : INT64_MAX;
    return ROTOR_OK;
}

/* The Pareto set of preload states of plan p of an op with W weight bytes. */
static rotor_status make_states(const rotor_preload_chip *c, int64_t W, int64_t hbm_ps, pl_plan *p,
                                const char *where, rotor_error *err) {
    int64_t P = p->in.share, d;
    if (!rotor_mul_i64(W, P, &d))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: hbm_bytes * share overflows int64", where);
    d = ceil_div(d, c->cores);
    p->weights = d;
    int64_t chunks[66];
    int nc = 0;
    for (int64_t x = 1; x <= P; x *= 2) {
        if (P % x == 0) chunks[nc++] = x;
        if (x > INT64_MAX / 2) break;
    }
    if (chunks[nc - 1] != P) chunks[nc++] = P;
    p->states = calloc((size_t)nc, sizeof *p->states);
    if (!p->states) return rotor_nomem(err);
    p->nstates = 0;
    for (int k = 0; k < nc; k++) {
        rotor_preload_state s = {.chunks = chunks[k], .space_bytes = ceil_div(d, chunks[k])};
        if (p->nstates > 0 && p->states[p->nstates - 1].space_bytes == s.space_bytes) continue;
        s.dist_bytes = d - s.space_bytes;
        int64_t link_ps;
        rotor_status st = intake_bytes(c, s.space_bytes, P / chunks[k], &s.intake_bytes, err);
        if (!st) st = dist_intake(c, s.dist_bytes, P / chunks[k], chunks[k], &s.dist_intake_bytes, err);
        if (st) return st;
        if (!xfer_checked(s.dist_intake_bytes, c->link_bw, &s.dist_ps) || !xfer_checked(s.intake_bytes, c->link_bw, &link_ps))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: times overflow: %lld bytes over link_bw %lld",
                              where, (long long)d, (long long)c->link_bw);
        s.preload_ps = max64(hbm_ps, link_ps);
        p->states[p->nstates++] = s;
    }
    return ROTOR_OK;
}

static rotor_status check_op(const rotor_preload_chip *c, const rotor_preload_op_desc *d, int i, pl_op *o,
                             rotor_error *err) {
    char where[128];
    snprintf(where, sizeof where, "op %d (%s)", i, desc_name(d));
    snprintf(o->name, sizeof o->name, "%s", desc_name(d));
    if (d->hbm_bytes < 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: hbm_bytes: expected a size >= 0, got %lld", where,
                          (long long)d->hbm_bytes);
    if (d->layer < 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: layer: expected 0 (none) or an id >= 1, got %d", where,
                          d->layer);
    if (d->nplans <= 0 || !d->plans)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: nplans: expected at least 1 plan, got %d", where,
                          d->plans ? d->nplans : 0);
    o->hbm = d->hbm_bytes;
    o->layer = d->layer;
    if (!xfer_checked(o->hbm, c->hbm_bw, &o->hbm_ps))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: hbm_bytes: %lld bytes overflow int64 picoseconds", where,
                          (long long)o->hbm);
    o->nplans = d->nplans;
    o->plans = calloc((size_t)d->nplans, sizeof *o->plans);
    o->pareto = malloc(sizeof *o->pareto * (size_t)d->nplans);
    if (!o->plans || !o->pareto) return rotor_nomem(err);
    int nfit = 0;
    int64_t smallest = INT64_MAX;
    for (int k = 0; k < d->nplans; k++) {
        const rotor_preload_plan *p = &d->plans[k];
        char pw[160];
        snprintf(pw, sizeof pw, "%s: plan %d", where, k);
        if (p->time_ps <= 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: time_ps: expected a positive time, got %lld", pw,
                              (long long)p->time_ps);
        if (p->space_bytes <= 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: space_bytes: expected a positive size, got %lld", pw,
                              (long long)p->space_bytes);
        if (p->share < 1 || p->share > c->cores)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: share: expected 1..%lld (the cores), got %lld", pw,
                              (long long)c->cores, (long long)p->share);
        if (p->traffic_bytes < 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: traffic_bytes: expected a size >= 0, got %lld", pw,
                              (long long)p->traffic_bytes);
        if (p->link_bytes < 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: link_bytes: expected a size >= 0, got %lld", pw,
                              (long long)p->link_bytes);
        pl_plan *q = &o->plans[k];
        q->in = *p;
        if (q->in.link_bytes < q->in.traffic_bytes) q->in.link_bytes = q->in.traffic_bytes;
        rotor_status st = make_states(c, o->hbm, o->hbm_ps, q, pw, err);
        if (st) return st;
        if (p->space_bytes < q->weights)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "%s: space_bytes: %lld is less than the %lld bytes of weights a core holds in "
                              "execute state (ceil(hbm_bytes * share / cores))",
                              pw, (long long)p->space_bytes, (long long)q->weights);
        int64_t tr;
        if (!xfer_checked(p->traffic_bytes, c->link_bw, &tr))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: traffic_bytes: %lld overflows int64 picoseconds", pw,
                              (long long)p->traffic_bytes);
        if (!xfer_checked(p->link_bytes, c->link_bw, &tr))
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: link_bytes: %lld overflows int64 picoseconds", pw,
                              (long long)p->link_bytes);
        smallest = min64(smallest, p->space_bytes);
        q->fits = p->space_bytes <= c->sram_bytes;
        if (q->fits) o->pareto[nfit++] = k;
    }
    if (nfit == 0)
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "%s: no plan fits in the %lld bytes of SRAM per core (the smallest needs %lld)", where,
                          (long long)c->sram_bytes, (long long)smallest);
    sort_plans(o->plans, o->pareto, nfit);
    /* keep a plan only if it needs less space than every faster one */
    int np = 0;
    o->espace_min = INT64_MAX;
    o->lb = INT64_MAX;
    for (int k = 0; k < nfit; k++) {
        const pl_plan *p = &o->plans[o->pareto[k]];
        if (np == 0 || p->in.space_bytes < o->plans[o->pareto[np - 1]].in.space_bytes)
            o->pareto[np++] = o->pareto[k];
        o->espace_min = min64(o->espace_min, p->in.space_bytes);
        o->lb = min64(o->lb, p->states[p->nstates - 1].space_bytes);
    }
    o->npareto = np;
    int64_t lb_in;
    rotor_status st = intake_bytes(c, o->lb, 1, &lb_in, err);
    if (st) return st;
    if (!xfer_checked(lb_in, c->link_bw, &o->lb_pre_ps))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: times overflow: %lld bytes over link_bw %lld", where,
                          (long long)lb_in, (long long)c->link_bw);
    o->lb_pre_ps = max64(o->hbm_ps, o->lb_pre_ps);
    return ROTOR_OK;
}

/* Layer instances: a run of one id >= 1, cut again at layer_begin. */
static rotor_status find_kinds(rotor_preload_model *m, const rotor_preload_op_desc *ops, rotor_error *err) {
    int n = m->n;
    int *inst_start = malloc(sizeof(int) * (size_t)n), *inst_len = malloc(sizeof(int) * (size_t)n);
    m->kinds = calloc((size_t)n, sizeof *m->kinds);
    if (!inst_start || !inst_len || !m->kinds) {
        free(inst_start), free(inst_len);
        return rotor_nomem(err);
    }
    int ninst = 0;
    for (int i = 0; i < n; i++) {
        int id = ops[i].layer;
        if (id == 0) continue;
        if (i == 0 || ops[i].layer_begin || ops[i - 1].layer != id) {
            inst_start[ninst] = i;
            inst_len[ninst++] = 0;
        }
        inst_len[ninst - 1]++;
    }
    rotor_status st = ROTOR_OK;
    m->nkinds = 0;
    for (int t = 0; t < ninst && !st; t++) {
        int s = inst_start[t], id = ops[s].layer, k = 0;
        while (k < m->nkinds && m->kinds[k].id != id) k++;
        pl_kind *kd = &m->kinds[k];
        if (k == m->nkinds) {
            m->nkinds++;
            kd->id = id;
            kd->len = inst_len[t];
            kd->start = malloc(sizeof(int) * (size_t)ninst);
            kd->heavy = malloc(sizeof(int) * (size_t)kd->len);
            if (!kd->start || !kd->heavy) {
                st = rotor_nomem(err);
                break;
            }
            for (int o = 0; o < kd->len; o++)
                if (m->ops[s + o].heavy) kd->heavy[kd->nheavy++] = o;
        } else {
            int first = kd->start[0];
            if (inst_len[t] != kd->len) {
                st = rotor_fail(err, ROTOR_ERR_INPUT,
                                "op %d (%s): layer %d: this instance has %d operators, the first (op %d) has %d", s,
                                m->ops[s].name, id, inst_len[t], first, kd->len);
                break;
            }
            for (int o = 0; o < kd->len; o++)
                if (ops[s + o].hbm_bytes != ops[first + o].hbm_bytes) {
                    st = rotor_fail(err, ROTOR_ERR_INPUT,
                                    "op %d (%s): layer %d: hbm_bytes %lld differs from %lld at the same place of "
                                    "the first instance (op %d)",
                                    s + o, m->ops[s + o].name, id, (long long)ops[s + o].hbm_bytes,
                                    (long long)ops[first + o].hbm_bytes, first + o);
                    break;
                }
        }
        if (!st) kd->start[kd->ninst++] = s;
    }
    free(inst_start), free(inst_len);
    return st;
}

rotor_status rotor_preload_model_create(const rotor_preload_chip *chip, const rotor_preload_op_desc *ops,
                                        int nops, rotor_preload_model **out, rotor_error *err) {
    *out = NULL;
    rotor_status st = check_chip(chip, err);
    if (st) return st;
    if (nops <= 0 || !ops) return rotor_fail(err, ROTOR_ERR_INPUT, "model: nops: expected at least 1 operator, got %d", ops ? nops : 0);
    int64_t all_sram;
    if (!rotor_mul_i64(chip->sram_bytes, (int64_t)nops + 2, &all_sram) || all_sram > INT64_MAX / 4)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: sram_bytes: %lld per core over %d operators overflows int64",
                          (long long)chip->sram_bytes, nops);
    rotor_preload_model *m = calloc(1, sizeof *m);
    if (!m) return rotor_nomem(err);
    m->chip = *chip;
    m->chip.port_load = NULL; /* borrowed: called while the states are made, not kept */
    m->chip.shift_load = NULL;
    m->chip.mesh_ctx = NULL;
    m->n = nops;
    m->ops = calloc((size_t)nops, sizeof *m->ops);
    m->pref_lb = calloc((size_t)nops + 1, sizeof *m->pref_lb);
    if (!m->ops || !m->pref_lb) {
        rotor_preload_model_free(m);
        return rotor_nomem(err);
    }
    int64_t bound = 0, sram_ps = 0;
    if (!xfer_checked(chip->sram_bytes, chip->link_bw, &sram_ps) || sram_ps > INT64_MAX / 8) {
        rotor_preload_model_free(m);
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip: sram_bytes: %lld bytes over link_bw %lld overflow int64 picoseconds",
                          (long long)chip->sram_bytes, (long long)chip->link_bw);
    }
    for (int i = 0; i < nops && !st; i++) {
        st = check_op(chip, &ops[i], i, &m->ops[i], err);
        if (st) break;
        pl_op *o = &m->ops[i];
        if (!rotor_add_i64(m->total_hbm, o->hbm, &m->total_hbm)) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "op %d (%s): hbm_bytes: the model's total overflows int64", i, o->name);
            break;
        }
        m->total_lb += o->lb; /* each lb <= sram_bytes: bounded by all_sram */
        m->pref_lb[i + 1] = m->total_lb;
        /* an upper bound of everything this op can add to a serial schedule */
        int64_t u = 0;
        for (int k = 0; k < o->nplans; k++) {
            const pl_plan *p = &o->plans[k];
            if (!p->fits) continue;
            int64_t t = 0, tr = 0;
            bool ok = rotor_add_i64(p->in.time_ps, p->states[p->nstates - 1].dist_ps, &t) &&
                      rotor_add_i64(p->in.link_bytes, p->weights + chip->sram_bytes, &tr) &&
                      xfer_checked(tr, chip->link_bw, &tr) && rotor_add_i64(t, tr, &t);
            if (!ok) t = INT64_MAX;
            u = max64(u, t);
        }
        bool ok = u < INT64_MAX && rotor_add_i64(u, 2 * sram_ps, &u) &&
                  rotor_add_i64(u, max64(o->hbm_ps, sram_ps), &u) && rotor_add_i64(bound, u, &bound) &&
                  bound <= INT64_MAX / 8;
        if (!ok)
            st = rotor_fail(err, ROTOR_ERR_INPUT,
                            "op %d (%s): times overflow: the serial sum of every duration exceeds int64 picoseconds",
                            i, o->name);
    }
    if (!st) {
        /* §4.4: heavy = hbm_bytes above the average, total / N */
        for (int i = 0; i < nops; i++)
            m->ops[i].heavy = (__int128)m->ops[i].hbm * nops > (__int128)m->total_hbm;
        st = find_kinds(m, ops, err);
    }
    if (!st) {
        int64_t cap = 1, maxp = 0;
        for (int i = 0; i < nops; i++) {
            int ms = 1;
            for (int k = 0; k < m->ops[i].nplans; k++)
                if (m->ops[i].plans[k].nstates > ms) ms = m->ops[i].plans[k].nstates;
            cap += ms - 1;
            maxp = max64(maxp, m->ops[i].npareto);
        }
        cap += maxp;
        if (cap > INT_MAX / 2) st = rotor_fail(err, ROTOR_ERR_INPUT, "model: too many plans and states");
        m->log_cap = (int)cap;
    }
    if (st) {
        rotor_preload_model_free(m);
        return st;
    }
    *out = m;
    return ROTOR_OK;
}

void rotor_preload_model_free(rotor_preload_model *m) {
    if (!m) return;
    for (int i = 0; m->ops && i < m->n; i++) {
        for (int k = 0; m->ops[i].plans && k < m->ops[i].nplans; k++) free(m->ops[i].plans[k].states);
        free(m->ops[i].plans);
        free(m->ops[i].pareto);
    }
    for (int k = 0; m->kinds && k < m->nkinds; k++) {
        free(m->kinds[k].start);
        free(m->kinds[k].heavy);
    }
    free(m->kinds);
    free(m->ops);
    free(m->pref_lb);
    free(m);
}

int rotor_preload_model_nops(const rotor_preload_model *m) { return m->n; }
const rotor_preload_chip *rotor_preload_model_chip(const rotor_preload_model *m) { return &m->chip; }

const rotor_preload_state *rotor_preload_model_states(const rotor_preload_model *m, int op, int plan,
                                                      int *nstates) {
    *nstates = 0;
    if (op < 0 || op >= m->n || plan < 0 || plan >= m->ops[op].nplans || !m->ops[op].plans[plan].fits) return NULL;
    *nstates = m->ops[op].plans[plan].nstates;
    return m->ops[op].plans[plan].states;
}

bool rotor_preload_model_heavy(const rotor_preload_model *m, int op) {
    return op >= 0 && op < m->n && m->ops[op].heavy;
}

/* ---- designs table ------------------------------------------------------------- */

const rotor_preload_design_info rotor_preload_designs[ROTOR_PRELOAD_NDESIGNS] = {
    {ROTOR_PRELOAD_BASIC, "basic", "fastest plans; the next operator preloads into what is left"},
    {ROTOR_PRELOAD_STATIC, "static", "the best static split of SRAM into execution and preload space"},
    {ROTOR_PRELOAD_DYN, "dyn", "Elk without reordering: inductive scheduling and cost-aware allocation"},
    {ROTOR_PRELOAD_FULL, "full", "Elk: inductive scheduling, cost-aware allocation, preload order permutation"},
    {ROTOR_PRELOAD_IDEAL, "ideal", "roofline: own interconnect and SRAM for preloads, free distribution"},
};

rotor_status rotor_preload_design_parse(const char *name, rotor_preload_design *out, rotor_error *err) {
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++)
        if (name && strcmp(name, rotor_preload_designs[d].name) == 0) {
            *out = rotor_preload_designs[d].design;
            return ROTOR_OK;
        }
    return rotor_fail(err, ROTOR_ERR_INPUT,
                      "design: unknown '%s' (expected basic, static, dyn, full or ideal)", name ? name : "");
}

/* ---- schedules and their timing (§4.5) ------------------------------------------- */

/* The decisions of a complete schedule; arrays of n. */
typedef struct sched {
    int *order, *pos, *plan, *state, *q;
} sched;

static void sched_free(sched *s) {
    free(s->order), free(s->pos), free(s->plan), free(s->state), free(s->q);
    memset(s, 0, sizeof *s);
}

static bool sched_alloc(sched *s, int n) {
    size_t b = sizeof(int) * (size_t)n;
    s->order = malloc(b), s->pos = malloc(b), s->plan = malloc(b), s->state = malloc(b), s->q = malloc(b);
    if (s->order && s->pos && s->plan && s->state && s->q) return true;
    sched_free(s);
    return false;
}

static void sched_copy(sched *d, const sched *s, int n) {
    size_t b = sizeof(int) * (size_t)n;
    memcpy(d->order, s->order, b), memcpy(d->pos, s->pos, b), memcpy(d->plan, s->plan, b);
    memcpy(d->state, s->state, b), memcpy(d->q, s->q, b);
}

static void identity(sched *s, int n) {
    for (int i = 0; i < n; i++) s->order[i] = s->pos[i] = i;
}

static const rotor_preload_state *st_of(const rotor_preload_model *m, int op, int plan, int state) {
    return &m->ops[op].plans[plan].states[state];
}

/* The backward estimate of an execution (docs/preload.md): own plan and
 * state, the preload space `pin` of op i+1 charged whole to it. */
static int64_t exec_len(const rotor_preload_model *m, const pl_plan *p, const rotor_preload_state *s,
                        int64_t pin, int64_t *busy) {
    int64_t b = p->in.time_ps + s->dist_ps;
    int64_t a = m->chip.sram_blocking ? xfer(pin, m->chip.link_bw) : 0;
    int64_t ic = xfer(p->in.traffic_bytes + s->dist_intake_bytes + pin, m->chip.link_bw);
    if (busy) *busy = b;
    return max64(b + a, ic);
}

static bool result_alloc(rotor_preload_result *r, int n) {
    memset(r, 0, sizeof *r);
    r->nops = n;
    r->ops = calloc((size_t)n, sizeof *r->ops);
    r->order = malloc(sizeof(int) * (size_t)n);
    if (r->ops && r->order) return true;
    rotor_preload_result_free(r);
    return false;
}

static void result_copy(rotor_preload_result *d, const rotor_preload_result *s) {
    rotor_preload_op_result *ops = d->ops;
    int *order = d->order;
    memcpy(ops, s->ops, sizeof *ops * (size_t)s->nops);
    memcpy(order, s->order, sizeof *order * (size_t)s->nops);
    *d = *s;
    d->ops = ops;
    d->order = order;
}

void rotor_preload_result_free(rotor_preload_result *r) {
    if (!r) return;
    free(r->ops);
    free(r->order);
    memset(r, 0, sizeof *r);
}

/* Length of the intersection of two sorted lists of disjoint intervals. */
static int64_t overlap_len(const int64_t *as, const int64_t *ae, int na, const int64_t *bs, const int64_t *be,
                           int nb) {
    int64_t tot = 0;
    int i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t lo = max64(as[i], bs[j]), hi = min64(ae[i], be[j]);
        if (hi > lo) tot += hi - lo;
        if (ae[i] < be[j]) i++;
        else j++;
    }
    return tot;
}

/* Forward timing of schedule s under the three rules (docs/preload.md,
 * "Duration of an execution").  Two flows meet: the running preload (rule
 * 2: one at a time) and the running execution (rule 1: one at a time), on
 * two resources.  The core's link: a preload alone takes a share
 * fc = space / (link_bw duration) <= 1 of it (HBM-bound preloads leave the
 * rest); an execution needs c link-time units there, c = max(B, X) with
 * sram_blocking (incoming writes pause the core, footnote 2), X otherwise
 * (its traffic first, then the compute).  The busiest link: the preload
 * takes fl = intake / (link_bw duration) of it (fl = fc on all-to-all; on a
 * mesh the edge port's path carries several groups' shares), the
 * execution needs its busiest link's bytes plus the distribution's, over
 * link_bw.  The execution takes at least B and ends when both needs are
 * met.  Where both want a resource they share it max-min fairly (processor
 * sharing; Elk is silent): the preload moves at the rate its tighter share
 * allows, min(f, 1/2) of each resource, the execution gets the rest of
 * each.  On all-to-all the busiest link is the core's own and this is one
 * shared link.  On the ideal machine they never meet.  Piecewise constant
 * rates, so the time advances event to event: O(n) events in all. */
static rotor_status time_forward(const rotor_preload_model *m, const sched *s, bool ideal,
                                 rotor_preload_result *r, int64_t *hbm_total, rotor_error *err) {
    const int n = m->n;
    const double link = (double)m->chip.link_bw;
    double t = 0, prem = 0, fc = 0, fl = 0, need_c = 0, need_l = 0, ebusy_end = 0;
    int e = 0, kstart = 0, kdone = 0;
    bool erun = false, prun = false;
    int64_t b = 0, hbm_ps = 0;
    while (e < n) {
        /* start what may start at t: the next issued preload, then the next execution */
        if (!prun && kstart < s->q[e]) {
            int y = s->order[kstart];
            const rotor_preload_state *st = st_of(m, y, s->plan[y], s->state[y]);
            int64_t d = ideal ? m->ops[y].lb_pre_ps : st->preload_ps;
            r->ops[y].pre_start_ps = llround(t);
            r->ops[y].preload_pos = kstart++;
            if (d <= 0) {
                r->ops[y].pre_end_ps = llround(t);
                kdone++;
                continue;
            }
            prun = true;
            prem = (double)d;
            fc = ideal ? 0 : fmin(1, (double)st->space_bytes * 1e12 / (link * (double)d));
            fl = ideal ? 0 : fmin(1, (double)st->intake_bytes * 1e12 / (link * (double)d));
        }
        if (!erun && s->pos[e] < kdone) {
            const pl_plan *p = &m->ops[e].plans[s->plan[e]];
            const rotor_preload_state *st = &p->states[s->state[e]];
            b = ideal ? p->in.time_ps : p->in.time_ps + st->dist_ps;
            double x = ideal ? 0 : (double)(p->in.traffic_bytes + st->dist_bytes) * 1e12 / link;
            need_c = ideal ? 0 : m->chip.sram_blocking ? fmax((double)b, x) : x;
            need_l = ideal ? 0 : (double)(p->in.link_bytes + st->dist_intake_bytes) * 1e12 / link;
            ebusy_end = t + (double)b;
            erun = true;
            rotor_preload_op_result *xr = &r->ops[e];
            xr->plan = s->plan[e];
            xr->state = s->state[e];
            xr->chunks = st->chunks;
            xr->preload_number = s->q[e] - (e + 1);
            xr->exe_start_ps = llround(t);
            hbm_ps += m->ops[e].hbm_ps;
        }
        if (!erun && !prun) /* cannot happen once eval_sched's checks pass */
            return rotor_fail(err, ROTOR_ERR_INPUT, "op %d (%s): the schedule deadlocks at %.0f ps", e,
                              m->ops[e].name, t);
        /* rates, then the next event */
        bool uc = erun && need_c > 0, ul = erun && need_l > 0;
        double prate = 1;
        if (prun && uc && fc > 0.5) prate = fmin(prate, 0.5 / fc);
        if (prun && ul && fl > 0.5) prate = fmin(prate, 0.5 / fl);
        double rc = prun ? 1 - fc * prate : 1, rl = prun ? 1 - fl * prate : 1;
        double dp = prun ? prem / prate : INFINITY;
        double dc = uc ? need_c / rc : INFINITY, dl = ul ? need_l / rl : INFINITY;
        double de = !erun ? INFINITY : (uc || ul) ? fmin(dc, dl) : fmax(0, ebusy_end - t);
        double dt = fmin(dp, de);
        t += dt;
        if (prun) prem -= prate * dt;
        if (uc) need_c = dc <= dt ? 0 : need_c - rc * dt;
        if (ul) need_l = dl <= dt ? 0 : need_l - rl * dt;
        if (prun && dp <= de) {
            int y = s->order[kdone++];
            r->ops[y].pre_end_ps = llround(t);
            prun = false;
        }
        if (erun && de <= dp && need_c <= 0 && need_l <= 0 && t >= ebusy_end) {
            rotor_preload_op_result *xr = &r->ops[e];
            xr->exe_end_ps = llround(t);
            xr->stall_ps = xr->exe_end_ps - xr->exe_start_ps - b;
            if (xr->stall_ps < 0) xr->stall_ps = 0;
            erun = false;
            e++;
        }
    }
    *hbm_total = hbm_ps;
    return ROTOR_OK;
}

/* Checks schedule s (plans fit, states exist, q valid, SRAM) and times it
 * forwards under the three rules.  `tmp` holds 6 n int64 of scratch. */
static rotor_status eval_sched(const rotor_preload_model *m, const sched *s, bool ideal, rotor_preload_result *r,
                               int64_t *tmp, rotor_error *err) {
    int n = m->n;
    int64_t S = m->chip.sram_bytes;
    int64_t *busy_s = tmp, *busy_e = tmp + n, *stall_s = tmp + 2 * (size_t)n, *stall_e = tmp + 3 * (size_t)n;
    int64_t *pre_s = tmp + 4 * (size_t)n, *pre_e = tmp + 5 * (size_t)n;
    /* rules of issue: q_i >= 1 + max pos(0..i), non-decreasing, q_{N-1} = N */
    int mx = -1;
    for (int i = 0; i < n; i++) {
        const pl_op *o = &m->ops[i];
        if (s->plan[i] < 0 || s->plan[i] >= o->nplans || !o->plans[s->plan[i]].fits)
            return rotor_fail(err, ROTOR_ERR_INPUT, "op %d (%s): plan: %d is not a plan that fits the SRAM", i,
                              o->name, s->plan[i]);
        if (s->state[i] < 0 || s->state[i] >= o->plans[s->plan[i]].nstates)
            return rotor_fail(err, ROTOR_ERR_INPUT, "op %d (%s): state: %d is not a preload state of plan %d", i,
                              o->name, s->state[i], s->plan[i]);
        mx = s->pos[i] > mx ? s->pos[i] : mx;
        int p = s->q[i] - (i + 1);
        if (s->q[i] <= mx)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "op %d (%s): preload_number: %d issues %d preloads before it executes, but the "
                              "preload order needs %d",
                              i, o->name, p, s->q[i], mx + 1);
        if (s->q[i] > n)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "op %d (%s): preload_number: %d reaches past the last operator (at most %d)", i,
                              o->name, p, n - 1 - i);
        if (i > 0 && s->q[i] < s->q[i - 1])
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "op %d (%s): preload_number: %d issues fewer preloads than op %d already did "
                              "(at least %d)",
                              i, o->name, p, i - 1, s->q[i - 1] - (i + 1));
    }
    /* SRAM while op i executes: prefix sums of preload space by position */
    int64_t *pref = pre_s; /* reuse: n + 1 entries needed; pre_s..pre_e are contiguous */
    pref[0] = 0;
    for (int k = 0; k < n; k++) {
        int y = s->order[k];
        int64_t sp = ideal ? m->ops[y].lb : st_of(m, y, s->plan[y], s->state[y])->space_bytes;
        pref[k + 1] = pref[k] + sp;
    }
    int64_t done = 0; /* preload space of ops <= i */
    for (int i = 0; i < n; i++) {
        const pl_op *o = &m->ops[i];
        done += ideal ? o->lb : st_of(m, i, s->plan[i], s->state[i])->space_bytes;
        int64_t resident = pref[s->q[i]] - done;
        int64_t es = o->plans[s->plan[i]].in.space_bytes;
        r->ops[i].resident_bytes = resident;
        r->ops[i].exec_space = es;
        if (ideal ? resident > S : es + resident > S)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "op %d (%s): SRAM overflow: %s%lld bytes of preload space on chip while it executes, "
                              "over the %lld per core",
                              i, o->name, ideal ? "" : "its execution space plus ", (long long)(resident + (ideal ? 0 : es)),
                              (long long)S);
    }
    /* forwards, in program order */
    int64_t hbm_ps = 0;
    rotor_status st = time_forward(m, s, ideal, r, &hbm_ps, err);
    if (st) return st;
    r->breakdown = (rotor_preload_breakdown){0};
    for (int i = 0; i < n; i++) r->order[i] = s->order[i];
    r->latency_ps = r->ops[n - 1].exe_end_ps;
    /* breakdown (Figure 18a): stall > overlap > execute > preload > idle */
    for (int i = 0; i < n; i++) {
        const rotor_preload_op_result *x = &r->ops[i];
        busy_s[i] = x->exe_start_ps;
        busy_e[i] = stall_s[i] = x->exe_end_ps - x->stall_ps;
        stall_e[i] = x->exe_end_ps;
    }
    int64_t busy = 0, stall = 0, pre = 0;
    for (int kk = 0; kk < n; kk++) {
        const rotor_preload_op_result *x = &r->ops[s->order[kk]];
        pre_s[kk] = x->pre_start_ps;
        pre_e[kk] = x->pre_end_ps;
        pre += x->pre_end_ps - x->pre_start_ps;
    }
    for (int i = 0; i < n; i++) {
        busy += busy_e[i] - busy_s[i];
        stall += stall_e[i] - stall_s[i];
    }
    int64_t ov = overlap_len(busy_s, busy_e, n, pre_s, pre_e, n);
    int64_t ps = overlap_len(stall_s, stall_e, n, pre_s, pre_e, n);
    rotor_preload_breakdown *bd = &r->breakdown;
    bd->stall_ps = stall;
    bd->overlap_ps = ov;
    bd->execute_ps = busy - ov;
    bd->preload_ps = pre - ov - ps;
    bd->idle_ps = r->latency_ps - stall - busy - bd->preload_ps;
    r->hbm_util = r->latency_ps > 0 ? (double)hbm_ps / (double)r->latency_ps : 0;
    return ROTOR_OK;
}

rotor_status rotor_preload_evaluate(const rotor_preload_model *m, const rotor_preload_choice *choices,
                                    const int *order, bool ideal, rotor_preload_result *out, rotor_error *err) {
    int n = m->n;
    memset(out, 0, sizeof *out);
    sched s;
    int64_t *tmp = malloc(sizeof(int64_t) * 6 * (size_t)n + sizeof(int64_t));
    if (!tmp || !sched_alloc(&s, n) || !result_alloc(out, n)) {
        free(tmp);
        return rotor_nomem(err);
    }
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < n; i++) s.pos[i] = -1;
    for (int k = 0; k < n && !st; k++) {
        int y = order ? order[k] : k;
        if (y < 0 || y >= n)
            st = rotor_fail(err, ROTOR_ERR_INPUT, "order: position %d: %d is not an operator (0..%d)", k, y, n - 1);
        else if (s.pos[y] >= 0)
            st = rotor_fail(err, ROTOR_ERR_INPUT, "order: op %d appears at positions %d and %d", y, s.pos[y], k);
        else {
            s.order[k] = y;
            s.pos[y] = k;
        }
    }
    for (int i = 0; i < n && !st; i++) {
        s.plan[i] = choices[i].plan;
        s.state[i] = choices[i].state;
        if (choices[i].preload_number < 0 || choices[i].preload_number > n)
            st = rotor_fail(err, ROTOR_ERR_INPUT, "op %d (%s): preload_number: expected 0..%d, got %d", i,
                            m->ops[i].name, n - 1 - i, choices[i].preload_number);
        else
            s.q[i] = i + 1 + choices[i].preload_number;
    }
    if (!st) st = eval_sched(m, &s, ideal, out, tmp, err);
    if (!st) {
        out->design = ideal ? ROTOR_PRELOAD_IDEAL : ROTOR_PRELOAD_DYN;
        out->schedules = 1;
    } else {
        rotor_preload_result_free(out);
    }
    sched_free(&s);
    free(tmp);
    return st;
}

/* ---- §4.2 + §4.3: two-level inductive scheduling with cost-aware allocation ---- */

typedef struct logent {
    int op, old;
} logent;

typedef struct dyn_ws {
    int64_t *tse, *tsp;             /* n + 1: exec start by op, preload start by position */
    int *lo;                        /* 1 + max pos(0..i) */
    char *inM;                      /* op is in the base window M_i */
    int *mlist, *mpos;
    int mn;
    int *steppers;
    int nsteppers;
    logent *log;
} dyn_ws;

static void dyn_ws_free(dyn_ws *w) {
    free(w->tse), free(w->tsp), free(w->lo), free(w->inM), free(w->mlist), free(w->mpos), free(w->steppers);
    free(w->log);
    memset(w, 0, sizeof *w);
}

static bool dyn_ws_alloc(dyn_ws *w, const rotor_preload_model *m) {
    size_t n = (size_t)m->n;
    memset(w, 0, sizeof *w);
    w->tse = malloc(sizeof(int64_t) * (n + 1));
    w->tsp = malloc(sizeof(int64_t) * (n + 1));
    w->lo = malloc(sizeof(int) * n);
    w->inM = malloc(n);
    w->mlist = malloc(sizeof(int) * n);
    w->mpos = malloc(sizeof(int) * n);
    w->steppers = malloc(sizeof(int) * n);
    w->log = malloc(sizeof(logent) * (size_t)m->log_cap);
    if (w->tse && w->tsp && w->lo && w->inM && w->mlist && w->mpos && w->steppers && w->log) return true;
    dyn_ws_free(w);
    return false;
}

/* Whether step (s1 bytes saved, t1 ps added, op o1) beats step 2 by the
 * ratio of §4.3; a step that adds no time beats any that does.  Ties: more
 * bytes, then the lower op. */
static bool better_step(int64_t s1, int64_t t1, int o1, int64_t s2, int64_t t2, int o2) {
    bool f1 = t1 <= 0, f2 = t2 <= 0;
    if (f1 != f2) return f1;
    if (f1) {
        if (t1 != t2) return t1 < t2;
    } else {
        __int128 a = (__int128)s1 * t2, b = (__int128)s2 * t1;
        if (a != b) return a > b;
    }
    if (s1 != s2) return s1 > s2;
    return o1 < o2;
}

typedef struct counters {
    int64_t calls, steps;
} counters;

/* Runs the induction for the preload order in s->order / s->pos and fills
 * s->plan, s->state, s->q.  ROTOR_ERR_NOFIT if an operator cannot fit with
 * the ones the order forces on chip with it. */
static rotor_status dyn_run(const rotor_preload_model *m, sched *s, dyn_ws *w, counters *cnt, rotor_error *err) {
    const int n = m->n;
    const int64_t S = m->chip.sram_bytes;
    const int *order = s->order, *pos = s->pos;
    int *st = s->state, *plan = s->plan;
    int mx = -1;
    for (int i = 0; i < n; i++) {
        mx = pos[i] > mx ? pos[i] : mx;
        w->lo[i] = mx + 1;
        st[i] = 0;
        plan[i] = m->ops[i].pareto[0];
        w->inM[i] = 0;
        w->mpos[i] = -1;
    }
    w->mn = 0;
    w->tse[n] = 0;     /* T_end */
    w->tsp[n] = INF_PS; /* no preload after the last */
    int qnext = n;
#define PSP(j, k) (m->ops[j].plans[plan[j]].states[k].space_bytes)
#define LAST(j) (m->ops[j].plans[plan[j]].nstates - 1)
    for (int i = n - 1; i >= 0; i--) {
        const int lo = w->lo[i], hi = qnext;
        /* M_i = { y > i : pos(y) < lo_i }, from M_{i+1} */
        int lo_next = i == n - 1 ? n : w->lo[i + 1];
        for (int k = lo; k < lo_next; k++) {
            int y = order[k];
            if (!w->inM[y]) continue;
            int at = w->mpos[y], last = w->mlist[--w->mn];
            w->mlist[at] = last;
            w->mpos[last] = at;
            w->inM[y] = 0;
        }
        if (i + 1 < n && pos[i + 1] < lo) {
            w->inM[i + 1] = 1;
            w->mpos[i + 1] = w->mn;
            w->mlist[w->mn++] = i + 1;
        }
        /* as-late-as-possible preload starts of positions [lo, hi) */
        for (int k = hi - 1; k >= lo; k--) {
            int y = order[k];
            int64_t tep = min64(w->tse[y], w->tsp[k + 1]);
            w->tsp[k] = tep - m->ops[y].plans[plan[y]].states[st[y]].preload_ps;
        }
        /* the window: op i executing, M_i preloaded, then one more per p */
        const pl_op *o = &m->ops[i];
        int e = 0;
        const pl_plan *pe = &o->plans[o->pareto[0]];
        int64_t resid = 0, resid_min = 0;
        w->nsteppers = 0;
        for (int t = 0; t < w->mn; t++) {
            int j = w->mlist[t];
            resid += PSP(j, st[j]);
            resid_min += PSP(j, LAST(j));
            if (st[j] < LAST(j)) w->steppers[w->nsteppers++] = j;
        }
        bool nx_in = i + 1 < n && pos[i + 1] < lo;
        int64_t pin = nx_in ? PSP(i + 1, st[i + 1]) : 0;
        int64_t L = exec_len(m, pe, &pe->states[0], pin, NULL);
        int64_t ddist = 0;
        int nlog = 0;
        bool have = false;
        int best_q = lo, best_nlog = 0;
        int64_t best_obj = 0, best_L = 0, best_tee = 0;
        for (int qq = lo; qq <= hi; qq++) {
            if (qq > lo) {
                int y = order[qq - 1];
                resid += PSP(y, st[y]);
                resid_min += PSP(y, LAST(y));
                if (st[y] < LAST(y)) w->steppers[w->nsteppers++] = y;
                if (y == i + 1) {
                    nx_in = true;
                    pin = PSP(y, st[y]);
                    L = exec_len(m, pe, &pe->states[0], pin, NULL);
                }
            }
            if (o->espace_min + resid_min > S) break; /* and for every larger p */
            cnt->calls++;
            /* §4.3: take the most cost-effective step until everything fits */
            while (pe->in.space_bytes + resid > S) {
                int who = -1;
                int64_t bs = 0, bt = 0;
                if (e + 1 < o->npareto) {
                    const pl_plan *nx = &o->plans[o->pareto[e + 1]];
                    who = i;
                    bs = pe->in.space_bytes - nx->in.space_bytes;
                    bt = exec_len(m, nx, &nx->states[0], pin, NULL) - L;
                }
                for (int t = 0; t < w->nsteppers; t++) {
                    int j = w->steppers[t], c = st[j];
                    if (c >= LAST(j)) continue;
                    const rotor_preload_state *a = &m->ops[j].plans[plan[j]].states[c], *b = a + 1;
                    int64_t ds = a->space_bytes - b->space_bytes, dt = b->dist_ps - a->dist_ps;
                    if (nx_in && j == i + 1) dt += exec_len(m, pe, &pe->states[0], b->space_bytes, NULL) - L;
                    if (who < 0 || better_step(ds, dt, j, bs, bt, who)) {
                        who = j;
                        bs = ds;
                        bt = dt;
                    }
                }
                if (who < 0) break; /* cannot happen: the smallest footprint fits */
                cnt->steps++;
                if (who == i) {
                    w->log[nlog++] = (logent){i, e};
                    e++;
                    pe = &o->plans[o->pareto[e]];
                    L = exec_len(m, pe, &pe->states[0], pin, NULL);
                } else {
                    int c = st[who];
                    const rotor_preload_state *a = &m->ops[who].plans[plan[who]].states[c];
                    w->log[nlog++] = (logent){who, c};
                    st[who] = c + 1;
                    resid -= a->space_bytes - a[1].space_bytes;
                    ddist += a[1].dist_ps - a->dist_ps;
                    if (nx_in && who == i + 1) {
                        pin = a[1].space_bytes;
                        L = exec_len(m, pe, &pe->states[0], pin, NULL);
                    }
                }
            }
            if (pe->in.space_bytes + resid > S) break;
            /* Theorem 4.2: T_e-exe(i) = min(T_s-exe(i+1), T_s-pre(i+p+1)) */
            int64_t tee = min64(w->tse[i + 1], w->tsp[qq]);
            int64_t obj = L + ddist - tee; /* current-to-end, with the cost of shrunk states */
            if (!have || obj <= best_obj) {
                have = true;
                best_obj = obj;
                best_q = qq;
                best_nlog = nlog;
                best_L = L;
                best_tee = tee;
            }
        }
        if (!have)
            return rotor_fail(err, ROTOR_ERR_NOFIT,
                              "op %d (%s): does not fit with the %d operators the preload order forces on chip "
                              "with it",
                              i, o->name, lo - (i + 1));
        while (nlog > best_nlog) {
            logent le = w->log[--nlog];
            if (le.op == i) e = le.old;
            else st[le.op] = le.old;
        }
        plan[i] = o->pareto[e];
        s->q[i] = best_q;
        w->tse[i] = best_tee - best_L;
        qnext = best_q;
    }
#undef PSP
#undef LAST
    return ROTOR_OK;
}

/* ---- §4.4: valid preload orders by the suffix tree -------------------------------- */

typedef struct enum_ctx {
    const rotor_preload_model *m;
    int n;
    bool all;                       /* every order of every op (layer 0) */
    const int *base;
    /* pruned: slots of the layer's heavy ops */
    int H;
    int *slot_inst, *slot_rank;     /* per position: instance (-1: not a slot), rank of the slot */
    int *rank_op;                   /* [inst * H + r]: the r-th heavy op of an instance in base order */
    int *sigma;                     /* slot rank -> heavy rank (-1: unassigned) */
    bool *used;                     /* heavy rank assigned */
    bool *inR;                      /* all: op not yet placed */
    int *order;
    int64_t count, limit;
    bool stop;
    rotor_preload_order_fn fn;
    void *ctx;
} enum_ctx;

/* Placing x at position k, with suffix sum `suf` of lb and suffix minimum
 * `smin` (n if empty), fixes the windows i in [x, smin - 1]: every op <= i
 * is at a position <= k, so i executes with the ops > i of positions <= k. */
static bool place_ok(const enum_ctx *c, int x, int64_t suf, int smin) {
    const rotor_preload_model *m = c->m;
    int64_t held = m->total_lb - suf; /* lb of every op at positions <= k */
    for (int i = x; i < smin; i++)
        if (m->ops[i].espace_min + held - m->pref_lb[i + 1] > m->chip.sram_bytes) return false;
    return true;
}

static void dfs(enum_ctx *c, int k, int64_t suf, int smin) {
    const rotor_preload_model *m = c->m;
    /* positions whose operator is determined */
    for (;;) {
        if (k < 0) {
            c->count++;
            if ((c->fn && !c->fn(c->order, c->n, c->ctx)) || (c->limit > 0 && c->count >= c->limit)) c->stop = true;
            return;
        }
        int x;
        if (c->all) break;
        if (c->slot_inst[k] < 0) x = c->base[k];
        else if (c->sigma[c->slot_rank[k]] >= 0) x = c->rank_op[c->slot_inst[k] * c->H + c->sigma[c->slot_rank[k]]];
        else break;
        if (!place_ok(c, x, suf, smin)) return;
        c->order[k] = x;
        suf += m->ops[x].lb;
        if (x < smin) smin = x;
        k--;
    }
    if (c->all) {
        for (int x = 0; x < c->n && !c->stop; x++) {
            if (!c->inR[x] || !place_ok(c, x, suf, smin)) continue;
            c->inR[x] = false;
            c->order[k] = x;
            dfs(c, k - 1, suf + m->ops[x].lb, x < smin ? x : smin);
            c->inR[x] = true;
        }
        return;
    }
    int sr = c->slot_rank[k];
    for (int r = 0; r < c->H && !c->stop; r++) {
        if (c->used[r]) continue;
        int x = c->rank_op[c->slot_inst[k] * c->H + r];
        if (!place_ok(c, x, suf, smin)) continue;
        c->used[r] = true;
        c->sigma[sr] = r;
        c->order[k] = x;
        dfs(c, k - 1, suf + m->ops[x].lb, x < smin ? x : smin);
        c->used[r] = false;
        c->sigma[sr] = -1;
    }
}

static int cmp_int_by_key(const void *a, const void *b, const int *key) {
    int x = key[*(const int *)a], y = key[*(const int *)b];
    return (x > y) - (x < y);
}

rotor_status rotor_preload_orders(const rotor_preload_model *m, int layer, const int *base, int64_t limit,
                                  rotor_preload_order_fn fn, void *ctx, int64_t *count, rotor_error *err) {
    int n = m->n;
    if (count) *count = 0;
    const pl_kind *kd = NULL;
    if (layer < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "layer: expected 0 (every operator) or an id, got %d", layer);
    if (layer > 0) {
        for (int k = 0; k < m->nkinds; k++)
            if (m->kinds[k].id == layer) kd = &m->kinds[k];
        if (!kd) return rotor_fail(err, ROTOR_ERR_INPUT, "layer: no operator has layer id %d", layer);
    }
    enum_ctx c = {.m = m, .n = n, .all = layer == 0, .limit = limit, .fn = fn, .ctx = ctx};
    int *pos = malloc(sizeof(int) * (size_t)n), *own = NULL;
    c.order = malloc(sizeof(int) * (size_t)n);
    rotor_status st = ROTOR_OK;
    if (!pos || !c.order) st = rotor_nomem(err);
    if (!st && !base) {
        own = malloc(sizeof(int) * (size_t)n);
        if (!own) st = rotor_nomem(err);
        for (int i = 0; own && i < n; i++) own[i] = i;
        base = own;
    }
    for (int i = 0; !st && i < n; i++) pos[i] = -1;
    for (int k = 0; !st && k < n; k++) {
        if (base[k] < 0 || base[k] >= n || pos[base[k]] >= 0)
            st = rotor_fail(err, ROTOR_ERR_INPUT, "base: position %d: %d is not a new operator", k, base[k]);
        else
            pos[base[k]] = k;
    }
    c.base = base;
    if (!st && c.all) {
        c.inR = malloc(sizeof(bool) * (size_t)n);
        if (!c.inR) st = rotor_nomem(err);
        for (int i = 0; c.inR && i < n; i++) c.inR[i] = true;
    } else if (!st) {
        int H = c.H = kd->nheavy;
        c.slot_inst = malloc(sizeof(int) * (size_t)n);
        c.slot_rank = malloc(sizeof(int) * (size_t)n);
        c.rank_op = malloc(sizeof(int) * (size_t)(kd->ninst * H + 1));
        c.sigma = malloc(sizeof(int) * (size_t)(H + 1));
        c.used = calloc((size_t)H + 1, sizeof(bool));
        if (!c.slot_inst || !c.slot_rank || !c.rank_op || !c.sigma || !c.used)
            st = rotor_nomem(err);
        for (int k = 0; !st && k < n; k++) c.slot_inst[k] = -1;
        for (int r = 0; !st && r < H; r++) c.sigma[r] = -1;
        for (int t = 0; !st && t < kd->ninst; t++) {
            int *ro = &c.rank_op[t * H];
            for (int h = 0; h < H; h++) ro[h] = kd->start[t] + kd->heavy[h];
            /* rank by position in base (insertion sort, H is small) */
            for (int a = 1; a < H; a++) {
                int v = ro[a], b = a;
                while (b > 0 && cmp_int_by_key(&ro[b - 1], &v, pos) > 0) {
                    ro[b] = ro[b - 1];
                    b--;
                }
                ro[b] = v;
            }
            for (int r = 0; r < H; r++) {
                c.slot_inst[pos[ro[r]]] = t;
                c.slot_rank[pos[ro[r]]] = r;
            }
        }
    }
    if (!st) {
        dfs(&c, n - 1, 0, n);
        if (count) *count = c.count;
    }
    free(pos), free(own), free(c.order), free(c.inR), free(c.slot_inst), free(c.slot_rank), free(c.rank_op);
    free(c.sigma), free(c.used);
    return st;
}

/* ---- designs (§6.1) ---------------------------------------------------------------- */

typedef struct runner {
    const rotor_preload_model *m;
    const rotor_preload_options *opt;
    sched cur;                      /* schedule being built */
    sched best_s;                   /* full: schedule of the best order */
    rotor_preload_result tmp_r, best_r, ideal_r;
    bool have_best, have_ideal;
    int64_t *tmp;                   /* eval scratch */
    dyn_ws w;
    counters cnt;
    int64_t schedules;
    bool want_dyn, want_ideal;
    bool refine;                    /* dyn, full: polish by the forward timing */
    int64_t refine_moves;
    int64_t replaced;               /* times try_order found a better schedule */
    rotor_status st;                /* first hard error inside a callback */
    rotor_error *err;
    int64_t tried, limit;
    const int *base;
} runner;

static void runner_free(runner *r) {
    sched_free(&r->cur);
    sched_free(&r->best_s);
    rotor_preload_result_free(&r->tmp_r);
    rotor_preload_result_free(&r->best_r);
    rotor_preload_result_free(&r->ideal_r);
    free(r->tmp);
    dyn_ws_free(&r->w);
}

static bool runner_init(runner *r, const rotor_preload_model *m, const rotor_preload_options *opt, rotor_error *err) {
    memset(r, 0, sizeof *r);
    r->m = m;
    r->opt = opt;
    r->err = err;
    int n = m->n;
    r->tmp = malloc(sizeof(int64_t) * (6 * (size_t)n + 1));
    if (r->tmp && sched_alloc(&r->cur, n) && sched_alloc(&r->best_s, n) && result_alloc(&r->tmp_r, n) &&
        result_alloc(&r->best_r, n) && result_alloc(&r->ideal_r, n) && dyn_ws_alloc(&r->w, m))
        return true;
    runner_free(r);
    return false;
}

/* Ideal (§6.1): fastest plans, free distribution, and as many preloads
 * issued ahead as the preload SRAM holds at the smallest footprints. */
static rotor_status ideal_order(runner *r) {
    const rotor_preload_model *m = r->m;
    int n = m->n;
    sched *s = &r->cur;
    int64_t *pp = r->tmp; /* prefix of lb by position: n + 1 */
    pp[0] = 0;
    for (int k = 0; k < n; k++) pp[k + 1] = pp[k] + m->ops[s->order[k]].lb;
    int q = 0, mx = -1;
    for (int i = 0; i < n; i++) {
        const pl_op *o = &m->ops[i];
        s->plan[i] = o->pareto[0];
        s->state[i] = o->plans[o->pareto[0]].nstates - 1;
        mx = s->pos[i] > mx ? s->pos[i] : mx;
        if (q < mx + 1) q = mx + 1;
        while (q < n && pp[q + 1] - m->pref_lb[i + 1] <= m->chip.sram_bytes) q++;
        s->q[i] = q;
    }
    rotor_error e2;
    rotor_status st = eval_sched(m, s, true, &r->tmp_r, r->tmp, &e2);
    if (st == ROTOR_ERR_INPUT) return ROTOR_ERR_NOFIT; /* the order does not fit the ideal machine */
    if (st) return st;
    if (!r->have_ideal || r->tmp_r.latency_ps < r->ideal_r.latency_ps) {
        result_copy(&r->ideal_r, &r->tmp_r);
        r->have_ideal = true;
    }
    return ROTOR_OK;
}

/* Schedules the order in r->cur (dyn and/or ideal) and keeps the best. */
static rotor_status try_order(runner *r) {
    const rotor_preload_model *m = r->m;
    r->schedules++;
    if (r->want_ideal) {
        rotor_status st = ideal_order(r);
        if (st && st != ROTOR_ERR_NOFIT) return st;
    }
    if (!r->want_dyn) return ROTOR_OK;
    rotor_error e2;
    rotor_status st = dyn_run(m, &r->cur, &r->w, &r->cnt, &e2);
    if (st == ROTOR_ERR_NOFIT) return ROTOR_OK; /* this order cannot be scheduled */
    if (st) return st;
    st = eval_sched(m, &r->cur, false, &r->tmp_r, r->tmp, r->err);
    if (st) return st;
    if (!r->have_best || r->tmp_r.latency_ps < r->best_r.latency_ps) {
        result_copy(&r->best_r, &r->tmp_r);
        sched_copy(&r->best_s, &r->cur, m->n);
        r->have_best = true;
        r->replaced++;
    }
    return ROTOR_OK;
}

static bool visit_order(const int *order, int n, void *ctx) {
    runner *r = ctx;
    if (memcmp(order, r->base, sizeof(int) * (size_t)n) == 0) return true; /* already tried */
    for (int k = 0; k < n; k++) {
        r->cur.order[k] = order[k];
        r->cur.pos[order[k]] = k;
    }
    rotor_status st = try_order(r);
    if (st) {
        r->st = st;
        return false;
    }
    return ++r->tried < r->limit;
}

/* ---- refinement against the forward timing (decision; Elk is silent) ---------------
 *
 * The induction and the allocation decide with estimates (exec_len: a
 * preload's whole space charged to one execution, solo preload durations),
 * the reported time is the forward fluid (time_forward), and the two
 * disagree where sharing the link matters: a link-bound preload stretched
 * by the traffic beside it, preloads issued so deep that they crowd an
 * execution's shifts.  So the induction's schedule is polished by
 * coordinate descent on the forward time: a move changes one decision of
 * every operator in a class by one step (preload state, preload number, plan
 * along the Pareto list), and is kept when the schedule stays valid and the
 * latency falls strictly.  Classes first group the operators at one place
 * of every instance of a layer (as §4.4 applies one order to identical
 * layers), then each operator alone.  Deterministic: fixed class and move
 * order, first improvement. */

#define REFINE_PASSES 6

typedef struct refiner {
    runner *r;
    sched cand;
    int *members, *cls_start;       /* classes: members[cls_start[c] .. cls_start[c + 1]) */
    int ncls;
} refiner;

/* Applies move mv (0/1: state +-1, 2/3: preload number +-1, 4/5: plan +-1
 * along the Pareto list) to every member of class c in r->cand; false when
 * some member has no such step. */
static bool refine_move(refiner *f, int c, int mv) {
    const rotor_preload_model *m = f->r->m;
    sched *s = &f->cand;
    int d = mv % 2 == 0 ? 1 : -1;
    for (int t = f->cls_start[c]; t < f->cls_start[c + 1]; t++) {
        int i = f->members[t];
        const pl_op *o = &m->ops[i];
        if (mv < 2) {
            int ns = s->state[i] + d;
            if (ns < 0 || ns >= o->plans[s->plan[i]].nstates) return false;
            s->state[i] = ns;
        } else if (mv < 4) {
            int nq = s->q[i] + d;
            if (nq < i + 1 || nq > m->n) return false;
            s->q[i] = nq;
        } else {
            int e = 0;
            while (e < o->npareto && o->pareto[e] != s->plan[i]) e++;
            if (e >= o->npareto || e + d < 0 || e + d >= o->npareto) return false;
            int np = o->pareto[e + d], ns = o->plans[np].nstates;
            s->plan[i] = np;
            if (s->state[i] >= ns) s->state[i] = ns - 1;
        }
    }
    return true;
}

static rotor_status refine(runner *r) {
    const rotor_preload_model *m = r->m;
    int n = m->n;
    refiner f = {.r = r};
    f.members = malloc(sizeof(int) * (size_t)n * 2);
    f.cls_start = malloc(sizeof(int) * ((size_t)n * 2 + 2));
    if (!f.members || !f.cls_start || !sched_alloc(&f.cand, n)) {
        free(f.members), free(f.cls_start), sched_free(&f.cand);
        return rotor_nomem(r->err);
    }
    /* layer-wide classes, then one per operator */
    int nm = 0, layer_cls = 0;
    for (int k = 0; k < m->nkinds; k++) {
        const pl_kind *kd = &m->kinds[k];
        if (kd->ninst < 2) continue;
        for (int o = 0; o < kd->len; o++) {
            f.cls_start[f.ncls++] = nm;
            for (int t = 0; t < kd->ninst; t++) f.members[nm++] = kd->start[t] + o;
        }
    }
    layer_cls = f.ncls;
    for (int i = 0; i < n; i++) {
        f.cls_start[f.ncls++] = nm;
        f.members[nm++] = i;
    }
    f.cls_start[f.ncls] = nm;
    rotor_status st = ROTOR_OK;
    rotor_error e2;
    for (int phase = 0; phase < 2 && !st; phase++) {
        int c0 = phase == 0 ? 0 : layer_cls, c1 = phase == 0 ? layer_cls : f.ncls;
        bool improved = true;
        for (int pass = 0; pass < REFINE_PASSES && improved && !st; pass++) {
            improved = false;
            for (int c = c0; c < c1 && !st; c++)
                for (int mv = 0; mv < 6 && !st; mv++) {
                    sched_copy(&f.cand, &r->best_s, n);
                    if (!refine_move(&f, c, mv)) continue;
                    r->schedules++;
                    rotor_status es = eval_sched(m, &f.cand, false, &r->tmp_r, r->tmp, &e2);
                    if (es == ROTOR_ERR_INPUT) continue; /* breaks a rule or overflows the SRAM */
                    if (es) {
                        st = rotor_fail(r->err, es, "%s", e2.msg);
                        break;
                    }
                    if (r->tmp_r.latency_ps < r->best_r.latency_ps) {
                        result_copy(&r->best_r, &r->tmp_r);
                        sched_copy(&r->best_s, &f.cand, n);
                        r->refine_moves++;
                        improved = true;
                    }
                }
        }
    }
    free(f.members), free(f.cls_start), sched_free(&f.cand);
    return st;
}

static rotor_status run_search(runner *r, bool reorder) {
    const rotor_preload_model *m = r->m;
    int n = m->n;
    identity(&r->cur, n);
    rotor_status st = try_order(r);
    if (st) return st;
    if (!r->have_best && r->want_dyn)
        return rotor_fail(r->err, ROTOR_ERR_NOFIT, "dyn: the execution order cannot be scheduled");
    bool polish = r->want_dyn && !r->want_ideal && r->refine;
    if (polish && (st = refine(r))) return st;
    if (!reorder) return ROTOR_OK;
    int64_t replaced = r->replaced;
    int *base = malloc(sizeof(int) * (size_t)n);
    if (!base) return rotor_nomem(r->err);
    for (int i = 0; i < n; i++) base[i] = i;
    /* §4.4: one layer id at a time, the best order so far as the base */
    for (int k = 0; k < m->nkinds && !st; k++) {
        if (m->kinds[k].nheavy < 2) continue;
        if (r->want_dyn) memcpy(base, r->best_s.order, sizeof(int) * (size_t)n);
        r->base = base;
        r->tried = 0;
        r->limit = r->opt && r->opt->max_orders > 0 ? r->opt->max_orders : DEFAULT_MAX_ORDERS;
        r->st = ROTOR_OK;
        st = rotor_preload_orders(m, m->kinds[k].id, base, 0, visit_order, r, NULL, r->err);
        if (!st) st = r->st;
    }
    free(base);
    /* an order beat the polished schedule: polish the new best too */
    if (!st && polish && r->replaced != replaced) st = refine(r);
    return st;
}

/* Basic (§6.1): the fastest plan; the next operator is preloaded during this
 * execution, at its largest preload state that fits what is left, if any. */
static void basic_sched(const rotor_preload_model *m, sched *s) {
    int n = m->n;
    identity(s, n);
    for (int i = 0; i < n; i++) {
        s->plan[i] = m->ops[i].pareto[0];
        s->state[i] = 0;
    }
    for (int i = 0; i < n; i++) {
        s->q[i] = i + 1;
        if (i + 1 == n) continue;
        int64_t left = m->chip.sram_bytes - m->ops[i].plans[s->plan[i]].in.space_bytes;
        const pl_plan *p = &m->ops[i + 1].plans[s->plan[i + 1]];
        for (int k = 0; k < p->nstates; k++)
            if (p->states[k].space_bytes <= left) {
                s->state[i + 1] = k;
                s->q[i] = i + 2;
                break;
            }
    }
}

static int cmp_i64_desc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* Static (§6.1): for each execution space X (a plan's space), every op runs
 * its fastest plan within X and preloads as many next ops as fit in
 * SRAM - X, all at the largest or all at the smallest preload state. */
static rotor_status static_search(runner *r) {
    const rotor_preload_model *m = r->m;
    int n = m->n;
    int64_t need = 0;
    size_t nv = 0;
    for (int i = 0; i < n; i++) {
        need = max64(need, m->ops[i].espace_min);
        nv += (size_t)m->ops[i].npareto;
    }
    int64_t *vals = malloc(sizeof(int64_t) * nv);
    if (!vals) return rotor_nomem(r->err);
    size_t nval = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m->ops[i].npareto; k++) {
            int64_t v = m->ops[i].plans[m->ops[i].pareto[k]].in.space_bytes;
            if (v >= need) vals[nval++] = v;
        }
    qsort(vals, nval, sizeof *vals, cmp_i64_desc);
    size_t u = 0;
    for (size_t k = 0; k < nval; k++)
        if (u == 0 || vals[u - 1] != vals[k]) vals[u++] = vals[k];
    int64_t cap = r->opt && r->opt->max_splits > 0 ? r->opt->max_splits : DEFAULT_MAX_SPLITS;
    int64_t tries = (int64_t)u < cap ? (int64_t)u : cap;
    sched *s = &r->cur;
    identity(s, n);
    rotor_status st = ROTOR_OK;
    for (int64_t t = 0; t < tries && !st; t++) {
        size_t at = tries == (int64_t)u ? (size_t)t : (size_t)(t * (int64_t)(u - 1) / (tries - 1));
        int64_t X = vals[at], R = m->chip.sram_bytes - X;
        for (int i = 0; i < n; i++) {
            const pl_op *o = &m->ops[i];
            int a = 0, b = o->npareto - 1; /* first pareto plan with space <= X */
            while (a < b) {
                int mid = (a + b) / 2;
                if (o->plans[o->pareto[mid]].in.space_bytes <= X) b = mid;
                else a = mid + 1;
            }
            s->plan[i] = o->pareto[a];
        }
        for (int variant = 0; variant < 2 && !st; variant++) {
            for (int i = 0; i < n; i++) s->state[i] = variant ? m->ops[i].plans[s->plan[i]].nstates - 1 : 0;
            int end = 0;
            int64_t sum = 0;
            for (int i = 0; i < n; i++) {
                if (end <= i) {
                    end = i + 1;
                    sum = 0;
                } else {
                    sum -= st_of(m, i, s->plan[i], s->state[i])->space_bytes; /* op i leaves the window */
                }
                while (end < n && sum + st_of(m, end, s->plan[end], s->state[end])->space_bytes <= R) {
                    sum += st_of(m, end, s->plan[end], s->state[end])->space_bytes;
                    end++;
                }
                s->q[i] = end;
            }
            r->schedules++;
            st = eval_sched(m, s, false, &r->tmp_r, r->tmp, r->err);
            if (!st && (!r->have_best || r->tmp_r.latency_ps < r->best_r.latency_ps)) {
                result_copy(&r->best_r, &r->tmp_r);
                r->best_r.exec_cap_bytes = X;
                r->have_best = true;
            }
        }
    }
    free(vals);
    if (!st && !r->have_best)
        st = rotor_fail(r->err, ROTOR_ERR_NOFIT, "static: no execution space fits every operator");
    return st;
}

int64_t rotor_preload_link_bytes(const rotor_preload_model *m, const rotor_preload_result *res) {
    int64_t b = 0;
    for (int i = 0; i < m->n; i++) {
        const pl_plan *p = &m->ops[i].plans[res->ops[i].plan];
        b += p->in.traffic_bytes + p->weights;
    }
    return b;
}

/* Dyn and full also time the best static split (decision; Elk is silent):
 * a fixed execution space is one of the allocations Elk-Dyn may make, so
 * its schedule is a candidate too, taken when it is faster, or as fast
 * with fewer bytes over the links.  Where the preloads bound the step (a
 * mesh's edge ports), the induction's plans hide under them at no cost in
 * the model, however many bytes they shift, and on the chip those bytes
 * slow the preloads (docs/preload.md, "Dyn and the static split"). */
static rotor_status keep_static_if_better(runner *r) {
    runner s;
    if (!runner_init(&s, r->m, r->opt, r->err)) return rotor_nomem(r->err);
    rotor_error e2;
    s.err = &e2;
    rotor_status st = static_search(&s);
    if (st == ROTOR_ERR_NOMEM) st = rotor_fail(r->err, st, "%s", e2.msg);
    else if (!st) {
        r->schedules += s.schedules;
        int64_t a = r->best_r.latency_ps, b = s.best_r.latency_ps;
        if (b < a || (b == a && rotor_preload_link_bytes(r->m, &s.best_r) < rotor_preload_link_bytes(r->m, &r->best_r))) {
            result_copy(&r->best_r, &s.best_r);
            r->best_r.exec_cap_bytes = 0;
            r->best_r.static_kept = true;
        }
    } else {
        st = ROTOR_OK; /* no static split fits: the induction's schedule stands */
    }
    runner_free(&s);
    return st;
}

rotor_status rotor_preload_schedule(const rotor_preload_model *m, rotor_preload_design design,
                                    const rotor_preload_options *opt, rotor_preload_result *out,
                                    rotor_error *err) {
    memset(out, 0, sizeof *out);
    if ((int)design < 0 || design >= ROTOR_PRELOAD_NDESIGNS)
        return rotor_fail(err, ROTOR_ERR_INPUT, "design: unknown design %d", (int)design);
    runner r;
    if (!runner_init(&r, m, opt, err)) return rotor_nomem(err);
    r.refine = !(opt && opt->no_refine);
    rotor_status st = ROTOR_OK;
    rotor_preload_result *res = &r.best_r;
    switch (design) {
    case ROTOR_PRELOAD_BASIC:
        basic_sched(m, &r.cur);
        r.schedules = 1;
        st = eval_sched(m, &r.cur, false, &r.best_r, r.tmp, err);
        break;
    case ROTOR_PRELOAD_STATIC:
        st = static_search(&r);
        break;
    case ROTOR_PRELOAD_DYN:
        r.want_dyn = true;
        st = run_search(&r, false);
        if (!st && r.refine) st = keep_static_if_better(&r);
        break;
    case ROTOR_PRELOAD_FULL:
        r.want_dyn = true;
        st = run_search(&r, true);
        if (!st && r.refine) st = keep_static_if_better(&r);
        break;
    case ROTOR_PRELOAD_IDEAL: {
        /* the orders full visits; full's own choices steer them only when
         * more than one layer id is reordered */
        int kinds = 0;
        for (int k = 0; k < m->nkinds; k++) kinds += m->kinds[k].nheavy >= 2;
        r.want_ideal = true;
        r.want_dyn = kinds > 1;
        st = run_search(&r, true);
        res = &r.ideal_r;
        if (!st && !r.have_ideal) st = rotor_fail(err, ROTOR_ERR_NOFIT, "ideal: no order fits");
        break;
    }
    default:
        break;
    }
    if (!st) {
        if (!result_alloc(out, m->n)) {
            st = rotor_nomem(err);
        } else {
            result_copy(out, res);
            out->design = design;
            out->alloc_calls = r.cnt.calls;
            out->alloc_steps = r.cnt.steps;
            out->schedules = r.schedules;
            out->refine_moves = r.refine_moves;
        }
    }
    runner_free(&r);
    return st;
}
