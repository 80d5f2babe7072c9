/* designs.c — the designs Elk evaluates (Elk §6.1): Basic, Static,
 * Elk-Dyn, Elk-Full and Ideal, on top of the induction, the preload orders
 * and the forward timing; and the refinement of dyn and full against the
 * forward timing (ours; Elk is silent). */
#include "preloadint.h"

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
    pl_machine ideal_mach; /* want_ideal: PL_IDEAL or PL_ROOFLINE */
    bool refine;                    /* dyn, full: polish by the forward timing */
    int64_t refine_moves;
    int64_t replaced;               /* times try_order found a better schedule */
    rotor_status st;                /* first hard error inside a callback */
    rotor_error *err;
    int64_t tried, limit;
    const int *base;
    int64_t heavy_max, branch_max;  /* Table 2's H and C over the layer ids reordered */
} runner;

static void runner_free(runner *r) {
    preload_sched_free(&r->cur);
    preload_sched_free(&r->best_s);
    rotor_preload_result_free(&r->tmp_r);
    rotor_preload_result_free(&r->best_r);
    rotor_preload_result_free(&r->ideal_r);
    free(r->tmp);
    preload_dyn_ws_free(&r->w);
}

static bool runner_init(runner *r, const rotor_preload_model *m, const rotor_preload_options *opt, rotor_error *err) {
    memset(r, 0, sizeof *r);
    r->m = m;
    r->opt = opt;
    r->err = err;
    int n = m->n;
    r->tmp = malloc(sizeof(int64_t) * (6 * (size_t)n + 1));
    if (r->tmp && preload_sched_alloc(&r->cur, n) && preload_sched_alloc(&r->best_s, n) && preload_result_alloc(&r->tmp_r, n) &&
        preload_result_alloc(&r->best_r, n) && preload_result_alloc(&r->ideal_r, n) && preload_dyn_ws_alloc(&r->w, m))
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
    rotor_status st = preload_eval_sched(m, s, r->ideal_mach, &r->tmp_r, r->tmp, &e2);
    if (st == ROTOR_ERR_INPUT) return ROTOR_ERR_NOFIT; /* the order does not fit the ideal machine */
    if (st) return st;
    if (!r->have_ideal || r->tmp_r.latency_ps < r->ideal_r.latency_ps) {
        preload_result_copy(&r->ideal_r, &r->tmp_r);
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
    rotor_status st = preload_dyn_run(m, &r->cur, &r->w, &r->cnt, &e2);
    if (st == ROTOR_ERR_NOFIT) return ROTOR_OK; /* this order cannot be scheduled */
    if (st) return st;
    st = preload_eval_sched(m, &r->cur, PL_CHIP, &r->tmp_r, r->tmp, r->err);
    if (st) return st;
    if (!r->have_best || r->tmp_r.latency_ps < r->best_r.latency_ps) {
        preload_result_copy(&r->best_r, &r->tmp_r);
        preload_sched_copy(&r->best_s, &r->cur, m->n);
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
 * the reported time is the forward fluid (preload_time_forward), and the two
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
    if (!f.members || !f.cls_start || !preload_sched_alloc(&f.cand, n)) {
        free(f.members), free(f.cls_start), preload_sched_free(&f.cand);
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
                    preload_sched_copy(&f.cand, &r->best_s, n);
                    if (!refine_move(&f, c, mv)) continue;
                    r->schedules++;
                    rotor_status es = preload_eval_sched(m, &f.cand, PL_CHIP, &r->tmp_r, r->tmp, &e2);
                    if (es == ROTOR_ERR_INPUT) continue; /* breaks a rule or overflows the SRAM */
                    if (es) {
                        st = rotor_fail(r->err, es, "%s", e2.msg);
                        break;
                    }
                    if (r->tmp_r.latency_ps < r->best_r.latency_ps) {
                        preload_result_copy(&r->best_r, &r->tmp_r);
                        preload_sched_copy(&r->best_s, &f.cand, n);
                        r->refine_moves++;
                        improved = true;
                    }
                }
        }
    }
    free(f.members), free(f.cls_start), preload_sched_free(&f.cand);
    return st;
}

static rotor_status run_search(runner *r, bool reorder) {
    const rotor_preload_model *m = r->m;
    int n = m->n;
    preload_identity(&r->cur, n);
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
        int64_t branch = 0;
        st = preload_orders_count(m, m->kinds[k].id, base, 0, visit_order, r, NULL, &branch, r->err);
        if (!st) st = r->st;
        r->heavy_max = max64(r->heavy_max, m->kinds[k].nheavy);
        r->branch_max = max64(r->branch_max, branch);
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
    preload_identity(s, n);
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

/* Static's schedules at one execution space X (every operator's fastest
 * plan within X; some plan of each fits): as many next ops preloaded as fit
 * in SRAM - X, all at the largest or all at the smallest preload state, each
 * timed; the faster kept in best_r when it beats it. */
static rotor_status static_split(runner *r, int64_t X) {
    const rotor_preload_model *m = r->m;
    int n = m->n;
    int64_t R = m->chip.sram_bytes - X;
    sched *s = &r->cur;
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
    rotor_status st = ROTOR_OK;
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
        st = preload_eval_sched(m, s, PL_CHIP, &r->tmp_r, r->tmp, r->err);
        if (!st && (!r->have_best || r->tmp_r.latency_ps < r->best_r.latency_ps)) {
            preload_result_copy(&r->best_r, &r->tmp_r);
            r->best_r.exec_cap_bytes = X;
            r->have_best = true;
        }
    }
    return st;
}

/* Static with its split forced (rotor_preload_options.fixed_preload_space;
 * Elk Figure 6 sweeps it): the execution space is what the preload space
 * leaves, and every operator needs a plan within it. */
static rotor_status static_fixed(runner *r, int64_t space) {
    const rotor_preload_model *m = r->m;
    if (space < 0 || space > m->chip.sram_bytes)
        return rotor_fail(r->err, ROTOR_ERR_INPUT, "preload_space_bytes: expected 0..%lld (the SRAM per core), got %lld",
                          (long long)m->chip.sram_bytes, (long long)space);
    int64_t X = m->chip.sram_bytes - space;
    for (int i = 0; i < m->n; i++)
        if (m->ops[i].espace_min > X)
            return rotor_fail(r->err, ROTOR_ERR_NOFIT,
                              "static: op %d (%s) needs %lld bytes of execution space per core, the preload space "
                              "of %lld leaves %lld",
                              i, m->ops[i].name, (long long)m->ops[i].espace_min, (long long)space, (long long)X);
    preload_identity(&r->cur, m->n);
    return static_split(r, X);
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
    preload_identity(&r->cur, n);
    rotor_status st = ROTOR_OK;
    for (int64_t t = 0; t < tries && !st; t++) {
        /* tries spread evenly from the largest space to the smallest; one
         * try takes the largest (it divided by zero until 2026-12-02) */
        size_t at = tries == (int64_t)u ? (size_t)t : tries == 1 ? 0 : (size_t)(t * (int64_t)(u - 1) / (tries - 1));
        st = static_split(r, vals[at]);
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
            preload_result_copy(&r->best_r, &s.best_r);
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
    if (opt && opt->fixed_preload_space && design != ROTOR_PRELOAD_STATIC)
        return rotor_fail(err, ROTOR_ERR_INPUT, "fixed_preload_space: only static takes a fixed split, not %s",
                          rotor_preload_designs[design].name);
    runner r;
    if (!runner_init(&r, m, opt, err)) return rotor_nomem(err);
    r.refine = !(opt && opt->no_refine);
    rotor_status st = ROTOR_OK;
    rotor_preload_result *res = &r.best_r;
    switch (design) {
    case ROTOR_PRELOAD_BASIC:
        basic_sched(m, &r.cur);
        r.schedules = 1;
        st = preload_eval_sched(m, &r.cur, PL_CHIP, &r.best_r, r.tmp, err);
        break;
    case ROTOR_PRELOAD_STATIC:
        st = opt && opt->fixed_preload_space ? static_fixed(&r, opt->preload_space_bytes) : static_search(&r);
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
    case ROTOR_PRELOAD_IDEAL:
    case ROTOR_PRELOAD_ROOFLINE: {
        /* the orders full visits; full's own choices steer them only when
         * more than one layer id is reordered */
        int kinds = 0;
        for (int k = 0; k < m->nkinds; k++) kinds += m->kinds[k].nheavy >= 2;
        r.want_ideal = true;
        r.ideal_mach = design == ROTOR_PRELOAD_IDEAL ? PL_IDEAL : PL_ROOFLINE;
        r.want_dyn = kinds > 1;
        st = run_search(&r, true);
        res = &r.ideal_r;
        if (!st && !r.have_ideal) st = rotor_fail(err, ROTOR_ERR_NOFIT, "%s: no order fits", rotor_preload_designs[design].name);
        break;
    }
    default:
        break;
    }
    if (!st) {
        if (!preload_result_alloc(out, m->n)) {
            st = rotor_nomem(err);
        } else {
            preload_result_copy(out, res);
            out->design = design;
            out->alloc_calls = r.cnt.calls;
            out->alloc_steps = r.cnt.steps;
            out->schedules = r.schedules;
            out->refine_moves = r.refine_moves;
            out->factors = (rotor_preload_factors){.ops = m->n, .preload_numbers = r.cnt.pnum_max,
                                                   .heavy = r.heavy_max, .heavy_fit = r.branch_max};
            for (int i = 0; i < m->n; i++) out->factors.plans = max64(out->factors.plans, m->ops[i].npareto);
        }
    }
    runner_free(&r);
    return st;
}
