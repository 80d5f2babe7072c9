/* timing.c — a preload schedule's decisions and their forward timing under
 * Elk's three rules (Elk §4.5; docs/preload.md, "Duration of an
 * execution"): the running preload and the running execution share the
 * core's link and the busiest link max-min fairly (Elk is silent), event to
 * event; preload_eval_sched checks a schedule and times it. */
#include "preloadint.h"

void preload_sched_free(sched *s) {
    free(s->order), free(s->pos), free(s->plan), free(s->state), free(s->q);
    memset(s, 0, sizeof *s);
}

bool preload_sched_alloc(sched *s, int n) {
    size_t b = sizeof(int) * (size_t)n;
    s->order = malloc(b), s->pos = malloc(b), s->plan = malloc(b), s->state = malloc(b), s->q = malloc(b);
    if (s->order && s->pos && s->plan && s->state && s->q) return true;
    preload_sched_free(s);
    return false;
}

void preload_sched_copy(sched *d, const sched *s, int n) {
    size_t b = sizeof(int) * (size_t)n;
    memcpy(d->order, s->order, b), memcpy(d->pos, s->pos, b), memcpy(d->plan, s->plan, b);
    memcpy(d->state, s->state, b), memcpy(d->q, s->q, b);
}

void preload_identity(sched *s, int n) {
    for (int i = 0; i < n; i++) s->order[i] = s->pos[i] = i;
}



bool preload_result_alloc(rotor_preload_result *r, int n) {
    memset(r, 0, sizeof *r);
    r->nops = n;
    r->ops = calloc((size_t)n, sizeof *r->ops);
    r->order = malloc(sizeof(int) * (size_t)n);
    if (r->ops && r->order) return true;
    rotor_preload_result_free(r);
    return false;
}

void preload_result_copy(rotor_preload_result *d, const rotor_preload_result *s) {
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
 * shared link.  On the roofline they never meet.  On Elk's Ideal each has
 * its own interconnect, so only the SRAM is shared: with sram_blocking the
 * preload's writes of the smallest preload space still pause the core
 * (fc = lb / (link_bw duration)) while the execution computes (c = B), by
 * the same max-min rule; without blocking Ideal is the roofline.  Piecewise constant
 * rates, so the time advances event to event: O(n) events in all. */
rotor_status preload_time_forward(const rotor_preload_model *m, const sched *s, pl_machine mach,
                          rotor_preload_result *r, int64_t *hbm_total, rotor_error *err) {
    const int n = m->n;
    const double link = (double)m->chip.link_bw;
    const bool ideal = mach != PL_CHIP, access = mach == PL_IDEAL && m->chip.sram_blocking;
    double t = 0, prem = 0, fc = 0, fl = 0, need_c = 0, need_l = 0, ebusy_end = 0, alone = 0, estart = 0;
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
            fc = fmin(1, (double)(ideal ? m->ops[y].lb : st->space_bytes) * 1e12 / (link * (double)d));
            if (ideal && !access) fc = 0;
            fl = ideal ? 0 : fmin(1, (double)st->intake_bytes * 1e12 / (link * (double)d));
        }
        if (!erun && s->pos[e] < kdone) {
            const pl_plan *p = &m->ops[e].plans[s->plan[e]];
            const rotor_preload_state *st = &p->states[s->state[e]];
            b = ideal ? p->in.time_ps : p->in.time_ps + st->dist_ps;
            double x = ideal ? 0 : (double)(p->in.traffic_bytes + st->dist_bytes) * 1e12 / link;
            need_c = ideal ? (access ? (double)b : 0) : m->chip.sram_blocking ? fmax((double)b, x) : x;
            need_l = ideal ? 0 : (double)(p->in.link_bytes + st->dist_intake_bytes) * 1e12 / link;
            ebusy_end = t + (double)b;
            /* how long it takes with nothing beside it: its own traffic may
             * hold the link longer than its plan's time, which is its
             * execution, not a stall (found by an audit helper) */
            alone = fmax((double)b, fmax(need_c, need_l));
            estart = t;
            erun = true;
            rotor_preload_op_result *xr = &r->ops[e];
            xr->plan = s->plan[e];
            xr->state = s->state[e];
            xr->chunks = st->chunks;
            xr->preload_number = s->q[e] - (e + 1);
            xr->exe_start_ps = llround(t);
            hbm_ps += m->ops[e].hbm_ps;
        }
        if (!erun && !prun) /* cannot happen once preload_eval_sched's checks pass */
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
            xr->stall_ps = llround(t - estart - alone); /* in doubles: rounding invents none */
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
rotor_status preload_eval_sched(const rotor_preload_model *m, const sched *s, pl_machine mach, rotor_preload_result *r,
                        int64_t *tmp, rotor_error *err) {
    int n = m->n;
    const bool ideal = mach != PL_CHIP;
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
    rotor_status st = preload_time_forward(m, s, mach, r, &hbm_ps, err);
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
                                    const int *order, rotor_preload_design machine, rotor_preload_result *out,
                                    rotor_error *err) {
    int n = m->n;
    pl_machine mach = machine == ROTOR_PRELOAD_IDEAL ? PL_IDEAL : machine == ROTOR_PRELOAD_ROOFLINE ? PL_ROOFLINE : PL_CHIP;
    memset(out, 0, sizeof *out);
    sched s;
    int64_t *tmp = malloc(sizeof(int64_t) * 6 * (size_t)n + sizeof(int64_t));
    if (!tmp || !preload_sched_alloc(&s, n) || !preload_result_alloc(out, n)) {
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
    if (!st) st = preload_eval_sched(m, &s, mach, out, tmp, err);
    if (!st) {
        out->design = mach == PL_CHIP ? ROTOR_PRELOAD_DYN : machine;
        out->schedules = 1;
    } else {
        rotor_preload_result_free(out);
    }
    preload_sched_free(&s);
    free(tmp);
    return st;
}
