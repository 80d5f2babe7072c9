/* gtgroup.c — GraphTurbo's grouping of sub-graphs (§3.2, Algorithm 2) and
 * the driver of the schedule (§3.2-3.4, §4.3).
 *
 * Every operator starts as a sub-graph.  Three patterns merge them, each
 * pass until it finds nothing, the three again until none merges:
 *  - straight (Fig. 4a): SG1 is the only producer of SG2 and SG2 the only
 *    consumer of SG1; merged under rule (i);
 *  - diamond (Fig. 4b): an exit whose producers all feed only it and all
 *    read one entry; the producers and the exit merge under rule (ii);
 *  - branch (Fig. 4c): an exit with several producers; one producer that
 *    feeds only it merges with it under rule (i).
 * Rule (i): f(SG2) >= f(SG1) and f(SG) <= f(SG2); rule (ii): f(SG) is at
 * most the largest f of the merged ones.  f is the number of instances of
 * the best split (infinite when no split fits the LB).  Decisions
 * (docs/graphturbo.md): a merged sub-graph must fit; an operator with
 * several outputs stays alone; a sub-graph whose output is a model output
 * merges only as an exit. */
#include "gtint.h"

#include <stdlib.h>
#include <string.h>

typedef struct wsg {
    int *ops;
    int n, cap;
    int out;
    int64_t peak;
    rotor_gt_split best;
    bool alive, alone;
} wsg;

typedef struct grouper {
    const rotor_graph *g;
    const rotor_gt_limits *lim;
    wsg *sg;
    int nsg;
    int *sg_of;            /* op -> sub-graph */
    int *rstart, *rlist;   /* readers of each value (CSR over ops) */
    int *buf, *buf2;       /* scratch: sub-graph ids, merged operator lists */
    uint8_t *cut;          /* per value: its sub-graph's split cuts the outermost axis */
    int merges[3];
} grouper;

static const int64_t INF = INT64_MAX;

static int64_t fval(const rotor_gt_split *s) { return s->fits ? s->instances : INF; }

static bool readers_init(grouper *c) {
    const rotor_graph *g = c->g;
    c->rstart = calloc((size_t)g->nvalues + 1, sizeof(int));
    int total = 0;
    for (int o = 0; o < g->nops; o++) total += g->ops[o].ninputs;
    c->rlist = malloc(sizeof(int) * gt_len(total));
    if (!c->rstart || !c->rlist) return false;
    for (int o = 0; o < g->nops; o++)
        for (int k = 0; k < g->ops[o].ninputs; k++) c->rstart[g->ops[o].inputs[k] + 1]++;
    for (int v = 0; v < g->nvalues; v++) c->rstart[v + 1] += c->rstart[v];
    int *fill = calloc((size_t)g->nvalues + 1, sizeof(int));
    if (!fill) return false;
    for (int o = 0; o < g->nops; o++)
        for (int k = 0; k < g->ops[o].ninputs; k++) {
            int v = g->ops[o].inputs[k];
            c->rlist[c->rstart[v] + fill[v]++] = o;
        }
    free(fill);
    return true;
}

/* The one sub-graph that reads x's output, or -1 (none, several, or a model
 * output). */
static int unique_consumer(const grouper *c, int x) {
    int v = c->sg[x].out, y = -1;
    if (c->g->values[v].is_output || c->sg[x].alone) return -1;
    for (int r = c->rstart[v]; r < c->rstart[v + 1]; r++) {
        int s = c->sg_of[c->rlist[r]];
        if (s == x) continue;
        if (y >= 0 && s != y) return -1;
        y = s;
    }
    return y;
}

/* The distinct sub-graphs producing x's activation inputs, into out; count. */
static int producers(const grouper *c, int x, int *out) {
    int n = 0;
    const wsg *s = &c->sg[x];
    for (int i = 0; i < s->n; i++) {
        const rotor_op *o = &c->g->ops[s->ops[i]];
        for (int k = 0; k < o->ninputs; k++) {
            int p = c->g->values[o->inputs[k]].producer;
            if (p < 0 || c->sg_of[p] == x) continue;
            int q = c->sg_of[p];
            bool seen = false;
            for (int j = 0; j < n && !seen; j++) seen = out[j] == q;
            if (!seen) out[n++] = q;
        }
    }
    return n;
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* Analyses the union of sub-graphs ids[0..n) with exit x; its operators in
 * c->buf2 (count *nops). */
static void analyse_union(grouper *c, const int *ids, int n, int x, int *nops, int64_t *peak, rotor_gt_split *s) {
    int m = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < c->sg[ids[i]].n; j++) c->buf2[m++] = c->sg[ids[i]].ops[j];
    qsort(c->buf2, (size_t)m, sizeof(int), cmp_int);
    *nops = m;
    rotor_gt_analyse_cut(c->g, c->buf2, m, c->sg[x].out, c->lim, c->cut, peak, s);
}

/* Merges ids[0..n) (x among them) into x.  false: out of memory. */
static bool commit(grouper *c, const int *ids, int n, int x, int nops, int64_t peak, const rotor_gt_split *s) {
    wsg *t = &c->sg[x];
    if (nops > t->cap) {
        int *p = realloc(t->ops, sizeof(int) * (size_t)nops);
        if (!p) return false;
        t->ops = p, t->cap = nops;
    }
    memcpy(t->ops, c->buf2, sizeof(int) * (size_t)nops);
    t->n = nops, t->peak = peak, t->best = *s;
    c->cut[t->out] = s->factor[0] > 1;
    for (int i = 0; i < n; i++) {
        if (ids[i] == x) continue;
        c->sg[ids[i]].alive = false;
        c->sg[ids[i]].n = 0;
    }
    for (int i = 0; i < nops; i++) c->sg_of[t->ops[i]] = x;
    return true;
}

/* Rule (i) for a then b (b the exit); merges when it holds. */
static int rule_one(grouper *c, int a, int b) {
    if (fval(&c->sg[b].best) < fval(&c->sg[a].best)) return 0;
    int ids[2] = {a, b}, m;
    int64_t peak;
    rotor_gt_split s;
    analyse_union(c, ids, 2, b, &m, &peak, &s);
    if (!s.fits || fval(&s) > fval(&c->sg[b].best)) return 0;
    if (s.cost > c->sg[a].best.cost + c->sg[b].best.cost) return 0; /* not worth it (docs/graphturbo.md, "Cost") */
    return commit(c, ids, 2, b, m, peak, &s) ? 1 : -1;
}

/* One pass of a pattern over the sub-graphs in order: merges made, or -1. */
static int straight_pass(grouper *c) {
    int made = 0;
    for (int a = 0; a < c->nsg; a++) {
        if (!c->sg[a].alive) continue;
        int b = unique_consumer(c, a);
        if (b < 0 || c->sg[b].alone || producers(c, b, c->buf) != 1) continue;
        int r = rule_one(c, a, b);
        if (r < 0) return -1;
        made += r;
    }
    return made;
}

static int diamond_pass(grouper *c) {
    int made = 0;
    for (int x = 0; x < c->nsg; x++) {
        if (!c->sg[x].alive || c->sg[x].alone) continue;
        int np = producers(c, x, c->buf);
        if (np < 2) continue;
        int entry = -1, *ids = c->buf;
        bool ok = true;
        for (int i = 0; i < np && ok; i++) {
            ok = unique_consumer(c, ids[i]) == x;
            int n2 = producers(c, ids[i], c->buf + np + 1);
            for (int j = 0; j < n2 && ok; j++) {
                int e = c->buf[np + 1 + j];
                if (entry < 0) entry = e;
                ok = e == entry;
            }
        }
        if (!ok || entry < 0) continue;
        int64_t fmax = fval(&c->sg[x].best);
        for (int i = 0; i < np; i++)
            if (fval(&c->sg[ids[i]].best) > fmax) fmax = fval(&c->sg[ids[i]].best);
        ids[np] = x;
        int m;
        int64_t peak;
        rotor_gt_split s;
        analyse_union(c, ids, np + 1, x, &m, &peak, &s);
        double apart = 0;
        for (int i = 0; i <= np; i++) apart += c->sg[ids[i]].best.cost;
        if (!s.fits || fval(&s) > fmax || s.cost > apart) continue;
        if (!commit(c, ids, np + 1, x, m, peak, &s)) return -1;
        made++;
    }
    return made;
}

static int branch_pass(grouper *c) {
    int made = 0;
    for (int x = 0; x < c->nsg; x++) {
        if (!c->sg[x].alive || c->sg[x].alone) continue;
        int np = producers(c, x, c->buf);
        if (np < 2) continue;
        for (int i = 0; i < np; i++) {
            int p = c->buf[i];
            if (unique_consumer(c, p) != x) continue;
            int r = rule_one(c, p, x);
            if (r < 0) return -1;
            if (r) {
                made++;
                break;
            }
        }
    }
    return made;
}

static bool grouper_init(grouper *c, const rotor_graph *g, const rotor_gt_limits *lim) {
    *c = (grouper){.g = g, .lim = lim, .nsg = g->nops};
    size_t no = gt_len(g->nops), nv = gt_len(g->nvalues);
    c->sg = calloc(no, sizeof *c->sg);
    c->sg_of = malloc(sizeof(int) * no);
    c->buf = malloc(sizeof(int) * (2 * no + 2));
    c->buf2 = malloc(sizeof(int) * no);
    c->cut = calloc(nv, 1);
    if (!c->sg || !c->sg_of || !c->buf || !c->buf2 || !c->cut || !readers_init(c)) return false;
    for (int o = 0; o < g->nops; o++) {
        wsg *s = &c->sg[o];
        s->ops = malloc(sizeof(int));
        if (!s->ops) return false;
        s->ops[0] = o, s->n = 1, s->cap = 1, s->alive = true;
        s->out = g->ops[o].outputs[0];
        s->alone = g->ops[o].noutputs != 1;
        c->sg_of[o] = o;
        rotor_gt_analyse_cut(g, s->ops, 1, s->out, lim, c->cut, &s->peak, &s->best);
        c->cut[s->out] = s->best.factor[0] > 1;
    }
    return true;
}

static void grouper_free(grouper *c) {
    for (int i = 0; c->sg && i < c->nsg; i++) free(c->sg[i].ops);
    free(c->sg), free(c->sg_of), free(c->rstart), free(c->rlist), free(c->buf), free(c->buf2), free(c->cut);
}

/* Algorithm 2, lines 5-15. */
static bool group_all(grouper *c) {
    for (;;) {
        int s = straight_pass(c);
        if (s < 0) return false;
        int d = diamond_pass(c);
        if (d < 0) return false;
        int b = branch_pass(c);
        if (b < 0) return false;
        c->merges[0] += s, c->merges[1] += d, c->merges[2] += b;
        if (s + d + b == 0) return true;
    }
}

/* The bytes of the activations produced before sub-graph x and read after
 * it (by operator index, a topological order), x's own boundary aside: what
 * waits while x runs. */
static double waiting_across(const grouper *c, int x) {
    const wsg *s = &c->sg[x];
    int lo = s->ops[0], hi = s->ops[s->n - 1];
    double bytes = 0;
    for (int v = 0; v < c->g->nvalues; v++) {
        const rotor_value *val = &c->g->values[v];
        if (val->role == ROTOR_ROLE_WEIGHT || val->producer < 0 || val->producer >= lo || c->sg_of[val->producer] == x)
            continue;
        bool after = false, inside = false;
        for (int r = c->rstart[v]; r < c->rstart[v + 1]; r++) {
            after |= c->rlist[r] > hi && c->sg_of[c->rlist[r]] != x;
            inside |= c->sg_of[c->rlist[r]] == x;
        }
        if (after && !inside) bytes += (double)val->bytes;
    }
    return bytes;
}

/* A sub-graph whose split keeps the batch whole is a barrier in the
 * instance order (§3.3): its first instance waits for every image of its
 * inputs, so everything produced before it and read after it waits whole
 * too, where its producers and consumers cutting the batch would keep one
 * image's worth live (docs/graphturbo.md, "The batch first").  Its own cost
 * cannot see those values; here, after grouping, they are weighed: when
 * they do not wait in the GB (rotor_gt_gb_holds) they go to DDR and back,
 * and the batch-first split is taken if it costs less than the barrier
 * with that round trip. */
static void unbar(grouper *c) {
    const rotor_gt_limits *lim = c->lim;
    if (lim->mm_rate <= 0) return;
    for (int x = 0; x < c->nsg; x++) {
        wsg *s = &c->sg[x];
        if (!s->alive || s->best.factor[0] > 1 || s->alone) continue;
        double across = waiting_across(c, x);
        if (rotor_gt_gb_holds(across, lim->gb_bytes)) continue;
        rotor_gt_split alt;
        rotor_gt_analyse_batch(c->g, s->ops, s->n, s->out, lim, c->cut, &alt);
        if (alt.fits && alt.cost < s->best.cost + 2 * across / lim->ddr_bw) s->best = alt, c->cut[s->out] = 1;
    }
}

static rotor_status build_once(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_mode mode,
                               rotor_gt_schedule *out, rotor_error *err) {
    *out = (rotor_gt_schedule){.mode = mode};
    bool instances = mode == ROTOR_GT_GROUPED;
    if (lim->lb_bytes <= 0 || lim->cores <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "graphturbo: the chip has no local buffer to schedule into");
    grouper c;
    if (!grouper_init(&c, g, lim) || (instances && !group_all(&c))) {
        grouper_free(&c);
        return rotor_nomem(err);
    }
    if (instances && !lim->whole) unbar(&c);
    /* the sub-graphs that survive, in the order of their last operator: a
     * sub-graph's output is its last operator's, read only by later ones,
     * so this order is topological (the first operator's need not be) */
    out->nops = g->nops;
    out->members = malloc(sizeof(int) * gt_len(g->nops));
    out->sg_of = malloc(sizeof(int) * gt_len(g->nops));
    out->sg = calloc(gt_len(g->nops), sizeof *out->sg);
    if (!out->members || !out->sg_of || !out->sg) {
        grouper_free(&c);
        return rotor_nomem(err);
    }
    int m = 0;
    for (int o = 0; o < g->nops; o++) {
        wsg *w = &c.sg[c.sg_of[o]];
        if (!w->alive || w->ops[w->n - 1] != o) continue;
        rotor_gt_subgraph *t = &out->sg[out->nsg];
        *t = (rotor_gt_subgraph){.first = m, .count = w->n, .output = w->out, .peak = w->peak, .best = w->best};
        if (!instances || lim->whole) /* the per-operator kernels, or every sub-graph, run whole: one instance */
            rotor_gt_analyse_whole(g, w->ops, w->n, w->out, lim, &t->best);
        for (int i = 0; i < w->n; i++) out->members[m + i] = w->ops[i], out->sg_of[w->ops[i]] = out->nsg;
        m += w->n;
        out->nsg++;
    }
    memcpy(out->merges, c.merges, sizeof c.merges);
    grouper_free(&c);
    return rotor_gt_order_build(g, lim, out, err);
}

/* The GB's capacity (docs/graphturbo.md, "The GB's capacity"): the cost
 * keeps a sub-graph's weights in the GB when they fit beside its own
 * boundary blocks, but the order interleaves sub-graphs (Algorithm 3 goes
 * deep), and §4.3's scope pass finds where the weights of every sub-graph
 * spanning a point of the order, with the blocks waiting there, would not
 * fit: those stream from DDR.  The splits and merges were priced otherwise,
 * so the grouped schedule is built again with their operators' weights
 * streamed (w_stream), until no sub-graph's residency is revoked (a
 * decision: the paper does not say how §3's choices see §4.4's weights).
 * The marks only grow, so this ends; at most GT_CAPACITY_ROUNDS builds.
 * Every round's schedule is one the chip can run (the scope pass placed it,
 * the revoked weights streamed), and the one kept is the fastest by the
 * caller's price (limits.price; a later round on a tie, so without a price
 * the last, as until 2026-12-01): ResNet-50 at 16 images a cluster takes
 * 14.500 ms in its first round, where the second, its splits priced with
 * stage 2's weights streamed, takes 15.121. */
#define GT_CAPACITY_ROUNDS 8

rotor_status rotor_gt_schedule_build(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_mode mode,
                                     rotor_gt_schedule *out, rotor_error *err) {
    rotor_gt_limits l = *lim;
    l.gb_capacity = lim->gb_capacity && mode == ROTOR_GT_GROUPED, l.w_stream = NULL;
    l.count_weights = lim->gb_capacity && mode != ROTOR_GT_GROUPED;
    if (!l.gb_capacity) return build_once(g, &l, mode, out, err);
    uint8_t *mark = calloc(gt_len(g->nops), 1);
    if (!mark) return rotor_nomem(err);
    l.w_stream = mark;
    rotor_status st = ROTOR_OK;
    rotor_gt_schedule kept = {0};
    double kept_s = 0;
    int round = 0;
    for (; round < GT_CAPACITY_ROUNDS; round++) {
        st = build_once(g, &l, mode, out, err);
        if (st != ROTOR_OK) break;
        bool more = false;
        for (int k = 0; k < out->nsg; k++) {
            if (!out->sg[k].w_revoked) continue;
            for (int i = 0; i < out->sg[k].count; i++) {
                int op = out->members[out->sg[k].first + i];
                more |= !mark[op], mark[op] = 1;
            }
        }
        double t = 0;
        if (l.price && (st = l.price(g, out, l.price_ctx, &t, err)) != ROTOR_OK) break;
        out->capacity_kept = round + 1;
        if (round > 0 && rotor_gt_faster(kept_s, t)) rotor_gt_schedule_free(out); /* the one kept is faster */
        else rotor_gt_schedule_free(&kept), kept = *out, kept_s = t, *out = (rotor_gt_schedule){0};
        if (!more) break;
    }
    free(mark);
    if (st != ROTOR_OK) return rotor_gt_schedule_free(&kept), st; /* *out: the failed build, for the caller to free */
    *out = kept;
    out->capacity_rounds = round < GT_CAPACITY_ROUNDS ? round + 1 : GT_CAPACITY_ROUNDS;
    return st;
}

int64_t rotor_gt_instances(const rotor_gt_schedule *s, int sg) { return s->sg[sg].best.instances; }

void rotor_gt_schedule_free(rotor_gt_schedule *s) {
    free(s->members), free(s->sg_of), free(s->sg), free(s->order), free(s->scope), free(s->inputs);
    *s = (rotor_gt_schedule){0};
}
