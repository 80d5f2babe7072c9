/* gtsplit.c — GraphTurbo's splitting information (§3.1, Algorithm 1) and
 * the best split (Eq. 1) of a set of operators.
 *
 * For each axis d of the output, outermost first, Algorithm 1 takes the
 * smallest factor f_d of [1, 2, 4, 8, 9, ..., size_d] whose instance fits
 * the LB, then counts the operators the split reaches (n_d).  rotor prices
 * the instance exactly rather than as ceil(peak / v): the output range of
 * one instance is carried back through every operator (rotor_gt_input_range),
 * halos included, and an operator it cannot reach computes its whole
 * output in every instance.  Decisions where the paper is silent
 * (docs/graphturbo.md):
 *  - f_d must divide size_d (line 10 asks it of the intermediates; equal
 *    instances keep the cores balanced), so 9.. runs over divisors;
 *  - the footprint is the largest sum of activations live at once while
 *    the operators run in order (weights stream through a small fixed
 *    buffer, §2.2);
 *  - a split is admissible when its sub-graph costs no more than running
 *    it whole (docs/graphturbo.md, "Cost": recomputation, weights streamed
 *    again by every instance, halos read again, against the chunks and
 *    spills of a sub-graph larger than the LB);
 *  - nested splits: when no axis alone fits, the Eq. 1 axis is split whole
 *    and Algorithm 1 runs again on the instance. */
#include "gtint.h"

#include <math.h>
#include <stdlib.h>

#include "rotor/model/elemtype.h"

static bool is_act(const rotor_value *v) { return v->role != ROTOR_ROLE_WEIGHT; }

bool rotor_gt_prop_init(gt_prop *p, const rotor_graph *g, const int *ops, int n, int out) {
    size_t nv = gt_len(g->nvalues);
    *p = (gt_prop){.g = g, .ops = ops, .n = n, .out = out};
    p->lo = malloc(sizeof *p->lo * nv);
    p->hi = malloc(sizeof *p->hi * nv);
    p->set = calloc(nv, 1);
    p->first = malloc(sizeof(int) * nv);
    p->last = malloc(sizeof(int) * nv);
    p->diff = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!p->lo || !p->hi || !p->set || !p->first || !p->last || !p->diff) return false;
    for (int i = 0; i < n; i++) {
        const rotor_op *o = &g->ops[ops[i]];
        for (int k = 0; k < o->ninputs + o->noutputs; k++) {
            int v = k < o->ninputs ? o->inputs[k] : o->outputs[k - o->ninputs];
            p->first[v] = n, p->last[v] = -1;
        }
    }
    for (int i = 0; i < n; i++) {
        const rotor_op *o = &g->ops[ops[i]];
        for (int k = 0; k < o->ninputs + o->noutputs; k++) {
            int v = k < o->ninputs ? o->inputs[k] : o->outputs[k - o->ninputs];
            if (i < p->first[v]) p->first[v] = i;
            if (i > p->last[v]) p->last[v] = i;
        }
    }
    p->last[out] = n - 1; /* the output lives to the end */
    return true;
}

void rotor_gt_prop_free(gt_prop *p) {
    free(p->lo), free(p->hi), free(p->set), free(p->first), free(p->last), free(p->diff);
    *p = (gt_prop){0};
}

/* Value v needs [lo, hi) more: the union with what it already needs. */
static void need(gt_prop *p, int v, const int64_t *lo, const int64_t *hi) {
    int r = p->g->values[v].rank;
    if (!p->set[v]) {
        p->set[v] = 1;
        for (int a = 0; a < r; a++) p->lo[v][a] = lo[a], p->hi[v][a] = hi[a];
        return;
    }
    for (int a = 0; a < r; a++) {
        if (lo[a] < p->lo[v][a]) p->lo[v][a] = lo[a];
        if (hi[a] > p->hi[v][a]) p->hi[v][a] = hi[a];
    }
}

static void need_all(gt_prop *p, int v) {
    int64_t lo[GT_R] = {0}, hi[GT_R];
    for (int a = 0; a < p->g->values[v].rank; a++) hi[a] = p->g->values[v].shape[a];
    need(p, v, lo, hi);
}

/* Operator op's input k for the output range [wlo, whi). */
static void need_input(gt_prop *p, int op, int k, const int64_t *wlo, const int64_t *whi) {
    int64_t lo[GT_R], hi[GT_R];
    rotor_gt_input_range(p->g, op, k, wlo, whi, lo, hi);
    need(p, p->g->ops[op].inputs[k], lo, hi);
}

void rotor_gt_prop_run(gt_prop *p, const int64_t *olo, const int64_t *ohi) {
    const rotor_graph *g = p->g;
    for (int i = 0; i < p->n; i++) {
        const rotor_op *o = &g->ops[p->ops[i]];
        for (int k = 0; k < o->ninputs; k++) p->set[o->inputs[k]] = 0;
        for (int k = 0; k < o->noutputs; k++) p->set[o->outputs[k]] = 0;
    }
    need(p, p->out, olo, ohi);
    for (int i = p->n - 1; i >= 0; i--) {
        int op = p->ops[i];
        const rotor_op *o = &g->ops[op];
        int w = o->outputs[0];
        bool whole = o->noutputs != 1 || !p->set[w];
        if (whole)
            for (int k = 0; k < o->noutputs; k++) need_all(p, o->outputs[k]);
        for (int k = 0; k < o->ninputs; k++) {
            int v = o->inputs[k];
            if (!is_act(&g->values[v])) continue;
            if (whole) need_all(p, v);
            else need_input(p, op, k, p->lo[w], p->hi[w]);
        }
    }
}

int64_t rotor_gt_prop_rows(const gt_prop *p, int v, int a) {
    int64_t e = p->g->values[v].shape[a], r = p->hi[v][a] - p->lo[v][a];
    return r < e ? r : e;
}

/* The bytes operator op reads of its input k (a gather reads its rows). */
static double read_bytes(const rotor_graph *g, int op, int k) {
    const rotor_value *v = &g->values[g->ops[op].inputs[k]];
    return (double)v->bytes * (double)rotor_op_read_elements(g, op, k) / (double)v->elements;
}

static bool is_member(const gt_prop *p, int op) {
    for (int i = 0; i < p->n; i++)
        if (p->ops[i] == op) return true;
    return false;
}

/* The bytes of v one instance holds. */
static int64_t piece_bytes(const gt_prop *p, int v) {
    const rotor_value *val = &p->g->values[v];
    double x = (double)val->bytes;
    for (int a = 0; a < val->rank; a++) x *= (double)rotor_gt_prop_rows(p, v, a) / (double)val->shape[a];
    return (int64_t)(x + 0.5);
}

/* The largest sum of live activation pieces. */
static int64_t footprint(gt_prop *p) {
    const rotor_graph *g = p->g;
    for (int i = 0; i <= p->n; i++) p->diff[i] = 0;
    for (int i = 0; i < p->n; i++) {
        const rotor_op *o = &g->ops[p->ops[i]];
        for (int k = 0; k < o->ninputs + o->noutputs; k++) {
            int v = k < o->ninputs ? o->inputs[k] : o->outputs[k - o->ninputs];
            if (!is_act(&g->values[v]) || p->first[v] != i) continue;
            bool seen = false; /* the same value twice in one operator counts once */
            for (int j = 0; j < k; j++) seen |= (j < o->ninputs ? o->inputs[j] : o->outputs[j - o->ninputs]) == v;
            if (seen) continue;
            int64_t b = piece_bytes(p, v);
            p->diff[i] += b;
            p->diff[p->last[v] + 1] -= b;
        }
    }
    int64_t live = 0, peak = 0;
    for (int i = 0; i < p->n; i++) {
        live += p->diff[i];
        if (live > peak) peak = live;
    }
    return peak;
}

/* FLOPs computed again by `inst` instances (into *extra), as a fraction;
 * the operators the split reaches in *nsplit. */
static double recompute(const gt_prop *p, int64_t inst, int *nsplit, double *extra_out) {
    double extra = 0, all = 0;
    *nsplit = 0;
    for (int i = 0; i < p->n; i++) {
        const rotor_op *o = &p->g->ops[p->ops[i]];
        all += o->flops;
        double share = 1;
        int w = o->outputs[0];
        for (int a = 0; a < p->g->values[w].rank; a++)
            share *= (double)rotor_gt_prop_rows(p, w, a) / (double)p->g->values[w].shape[a];
        *nsplit += share < 1;
        double x = (double)inst * share - 1;
        if (x > 0) extra += o->flops * x;
    }
    *extra_out = extra;
    return all > 0 ? extra / all : 0;
}

void rotor_gt_op_flops(const rotor_op *op, double *mm, double *vec) {
    *mm = !op->vendor && op->expr.op_class == ROTOR_OP_CONTRACTION ? rotor_expr_flops(&op->expr) : 0;
    *vec = op->flops - *mm;
}

/* The overflow of an instance larger than the LB: its share of every
 * intermediate goes out and back, to the GB or DDR as the value's size
 * says (rotor_gt_gb_holds). */
static void spill(const gt_prop *p, rotor_gt_split *s, const rotor_gt_limits *lim) {
    s->spill_gb = s->spill_ddr = 0;
    double n = (double)s->instances, mid = (double)s->kept_bytes / n, over = (double)(s->peak - lim->lb_bytes);
    if (s->fits || mid <= 0) return;
    double share = over < mid ? over / mid : 1;
    for (int i = 0; i < p->n; i++) {
        const rotor_value *w = &p->g->values[p->g->ops[p->ops[i]].outputs[0]];
        if (p->g->ops[p->ops[i]].outputs[0] == p->out) continue;
        double b = 2 * share * (double)w->bytes / n;
        if (rotor_gt_gb_holds((double)w->bytes, lim->gb_bytes)) s->spill_gb += b;
        else s->spill_ddr += b;
    }
}

/* Where value v crossing the boundary of the split s just propagated,
 * the GB when what of it is live at once fits half
 * of it, else DDR (docs/graphturbo.md, "Cost"): model inputs
 * and outputs live in DDR (§4.3's scopes); a split that cuts the outermost
 * axis (the batch, or batch x sequence, in Table 2's models) runs its
 * instances depth-first with consumers that cut it alike (§3.3, Fig. 7), so
 * only the batch block an instance covers waits between them, not the
 * whole value.  An input waits so only when its producer's split cuts the
 * batch too (p->cut; a producer run whole leaves all of it, in DDR when it
 * is larger than half the GB).  Decision: the cost of one sub-graph cannot
 * see its consumers' splits and assumes them aligned; §4.3's spills then
 * place what actually is live, and the time model prices that. */
static double live_bw(const gt_prop *p, const rotor_gt_split *s, int v, const rotor_gt_limits *lim) {
    const rotor_value *val = &p->g->values[v];
    if (val->producer < 0 || val->is_output) return lim->ddr_bw;
    double held = (double)val->bytes;
    bool aligned = v == p->out || (p->cut && p->cut[v]); /* an input: only if its producer cuts the batch too */
    if (s->factor[0] > 1 && aligned && val->rank > 0 && val->shape[0] > 0)
        held *= (double)rotor_gt_prop_rows(p, v, 0) / (double)val->shape[0];
    return rotor_gt_gb_holds(held, lim->gb_bytes) ? lim->gb_bw : lim->ddr_bw;
}

/* The cost model of rotor_gt_limits for the split s just propagated
 * (docs/graphturbo.md, "Cost"): the units' time, recomputation included;
 * the weights, streamed into the LB by every instance (every chunk of an
 * instance larger than the LB), from the GB when they fit half of it
 * (brought from DDR once), else from DDR each time; what crosses the
 * sub-graph's boundary through the GB, or DDR when it is larger than half
 * the GB; what an instance larger than the
 * LB sends out of its intermediates and reads back. */
void rotor_gt_ops_work(const rotor_graph *g, const int *ops, int n, double *mm, double *mm8, double *vec,
                       double *weights) {
    *mm = *vec = *weights = 0;
    if (mm8) *mm8 = 0;
    for (int m = 0; m < n; m++) {
        const rotor_op *o = &g->ops[ops[m]];
        double a, b;
        rotor_gt_op_flops(o, &a, &b);
        *mm += a, *vec += b;
        if (mm8 && rotor_op_elem_of(g, ops[m]).int8) *mm8 += a;
        for (int k = 0; k < o->ninputs; k++) {
            int v = o->inputs[k];
            bool seen = false; /* a weight two members read counts once */
            for (int m2 = 0; m2 <= m && !seen; m2++) {
                const rotor_op *o2 = &g->ops[ops[m2]];
                for (int k2 = 0; k2 < (m2 < m ? o2->ninputs : k) && !seen; k2++) seen = o2->inputs[k2] == v;
            }
            if (!seen && g->values[v].role == ROTOR_ROLE_WEIGHT) *weights += read_bytes(g, ops[m], k);
        }
    }
}

double rotor_gt_mm_seconds(double mm, double mm8, double mm_rate, double mm8_rate) {
    return (mm - mm8) / mm_rate + (mm8 > 0 ? mm8 / (mm8_rate > 0 ? mm8_rate : mm_rate) : 0);
}

/* An operator of the sub-graph whose weights found no room in the GB in an
 * earlier build (rotor_gt_limits.w_stream). */
static bool streamed(const gt_prop *p, const rotor_gt_limits *lim) {
    if (!lim->w_stream) return false;
    for (int i = 0; i < p->n; i++)
        if (lim->w_stream[p->ops[i]]) return true;
    return false;
}

static double cost(const gt_prop *p, rotor_gt_split *s, const rotor_gt_limits *lim) {
    const rotor_graph *g = p->g;
    double mm, mm8, vec, w, in = 0, n = (double)s->instances; /* in: seconds to read the inputs once */
    rotor_gt_ops_work(g, p->ops, p->n, &mm, &mm8, &vec, &w);
    for (int i = 0; i < p->n; i++) {
        const rotor_op *o = &g->ops[p->ops[i]];
        for (int k = 0; k < o->ninputs; k++) {
            int v = o->inputs[k];
            const rotor_value *val = &g->values[v];
            if (p->first[v] != i || val->role == ROTOR_ROLE_WEIGHT) continue; /* each value once */
            bool seen = false;
            for (int j = 0; j < k; j++) seen |= o->inputs[j] == v;
            if (seen || (val->producer >= 0 && is_member(p, val->producer))) continue;
            double bw = live_bw(p, s, v, lim);
            in += lim->mm_rate > 0 ? (double)piece_bytes(p, v) / bw : (double)piece_bytes(p, v);
        }
    }
    double out_bw = live_bw(p, s, p->out, lim);
    double lb = (double)lim->lb_bytes, chunks = s->fits ? 1 : ceil((double)s->peak / lb);
    /* the weights wait in the GB between loads when they fit half of it,
     * unless, under gb_capacity, they found no room in an earlier build
     * (docs/graphturbo.md, "The GB's capacity").  Decision: what else
     * waits across the sub-graph is not seen here; §4.3's scope pass
     * (gtscope.c) revokes residency where the GB would overflow.  (Taking
     * them resident whenever they fit beside the sub-graph's own boundary
     * blocks was measured: ViT-Large's instance step fell to 0.98x of the
     * lb step's and the two-convolution proof stopped fusing.) */
    bool gb_w = rotor_gt_gb_holds(w, lim->w_gb_bytes ? lim->w_gb_bytes : lim->gb_bytes) &&
                !(lim->gb_capacity && streamed(p, lim));
    s->w_resident = gb_w;
    double w_once = lim->mm_rate > 0 ? w * (gb_w ? 1 / lim->gb_bw : 1 / lim->ddr_bw + 1 / lim->gb_bw) : w;
    s->w_loads = chunks, s->in_loads = 1;
    if (!s->fits && p->n == 1 && w > 0) { /* weights outside, if cheaper */
        double tiles = ceil(2 * w / lb);
        if (w_once + in * tiles < w_once * chunks + in) s->w_loads = 1, s->in_loads = tiles;
    }
    if (lim->mm_rate <= 0) return 0;
    double again = 1 + s->recompute;
    double t = rotor_gt_mm_seconds(mm * again, mm8 * again, lim->mm_rate, lim->mm8_rate) +
               vec * again / (lim->vec_rate > 0 ? lim->vec_rate : lim->mm_rate);
    t += (gb_w ? w / lim->ddr_bw : 0) + n * s->w_loads * w_once;
    t += n * s->in_loads * in + (double)g->values[p->out].bytes / out_bw;
    return t + n * (s->spill_gb / lim->gb_bw + s->spill_ddr / lim->ddr_bw);
}

/* Prices the split f (factors per output axis) into s. */
static void price(gt_prop *p, const int64_t *f, const rotor_gt_limits *lim, rotor_gt_split *s) {
    const rotor_value *vo = &p->g->values[p->out];
    int64_t lo[GT_R] = {0}, hi[GT_R], inst = 1;
    for (int a = 0; a < vo->rank; a++) hi[a] = vo->shape[a] / f[a], inst *= f[a], s->factor[a] = f[a];
    for (int a = vo->rank; a < GT_R; a++) s->factor[a] = 1;
    rotor_gt_prop_run(p, lo, hi);
    s->instances = inst;
    s->peak = footprint(p);
    s->recompute = 0, s->extra_flops = 0, s->kept_bytes = 0;
    if (inst > 1) s->recompute = recompute(p, inst, &s->nsplit, &s->extra_flops);
    else s->nsplit = p->n;
    for (int i = 0; i < p->n; i++) {
        int w = p->g->ops[p->ops[i]].outputs[0];
        if (w != p->out) s->kept_bytes += p->g->values[w].bytes;
    }
    s->fits = s->peak <= lim->lb_bytes;
    spill(p, s, lim);
    s->cost = cost(p, s, lim);
}

static bool admissible(const rotor_gt_split *s, const rotor_gt_split *whole, const rotor_gt_limits *lim) {
    return lim->mm_rate <= 0 || s->cost <= whole->cost;
}

static bool better(const rotor_gt_split *a, const rotor_gt_split *b) { /* Eq. 1 */
    if (a->nsplit != b->nsplit) return a->nsplit > b->nsplit;
    int64_t fa = a->factor[a->axis], fb = b->factor[b->axis];
    if (fa != fb) return fa < fb;
    return a->axis < b->axis;
}

/* Lines 4-6 for axis d on top of the split f: the smallest factor whose
 * instance fits; false with *s the full split of d when none does. */
static bool smallest_factor(gt_prop *p, int64_t *f, int d, const rotor_gt_limits *lim, rotor_gt_split *s) {
    int64_t e = p->g->values[p->out].shape[d];
    static const int64_t first[] = {2, 4, 8};
    bool found = false;
    for (int i = 0; i < 3 && !found && first[i] <= e; i++) {
        if (e % first[i]) continue;
        f[d] = first[i], price(p, f, lim, s);
        found = s->fits;
    }
    for (int64_t v = 9; v <= e && !found; v++) {
        if (e % v) continue;
        f[d] = v, price(p, f, lim, s);
        found = s->fits;
    }
    if (!found) f[d] = e, price(p, f, lim, s), found = s->fits; /* size_d ends the list */
    f[d] = 1;
    s->axis = d;
    return found;
}

/* The nesting from the split f on: each level runs Algorithm 1 over the
 * axes not split yet; when none fits, the Eq. 1 axis is split whole and the
 * next level goes on inside it.  *best starts as the split f (fits false). */
static void nest(gt_prop *p, int64_t *f, const rotor_gt_limits *lim, const rotor_gt_split *run_whole,
                 rotor_gt_split *best) {
    const rotor_value *vo = &p->g->values[p->out];
    for (int level = 0; level < vo->rank && !best->fits; level++) {
        rotor_gt_split fit = {.axis = -1}, whole = {.axis = -1}, s;
        for (int d = 0; d < vo->rank; d++) {
            if (f[d] != 1 || vo->shape[d] == 1) continue;
            bool ok = smallest_factor(p, f, d, lim, &s);
            /* a fitting split must pay for itself; a whole split is a step
             * towards one, judged when the nesting ends */
            if (ok && admissible(&s, run_whole, lim) && (fit.axis < 0 || better(&s, &fit))) fit = s;
            if (!ok && (whole.axis < 0 || better(&s, &whole))) whole = s;
        }
        if (fit.axis >= 0) *best = fit;
        else if (whole.axis >= 0) *best = whole, f[whole.axis] = vo->shape[whole.axis];
        else break;
    }
}

/* The split that cuts the outermost axis (the batch) first: its smallest
 * factor that fits, or, when none does, that axis split whole and the
 * nesting inside it (docs/graphturbo.md, "The batch first"). */
static void batch_first(gt_prop *p, const rotor_gt_limits *lim, const rotor_gt_split *run_whole,
                        rotor_gt_split *alt) {
    int64_t f[GT_R];
    for (int a = 0; a < GT_R; a++) f[a] = 1;
    if (smallest_factor(p, f, 0, lim, alt)) return;
    f[0] = p->g->values[p->out].shape[0];
    nest(p, f, lim, run_whole, alt);
}

void rotor_gt_analyse(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                      int64_t *peak, rotor_gt_split *best) {
    rotor_gt_analyse_cut(g, ops, n, out, lim, NULL, peak, best);
}

void rotor_gt_analyse_cut(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                          const uint8_t *cut, int64_t *peak, rotor_gt_split *best) {
    gt_prop p;
    int64_t f[GT_R];
    for (int a = 0; a < GT_R; a++) f[a] = 1;
    *best = (rotor_gt_split){.axis = -1, .instances = 1};
    for (int a = 0; a < GT_R; a++) best->factor[a] = 1;
    *peak = 0;
    if (!rotor_gt_prop_init(&p, g, ops, n, out)) { /* no memory: the caller runs it whole */
        rotor_gt_prop_free(&p);
        return;
    }
    p.cut = cut;
    const rotor_value *vo = &g->values[out];
    price(&p, f, lim, best);
    best->axis = -1;
    *peak = best->peak;
    const rotor_gt_split run_whole = *best;
    nest(&p, f, lim, &run_whole, best);
    /* a split that keeps the batch whole makes every instance of its
     * consumers wait for all of it (§3.3's edges): when cutting the batch
     * first fits too and costs less, it is taken instead (a decision; Eq. 1
     * ranks one axis at a time) */
    if (lim->mm_rate > 0 && best->fits && best->instances > 1 && best->factor[0] == 1 && vo->rank > 1 &&
        vo->shape[0] > 1) {
        rotor_gt_split alt = run_whole;
        batch_first(&p, lim, &run_whole, &alt);
        if (alt.fits && admissible(&alt, &run_whole, lim) && alt.cost < best->cost) *best = alt;
    }
    /* nothing fits, or what fits does not pay: it runs whole, in chunks */
    if (!best->fits || !admissible(best, &run_whole, lim)) *best = run_whole;
    rotor_gt_prop_free(&p);
}

void rotor_gt_analyse_batch(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                            const uint8_t *cut, rotor_gt_split *alt) {
    gt_prop p = {0};
    int64_t f[GT_R];
    for (int a = 0; a < GT_R; a++) f[a] = 1;
    *alt = (rotor_gt_split){.axis = -1, .instances = 1, .w_loads = 1, .in_loads = 1};
    for (int a = 0; a < GT_R; a++) alt->factor[a] = 1;
    if (g->values[out].rank > 1 && g->values[out].shape[0] > 1 && rotor_gt_prop_init(&p, g, ops, n, out)) {
        p.cut = cut;
        price(&p, f, lim, alt);
        rotor_gt_split any = *alt; /* the caller judges the cost: every fitting split is a candidate */
        any.cost = HUGE_VAL;
        batch_first(&p, lim, &any, alt);
    }
    rotor_gt_prop_free(&p);
}

void rotor_gt_analyse_whole(const rotor_graph *g, const int *ops, int n, int out, const rotor_gt_limits *lim,
                            rotor_gt_split *whole) {
    gt_prop p;
    int64_t f[GT_R];
    for (int a = 0; a < GT_R; a++) f[a] = 1, whole->factor[a] = 1;
    *whole = (rotor_gt_split){.axis = -1, .instances = 1, .w_loads = 1, .in_loads = 1};
    for (int a = 0; a < GT_R; a++) whole->factor[a] = 1;
    if (rotor_gt_prop_init(&p, g, ops, n, out)) price(&p, f, lim, whole), whole->axis = -1;
    rotor_gt_prop_free(&p);
}
