/* gtorder.c — GraphTurbo's sub-graph instances: their dependencies and order
 * (§3.3, Algorithm 3), core binding and buffer scopes (§3.4, Algorithm 4)
 * and the spilling of live outputs (§4.3).
 *
 * An instance of a sub-graph computes one block of its output (the split's
 * factors cut each axis in equal blocks).  It depends on the instances of
 * its producers whose blocks meet the range it reads, halos included: the
 * "black edges" of Fig. 6, found by carrying its output range back through
 * its operators (gtsplit.c).  Two orders are built, breadth first (every
 * instance of a sub-graph before the next) and Algorithm 3's depth-first
 * one; both go through Algorithm 4 and §4.3's scopes, and the one the
 * caller's cost model times faster is kept, then the one whose instance
 * outputs spill fewer bytes to DDR, then the one whose live outputs peak
 * lower, then breadth first (§3.3: "the better one with respect to memory
 * utilization"; dfs_better).  Decisions are in docs/graphturbo.md. */
#include "gtint.h"

#include <stdlib.h>
#include <string.h>

typedef struct ordctx {
    const rotor_graph *g;
    const rotor_gt_limits *lim;
    rotor_gt_schedule *s;
    int64_t n;             /* instances */
    int64_t *base;         /* sub-graph -> its first instance id */
    int *isg;              /* instance -> sub-graph */
    int64_t *pstart, *plist; /* predecessors (CSR) */
    int64_t *sstart, *slist; /* successors (CSR) */
    int64_t *stamp;        /* dedupe marks, per instance */
    int64_t np, npcap;
} ordctx;

void rotor_gt_instance_block(const rotor_graph *g, const rotor_gt_schedule *s, int sg, int64_t idx, int64_t *lo,
                             int64_t *hi) {
    const rotor_value *v = &g->values[s->sg[sg].output];
    const int64_t *f = s->sg[sg].best.factor;
    for (int a = v->rank - 1; a >= 0; a--) {
        int64_t b = v->shape[a] / f[a], i = idx % f[a];
        idx /= f[a];
        lo[a] = i * b, hi[a] = lo[a] + b;
    }
}

static bool add_pred(ordctx *c, int64_t id, int64_t pred) {
    if (c->stamp[pred] == id) return true;
    c->stamp[pred] = id;
    if (c->np == c->npcap) {
        int64_t cap = c->npcap ? 2 * c->npcap : 1024;
        int64_t *p = realloc(c->plist, sizeof(int64_t) * (size_t)cap);
        if (!p) return false;
        c->plist = p, c->npcap = cap;
    }
    c->plist[c->np++] = pred;
    return true;
}

/* The instances of sub-graph x whose output blocks meet [lo, hi) of its
 * output (v is that output; another value of x means all of them). */
static bool preds_of(ordctx *c, int64_t id, int x, int v, const int64_t *lo, const int64_t *hi) {
    const rotor_gt_subgraph *sx = &c->s->sg[x];
    const rotor_value *val = &c->g->values[v];
    int64_t from[GT_R], to[GT_R], at[GT_R];
    for (int a = 0; a < val->rank; a++) {
        int64_t f = v == sx->output ? sx->best.factor[a] : 1, b = val->shape[a] / f;
        int64_t l = lo[a] < 0 ? 0 : lo[a], h = hi[a] > val->shape[a] ? val->shape[a] : hi[a];
        if (v != sx->output) l = 0, h = val->shape[a];
        from[a] = l / b, to[a] = (h - 1) / b, at[a] = from[a];
    }
    if (v != sx->output) {
        for (int64_t i = 0; i < sx->best.instances; i++)
            if (!add_pred(c, id, c->base[x] + i)) return false;
        return true;
    }
    for (;;) { /* every multi-index in [from, to] */
        int64_t idx = 0;
        for (int a = 0; a < val->rank; a++) idx = idx * sx->best.factor[a] + at[a];
        if (!add_pred(c, id, c->base[x] + idx)) return false;
        int a = val->rank - 1;
        while (a >= 0 && at[a] == to[a]) at[a] = from[a], a--;
        if (a < 0) return true;
        at[a]++;
    }
}

/* Records sub-graph y's outside inputs, and for each the largest piece one
 * instance reads (after rotor_gt_prop_run of that instance). */
static bool note_inputs(ordctx *c, int y, const gt_prop *p, bool first) {
    rotor_gt_schedule *s = c->s;
    rotor_gt_subgraph *sy = &s->sg[y];
    if (first) sy->first_input = s->ninputs, sy->ninputs = 0;
    for (int m = 0; m < sy->count; m++) {
        const rotor_op *o = &c->g->ops[s->members[sy->first + m]];
        for (int k = 0; k < o->ninputs; k++) {
            int v = o->inputs[k], pr = c->g->values[v].producer;
            const rotor_value *val = &c->g->values[v];
            if (val->role == ROTOR_ROLE_WEIGHT || (pr >= 0 && s->sg_of[pr] == y) || !p->set[v]) continue;
            double x = (double)val->bytes;
            for (int a = 0; a < val->rank; a++) x *= (double)rotor_gt_prop_rows(p, v, a) / (double)val->shape[a];
            int64_t b = (int64_t)(x + 0.5);
            rotor_gt_input *in = NULL;
            for (int i = 0; i < sy->ninputs && !in; i++)
                if (s->inputs[sy->first_input + i].value == v) in = &s->inputs[sy->first_input + i];
            if (in) {
                if (b > in->bytes) in->bytes = b;
                continue;
            }
            if (s->ninputs % 64 == 0) {
                rotor_gt_input *q = realloc(s->inputs, sizeof *q * (size_t)(s->ninputs + 64));
                if (!q) return false;
                s->inputs = q;
            }
            s->inputs[s->ninputs++] = (rotor_gt_input){v, b};
            sy->ninputs++;
        }
    }
    return true;
}

static bool deps_build(ordctx *c) {
    const rotor_gt_schedule *s = c->s;
    c->pstart = malloc(sizeof(int64_t) * (size_t)(c->n + 1));
    if (!c->pstart) return false;
    for (int y = 0; y < s->nsg; y++) {
        const rotor_gt_subgraph *sy = &s->sg[y];
        gt_prop p;
        if (!rotor_gt_prop_init(&p, c->g, s->members + sy->first, sy->count, sy->output)) {
            rotor_gt_prop_free(&p);
            return false;
        }
        for (int64_t i = 0; i < sy->best.instances; i++) {
            int64_t id = c->base[y] + i, lo[GT_R], hi[GT_R];
            c->pstart[id] = c->np;
            rotor_gt_instance_block(c->g, c->s, y, i, lo, hi);
            rotor_gt_prop_run(&p, lo, hi);
            if (!note_inputs(c, y, &p, i == 0)) {
                rotor_gt_prop_free(&p);
                return false;
            }
            for (int m = 0; m < sy->count; m++) {
                const rotor_op *o = &c->g->ops[s->members[sy->first + m]];
                for (int k = 0; k < o->ninputs; k++) {
                    int v = o->inputs[k], pr = c->g->values[v].producer;
                    if (pr < 0 || s->sg_of[pr] == y || !p.set[v]) continue;
                    if (!preds_of(c, id, s->sg_of[pr], v, p.lo[v], p.hi[v])) {
                        rotor_gt_prop_free(&p);
                        return false;
                    }
                }
            }
        }
        rotor_gt_prop_free(&p);
    }
    c->pstart[c->n] = c->np;
    /* successors: the transpose */
    c->sstart = calloc((size_t)c->n + 1, sizeof(int64_t));
    c->slist = malloc(sizeof(int64_t) * gt_len(c->np));
    int64_t *fill = calloc((size_t)c->n + 1, sizeof(int64_t));
    if (!c->sstart || !c->slist || !fill) return free(fill), false;
    for (int64_t e = 0; e < c->np; e++) c->sstart[c->plist[e] + 1]++;
    for (int64_t i = 0; i < c->n; i++) c->sstart[i + 1] += c->sstart[i];
    for (int64_t i = 0; i < c->n; i++)
        for (int64_t e = c->pstart[i]; e < c->pstart[i + 1]; e++) {
            int64_t p = c->plist[e];
            c->slist[c->sstart[p] + fill[p]++] = i;
        }
    free(fill);
    return true;
}

/* Algorithm 3: visit is the breadth-first order; ready a list from which
 * the last instance without producers left runs next, and every consumer of
 * the one that ran moves to ready's end (decision: one already in ready
 * moves too, which is what makes the order go deep). */
static bool dfs_order(ordctx *c, int64_t *order) {
    int64_t n = c->n, *indeg = malloc(sizeof(int64_t) * gt_len(n));
    int64_t *ready = malloc(sizeof(int64_t) * gt_len(n)), nr = 0, no = 0;
    uint8_t *where = calloc(gt_len(n), 1); /* 0 visit, 1 ready, 2 ordered */
    if (!indeg || !ready || !where) return free(indeg), free(ready), free(where), false;
    for (int64_t i = 0; i < n; i++) indeg[i] = c->pstart[i + 1] - c->pstart[i];
    for (int64_t i = 0; i < n; i++)
        if (indeg[i] == 0) ready[nr++] = i, where[i] = 1;
    while (nr > 0) {
        int64_t p = nr - 1;
        while (p >= 0 && indeg[ready[p]] != 0) p--;
        if (p < 0) break; /* cannot happen in a DAG */
        int64_t x = ready[p];
        memmove(ready + p, ready + p + 1, sizeof(int64_t) * (size_t)(nr - p - 1));
        nr--;
        order[no++] = x, where[x] = 2;
        for (int64_t e = c->sstart[x]; e < c->sstart[x + 1]; e++) {
            int64_t y = c->slist[e];
            indeg[y]--;
            if (where[y] == 1) { /* to the end */
                int64_t q = 0;
                while (ready[q] != y) q++;
                memmove(ready + q, ready + q + 1, sizeof(int64_t) * (size_t)(nr - q - 1));
                nr--;
            }
            ready[nr++] = y, where[y] = 1;
        }
    }
    free(indeg), free(ready), free(where);
    return no == n;
}

/* Peak of live output blocks plus the running instance's footprint.  A
 * model output's blocks go to DDR as they are made (§4.3's scopes), so
 * they hold no buffer: counted live to the end, the last sub-graph's whole
 * output would be every order's peak and the orders would always tie. */
static int64_t live_peak(const ordctx *c, const int64_t *order, int64_t *pos, int64_t *diff) {
    int64_t n = c->n;
    for (int64_t i = 0; i < n; i++) pos[order[i]] = i;
    for (int64_t i = 0; i <= n; i++) diff[i] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = order[i], end = gt_last_read(c->sstart, c->slist, pos, x, i);
        if (c->g->values[c->s->sg[c->isg[x]].output].is_output) continue;
        int64_t b = gt_block_bytes(c->g, c->s, c->isg[x]);
        diff[i + 1] += b; /* live from the instance after it */
        diff[end + 1] -= b;
    }
    int64_t live = 0, peak = 0;
    for (int64_t i = 0; i < n; i++) {
        live += diff[i];
        int64_t at = live + c->s->sg[c->isg[order[i]]].best.peak;
        if (at > peak) peak = at;
    }
    return peak;
}


/* What an order's scope pass leaves, to compare two orders by. */
typedef struct scoped {
    rotor_gt_subgraph *sg;   /* the sub-graphs as the pass left them (bindings, scopes, revocations) */
    rotor_gt_scope *scope;
    int tensors[3];
    int64_t spilled[2], gb_peak, ddr_io, ddr_peak;
} scoped;

/* Exchanges what the scope pass wrote into the schedule with *x (x->sg
 * holds as many entries as s->sg): one function both ways, so no field is
 * kept aside and not put back. */
static void swap_scoped(scoped *x, rotor_gt_schedule *s) {
    scoped t = *x;
    *x = (scoped){.sg = s->sg, .scope = s->scope, .spilled = {s->spilled[0], s->spilled[1]}, .gb_peak = s->gb_peak,
                  .ddr_io = s->ddr_io, .ddr_peak = s->ddr_peak};
    memcpy(x->tensors, s->tensors, sizeof x->tensors);
    s->sg = t.sg, s->scope = t.scope, s->spilled[0] = t.spilled[0], s->spilled[1] = t.spilled[1];
    s->gb_peak = t.gb_peak, s->ddr_io = t.ddr_io, s->ddr_peak = t.ddr_peak;
    memcpy(s->tensors, t.tensors, sizeof s->tensors);
}

/* The schedule's order: instance ids by position. */
static void put_order(const ordctx *c, const int64_t *order) {
    for (int64_t i = 0; i < c->n; i++)
        c->s->order[i] = (rotor_gt_instance){c->isg[order[i]], order[i] - c->base[c->isg[order[i]]]};
}

/* Algorithm 4 and §4.3 on one order, from the sub-graphs as grouped (sg0):
 * the pass writes bindings, scopes and revocations into them. */
static rotor_status scope_order(ordctx *c, const rotor_gt_subgraph *sg0, const int64_t *order, rotor_error *err) {
    rotor_gt_schedule *s = c->s;
    memcpy(s->sg, sg0, sizeof *s->sg * gt_len(s->nsg));
    free(s->scope), s->scope = NULL;
    s->spilled[0] = s->spilled[1] = 0, s->gb_peak = 0, s->ddr_io = s->ddr_peak = 0;
    put_order(c, order); /* count_tensors and the price read it */
    gt_inst in = {.n = c->n, .base = c->base, .isg = c->isg, .pstart = c->pstart, .plist = c->plist,
                  .sstart = c->sstart, .slist = c->slist, .order = order};
    return rotor_gt_bind_and_scope(c->g, c->lim, s, &in, err);
}

/* The schedule as the scope pass left it, timed by the caller. */
static rotor_status priced(const ordctx *c, double *seconds, rotor_error *err) {
    *seconds = 0;
    return c->lim->price ? c->lim->price(c->g, c->s, c->lim->price_ctx, seconds, err) : ROTOR_OK;
}

/* The order "better with respect to memory utilization" (§3.3): decision,
 * the one whose schedule the caller's cost model times faster beyond
 * rounding (rotor_gt_faster; what the memory costs is what it prices: the
 * blocks spilled to DDR and read back, the weights streamed where the
 * order's interleaving revoked their residency), then the one whose scope
 * pass sends fewer bytes of instance outputs to DDR, then the lower peak
 * of live outputs, then breadth first.  Until 2026-12-01 the peak alone
 * decided.  It ties where the peak is one instance beside blocks that wait
 * in either order: ResNet-50 at 4 images a cluster (both 11.2 MB) kept
 * breadth first, 3.1 MB spilled to DDR and 2,300.145 us, where depth
 * first, which frees s0.b2's output block by block as s1.b0's first
 * convolution and its downsample read it, spills none: 2,205.499 us;
 * ResNet-18 at 8 the same, 1,538.669 us against 1,286.682.  By the spilled
 * bytes alone (earlier the same day) BERT-128 at 32 sentences a cluster
 * took depth first, which spills less but moves more over DDR in all
 * (27.2 GB against 25.9): 801.0 ms against 762.7.  And the weights a
 * revocation streams, counted as bytes beside the spills (tried too), kept
 * breadth first in a first capacity round of ResNet-50 at 16 whose last
 * round then took 16.428 ms, where the time, which counts them as it
 * counts every byte, gives 15.121 (and 14.500 for the first round, which
 * gtgroup.c keeps: the fastest build). */
static bool dfs_better(double bfs_s, double dfs_s, int64_t bfs_spilled, const rotor_gt_schedule *s) {
    if (rotor_gt_faster(dfs_s, bfs_s)) return true;
    if (rotor_gt_faster(bfs_s, dfs_s)) return false;
    if (s->spilled[1] != bfs_spilled) return s->spilled[1] < bfs_spilled;
    return s->live_peak[1] < s->live_peak[0];
}

static rotor_status order_and_scope(ordctx *c, rotor_error *err) {
    int64_t n = c->n;
    rotor_gt_schedule *s = c->s;
    int64_t *bfs = malloc(sizeof(int64_t) * gt_len(n)), *dfs = malloc(sizeof(int64_t) * gt_len(n));
    int64_t *pos = malloc(sizeof(int64_t) * gt_len(n)), *diff = malloc(sizeof(int64_t) * (size_t)(n + 1));
    rotor_gt_subgraph *sg0 = malloc(sizeof *sg0 * gt_len(s->nsg));
    scoped aside = {.sg = calloc(gt_len(s->nops), sizeof *sg0)}; /* as many as the schedule's (gtgroup.c) */
    s->order = malloc(sizeof *s->order * gt_len(n));
    if (!bfs || !dfs || !pos || !diff || !sg0 || !aside.sg || !s->order)
        return free(bfs), free(dfs), free(pos), free(diff), free(sg0), free(aside.sg), rotor_nomem(err);
    memcpy(sg0, s->sg, sizeof *sg0 * gt_len(s->nsg));
    for (int64_t i = 0; i < n; i++) bfs[i] = i;
    bool dfs_ok = dfs_order(c, dfs);
    s->live_peak[0] = live_peak(c, bfs, pos, diff);
    s->live_peak[1] = dfs_ok ? live_peak(c, dfs, pos, diff) : INT64_MAX;
    s->kind = ROTOR_GT_BFS;
    double bfs_s = 0, dfs_s = 0;
    rotor_status st = scope_order(c, sg0, bfs, err);
    if (st == ROTOR_OK && dfs_ok) st = priced(c, &bfs_s, err);
    if (st == ROTOR_OK && dfs_ok) { /* breadth first's pass aside, depth first's in the schedule */
        swap_scoped(&aside, s);
        st = scope_order(c, sg0, dfs, err);
        if (st == ROTOR_OK) st = priced(c, &dfs_s, err);
        if (st == ROTOR_OK && dfs_better(bfs_s, dfs_s, aside.spilled[1], s)) s->kind = ROTOR_GT_DFS;
        else if (st == ROTOR_OK) swap_scoped(&aside, s), put_order(c, bfs);
    }
    free(bfs), free(dfs), free(pos), free(diff), free(sg0), free(aside.sg), free(aside.scope);
    return st;
}

rotor_status rotor_gt_order_build(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                            rotor_error *err) {
    ordctx c = {.g = g, .lim = lim, .s = s};
    c.base = malloc(sizeof(int64_t) * (size_t)(s->nsg + 1));
    if (!c.base) return rotor_nomem(err);
    for (int i = 0; i < s->nsg; i++) {
        c.base[i] = c.n;
        if (s->sg[i].best.instances > ((int64_t)1 << 24) - c.n) {
            free(c.base);
            return rotor_fail(err, ROTOR_ERR_INPUT, "graphturbo: over 2^24 sub-graph instances");
        }
        c.n += s->sg[i].best.instances;
    }
    c.base[s->nsg] = c.n;
    s->ninst = c.n;
    c.isg = malloc(sizeof(int) * gt_len(c.n));
    c.stamp = malloc(sizeof(int64_t) * gt_len(c.n));
    rotor_status st = ROTOR_OK;
    if (!c.isg || !c.stamp) st = rotor_nomem(err);
    for (int i = 0; st == ROTOR_OK && i < s->nsg; i++)
        for (int64_t j = c.base[i]; j < c.base[i + 1]; j++) c.isg[j] = i;
    for (int64_t j = 0; st == ROTOR_OK && j < c.n; j++) c.stamp[j] = -1;
    if (st == ROTOR_OK && !deps_build(&c)) st = rotor_nomem(err);
    if (st == ROTOR_OK) st = order_and_scope(&c, err);
    free(c.base), free(c.isg), free(c.pstart), free(c.plist), free(c.sstart), free(c.slist), free(c.stamp);
    return st;
}
