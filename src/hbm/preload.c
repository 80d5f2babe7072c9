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
 *    fluid on the core's link (preload_time_forward): the running preload and the
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
#include "preloadint.h"

#include "rotor/base/suggest.h"

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
rotor_status preload_intake_bytes(const rotor_preload_chip *c, int64_t space, int64_t m, int64_t *out,
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
    *out = rotor_i64_held(b);
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
    *out = rotor_i64_held(b);
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
        rotor_status st = preload_intake_bytes(c, s.space_bytes, P / chunks[k], &s.intake_bytes, err);
        if (!st) st = dist_intake(c, s.dist_bytes, P / chunks[k], chunks[k], &s.dist_intake_bytes, err);
        if (st) return st;
        /* each of the c - 1 rounds pays a latency on all-to-all, as a T10
         * gather's rounds do (docs/schedule.md, "Link latency"); on a mesh
         * the rounds are measured (shift_load) and their latency left out */
        int64_t lat = c->shift_load || s.dist_bytes <= 0 ? 0 : c->latency_ps;
        if (!xfer_checked(s.dist_intake_bytes, c->link_bw, &s.dist_ps) || !xfer_checked(s.intake_bytes, c->link_bw, &link_ps) ||
            !rotor_mul_i64(lat, chunks[k] - 1, &lat) || !rotor_add_i64(s.dist_ps, lat, &s.dist_ps))
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
    rotor_status st = preload_intake_bytes(c, o->lb, 1, &lb_in, err);
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
    {ROTOR_PRELOAD_IDEAL, "ideal", "Elk's Ideal: own interconnect and SRAM space for preloads, free distribution"},
    {ROTOR_PRELOAD_ROOFLINE, "roofline", "Ideal without SRAM access contention: preload writes never pause a core"},
};

rotor_status rotor_preload_design_parse(const char *name, rotor_preload_design *out, rotor_error *err) {
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++)
        if (name && strcmp(name, rotor_preload_designs[d].name) == 0) {
            *out = rotor_preload_designs[d].design;
            return ROTOR_OK;
        }
    const char *names[ROTOR_PRELOAD_NDESIGNS];
    char hint[96];
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) names[d] = rotor_preload_designs[d].name;
    return rotor_fail(err, ROTOR_ERR_INPUT, "design: unknown '%s'%s (expected basic, static, dyn, full, ideal or roofline)",
                      name ? name : "", rotor_suggest_phrase(name, names, ROTOR_PRELOAD_NDESIGNS, hint, sizeof hint));
}
