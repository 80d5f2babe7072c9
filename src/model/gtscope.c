/* gtscope.c — GraphTurbo's core binding and buffer scopes (§3.4,
 * Algorithm 4) and the spilling of live outputs by longest liveness (§4.3).
 *
 * Algorithm 4 walks the sub-graphs from the last to run to the first.  A
 * sub-graph without a binding takes the plain one (cores along its
 * instance's output axes, outermost first, in powers of two that divide the
 * block: the paper's 8, 4, 2, 1) and tells each producer the binding its
 * output must have; a producer already bound otherwise keeps its output in
 * the GB, where a redistribution can reach it (§3.5, Fig. 9).
 *
 * §4.3 then walks the order: each instance needs its footprint in the LB
 * beside the outputs still live there; when they do not fit, the live
 * output with the longest liveness goes to the GB, or to DDR when the GB is
 * full.  Decisions (docs/graphturbo.md): liveness is from the instance
 * after the producer to the last consumer, except that a block going to
 * the GB takes its room there while its producer writes it (an instance's
 * inputs are freed after it, except the blocks it writes over element for
 * element, reading them for the last time: donate); a block going to the
 * GB that finds no room as it is written goes to DDR and counts as spilled;
 * model inputs and outputs live in DDR; an instance that does not fit
 * alone spills everything live. */
#include "gtint.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

static int64_t cores_of(const int64_t *b) {
    int64_t x = 1;
    for (int a = 0; a < GT_R; a++) x *= b[a];
    return x;
}

static void plain_binding(const rotor_graph *g, const rotor_gt_subgraph *sg, int64_t cores, int64_t *bind) {
    const rotor_value *v = &g->values[sg->output];
    int64_t left = cores;
    for (int a = 0; a < GT_R; a++) bind[a] = 1;
    for (int a = 0; a < v->rank; a++) {
        int64_t block = v->shape[a] / sg->best.factor[a], b = 1;
        while (b * 2 <= left && block % (b * 2) == 0) b *= 2;
        bind[a] = b, left /= b;
    }
}

/* The binding y's binding asks of value v (x's output): an axis of v
 * follows a bound axis of y's output when a core's share of that axis
 * shrinks it.  false: invalid (two bound axes land on one). */
static bool infer_binding(gt_prop *p, const rotor_gt_schedule *s, int y, int v, const int64_t *bind, int64_t *out) {
    const rotor_graph *g = p->g;
    const rotor_value *vo = &g->values[s->sg[y].output], *vi = &g->values[v];
    int64_t lo[GT_R], hi[GT_R], full[GT_R];
    for (int a = 0; a < GT_R; a++) out[a] = 1;
    for (int a = 0; a < vo->rank; a++) lo[a] = 0, hi[a] = vo->shape[a] / s->sg[y].best.factor[a];
    rotor_gt_prop_run(p, lo, hi);
    if (!p->set[v]) return false;
    for (int a = 0; a < vi->rank; a++) full[a] = rotor_gt_prop_rows(p, v, a);
    for (int j = 0; j < vo->rank; j++) {
        if (bind[j] == 1) continue;
        int64_t h = hi[j];
        hi[j] = (hi[j] - lo[j]) / bind[j];
        rotor_gt_prop_run(p, lo, hi);
        hi[j] = h;
        for (int a = 0; a < vi->rank; a++) {
            if (rotor_gt_prop_rows(p, v, a) >= full[a]) continue;
            if (out[a] != 1) return false;
            out[a] = bind[j];
        }
    }
    return true;
}

/* Algorithm 4 over sub-graphs, visited from the last to run. */
static rotor_status algorithm4(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                               const gt_inst *in, rotor_error *err) {
    int nsg = s->nsg, *visit = malloc(sizeof(int) * gt_len(nsg)), nvisit = 0;
    bool *seen = calloc(gt_len(nsg), 1), *bound = calloc(gt_len(nsg), 1);
    if (!visit || !seen || !bound) return free(visit), free(seen), free(bound), rotor_nomem(err);
    for (int64_t i = in->n - 1; i >= 0; i--) {
        int y = in->isg[in->order[i]];
        if (!seen[y]) seen[y] = true, visit[nvisit++] = y;
    }
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < nvisit && st == ROTOR_OK; i++) {
        int y = visit[i];
        rotor_gt_subgraph *sy = &s->sg[y];
        int64_t plain[GT_R];
        plain_binding(g, sy, lim->cores, plain);
        if (bound[y] && sy->scope == ROTOR_GT_LB) { /* line 16 */
            if (cores_of(plain) > cores_of(sy->bind)) memcpy(sy->bind, plain, sizeof plain);
            continue;
        }
        memcpy(sy->bind, plain, sizeof plain), bound[y] = true;
        gt_prop p;
        if (!rotor_gt_prop_init(&p, g, s->members + sy->first, sy->count, sy->output)) {
            rotor_gt_prop_free(&p);
            st = rotor_nomem(err);
            break;
        }
        for (int m = 0; m < sy->count; m++) {
            const rotor_op *o = &g->ops[s->members[sy->first + m]];
            for (int k = 0; k < o->ninputs; k++) {
                int v = o->inputs[k], pr = g->values[v].producer, x;
                int64_t inf[GT_R];
                if (pr < 0 || (x = s->sg_of[pr]) == y || v != s->sg[x].output) continue;
                if (!infer_binding(&p, s, y, v, sy->bind, inf)) continue;
                if (!bound[x]) memcpy(s->sg[x].bind, inf, sizeof inf), bound[x] = true;
                else if (memcmp(s->sg[x].bind, inf, sizeof inf) != 0) s->sg[x].scope = ROTOR_GT_GB;
            }
        }
        rotor_gt_prop_free(&p);
    }
    free(visit), free(seen), free(bound);
    return st;
}

typedef struct block {
    int64_t bytes, start, end;
    rotor_gt_scope where;
} block;

/* Frees the live blocks whose last reader was instance i - 1. */
static void free_ended(block *bl, int64_t *live, int64_t *nlive, int64_t i, int64_t *lb, int64_t *gb) {
    int64_t k = 0;
    for (int64_t j = 0; j < *nlive; j++) {
        block *b = &bl[live[j]];
        if (b->end > i - 1) {
            live[k++] = live[j];
            continue;
        }
        if (b->where == ROTOR_GT_LB) *lb -= b->bytes;
        else if (b->where == ROTOR_GT_GB) *gb -= b->bytes;
    }
    *nlive = k;
}

/* What DDR moves for the block at position k if it goes there before the
 * instance at position i runs: its bytes written once and read by each
 * instance from i on that reads it. */
static int64_t ddr_traffic(const block *bl, const gt_inst *in, const int64_t *pos, int64_t k, int64_t i) {
    int64_t x = in->order[k], reads = 0;
    for (int64_t e = in->sstart[x]; e < in->sstart[x + 1]; e++) reads += pos[in->slist[e]] >= i;
    return bl[k].bytes * (1 + reads);
}

/* Room in the GB for the block at position w, spilled before the instance
 * at position i: while it does not fit, the GB block read last of all goes
 * on to DDR if it is read later than w's (§4.3: the longest liveness leaves
 * first, the GB's as the LB's; a decision, the paper says only "first GB
 * and next DDR"), as long as what DDR then moves for the blocks moved on
 * (ddr_traffic) is no more than it would move for w's.  false: no room, w's
 * block goes to DDR, and the blocks moved on come back to the GB (moving
 * them would buy nothing); moved_to is room for the blocks live. */
static bool gb_room(block *bl, const int64_t *live, int64_t nlive, int64_t *gb, int64_t w, int64_t i, int64_t cap,
                    rotor_gt_schedule *s, const gt_inst *in, const int64_t *pos, int64_t *moved_to) {
    int64_t moved = 0, budget = ddr_traffic(bl, in, pos, w, i), nmoved = 0;
    while (*gb + bl[w].bytes > cap) {
        int64_t v = -1, vt = 0;
        for (int64_t j = 0; j < nlive; j++) {
            const block *o = &bl[live[j]];
            if (o->where != ROTOR_GT_GB || o->end <= bl[w].end || (v >= 0 && o->end <= bl[v].end)) continue;
            int64_t t = ddr_traffic(bl, in, pos, live[j], i);
            if (moved + t <= budget) v = live[j], vt = t;
        }
        if (v < 0) { /* no room after all: the blocks moved on come back (DDR would move them for nothing) */
            for (int64_t k = 0; k < nmoved; k++) {
                block *b = &bl[moved_to[k]];
                b->where = ROTOR_GT_GB, *gb += b->bytes, s->spilled[1] -= b->bytes;
            }
            return false;
        }
        moved += vt;
        bl[v].where = ROTOR_GT_DDR, *gb -= bl[v].bytes;
        s->spilled[1] += bl[v].bytes; /* on from the GB: counted in both */
        moved_to[nmoved++] = v;
    }
    return true;
}

/* The GB's capacity (docs/graphturbo.md, "The GB's capacity"): weights a
 * sub-graph keeps in the GB between its loads stay there from its first
 * instance in the order to its last, across every instance interleaved
 * with them (Algorithm 3 goes deep: a block's sub-graphs interleave image
 * by image).  reserved[i]: the resident weights at position i.  Under
 * lim->gb_capacity, a sub-graph whose weights would not fit beside those
 * already reserved over its span streams them from DDR instead
 * (w_resident false, w_revoked; a decision, the paper says only that
 * weights are prefetched DDR -> GB -> LB, §4.4).  Which stay is a knapsack
 * over the order's spans, taken greedily by what residency saves a byte of
 * the GB: streamed, a sub-graph's weights cross DDR once a load of each
 * instance (instances x w_loads), resident once, so the sub-graphs loaded
 * most often are reserved first (ties: the earlier in the order).  Earlier
 * on 2026-12-01 they were reserved in the order's order, and ResNet-50 at
 * 16 images streamed all of stage 2's later blocks (8 to 28 instances a
 * sub-graph) while stage 3's 1x1 convolutions (8 to 14) kept theirs: 191 MB
 * of weights from DDR (157 MB now, 51 MB once; docs/graphturbo.md, "Which
 * weights stay").  Without
 * gb_capacity every resident weight is counted (gb_peak measures what the
 * half-GB rules let the GB hold). */
static bool reserve_weights(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                            const gt_inst *in, int64_t *reserved) {
    int64_t n = in->n, *first = malloc(sizeof(int64_t) * gt_len(s->nsg)), *last = malloc(sizeof(int64_t) * gt_len(s->nsg));
    if (!first || !last) return free(first), free(last), false;
    for (int k = 0; k < s->nsg; k++) first[k] = -1, last[k] = -1;
    for (int64_t i = 0; i < n; i++) {
        int k = in->isg[in->order[i]];
        if (first[k] < 0) first[k] = i;
        last[k] = i, reserved[i] = 0;
    }
    /* the resident candidates, collected by first instance, then sorted by
     * loads, most first (an insertion sort: stable, so ties keep the
     * order's order) */
    int *by = malloc(sizeof(int) * gt_len(s->nsg)), nby = 0;
    if (!by) return free(first), free(last), false;
    for (int64_t i = 0; i < n; i++) {
        int k = in->isg[in->order[i]];
        if (first[k] == i && s->sg[k].best.w_resident) by[nby++] = k;
    }
    for (int a = 1; a < nby; a++) {
        int k = by[a], j = a;
        double loads = (double)s->sg[k].best.instances * s->sg[k].best.w_loads;
        while (j > 0 && (double)s->sg[by[j - 1]].best.instances * s->sg[by[j - 1]].best.w_loads < loads)
            by[j] = by[j - 1], j--;
        by[j] = k;
    }
    for (int q = 0; q < nby; q++) {
        int k = by[q];
        rotor_gt_split *b = &s->sg[k].best;
        double mm, vec, w;
        rotor_gt_ops_work(g, s->members + s->sg[k].first, s->sg[k].count, &mm, NULL, &vec, &w);
        int64_t wb = (int64_t)ceil(w), most = 0;
        for (int64_t j = first[k]; j <= last[k]; j++) most = reserved[j] > most ? reserved[j] : most;
        if (lim->gb_capacity && most + wb > lim->gb_bytes) {
            b->w_resident = false, s->sg[k].w_revoked = true;
            continue;
        }
        for (int64_t j = first[k]; j <= last[k]; j++) reserved[j] += wb;
    }
    free(by), free(first), free(last);
    return true;
}

/* The GB's room shrank (resident weights arrive at position i): its blocks
 * read last go on to DDR until the rest fit (the longest liveness leaves
 * first, §4.3). */
static void gb_shrink(block *bl, const int64_t *live, int64_t nlive, int64_t *gb, int64_t cap, rotor_gt_schedule *s) {
    while (*gb > cap) {
        int64_t v = -1;
        for (int64_t j = 0; j < nlive; j++)
            if (bl[live[j]].where == ROTOR_GT_GB && (v < 0 || bl[live[j]].end > bl[v].end)) v = live[j];
        if (v < 0) return;
        bl[v].where = ROTOR_GT_DDR, *gb -= bl[v].bytes, s->spilled[1] += bl[v].bytes;
    }
}

/* The inputs of the operator that writes sub-graph k's output that the
 * output may be written over (a bit per input, the first 64): read element
 * for element as it
 * writes (rotor_gt_aligned_input: a fused residual, an element-wise
 * operator's input), the output of another sub-graph, and read by no other
 * member of k (an instance larger than the LB runs in chunks that read
 * their halos again; an earlier member would read rows already written
 * over). */
static uint64_t aligned_inputs(const rotor_graph *g, const rotor_gt_schedule *s, int k) {
    const rotor_gt_subgraph *sg = &s->sg[k];
    int op = g->values[sg->output].producer;
    const rotor_op *o = &g->ops[op];
    uint64_t bits = 0;
    for (int j = 0; j < o->ninputs && j < 64; j++) {
        int v = o->inputs[j], pr = g->values[v].producer;
        if (pr < 0 || s->sg_of[pr] == k || s->sg[s->sg_of[pr]].output != v) continue;
        bool alone = true;
        for (int m = 0; m < sg->count && alone; m++) {
            const rotor_op *om = &g->ops[s->members[sg->first + m]];
            for (int q = 0; q < om->ninputs && alone && om != o; q++) alone = om->inputs[q] != v;
        }
        if (alone && rotor_gt_aligned_input(g, op, j)) bits |= (uint64_t)1 << j;
    }
    return bits;
}

/* Whether the instance at position i writes its output over blocks it
 * reads for the last time (§4.3's reuse in place; a decision, the paper is
 * silent): an input its sub-graph's last operator may be written over
 * (aligned, of that sub-graph: aligned_inputs) whose blocks this instance
 * reads are all in the GB, read by no later instance, and together exactly
 * its output block's bytes (so they tile it).  Then the output takes their
 * room: they leave the live set and the GB's count. */
static bool donate(const rotor_graph *g, const rotor_gt_schedule *s, const gt_inst *in, block *bl, const int64_t *pos,
                   uint64_t aligned, int64_t i, int64_t *live, int64_t *nlive, int64_t *gb) {
    int64_t x = in->order[i];
    const rotor_op *o = &g->ops[g->values[s->sg[in->isg[x]].output].producer];
    for (int j = 0; j < o->ninputs && j < 64; j++) {
        if (!(aligned >> j & 1)) continue;
        int y = s->sg_of[g->values[o->inputs[j]].producer];
        int64_t got = 0;
        bool ok = true;
        for (int64_t e = in->pstart[x]; e < in->pstart[x + 1] && ok; e++) {
            if (in->isg[in->plist[e]] != y) continue;
            const block *d = &bl[pos[in->plist[e]]];
            ok = d->where == ROTOR_GT_GB && d->end == i;
            got += d->bytes;
        }
        if (!ok || got != bl[i].bytes) continue;
        int64_t kept = 0;
        for (int64_t l = 0; l < *nlive; l++) {
            int64_t p = live[l];
            if (in->isg[in->order[p]] == y && bl[p].end == i) *gb -= bl[p].bytes;
            else live[kept++] = p;
        }
        *nlive = kept;
        return true;
    }
    return false;
}

/* What the schedule keeps in DDR (rotor_gt_schedule.ddr_io, ddr_peak),
 * from the blocks' final levels: the model's inputs and outputs the whole
 * run; every other block in DDR from its instance to its last reader; the
 * running instance's intermediates that overflow to DDR, one way.  Summed
 * in doubles, exact below 2^53 bytes (8 PiB; a DDR holds at most 1 PiB,
 * docs/chip-format.md), and held at INT64_MAX above. */
static rotor_status ddr_room(const rotor_graph *g, rotor_gt_schedule *s, const block *bl, const gt_inst *in,
                             rotor_error *err) {
    int64_t n = in->n;
    double io = 0, live = 0, most = 0;
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *val = &g->values[v];
        if (val->role != ROTOR_ROLE_WEIGHT && ((val->producer < 0 && val->consumers > 0) || val->is_output))
            io += (double)val->bytes;
    }
    double *diff = calloc(gt_len(n + 1), sizeof *diff);
    if (!diff) return rotor_nomem(err);
    for (int64_t i = 0; i < n; i++)
        if (bl[i].where == ROTOR_GT_DDR && bl[i].end < n && bl[i].end > i)
            diff[i] += (double)bl[i].bytes, diff[bl[i].end + 1] -= (double)bl[i].bytes;
    for (int64_t i = 0; i < n; i++) {
        live += diff[i];
        const rotor_gt_split *b = &s->sg[in->isg[in->order[i]]].best;
        double at = live + (b->fits ? 0 : ceil(b->spill_ddr / 2));
        if (at > most) most = at;
    }
    free(diff);
    s->ddr_io = rotor_i64_held(io);
    s->ddr_peak = rotor_i64_held(io + most);
    return ROTOR_OK;
}

/* §4.3 along the order: where each instance's output block lives.  live
 * holds the blocks still to be read (a handful at a time: the order keeps
 * them few), so each step is linear in them. */
static rotor_status spill(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                          const gt_inst *in, rotor_error *err) {
    int64_t n = in->n, *pos = malloc(sizeof(int64_t) * gt_len(n)), nlive = 0;
    int64_t *live = malloc(sizeof(int64_t) * gt_len(n)), *reserved = calloc(gt_len(n), sizeof(int64_t));
    block *bl = malloc(sizeof(block) * gt_len(n));
    uint8_t *written = calloc(gt_len(n), 1); /* the block took its room while its instance ran */
    uint64_t *aligned = malloc(sizeof(uint64_t) * gt_len(s->nsg)); /* per sub-graph: aligned_inputs */
    uint8_t *probed = calloc(gt_len(s->nsg), 1);
    int64_t *scratch = malloc(sizeof(int64_t) * gt_len(n)); /* gb_room's blocks moved on, to take back */
    s->scope = malloc(sizeof(rotor_gt_scope) * gt_len(n));
    if (!pos || !bl || !live || !reserved || !written || !aligned || !probed || !scratch || !s->scope ||
        ((s->mode == ROTOR_GT_GROUPED || lim->count_weights) && !reserve_weights(g, lim, s, in, reserved)))
        return free(pos), free(bl), free(live), free(reserved), free(written), free(aligned), free(probed),
               free(scratch), rotor_nomem(err);
    for (int64_t i = 0; i < n; i++) pos[in->order[i]] = i;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = in->order[i], end = gt_last_read(in->sstart, in->slist, pos, x, i);
        int sg = in->isg[x];
        bool out = g->values[s->sg[sg].output].is_output;
        bl[i] = (block){gt_block_bytes(g, s, sg), i, out ? n : end,
                        out ? ROTOR_GT_DDR : s->sg[sg].scope == ROTOR_GT_GB || s->mode == ROTOR_GT_PER_OP_GB ? ROTOR_GT_GB : ROTOR_GT_LB};
    }
    int64_t lb = 0, gb = 0;
    s->gb_peak = 0;
    for (int64_t i = 0; i < n; i++) {
        free_ended(bl, live, &nlive, i, &lb, &gb);
        /* the GB beside the weights resident here (or all of it, the half-GB rules) */
        int64_t cap = lim->gb_bytes - (lim->gb_capacity || lim->count_weights ? reserved[i] : 0);
        gb_shrink(bl, live, nlive, &gb, cap, s);
        if (i > 0 && bl[i - 1].end > i - 1 && !written[i - 1]) { /* the previous output becomes live */
            block *b = &bl[i - 1]; /* in the LB or DDR: a block bound for the GB took its room as it was written */
            if (b->where == ROTOR_GT_LB) lb += b->bytes;
            live[nlive++] = i - 1;
        }
        int64_t need = s->sg[in->isg[in->order[i]]].best.peak;
        while (lb + need > lim->lb_bytes && lb > 0) { /* spill the longest-lived */
            int64_t w = -1;
            for (int64_t j = 0; j < nlive; j++) {
                const block *b = &bl[live[j]];
                if (b->where == ROTOR_GT_LB && (w < 0 || b->end - b->start > bl[w].end - bl[w].start)) w = live[j];
            }
            if (w < 0) break;
            lb -= bl[w].bytes;
            if (s->mode == ROTOR_GT_GROUPED ? gb_room(bl, live, nlive, &gb, w, i, cap, s, in, pos, scratch)
                                            : gb + bl[w].bytes <= cap)
                bl[w].where = ROTOR_GT_GB, gb += bl[w].bytes, s->spilled[0] += bl[w].bytes;
            else bl[w].where = ROTOR_GT_DDR, s->spilled[1] += bl[w].bytes;
        }
        /* The instance's own output block, when it goes to the GB (its scope,
         * or a block larger than every LB together, which the LB can never
         * hold), is written there while the instance runs, beside the inputs
         * it reads, which are freed only after it: it takes its room now,
         * not after the instance.  (Until 2026-12-01 it took it only after,
         * and the GB held up to 1.9x its bytes while a producer ran:
         * BERT-128's attention scores, ResNet-50's and DenseNet-121's
         * per-operator kernels.)
         * Over a block it reads element for element for the last time, it
         * takes that block's room instead (donate). */
        block *own = &bl[i];
        bool to_gb = own->where == ROTOR_GT_GB || (own->where == ROTOR_GT_LB && own->bytes > lim->lb_bytes);
        if (to_gb) { /* one nobody reads too: written all the same, then freed */
            int k = in->isg[in->order[i]];
            if (!probed[k]) aligned[k] = aligned_inputs(g, s, k), probed[k] = 1;
            bool over = aligned[k] && donate(g, s, in, bl, pos, aligned[k], i, live, &nlive, &gb);
            bool meant_lb = own->where == ROTOR_GT_LB;
            if (over || (s->mode == ROTOR_GT_GROUPED ? gb_room(bl, live, nlive, &gb, i, i, cap, s, in, pos, scratch)
                                                     : gb + own->bytes <= cap))
                own->where = ROTOR_GT_GB, gb += own->bytes, s->spilled[0] += meant_lb ? own->bytes : 0;
            else own->where = ROTOR_GT_DDR, s->spilled[1] += own->bytes;
            live[nlive++] = i, written[i] = 1;
        }
        if (gb + reserved[i] > s->gb_peak) s->gb_peak = gb + reserved[i];
    }
    for (int64_t i = 0; i < n; i++) s->scope[i] = bl[i].where;
    rotor_status st = ddr_room(g, s, bl, in, err);
    free(pos), free(bl), free(live), free(reserved), free(written), free(aligned), free(probed), free(scratch);
    return st;
}

/* Table 3: every activation value an operator writes once, at the level it
 * lives (a model output in DDR); the model's inputs (those read), which the
 * host writes into DDR whatever the schedule, apart (input_values):
 * GraphTurbo's Table 3 counts the tensors its schedule declares (§3.4:
 * "we do not care about where the input tensors ... should be declared"),
 * and keeps 0 in DDR on DLRM, whose 27 inputs can only be in DDR
 * (docs/graphturbo.md, "What Table 3 counts"). */
int rotor_gt_value_level(const rotor_graph *g, const rotor_gt_schedule *s, int v) {
    const rotor_value *val = &g->values[v];
    if (val->role == ROTOR_ROLE_WEIGHT || val->producer < 0) return -1;
    const rotor_gt_subgraph *sg = &s->sg[s->sg_of[val->producer]];
    if (v == sg->output) return (int)sg->scope;
    return sg->best.fits ? ROTOR_GT_LB : ROTOR_GT_GB;
}

static void count_tensors(const rotor_graph *g, rotor_gt_schedule *s) {
    for (int i = 0; i < s->nsg; i++) s->sg[i].scope = ROTOR_GT_LB;
    for (int64_t i = 0; i < s->ninst; i++) {
        rotor_gt_subgraph *sg = &s->sg[s->order[i].sg];
        if (s->scope[i] > sg->scope) sg->scope = s->scope[i];
        sg->in_scope[s->scope[i]]++;
    }
    memset(s->tensors, 0, sizeof s->tensors);
    s->input_values = 0;
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *val = &g->values[v];
        /* a model input no operator reads is not a tensor */
        if (val->role != ROTOR_ROLE_WEIGHT && val->producer < 0) s->input_values += val->consumers > 0;
        int level = rotor_gt_value_level(g, s, v);
        if (level >= 0) s->tensors[level]++;
    }
}

rotor_status rotor_gt_bind_and_scope(const rotor_graph *g, const rotor_gt_limits *lim, rotor_gt_schedule *s,
                               const gt_inst *in, rotor_error *err) {
    for (int i = 0; i < s->nsg; i++) s->sg[i].scope = ROTOR_GT_LB;
    rotor_status st = s->mode == ROTOR_GT_GROUPED ? algorithm4(g, lim, s, in, err) : ROTOR_OK;
    if (st == ROTOR_OK) st = spill(g, lim, s, in, err);
    if (st == ROTOR_OK) count_tensors(g, s);
    return st;
}

const char *rotor_gt_order_name(rotor_gt_order_kind k) { return k == ROTOR_GT_DFS ? "dfs" : "bfs"; }

const char *rotor_gt_scope_name(rotor_gt_scope s) {
    static const char *const names[] = {"LB", "GB", "DDR"};
    return (unsigned)s < 3 ? names[s] : "?";
}
