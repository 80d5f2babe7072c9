/* fopwalk.c — pass 1 of the search (level 1, T10 §4.3.1): the walk over
 * every F_op vector, which costs the all-ones plans that might beat the
 * incumbent and keeps the F_op whose bounds survive; in a session, the scan
 * of the caches a previous walk filled, and the F_op of archived plans
 * searched in full first. */
#include "searchint.h"
#include "rotor/op/meshmap.h"

#include <string.h>

/* The all-ones plan of an F_op that fits the cap (every f_t = 1: valid
 * whenever it fits), costed when it might beat the incumbent: its time is at
 * least tb (a floor of every plan of the F_op) plus each tensor's
 * tensor_bound at ring 1 with its exact bytes (the model's bound
 * inequality).  Seeding as the walk goes, instead of costing every all-ones
 * plan before it, costs only the few that improve on the incumbent (for v1
 * the floor is the plan's time), and the walk prunes with each. */
void search_seed_all_ones(worker *w, const int64_t *fop, double tb) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    if (search_prune(w, tb, 0)) return;
    double t1 = tb;
    int64_t mem = 0;
    for (int t = 0; t < e->ntensors; t++) {
        int64_t share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share *= fop[a];
        int64_t b = (int64_t)search_all_ones_bytes_of(c, fop, t);
        mem += b;
        t1 += c->m->tensor_bound(c->m, e, c->chip, t, b, 1, share);
    }
    if (search_prune(w, t1, mem)) return;
    rotor_plan_init(e, &w->plan);
    memcpy(w->plan.fop, fop, sizeof w->plan.fop);
    for (int a = 0; a < e->naxes; a++) w->steps[a] = 1;
    memset(w->bytes, 0, sizeof w->bytes);
    search_leaf(w);
}

static void pass1_consider(pass1 *p, int64_t index, double compute, double tb);

/* The shift buffer, when an F_op's all-ones plan (`ones` bytes) does not
 * fit the cap: that plan is the only one without rotation (every f_t = 1
 * makes every S_a = 1), so every plan of the F_op that could fit rotates
 * and holds B_buf (docs/cost-model-v1.md, "Memory per core": M = sum_X
 * bytes(X) + B_buf if any f_t > 1).  So it joins any memory floor of the
 * F_op, the weak one included, as it joins the strong one
 * (search_fop_strong_floor).  Under a cap below B_buf (the compiler's
 * capped searches at a frontier's lean end) only the F_op whose all-ones
 * plan fits survive it: those searches no longer compute the strong floors
 * of every F_op to find that nothing fits. */
static int64_t rotating_buffer(const ctx *c, double ones) {
    return ones > (double)c->cap ? c->chip->shift_buffer_bytes : 0;
}

/* An F_op that no plan may use: a mesh holds only the F_op it can lay out
 * (op/meshmap.h); the constraints min_cores and max_padding (S_a > 1 only
 * pads more, so the all-ones padding bounds the F_op's). */
static inline bool fop_refused(const ctx *c, const int64_t *fop) {
    const rotor_expr *e = c->e;
    if (c->chip->topology == ROTOR_TOPO_MESH && !rotor_mesh_fits(c->chip, fop, e->naxes)) return true;
    if (c->cons.min_cores <= 0 && c->cons.max_padding <= 0) return false;
    int64_t cores = 1;
    double pad = 1.0;
    for (int a = 0; a < e->naxes; a++) {
        cores *= fop[a];
        int64_t padded = (e->extent[a] + fop[a] - 1) / fop[a] * fop[a];
        pad *= (double)padded / (double)e->extent[a];
    }
    return cores < c->cons.min_cores || (c->cons.max_padding > 0 && pad > c->cons.max_padding * (1 + SLACK));
}

/* Appends f to the keep list l (false when out of memory).  When the list
 * reaches its soft length it first drops, in place and in order, the
 * entries that the seed w's incumbent (or front) prunes now.  keep_order
 * (search.c) drops exactly these after the walk with the same test against
 * the incumbent the walk ends with, and search_prune only prunes more as
 * the walk goes (the incumbent falls, the front only gains, the caps are
 * fixed): so keep_order returns the same list in the same order, and pass
 * 2 runs the same.  The early entries, kept while the incumbent was still
 * poor, are most of a walk's list: AlexNet's conv1 at batch 1,024 kept
 * 424,726 F_op of which 84 survive the walk, and grew the list to 512 Ki
 * entries (57 MB copied by realloc and faulted in).  The soft length is
 * kept apart from the allocation (a pooled list stays at its largest) and
 * doubles when compaction frees less than half of it, so each entry is
 * tested O(1) times on average.  tests/test_searchbig.c checks the list
 * against one filtered once at the end. */
bool search_keep_push(worker *w, fop_list *l, const fop_entry *f) {
    if (l->soft < KEEP_SOFT_MIN) l->soft = KEEP_SOFT_MIN;
    if (l->n >= l->soft) {
        int64_t kept = 0;
        for (int64_t i = 0; i < l->n; i++)
            if (!search_prune(w, l->v[i].bound, l->v[i].mem_bound)) l->v[kept++] = l->v[i];
        l->n = kept;
        if (kept * 2 > l->soft) l->soft *= 2;
    }
    if (l->n == l->cap) {
        int64_t ncap = l->cap ? 2 * l->cap : 1024;
        fop_entry *nv = realloc(l->v, (size_t)ncap * sizeof *nv);
        if (!nv) {
            l->oom = true;
            return false;
        }
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n++] = *f;
    return true;
}

/* search_cf_put, with its test of the last floor put made here without
 * the call (half the puts of GoogLeNet's walks at batch 64 repeat it:
 * 10.3 of 21.0 million) */
static inline void cf_put(ctx *c, int64_t index, float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (c->cf_last && bits == c->cf_last_bits) {
        c->cf[index] = (uint16_t)(c->cf_last - 1);
        c->cf_sum_ok = false;
        return;
    }
    search_cf_put(c, index, f);
}

/* inlined into the walk's loop over the last axis: most F_op end here */
static inline __attribute__((always_inline)) void pass1_visit(pass1 *p) {
    ctx *c = p->c;
    const rotor_expr *e = c->e;
    int64_t index = p->index++;
    bool cache = c->cf && index < c->nfops;
    uint16_t code = cache ? c->cf[index] : CF_NOT_YET;
    if (code == CF_BROKEN) return;
    /* the F_op's time floor tb: its compute floor plus the output's floor
     * (bound.c; 0 where it does not hold), which is what cf keeps */
    int64_t f_last = p->fop[e->naxes - 1];
    double out = p->sb.on ? v1_floor_out(&p->sb, f_last) : 0, compute, tb;
    if (code != CF_NOT_YET) {
        tb = c->cf_val[code];
        compute = cf_compute(tb, out);
    } else {
        if (fop_refused(c, p->fop)) {
            if (cache) c->cf[index] = CF_BROKEN;
            return;
        }
        /* Only the cheap bounds here, and those cached by earlier searches
         * of a session; the floors that cost a divisor walk
         * (search_fop_full_bounds) wait for pass 2, where the incumbent has
         * tightened and most F_op never need them. */
        compute = p->sb.on ? v1_floor_leaf(&p->sb, f_last) : c->m->step_bound(c->m, e, c->chip, p->fop, NULL, NULL);
        tb = compute + out;
        if (cache) {
            float f = out > 0 ? float_coarse(tb) : float_down(tb);
            /* a floor that is not >= 0 (none is) stays not yet, as the
             * float array left it: recomputed */
            if (f >= 0) cf_put(c, index, f);
        }
    }
    /* pass1_consider's first test, before the call: the time floor alone
     * prunes most F_op of a walk (search_prune's test with m = 0, which is
     * below any cap; a frontier search asks its front) */
    if (!c->frontier && (tb > c->time_cap * (1 + SLACK) || tb > incumbent(c) * (1 + SLACK))) {
        p->w->st.fops++;
        return;
    }
    pass1_consider(p, index, compute, tb);
}

/* The F_op in p->fop, the index-th of the walk, with compute floor
 * compute and time floor tb (compute and the output's floor, or the cf
 * entry holding their sum): its memory floors, the all-ones seed, and the
 * keep list. */
static void pass1_consider(pass1 *p, int64_t index, double compute, double tb) {
    ctx *c = p->c;
    worker *w = p->w;
    w->st.fops++;
    /* the time floor alone prunes most F_op once the incumbent is good:
     * their memory floors are not worth computing */
    if (search_prune(w, tb, 0)) return;
    /* a session keeps the cheap values of each F_op met here (its record
     * made now: pass 1 is serial); any other record was made by an earlier
     * search for its pass 2 (search.c, search_once_run) */
    fop_rec *r = c->fc.full ? search_fop_rec_make(&c->fc, index) : fop_rec_at(&c->fc, index);
    int64_t mb;
    double ones;
    if (r && r->weak > 0) {
        mb = r->weak;
        ones = (double)r->ones;
    } else {
        search_fop_cheap_mem(c, p->fop, &mb, &ones);
        if (r && c->fc.full) {
            r->weak = mb < INT32_MAX ? (int32_t)mb : INT32_MAX;
            r->ones = ones < (double)INT32_MAX ? (int32_t)ones : INT32_MAX;
        }
    }
    mb += rotating_buffer(c, ones);
    if (search_prune(w, tb, mb)) return;
    if (r && r->floor > 0) {
        int64_t strong = r->floor;
        if (ones > (double)c->cap) strong += c->chip->shift_buffer_bytes;
        if (strong > mb) mb = strong;
    }
    if (r && r->lb_cap >= c->cap && r->lb > tb) tb = r->lb;
    if (tb == INFINITY || search_prune(w, tb, mb)) return;
    /* the compute floor: the seed adds the tensors' own times (tb may hold them already) */
    if (ones <= (double)c->cap) search_seed_all_ones(w, p->fop, compute);
    for (int i = 0; i < p->nprobed; i++)
        if (memcmp(p->probed[i], p->fop, sizeof p->fop) == 0) return;
    fop_entry f = {.bound = tb, .compute = compute, .mem_bound = mb, .index = index};
    memcpy(f.fop, p->fop, sizeof f.fop);
    search_keep_push(w, p->keep, &f);
}

/* A session's record of an F_op's time floor tb under the cap (a floor
 * under any smaller cap too): replaces a floor kept for a cap at least as
 * large only when larger. */
static void keep_time_floor(const ctx *c, fop_rec *r, double tb, bool full) {
    if (!r) return;
    float lb = float_down(tb);
    if (!full && r->lb_cap >= c->cap && r->lb >= lb) return;
    r->lb = lb;
    r->lb_cap = c->cap < INT32_MAX ? (int32_t)c->cap : INT32_MAX;
}

/* The F_op's strong memory floor and its time floor under the cap (pass 2,
 * worker w): false when they prune it.  A session caches both.  The
 * options of the F_op's tensors come first, each followed by the cut of
 * search_fop_options_cut (bound.c), which prunes most F_op before the
 * knapsack: it only rejects F_op the tests below would reject (a floor of
 * their time, the cheap memory floor), so the F_op searched are the same. */
bool search_fop_full_bounds(worker *w, fop_entry *f) {
    ctx *c = w->c;
    /* a frontier search first asks the joint floor (steps.c), which needs
     * no divisor walk of the F_op's lattices */
    if (c->frontier && search_fop_joint_cut(w, f->fop, f->bound, f->compute, f->mem_bound)) return false;
    fop_rec *r = fop_rec_at(&c->fc, f->index); /* made before pass 2 (search.c) */
    double part;
    int64_t least;
    if (search_fop_options_cut(w, f->fop, f->compute, f->mem_bound, &part, &least)) {
        keep_time_floor(c, c->fc.full ? r : NULL, part, false);
        return false;
    }
    /* search_fop_strong_floor's value: the cached floor when there is one */
    int64_t strong = r && r->floor > 0 ? r->floor : least;
    if (r && r->floor <= 0) r->floor = least < INT32_MAX ? (int32_t)least : INT32_MAX;
    if (search_fop_all_ones_bytes(c, f->fop) > (double)c->cap) strong += c->chip->shift_buffer_bytes;
    int64_t mb = f->mem_bound;
    if (strong > mb) mb = strong;
    if (search_prune(w, f->bound, mb)) return false;
    double tb = f->compute + search_cap_time_floor(c, w->knap, f->fop, true, &w->comm_floor);
    keep_time_floor(c, c->fc.full ? r : NULL, tb, false);
    return tb != INFINITY && !search_prune(w, tb, mb);
}

/* The searched floor (issue 45).  search_fop leaves each part of an F_op's
 * plans by a floor (its time t and memory m: search_prune), or costs a
 * plan; the least t over the parts and plans under the cap
 * (search_floor_note) is a floor on the F_op's plans under the cap, and
 * under every smaller cap (a part over the cap holds no plan of a smaller
 * one either).  Kept as the record's time floor, the later searches of the
 * session's walk down a frontier (each under a cap a little below the
 * last point's memory, and a time a little above) pass over the F_op that
 * the last search cut above their own limit without their step search:
 * the same F_op survive whatever floor pruned them, so the plans found are
 * the same.  Which parts were cut depends on the incumbent at the time, so
 * the floor does on the thread count; no plan found does. */
void search_fop_searched(worker *w, const fop_entry *f) {
    ctx *c = w->c;
    if (!c->fc.full || c->frontier || f->index < 0) return;
    keep_time_floor(c, fop_rec_at(&c->fc, f->index), w->fop_min, false);
}

/* Before the walk, the F_op of the plans archived by earlier searches that
 * are leanest above the cap are searched in full under it (in parallel, one
 * worker each).  The fastest plan under a cap a little below a frontier
 * point's memory mostly keeps that point's F_op and rotates a little more,
 * so this finds a near-optimal incumbent when no archived plan fits: the
 * walk and pass 2 then prune from the start, instead of computing the
 * divisor-walk floors of most F_op vectors while no plan is known.  It only
 * changes the order in which F_op are searched: each probed F_op is
 * searched exactly as pass 2 would, and the walk does not keep it again. */
void search_probe_archive(ctx *c, worker *ws, int nthreads, pass1 *p) {
    const rotor_expr *e = c->e;
    const archive *ar = c->spare;
    if (c->frontier || !ar) return;
    int j = 0;
    while (j < ar->n && ar->v[j].info.memory <= c->cap) j++;
    fop_entry fe[PROBE_MAX];
    for (; j < ar->n && p->nprobed < PROBE_MAX; j++) {
        const int64_t *fop = ar->v[j].plan.fop;
        bool dup = false;
        for (int i = 0; i < p->nprobed && !dup; i++) dup = memcmp(p->probed[i], fop, sizeof p->probed[i]) == 0;
        if (dup) continue;
        fop_entry *f = &fe[p->nprobed];
        memset(f, 0, sizeof *f);
        memcpy(f->fop, fop, sizeof f->fop);
        f->compute = f->bound = c->m->step_bound(c->m, e, c->chip, f->fop, NULL, NULL);
        f->mem_bound = search_fop_mem_bound(c, f->fop);
        f->index = -1; /* not looked up in the caches */
        memcpy(p->probed[p->nprobed++], fop, sizeof p->probed[0]);
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int i = 0; i < p->nprobed; i++) {
        worker *w = &ws[omp_get_thread_num()];
        if (search_prune(w, fe[i].bound, fe[i].mem_bound) || !search_fop_full_bounds(w, &fe[i])) continue;
        search_fop(w, fe[i].fop);
    }
}

/* Before a walk that starts with no incumbent: the all-ones plans of the
 * F_op whose factors are powers of two or the whole extent, largest
 * first.  The walk's own seeding (pass1_consider) meets its F_op in
 * lexicographic order, from F_op[0] = 1 up, and on a large batch the first
 * axis's small factors leave every tensor too large for the cap: AlexNet's
 * conv1 at batch 1,024 kept 424,726 of its 1,064,191 F_op (84 survive the
 * walk's final incumbent), each with its memory floors computed, before an
 * all-ones plan fit.  A sparse lattice (15,513 vectors there) costs little
 * and gives the walk a good incumbent from its start.  Every plan so
 * costed is a plan of the search space (the walk visits each of these
 * F_op and would cost it the same way), so the optimum and its ties are
 * the same: pruning stays strict and the winner is the least by the total
 * order among the plans reached (docs/cost-model.md, "Bounds"). */
static void pass1_seed_sparse(pass1 *p, int a, int64_t room) {
    ctx *c = p->c;
    const rotor_expr *e = c->e;
    if (a == e->naxes) {
        if (fop_refused(c, p->fop)) return;
        double tb = c->m->step_bound(c->m, e, c->chip, p->fop, NULL, NULL);
        search_seed_all_ones(p->w, p->fop, tb);
        return;
    }
    int64_t hi = e->extent[a] < room ? e->extent[a] : room;
    int64_t f = 1;
    while (f * 2 <= hi) f *= 2;
    if (hi == e->extent[a] && hi != f) {
        p->fop[a] = hi;
        pass1_seed_sparse(p, a + 1, room / hi);
    }
    for (; f >= 1; f /= 2) {
        p->fop[a] = f;
        pass1_seed_sparse(p, a + 1, room / f);
    }
    p->fop[a] = 1;
}

void search_pass1_seed(pass1 *p) {
    if (p->c->frontier || isfinite(incumbent(p->c))) return;
    pass1_seed_sparse(p, 0, p->c->cores);
}

/* The v1 floor's constants, from the model's own functions and in its
 * classification of the axes (cost.c, rotor_cost_v1_subtask): off for any
 * other model, whose step_bound the walk calls as before. */
void search_v1_floor_init(v1_floor *v, const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip) {
    memset(v, 0, sizeof *v);
    v->on = m == rotor_cost_model_find("v1") && e->naxes >= 1 && e->naxes <= ROTOR_MAX_AXES;
    if (!v->on) return;
    v->contraction = e->op_class == ROTOR_OP_CONTRACTION;
    v->last = e->naxes - 1;
    v->rows = chip->systolic_rows;
    v->cols = chip->systolic_cols;
    v->rate = v->contraction ? rotor_chip_matrix_rate(chip) : rotor_chip_vector_rate(chip);
    v->fpp = (double)e->flops_per_point;
    for (int a = 0; a < e->naxes; a++) {
        v->ext[a] = e->extent[a];
        if (!v->contraction) continue;
        const rotor_tensor *y = &e->tensors[0], *x1 = &e->tensors[1], *x2 = &e->tensors[2];
        if (!y->has_axis[a]) v->group[a] = 3;
        else if (x1->has_axis[a] && x2->has_axis[a]) v->group[a] = 0;
        else if (x1->has_axis[a]) v->group[a] = 1;
        else v->group[a] = 2;
    }
    for (int k = 0; k < 4; k++) v->cur[k] = 1;
    v->red = 1;
    v->out_k = v->contraction ? search_output_floor_k(m, e, chip) : 0;
    if (v->last == 0 && v->contraction) v1_floor_pads(v);
    /* the leaves' factors f <= min(E_last, cores) */
    int64_t ext = v->ext[v->last], cores = rotor_chip_cores(chip);
    v->nlq = 1 + (ext < cores ? ext : cores);
    if (v->nlq > V1_LQ) v->nlq = V1_LQ;
    for (int64_t f = 1; f < v->nlq; f++) v->lq[f] = (double)((ext + f - 1) / f);
}

/* ---- The walk's cut --------------------------------------------------------
 *
 * The walk's leaves are the most of its work, and most of them are pruned
 * by their time floor alone (pass1_visit).  A leaf loop's compute floor
 * v1_floor_leaf(f) never rises with the last factor f (each ceil(E / f)
 * falls, and padding and products keep order), so the leaves whose compute
 * floor is above a limit are a prefix f = 1 .. f0 - 1 of the loop: the walk
 * passes over them with a floor each (none when the last one is above), and
 * counts them as visited.
 *
 * The limit is the one pass1_visit prunes by, times p->cut_k (0: no cut).
 * A walk that keeps no floors (no session) cuts at the time floor's own
 * test (cut_k 1 + SLACK; a frontier search prunes by its time cap alone):
 * the leaves pass1_visit would drop at its first test (but those within
 * walk_cut's rounding margin of the limit, which it visits).  A
 * session's walk keeps the floors for the scans of its later searches,
 * whose limits stay within a few times the first's: over the 66 sessions
 * of DenseNet-121 at batch 32, 20 % of the F_op have a floor below 3
 * times the first search's optimum, 32 % below 4 times, and the compiler's
 * time caps reach 3.06 times it.  So it cuts at WALK_CUT times its limit,
 * and leaves the floors cut CF_NOT_YET, which a scan passes over.
 *
 * Exact: a leaf cut has a time floor above cut_k times the limit at its
 * loop, and the limit only falls, so above the limit the walk ends with:
 * the walk would have pruned it.  A later search scans only when its own
 * limit is at most WALK_CUT times the walk's last (ctx.cf_above), so its
 * scan would have passed over every F_op cut; otherwise it walks again,
 * and that walk visits, or cuts under its own limit, every F_op not yet
 * known. */
static double walk_cut_limit(const pass1 *p) {
    ctx *c = p->c;
    return p->cut_k * (c->frontier ? c->time_cap : fmin(c->time_cap, incumbent(c)));
}

static int64_t walk_cut(pass1 *p, int64_t hi) {
    /* compared as the floor's numerator (v1_floor_num), without a division
     * per leaf: above lim times the rate by a margin far wider than the
     * products' rounding, its quotient is above lim (a leaf nearer the
     * limit is visited instead, as without the cut) */
    double lim = walk_cut_limit(p) * p->sb.rate * (1 + 1e-12);
    int64_t f = 1;
    if (v1_floor_num(&p->sb, hi) > lim) f = hi + 1;
    else
        while (v1_floor_num(&p->sb, f) > lim) f++; /* ends at hi at the latest */
    p->index += f - 1;
    p->w->st.fops += f - 1;
    return f;
}

double search_walk_cut_above(const pass1 *p) { return p->cut_k > 0 ? walk_cut_limit(p) : INFINITY; }

/* Pass 1's walk (from a = 0): every F_op vector in lexicographic order,
 * the product of its factors at most the cores; the v1 floor's group
 * products carried from each axis to the next. */
void search_pass1_walk(pass1 *p, int a, int64_t room) {
    const rotor_expr *e = p->c->e;
    if (a == 0) {
        search_v1_floor_init(&p->sb, p->c->m, e, p->c->chip);
        if (!p->sb.on) p->cut_k = 0;
    }
    if (a == e->naxes) {
        pass1_visit(p);
        return;
    }
    int64_t hi = e->extent[a] < room ? e->extent[a] : room;
    if (a == e->naxes - 1) {
        /* the last axis's vectors visited here, not one call deeper each
         * (no group product to carry: v1_floor_leaf reads this factor) */
        int64_t f = p->cut_k > 0 ? walk_cut(p, hi) : 1;
        for (; f <= hi; f++) {
            p->fop[a] = f;
            pass1_visit(p);
        }
        p->fop[a] = 1;
        return;
    }
    bool carry = p->sb.on && a < p->sb.last;
    double base = carry ? v1_floor_base(&p->sb, a) : 0, red = p->sb.red;
    for (int64_t f = 1; f <= hi; f++) {
        p->fop[a] = f;
        if (carry) v1_floor_axis(&p->sb, a, f, base, red);
        search_pass1_walk(p, a + 1, room / f);
    }
    if (carry) v1_floor_restore(&p->sb, a, base, red);
    p->fop[a] = 1;
}

/* The number of F_op vectors search_pass1_walk visits from axis a with `room`
 * cores left (the length of the floors cache).  With c->counts (a table by
 * axis and room, -1: not yet known) each count is computed once. */
int64_t search_fop_count(ctx *c, int a, int64_t room) {
    const rotor_expr *e = c->e;
    if (a == e->naxes) return 1;
    int64_t *memo = c->counts ? &c->counts[a * (c->cores + 1) + room] : NULL;
    if (memo && *memo >= 0) return *memo;
    int64_t hi = e->extent[a] < room ? e->extent[a] : room, n = 0;
    if (a + 1 == e->naxes) n = hi;
    else
        for (int64_t f = 1; f <= hi; f++) n += search_fop_count(c, a + 1, room / f);
    if (memo) *memo = n;
    return n;
}

/* The index-th F_op vector of the walk into fop (c->counts is set): at
 * each axis, skip the subtrees of the smaller factors.  d holds the
 * previous decode of this scan (d->n = 0: none); its indices only grow, so
 * the axes whose subtree still holds index keep their factors and the first
 * that does not resumes from its previous factor instead of from 1 (the
 * subtrees of the smaller factors lie wholly before the previous index).
 * The same vector as decoding from scratch, which tests/test_searchbig.c
 * checks on every index of several lattices. */
void search_fop_decode(const ctx *c, fop_cursor *d, int64_t index, int64_t *fop) {
    const rotor_expr *e = c->e;
    int last = e->naxes - 1, a = 0;
    while (a < d->n && index >= d->base[a] && index < d->base[a] + d->size[a]) a++;
    if (a > last) a = last; /* the last axis is set directly below */
    for (int k = 0; k < a; k++) fop[k] = d->fop[k];
    int64_t room = d->n ? d->room[a] : c->cores;
    int64_t start = a ? d->base[a - 1] : 0, f = 1;
    if (a < last && a < d->n && index >= d->base[a]) {
        f = d->fop[a]; /* resume: every smaller factor's subtree lies before base[a] */
        start = d->base[a];
    }
    for (; a <= last; a++) {
        int64_t n = 1;
        if (a == last) {
            f = index - start + 1; /* each subtree of the last axis is one vector */
            start = index;
        } else {
            /* counting the whole lattice filled every entry read here */
            int64_t hi = e->extent[a] < room ? e->extent[a] : room;
            const int64_t *next = &c->counts[(a + 1) * (c->cores + 1)];
            for (; f < hi; f++) {
                n = next[room / f];
                if (index - start < n) break;
                start += n;
            }
            if (f == hi) n = next[room / f];
        }
        fop[a] = d->fop[a] = f;
        d->room[a] = room;
        d->base[a] = start;
        d->size[a] = n;
        room /= f;
        f = 1;
    }
    d->n = e->naxes;
}

/* The largest float at most thr (thr >= 0): a float v exceeds thr exactly
 * when it exceeds this one. */
static inline float scan_limit(double thr) { return float_down(thr); }

/* Entries the scan tests at once (search_pass1_scan): a block none of
 * whose compute floors lies in [0, thr] is passed over with one test. */
#define SCAN_BLOCK 16
_Static_assert(CF_SUM_BLOCK % SCAN_BLOCK == 0, "the summary's blocks start on the scan's");

/* The scan's work on entry i (compute floor v, 0 <= v <= thr): the cached
 * floors as pass1_consider reads them, then the F_op itself. */
static void scan_entry(pass1 *p, fop_cursor *cur, int64_t i, float v) {
    ctx *c = p->c;
    worker *w = p->w;
    double tb = v;
    int64_t mb = 0;
    const fop_rec *r = fop_rec_at(&c->fc, i);
    if (r && r->weak > 0) {
        /* the cached floors, as pass1_consider reads them, before
         * paying for the decoding */
        mb = r->weak + rotating_buffer(c, r->ones); /* clamped down: still a floor */
        if (r->floor > 0) {
            int64_t strong = r->floor;
            if (r->ones > c->cap) strong += c->chip->shift_buffer_bytes;
            if (strong > mb) mb = strong;
        }
        if (r->lb_cap >= c->cap && r->lb > tb) tb = r->lb;
    }
    if (tb == INFINITY || search_prune(w, tb, mb)) {
        w->st.fops++;
        return;
    }
    search_fop_decode(c, cur, i, p->fop);
    /* v is the compute floor plus the output's: pass 2's bounds take the
     * compute floor alone */
    pass1_consider(p, i, cf_compute(v, search_output_floor(c, p->fop)), v);
}

/* The scan's summary of c->cf (ctx.cf_bmin, cf_bknown), built when a floor
 * was put since the last, after the codes are put in the order of their
 * floors (search_cf_order): false when out of memory (then the scan reads
 * every entry's floor, as it would anyway). */
static bool cf_summary(ctx *c) {
    if (c->cf_sum_ok) return true;
    int64_t n = c->fc.n, nb = (n + CF_SUM_BLOCK - 1) / CF_SUM_BLOCK;
    int64_t n16 = (n + SCAN_BLOCK - 1) / SCAN_BLOCK;
    if (!c->cf_bmin) {
        c->cf_bmin = malloc((size_t)(nb ? nb : 1) * sizeof *c->cf_bmin);
        c->cf_bknown = malloc((size_t)(nb ? nb : 1) * sizeof *c->cf_bknown);
        c->cf_bmin16 = malloc((size_t)(n16 ? n16 : 1) * sizeof *c->cf_bmin16);
        if (!c->cf_bmin || !c->cf_bknown || !c->cf_bmin16) {
            free(c->cf_bmin), free(c->cf_bknown), free(c->cf_bmin16);
            c->cf_bmin = NULL, c->cf_bknown = NULL, c->cf_bmin16 = NULL;
            return false;
        }
    }
    if (!search_cf_order(c)) return false;
    for (int64_t b = 0; b < nb; b++) {
        uint16_t lo = UINT16_MAX;
        int32_t known = 0;
        int64_t end = (b + 1) * CF_SUM_BLOCK < n ? (b + 1) * CF_SUM_BLOCK : n;
        for (int64_t i = b * CF_SUM_BLOCK; i < end; i++) {
            uint16_t code = c->cf[i];
            if (i % SCAN_BLOCK == 0) c->cf_bmin16[i / SCAN_BLOCK] = UINT16_MAX;
            /* CF_BROKEN and CF_NOT_YET exceed every code of a floor */
            known += code < CF_VALUES;
            if (code < lo) lo = code;
            if (code < c->cf_bmin16[i / SCAN_BLOCK]) c->cf_bmin16[i / SCAN_BLOCK] = code;
        }
        c->cf_bmin[b] = lo;
        c->cf_bknown[b] = known;
    }
    c->cf_sum_ok = true;
    return true;
}

/* The codes of the floors at most lim (the codes ordered: cf_val
 * ascending): those below the returned count. */
static int32_t scan_codes_upto(const ctx *c, float lim) {
    int32_t lo = 0, hi = c->ncf_val;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (c->cf_val[mid] > lim) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* search_pass1_scan with the summary: a block of SCAN_BLOCK entries is
 * passed over when its least floor (cf_bmin16) exceeds the limit, with one
 * comparison (issue 45: a filter by code, 16 table reads per block, was
 * most of the scan), and a summary block of CF_SUM_BLOCK likewise.  The
 * codes are in the order of their floors, so every test compares codes
 * with the number of floors within the limit (k), without reading a floor
 * (issue 45, 2026-12-01).  The limit only falls, and only on an entry
 * worked on, so the entries worked on and their order are the entry-by-
 * entry scan's.  Every known floor is either worked on or skipped, so the
 * skipped are counted at the end: the known (the summary's counts) less
 * the worked. */
static void scan_filtered(pass1 *p, float lim) {
    ctx *c = p->c;
    fop_cursor cur = {.n = 0};
    const uint16_t *cf = c->cf, *bmin16 = c->cf_bmin16;
    const float *val = c->cf_val;
    int64_t n = c->fc.n, known = 0, worked = 0;
    int32_t k = scan_codes_upto(c, lim);
    for (int64_t b = 0; b * CF_SUM_BLOCK < n; b++) known += c->cf_bknown[b];
    for (int64_t i = 0; i < n; i++) {
        if (i % CF_SUM_BLOCK == 0 && c->cf_bmin[i / CF_SUM_BLOCK] >= k) {
            i += CF_SUM_BLOCK - 1;
            continue;
        }
        if (i % SCAN_BLOCK == 0 && bmin16[i / SCAN_BLOCK] >= k) {
            i += SCAN_BLOCK - 1;
            continue;
        }
        uint16_t code = cf[i];
        if (code >= k) continue;
        if (search_stopped(c)) break; /* given up: pass 2 gives up too */
        scan_entry(p, &cur, i, val[code]);
        worked++;
        float next = scan_limit(search_limit(c));
        if (next != lim) k = scan_codes_upto(c, lim = next);
    }
    p->w->st.fops += known - worked;
    p->index = c->fc.n;
}

/* Pass 1 over a session's filled caches: every F_op's compute floor is in
 * c->cf, so a linear scan finds the few the incumbent does not prune and
 * decodes only those, instead of walking the lattice.  It reads the array
 * a block at a time (issue 45: the scan was 9% of a DenseNet compile): a
 * block whose every floor is negative (a broken constraint) or above thr
 * is passed over with one branch, and counted as the entry-by-entry scan
 * counts it; thr only falls as the scan goes, and only on an entry it
 * works on, so the entries worked on, their order and the result are the
 * entry-by-entry scan's.  The summary (cf_summary) passes over 256 entries
 * at once the same way. */
void search_pass1_scan(pass1 *p) {
    ctx *c = p->c;
    worker *w = p->w;
    /* search_prune(w, t, 0) holds for every t above thr (sessions search for the
     * fastest plan, not a front): most F_op stop at one comparison.  Only
     * this thread moves the incumbent meanwhile, in pass1_consider. */
    double thr = search_limit(c);
    float lim = scan_limit(thr);
    int64_t skipped = 0;
    fop_cursor cur = {.n = 0};
    const uint16_t *cf = c->cf;
    const float *val = c->cf_val;
    int64_t n = c->fc.n;
    bool sum = cf_summary(c);
    if (sum) {
        scan_filtered(p, lim);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (i % SCAN_BLOCK == 0 && i + SCAN_BLOCK <= n) {
            int hit = 0, over = 0;
            for (int k = 0; k < SCAN_BLOCK; k++) {
                uint16_t code = cf[i + k];
                /* CF_BROKEN (breaks a constraint) is neither */
                int known = code < CF_VALUES;
                float v = known ? val[code] : 0;
                hit |= known & !(v > lim);
                over += known & (v > lim);
            }
            if (!hit) {
                skipped += over;
                i += SCAN_BLOCK - 1;
                continue;
            }
        }
        uint16_t code = cf[i];
        if (code >= CF_VALUES) continue; /* breaks a constraint */
        float v = val[code];
        if (v > lim) {
            skipped++;
            continue;
        }
        scan_entry(p, &cur, i, v);
        thr = search_limit(c);
        lim = scan_limit(thr);
    }
    w->st.fops += skipped;
    p->index = c->fc.n;
}
