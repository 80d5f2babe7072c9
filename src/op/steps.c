/* steps.c — levels 2 and 3 of the search under one F_op (T10 §4.3.1):
 * the steps S_a (divisors of the P_X of the tensors carrying each axis),
 * then each tensor's temporal factors f_t, depth first, pruned by the
 * incumbent and the memory cap; the leaves are costed and offered. */
#include "searchint.h"

void search_offer(worker *w, const rotor_candidate *cand) {
    const rotor_expr *e = w->c->e;
    if (cand->cost.total > w->c->time_cap) return;
    if (w->c->frontier) {
        if (search_front_add(e, &w->front, cand) && w->c->flog) search_front_log_push(w, cand);
        return;
    }
    if (!w->have_best || rotor_candidate_compare(e, cand, &w->best) < 0) {
        w->best = *cand;
        w->have_best = true;
    }
    offer_incumbent(w->c, cand->cost.total);
}

/* The next permutation of v[0..n) in lexicographic order (false after the
 * last, v then sorted ascending again). */
static bool next_order(int *v, int n) {
    int i = n - 2;
    while (i >= 0 && v[i] >= v[i + 1]) i--;
    if (i < 0) return false;
    int j = n - 1;
    while (v[j] <= v[i]) j--;
    int t = v[i];
    v[i] = v[j], v[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) t = v[a], v[a] = v[b], v[b] = t;
    return true;
}

/* On a mesh the loop order that rotor_plan_best_order proves best for v1's
 * sum of shifts is not always the cheapest: a boundary costs the busier of
 * the mesh's two dimensions (rotor_cost_shift_walk), not the sum of what
 * moves.  So there the plan is costed under every order of its rotating
 * axes (those with S_a > 1; the others first, in axis order, where they
 * move nothing), the cheapest kept, ties to rotor_plan_best_order's, then
 * to the first in lexicographic order.  Found by a review helper
 * (2026-12-04): O[f,h] += I[c,2*h+kh] * W[f,c,kh] on a 4 x 4 mesh took
 * 0.604 us where the order ckhfh runs it in 0.507.  Memory does not depend
 * on the order.  Returns nonzero when the plan cannot be costed. */
static rotor_status mesh_cheapest_order(const ctx *c, rotor_candidate *cand) {
    rotor_error err;
    rotor_status st = rotor_cost_plan(c->m, c->e, c->chip, &cand->plan, &cand->info, &cand->cost, &err);
    const rotor_expr *e = c->e;
    int act[ROTOR_MAX_AXES], k = 0, lead = 0;
    for (int l = 0; l < e->naxes; l++)
        if (cand->info.steps[cand->plan.order[l]] > 1) act[k++] = cand->plan.order[l];
    if (st || k < 2) return st;
    lead = e->naxes - k;
    for (int i = 1; i < k; i++) /* ascending, for the lexicographic walk */
        for (int j = i; j > 0 && act[j - 1] > act[j]; j--) {
            int t = act[j];
            act[j] = act[j - 1], act[j - 1] = t;
        }
    rotor_candidate best = *cand, x = *cand;
    do {
        memcpy(x.plan.order + lead, act, (size_t)k * sizeof *act);
        if (!memcmp(x.plan.order, cand->plan.order, sizeof x.plan.order)) continue; /* the one costed */
        if (rotor_cost_plan(c->m, e, c->chip, &x.plan, &x.info, &x.cost, &err)) continue;
        if (x.cost.total < best.cost.total) best = x;
    } while (next_order(act, k));
    *cand = best;
    return ROTOR_OK;
}

/* Cost the complete plan in w->plan (f_t and F_op set) under its best order. */
void search_leaf(worker *w) {
    ctx *c = w->c;
    w->st.plans++;
    rotor_plan_best_order(c->e, w->steps, w->plan.ft, w->bytes, w->plan.order);
    /* On a chip whose cores compute while their links move data, each
     * rotating plan also comes with double buffers (overlap): faster, and
     * larger, so both may lie on the frontier. */
    for (int ov = 0; ov < 2; ov++) {
        rotor_candidate cand;
        cand.plan = w->plan;
        cand.plan.overlap = ov;
        rotor_error err;
        if (c->chip->topology == ROTOR_TOPO_MESH) {
            if (mesh_cheapest_order(c, &cand)) return;
        } else if (rotor_cost_plan(c->m, c->e, c->chip, &cand.plan, &cand.info, &cand.cost, &err)) {
            return;
        }
        if (cand.info.memory > c->cap) return;
        if (c->cons.max_padding > 0 && cand.info.padding_ratio > c->cons.max_padding) return;
        search_floor_note(w, cand.cost.total, cand.info.memory);
        if (w->seen) search_archive_add(w->seen, &cand);
        search_offer(w, &cand);
        if (!rotor_plan_may_overlap(c->e, c->chip, &cand.plan, &cand.info)) return;
    }
}

/* Depth-first over tensors t..nt-1, each choosing its f_t vector axis by
 * axis (its k-th axis, c->tax).  q is the product of the f_t chosen so
 * far and rem = P_X / q (the rings left); time_lb and mem_rest cover
 * tensors before t exactly (bounds) and the rest by their floors.  Each
 * choice keeps its partition L_a / f = s_a (S_a / f) (w->tpart; S_a / f is
 * the divisor mirrored in the ascending list), so the bytes at a completed
 * vector take no division per dimension, nor the rings one (issue 42: those
 * divisions were a tenth of this function's instructions, and integer
 * divisions are slow). */
static void dfs_axis(worker *w, int t, int k, int64_t q, int64_t rem, double time_lb, int64_t mem_rest);

static void dfs_tensor(worker *w, int t, double time_lb, int64_t mem_rest) {
    const rotor_expr *e = w->c->e;
    if (t == e->ntensors) {
        /* coverage: some tensor reaches S_a along every axis */
        for (int a = 0; a < e->naxes; a++) {
            if (w->steps[a] == 1) continue;
            bool hit = false;
            for (int u = 0; u < e->ntensors && !hit; u++) hit = w->plan.ft[u][a] == w->steps[a];
            if (!hit) return;
        }
        search_leaf(w);
        return;
    }
    dfs_axis(w, t, 0, 1, w->share[t], time_lb, mem_rest);
}

static void dfs_axis(worker *w, int t, int k, int64_t q, int64_t rem, double time_lb, int64_t mem_rest) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    if (k == c->ntax[t]) {
        /* the vector is complete: bytes, bounds, then the next tensor */
        int64_t bytes = c->chip->element_bytes;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dim = &x->dims[d];
            int64_t l[2];
            for (int j = 0; j < dim->nterms; j++) l[j] = w->tpart[t][dim->axis[j]];
            bytes *= rotor_dim_extent(dim, l);
        }
        w->bytes[t] = bytes;
        double tb = time_lb + c->m->tensor_bound(c->m, e, c->chip, t, bytes, q, rem);
        int64_t mr = mem_rest - w->min_bytes[t] + bytes;
        if (search_prune(w, tb, mr)) {
            search_floor_note(w, tb, mr);
            w->st.nodes_pruned++;
            return;
        }
        dfs_tensor(w, t + 1, tb, mr);
        return;
    }
    int a = c->tax[t][k];
    int64_t s = w->steps[a];
    bool must_cover = false;
    if (c->last_tensor[a] == t && s > 1) {
        must_cover = true;
        for (int u = 0; u < t; u++)
            if (e->tensors[u].has_axis[a] && w->plan.ft[u][a] == s) must_cover = false;
    }
    int n = w->ndivs[a];
    for (int i = 0; i < n; i++) {
        int64_t f = w->divs[a][i];
        /* the divisors ascend: past P_X / q none divides it (and the
         * division below was a fifth of the step search's time) */
        if (f > rem) break;
        if (must_cover && f != s) continue;
        int64_t r = rem / f; /* q f must divide P_X */
        if (r * f != rem) continue;
        /* chain: pairwise divisibility with earlier tensors on this axis */
        bool ok = true;
        for (int u = 0; u < t && ok; u++)
            if (e->tensors[u].has_axis[a]) {
                int64_t g = w->plan.ft[u][a];
                ok = f % g == 0 || g % f == 0;
            }
        if (!ok) continue;
        w->plan.ft[t][a] = f;
        w->tpart[t][a] = w->sub[a] * w->divs[a][n - 1 - i];
        dfs_axis(w, t, k + 1, q * f, r, time_lb, mem_rest);
    }
    w->plan.ft[t][a] = 1;
}

/* The divisors of n, ascending: n is an S_a (<= an extent <= 2^32) or a
 * P_X (<= N <= 2^30), so MAX_DIVISORS holds them all (base/divisors.h). */
void search_divisors(int64_t n, int64_t *out, int *count) {
    int k = rotor_divisors(n, out, MAX_DIVISORS);
    *count = k < 0 ? 0 : k;
}

/* A floor on bytes(X) once F_op and S are fixed (so L_a is known).  Two
 * bounds, the larger wins:
 *  - every f_t^X[a] divides S_a, so each partition extent is at least its
 *    value at f_t = S (the sub-task extent s_a);
 *  - each f_t^X[a] divides S_a and their product divides P_X, so the product
 *    divides g = gcd(P_X, prod_a S_a): the plain dimensions hold at least
 *    prod L_a / g elements.
 * The second matters when P_X is small: S may be large along X's axes only
 * because another tensor rotates there. */
/* A floor on the elements of X that counts its windows at their stride
 * (2026-11-30).  Each dimension d picks one of its axes to count, or none
 * (a plain dimension always counts its axis).  With phi_d the f_t of the
 * axis d counts (1 when none), elems = prod_d (phi_d ext_d) / prod_d phi_d,
 * and prod_d phi_d divides the product of the counted axes' f_t, so it is
 * at most G = min(P_X, gcd(P_X, prod S_a) over the counted chosen axes
 * times the Smax_b of the counted unchosen ones): elems >= prod_d H_d / G
 * for any H_d <= phi_d ext_d.  With x = L / f >= s (the sub-task extent,
 * the f_t = S value) on every axis:
 *   - not counted: H = 1 + c_0 (s_0 - 1) + c_1 (s_1 - 1), the least extent;
 *   - a single term c (L/f - 1) + 1 counting its axis: f ext >= L (f <= L);
 *   - a window counting term k (the other j):
 *       f_k ext = c_k L_k + f_k (1 - c_k + c_j (x_j - 1))
 *              >= c_k L_k + kk f_k,  kk = 1 - c_k + c_j (s_j - 1),
 *     the least at f_k = 1 when kk >= 0, else at the largest f_k (f_k
 *     divides S_k, or P_X before S_k is chosen), and f_k ext >= f_k x_k =
 *     L_k (every coefficient is at least 1).
 * Unchosen axes enter at their floors (L_b >= ceil(E_b / F_b), s_b >=
 * ceil(E_b / (F_b Smax_b))): H grows with each L and s.  For a stride-2
 * 3x3 convolution's input this counts 2 L_h rows where the window floor
 * of step_floor_upto counted L_h: the floor is the largest over every
 * choice of counted terms (3 per window, at most WIN_MAX windows; with
 * more, none is counted), tried only where a bound says it could exceed
 * the other floors (step_floor_upto). */
#define WIN_MAX 3

/* One window's three choices for the counted floor: H, and what the axis
 * it counts adds to the ring's bound, S_a when chosen (else 1), Smax_a
 * when not yet (else 1); choice 0 counts no axis. */
typedef struct counted_win {
    double h[3];
    int64_t chosen[3], open[3];
} counted_win;

/* The largest ceil(num / g) over the choices of windows cw[0..n-1], num
 * multiplied window by window in their order and the ring's bound built as
 * the loop over every choice once built it (gc through gcd, r while below
 * P_X; gcd(P, gc) = gc since gc divides P, so a factor of 1 is skipped),
 * so the same doubles: the product of a prefix of choices is taken once
 * for its completions instead of once for each (issue 42: the loop over
 * the 3^n choices was a third of step_floor_upto's instructions). */
static double counted_best(const counted_win *cw, int n, double num, int64_t gc, int64_t r, int64_t share) {
    double best = 0;
    for (int p = 0; p < 3; p++) {
        int64_t gp = cw->chosen[p] > 1 ? rotor_gcd(share, gc * cw->chosen[p]) : gc;
        int64_t rp = cw->open[p] > 1 && r < share ? r * cw->open[p] : r;
        double v, np = num * cw->h[p];
        if (n > 1) {
            v = counted_best(cw + 1, n - 1, np, gp, rp, share);
        } else {
            int64_t g = rp >= share || gp * rp >= share ? share : gp * rp;
            v = ceil(np / (double)g);
        }
        if (v > best) best = v;
    }
    return best;
}

/* The same floor when only S_0..S_upto are chosen: an axis b not yet
 * chosen has L_b >= ceil(E_b / F_b) and s_b >= ceil(E_b / (F_b Smax_b)), and
 * gcd(P_X, x y) <= gcd(P_X, x) y bounds the ring from above. */
/* g is gcd(P_X, prod S_a) over X's axes up to `upto` (the caller carries
 * it from level to level); the values of the axes not yet chosen were
 * computed once for the F_op (search_fop).  The counted floor above
 * is taken in the same pass over the dimensions (its plain product is
 * this one's), and asked of counted_best only where it could win. */
static int64_t step_floor_upto(const worker *w, int t, int upto, int64_t g) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int64_t share = w->share[t];
#define LEN(a) ((a) <= upto ? w->len[a] : w->len_any[a])
#define SUB(a) ((a) <= upto ? w->sub[a] : w->sub_any[a])
    int64_t at_s = c->chip->element_bytes;
    double plain = 1, compound = 1;
    int64_t rest = w->rest[t][upto + 1];
    if (rest > 1) g = g * rest < share ? g * rest : share;
    /* A compound extent c (L_a/f_a - 1) + L_b/f_b is at least either term's
     * L/f (every L/f >= 1, c >= 1), so a third floor counts each compound
     * dimension as its longer term: the factors of the axes so counted
     * multiply to a divisor of prod f_t^X, so to at most g. */
    double windows = 1;
    /* the counted floor's plain ring, as the product of the plain axes'
     * S_a (gcd(P, gcd(P, x) y) = gcd(P, x y): the order does not matter)
     * and r0, and each window's choices */
    int64_t p0 = 1, r0 = 1;
    counted_win cw[WIN_MAX];
    int nwin = 0;
    bool counted = true;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        if (dim->nterms == 1) {
            int a = dim->axis[0];
            int64_t s0 = SUB(a);
            at_s *= rotor_dim_extent(dim, &s0);
            plain *= (double)LEN(a);
            if (a <= upto) {
                if ((p0 *= w->steps[a]) > INT32_MAX) p0 = rotor_gcd(share, p0);
            } else if (r0 < share) {
                r0 *= w->smax[a];
            }
            continue;
        }
        int a0 = dim->axis[0], a1 = dim->axis[1];
        int64_t sw[2] = {SUB(a0), SUB(a1)}, s0 = sw[0], s1 = sw[1], l0 = LEN(a0), l1 = LEN(a1);
        int64_t ext = rotor_dim_extent(dim, sw);
        at_s *= ext;
        compound *= (double)ext;
        windows *= (double)(l0 > l1 ? l0 : l1);
        if (nwin == WIN_MAX) {
            counted = false;
            continue;
        }
        /* the window's options: no axis counted (its least extent), or
         * term k counted, f_k ext >= c_k L_k + kk f_k (kk = 1 - c_k +
         * c_j (s_j - 1)), the least at f_k = 1 when kk >= 0, else at the
         * largest f_k, and f_k ext >= L_k */
        counted_win *o = &cw[nwin++];
        o->h[0] = (double)ext;
        o->chosen[0] = o->open[0] = 1;
        for (int k = 0; k < 2; k++) {
            int j = 1 - k, ak = dim->axis[k];
            int64_t ck = dim->coef[k], lk = k ? l1 : l0;
            int64_t kk = 1 - ck + dim->coef[j] * ((j ? s1 : s0) - 1);
            int64_t fmax = ak <= upto && w->steps[ak] < share ? w->steps[ak] : share;
            int64_t h = ck * lk + kk * (kk >= 0 ? 1 : fmax);
            o->h[k + 1] = (double)(h > lk ? h : lk);
            o->chosen[k + 1] = ak <= upto ? w->steps[ak] : 1;
            o->open[k + 1] = ak <= upto ? 1 : w->smax[ak];
        }
    }
#undef LEN
#undef SUB
    double eb = (double)c->chip->element_bytes;
    double by_ring = ceil(plain / (double)g) * compound * eb;
    double by_window = ceil(plain * windows / (double)g) * eb;
    if (by_window > by_ring) by_ring = by_window;
    /* The counted floor only where it could win: every choice's ring
     * bound is at least the plain axes' (gcd(P, gc s) = gc gcd(P / gc, s)
     * >= gc, r only grows) and its H at most the window's largest, and
     * rounding is monotone, so ceil(plain prod max H / that ring) bounds
     * every choice's value from above.  On DenseNet-121 at batch 48 that
     * bound settles 72 % of the calls (issue 42). */
    double now = by_ring > (double)at_s ? by_ring : (double)at_s;
    if (counted && nwin > 0) {
        /* the plain axes' ring, one gcd for all of them (a product above
         * 2^31 folded on the way, so nothing overflows) */
        int64_t gc0 = p0 > 1 ? rotor_gcd(share, p0) : 1;
        double most = plain;
        for (int i = 0; i < nwin; i++) {
            const double *h = cw[i].h;
            most *= h[0] > h[1] ? (h[0] > h[2] ? h[0] : h[2]) : (h[1] > h[2] ? h[1] : h[2]);
        }
        int64_t low = r0 >= share || gc0 * r0 >= share ? share : gc0 * r0;
        if (ceil(most / (double)low) * eb > now) {
            double by_count = counted_best(cw, nwin, plain, gc0, r0, share) * eb;
            if (by_count > by_ring) by_ring = by_count;
        }
    }
    return by_ring > (double)at_s ? (by_ring > 9e15 ? (int64_t)9e15 : (int64_t)by_ring) : at_s;
}

/* ---- The exact floor of a windowed tensor ---------------------------------
 *
 * step_floor_upto bounds a window's extents through the product of the
 * counted f_t only, and can lie well below a strided input's least bytes
 * (2.4x for conformer-m's sub.conv2).  tensor_least walks the divisor
 * lattice instead (2026-11-30): with S_0..S_upto chosen, the least bytes of
 * X over every (S_b, f_t) the search may still take,
 *   - a chosen axis a: f_a dividing S_a, partition L_a / f_a;
 *   - an unchosen axis b: any S_b of the step choices, f_b dividing it,
 *     partition ceil(E_b / (F_b S_b)) S_b / f_b;
 * the product of the f_t dividing P_X (dfs_axis).  The chain, coverage and
 * padding rules are left out (they only remove plans), so this is at most
 * X's bytes in every plan below the node, and equal to the least of them
 * where those rules bind nothing.  The best starts at `limit`, so the
 * answer is min(least, limit), a floor.  The step search asks only whether
 * X fits below the room the others' floors leave it under the cap (decide:
 * the walk stops at the first f_t that fits); it prunes the prefix when X
 * does not.
 *
 * The walk's cost (2026-11-30, thirty-fifth session; it was 45 % of
 * Conformer-M b64's compile):
 *   - an axis's options are one per f: bytes never fall as a partition
 *     grows and the ring spends only f, so of the S_b that f divides only
 *     the one with the least partition can give the least bytes, and
 *     that is S_b = f (least_options).  The options are listed once per
 *     call, not at every node of the lattice (an unchosen axis had one
 *     branch per (S_b, f) pair);
 *   - they are walked by ascending partition: a branch is cut when its
 *     partitions so far, every later one at its least option, reach the
 *     best, and then so is every later option of the axis (the loop
 *     ends);
 *   - each node recomputes only the extents of the dimensions its axis
 *     enters (the others' product is taken once per level). */
#define LEAST_POOL 512 /* options kept on the stack; more are malloc'd */

typedef struct least_axis {
    int a, nopt;
    const int64_t *f, *part; /* the options, ascending partition */
    uint32_t dims;           /* the dimensions the axis enters (a bit each) */
} least_axis;

typedef struct least_walk {
    const rotor_tensor *x;
    int n;           /* X's axes, in axis order */
    least_axis ax[ROTOR_MAX_AXES];
    int64_t share;
    int64_t part[ROTOR_MAX_AXES]; /* each axis's partition: chosen so far, else its least */
    int64_t ext[ROTOR_MAX_DIMS];  /* each dimension's extent of those */
    int64_t eb, best, limit;
    bool decide; /* stop at the first f_t under the limit (it fits) */
} least_walk;

/* rotor_dim_extent of partitions indexed by axis */
static inline int64_t least_ext(const rotor_dim *d, const int64_t *part) {
    int64_t x = 1;
    for (int k = 0; k < d->nterms; k++) x += d->coef[k] * (part[d->axis[k]] - 1);
    return x;
}

/* Axis k of the walk (X's axes 0..k-1 chosen, ring q spent); false once a
 * deciding walk has found a fit. */
static bool least_walk_axis(least_walk *lw, int k, int64_t q) {
    const least_axis *ax = &lw->ax[k];
    const rotor_tensor *x = lw->x;
    int64_t base = lw->eb;
    for (int d = 0; d < x->ndims; d++)
        if (!(ax->dims >> d & 1)) base *= lw->ext[d];
    bool go = true;
    int64_t save[ROTOR_MAX_DIMS];
    for (int i = 0; i < ax->nopt && go; i++) {
        int64_t qf = q * ax->f[i];
        if (qf > lw->share || lw->share % qf) continue;
        lw->part[ax->a] = ax->part[i];
        int64_t b = base;
        for (int d = 0; d < x->ndims; d++)
            if (ax->dims >> d & 1) b *= least_ext(&x->dims[d], lw->part);
        if (b >= lw->best) break; /* and every later option, larger */
        if (k + 1 == lw->n) {
            lw->best = b; /* every later option is larger */
            go = !(lw->decide && b < lw->limit);
            break;
        }
        for (int d = 0; d < x->ndims; d++)
            if (ax->dims >> d & 1) {
                save[d] = lw->ext[d];
                lw->ext[d] = least_ext(&x->dims[d], lw->part);
            }
        go = least_walk_axis(lw, k + 1, qf);
        for (int d = 0; d < x->ndims; d++)
            if (ax->dims >> d & 1) lw->ext[d] = save[d];
    }
    lw->part[ax->a] = ax->nopt ? ax->part[0] : 1;
    return go;
}

/* Axis a's options into f and part, ascending partition: a chosen axis
 * f | gcd(S_a, P_X), partition L_a / f; an unchosen one each f | P_X with
 * partition ceil(E_a / (F_a f)).  That is the least over the S_b that f
 * divides (ceil(E / (F S)) S / f >= E / (F f), met at S = f), and S = f is
 * a step choice (the choices hold the divisors of the P_X of every tensor
 * carrying the axis).  Both partitions fall as f grows, so the divisors
 * taken largest first give them ascending. */
static int least_options(const worker *w, int t, int a, int upto, int64_t *f, int64_t *part) {
    const rotor_expr *e = w->c->e;
    const int64_t *pd = w->pdiv[t];
    int n = 0;
    for (int i = w->npdiv[t] - 1; i >= 0; i--) {
        int64_t fi = pd[i];
        if (a <= upto) {
            if (w->steps[a] % fi) continue;
            part[n] = w->len[a] / fi;
        } else {
            int64_t unit = w->plan.fop[a] * fi;
            part[n] = (e->extent[a] + unit - 1) / unit;
        }
        f[n++] = fi;
    }
    return n;
}

static int64_t tensor_least(const worker *w, int t, int upto, int64_t limit, bool decide) {
    const rotor_expr *e = w->c->e;
    const rotor_tensor *x = &e->tensors[t];
    least_walk lw = {.x = x, .share = w->share[t], .eb = w->c->chip->element_bytes, .best = limit,
                     .limit = limit, .decide = decide};
    int64_t stack[2 * LEAST_POOL], *pool = stack;
    int nax = 0;
    for (int a = 0; a < e->naxes; a++) nax += x->has_axis[a];
    size_t nopt = (size_t)nax * (size_t)w->npdiv[t];
    if (nopt > LEAST_POOL && !(pool = malloc(2 * nopt * sizeof *pool)))
        return 0; /* no memory for the walk: the trivial floor */
    uint32_t dmask[ROTOR_MAX_AXES] = {0};
    for (int d = 0; d < x->ndims; d++)
        for (int k = 0; k < x->dims[d].nterms; k++) dmask[x->dims[d].axis[k]] |= 1u << d;
    int used = 0;
    for (int a = 0; a < e->naxes; a++) {
        lw.part[a] = 1;
        if (!x->has_axis[a]) continue;
        least_axis *ax = &lw.ax[lw.n++];
        int64_t *f = pool + used, *part = f + w->npdiv[t];
        ax->a = a;
        ax->nopt = least_options(w, t, a, upto, f, part);
        ax->f = f;
        ax->part = part;
        used += 2 * w->npdiv[t];
        ax->dims = dmask[a];
        /* no option: no f_t (cannot happen, f = 1 divides every S) */
        if (ax->nopt == 0) {
            if (pool != stack) free(pool);
            return limit;
        }
        lw.part[a] = part[0];
    }
    for (int d = 0; d < x->ndims; d++) lw.ext[d] = least_ext(&x->dims[d], lw.part);
    if (lw.n == 0) {
        int64_t b = lw.eb;
        for (int d = 0; d < x->ndims; d++) b *= lw.ext[d];
        lw.best = b < limit ? b : limit;
    } else {
        least_walk_axis(&lw, 0, 1);
    }
    if (pool != stack) free(pool);
    return lw.best;
}

/* A window with a stride (a coefficient above 1): there the cheap floors
 * fall furthest below the least bytes; at stride 1 step_floor_upto's
 * window floor is close, and the walks cost DenseNet-121 b128 10 % and
 * pruned nothing, so only strided windows are walked (a cost decision). */
static bool tensor_windowed(const rotor_tensor *x) {
    for (int d = 0; d < x->ndims; d++)
        if (x->dims[d].nterms == 2 && (x->dims[d].coef[0] > 1 || x->dims[d].coef[1] > 1)) return true;
    return false;
}

/* gcd(P_X, prod S_a) over X's axes up to level a, from level a - 1's:
 * gcd(P, xy) = gcd(P, gcd(P, x) y), and every factor stays <= N so nothing
 * overflows. */
static int64_t step_ring_gcd(const worker *w, int t, int a) {
    int64_t prev = a > 0 ? w->sgcd[a - 1][t] : 1;
    return w->c->e->tensors[t].has_axis[a] ? rotor_gcd(w->share[t], prev * w->steps[a]) : prev;
}

static int64_t step_floor(const worker *w, int t) {
    int last = w->c->e->naxes - 1;
    return step_floor_upto(w, t, last, step_ring_gcd(w, t, last));
}

/* ---- The joint floor ------------------------------------------------------
 *
 * A frontier search prunes a node when one front entry beats both its time
 * floor and its memory floor.  Most nodes of a contraction with several
 * reduction axes are not so beaten while every plan below them is: the
 * time floor is reached only by plans that keep their tensors whole (large
 * memory), the memory floor only by plans that rotate them (the shifts cost
 * time), and the front beats each such end by a different entry.  The joint
 * floor couples the two.
 *
 * With the steps S fixed, a tensor X whose dimensions are each one axis
 * with coefficient 1 has partitions L_a / f_a, so with ring Q = prod f_t^X
 * its bytes are exactly U_X / Q, U_X = element bytes * prod_a L_a (f_a
 * divides S_a, which divides L_a; Q divides g_X = gcd(P_X, prod S_a)).  The
 * model's bound inequality (op/cost.h) gives
 *   T >= step_bound(S) + sum_X tensor_bound(X, U_X / Q_X, Q_X, P_X / Q_X),
 *   M  = sum_X U_X / Q_X + B_buf [S != 1],
 * so for any lam >= 0
 *   T + lam M >= step_bound(S) + lam B_buf [S != 1] + sum_X h_X,
 *   h_X = min over Q | g_X of tensor_bound(X, U_X / Q, Q, P_X / Q) + lam U_X / Q,
 * the minimum over a superset of the rings a plan may take.  A prefix of
 * the steps (S_b = 1 past it) bounds the same way with each unchosen L_b
 * at its floor ceil(E_b / F_b), Q over every divisor of P_X and bytes
 * rounded down (tensor_bound does not fall with bytes, op/cost.h; step_bound
 * of the prefix bounds every completion, steps_prefix_time), and likewise
 * the F_op before any step.  With v1 on an all-to-all chip, tensor_bound is
 * (Q - 1) bytes / beta (plus the output's reduction), and lam = 1 / beta
 * makes each input's h_X exactly U_X / beta for every Q: the floor is the
 * line that every plan of the steps lies on or above, whatever its rings.
 * (Any lam >= 0 gives a true floor; a mesh halves the shifts' bound, and a
 * chip that overlaps shifts with compute bounds them by nothing, so there
 * the floor is not used.)  search_front_dominates_joint (pareto.c) asks
 * whether the front covers every (T, M) the floors allow.  Used only when
 * every tensor is plain (a frontier search's operators). */

/* h_X with U_X = u bytes, Q over the divisors of P_X up to and dividing g.
 * A function of (t, u, g) within one F_op (P_X fixed): the last value of
 * each tensor is kept (jmemo), since the step search's inner loops change
 * one axis at a time and the tensors without it ask again the same. */
static double joint_tensor(worker *w, int t, int64_t u, int64_t g) {
    const ctx *c = w->c;
    if (w->jmemo_u[t] == u && w->jmemo_g[t] == g) return w->jmemo_h[t];
    double best = INFINITY;
    for (int i = 0; i < w->npdiv[t]; i++) {
        int64_t q = w->pdiv[t][i];
        if (q > g) break;
        if (g % q) continue;
        int64_t b = u / q;
        double v = c->m->tensor_bound(c->m, c->e, c->chip, t, b, q, w->share[t] / q) + w->lam * (double)b;
        if (v < best) best = v;
    }
    w->jmemo_u[t] = u;
    w->jmemo_g[t] = g;
    w->jmemo_h[t] = best;
    return best;
}

/* The constant k of the joint floor T + lam M >= k, for compute floor
 * `compute`, the steps' L_a chosen up to axis `upto` (the rest at their
 * floors), g[t] the rings' bound of each tensor, and the shift buffer when
 * the chosen steps rotate. */
static double joint_k(worker *w, double compute, int upto, const int64_t *g, bool rot) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    double k = compute + (rot ? w->lam * (double)c->chip->shift_buffer_bytes : 0);
    for (int t = 0; t < e->ntensors; t++) {
        int64_t u = c->chip->element_bytes;
        for (int a = 0; a < e->naxes; a++)
            if (e->tensors[t].has_axis[a]) u *= a <= upto ? w->len[a] : w->len_any[a];
        k += joint_tensor(w, t, u, g ? g[t] : w->share[t]);
    }
    return k;
}

/* A node with time floor t and memory floor m, its steps as in joint_k:
 * does the front cover every plan below it? */
static bool joint_pruned(worker *w, double t, int64_t m, double compute, int upto, const int64_t *g, bool rot) {
    if (!w->joint) return false;
    return search_front_dominates_joint(w, t, m, w->lam, joint_k(w, compute, upto, g, rot));
}

/* A time that search_prune cuts with no memory, by a margin that covers
 * the rounding of step_bound: with a model whose step_bound never falls
 * when one S_a is multiplied by an integer (rotor_cost_model.
 * step_bound_multiples), every multiple of this S_a at the same level,
 * the other steps as they are, is cut too (search_prune is monotone in
 * time, and the incumbent and the front only tighten).  dead_floor is
 * that margin, the one statement of it: the searched floor notes it too
 * where steps_dead may cut (the multiples' floors lie within it). */
static inline double dead_floor(double tb) { return tb * (1 - 1e-12); }

static bool steps_dead(worker *w, double tb) {
    return w->c->m->step_bound_multiples && search_prune(w, dead_floor(tb), 0);
}

/* (T - 1) alpha for the steps S_0..S_upto chosen, the rest 1: every step
 * after the first pays the link's latency whatever moves (cost-model-v1.md's
 * shift term, rotor_cost_shift_s's rounds), beside the compute and the
 * bytes the other floors count.  Raising any S_a raises T, so it floors
 * every completion, and k S_a's too (steps_dead).  Only with the v1 model
 * on a chip whose shifts do not overlap compute (ctx.rot_lat,
 * search_rotation_latency): with overlap a boundary where nothing moves
 * hides its latency (docs/cost-model.md, "Overlap"); a mesh's boundary
 * pays hops * alpha, at least alpha.  Without it a latency of 1 us (ipu-mk2,
 * ResNet-18 at batch 2) pruned nothing the compute floor did not: 80 s
 * where 100 ns takes 0.4 (docs/cost-model.md, "Bounds"). */
static double steps_latency(const worker *w, int upto) {
    double lat = w->c->rot_lat, t = 1;
    if (lat == 0) return 0;
    for (int a = 0; a <= upto; a++) t *= (double)w->steps[a];
    return (t - 1) * lat;
}

/* S_a = s into w, with L_a = ceil(E_a / (F_a S_a)) S_a (the extent padded
 * to a multiple of F_a S_a, over F_a) and s_a = L_a / S_a: one division,
 * and the one statement of the two (the F_op is w->plan.fop). */
static inline void step_set(worker *w, int a, int64_t s) {
    int64_t unit = w->plan.fop[a] * s;
    w->steps[a] = s;
    w->sub[a] = (w->c->e->extent[a] + unit - 1) / unit;
    w->len[a] = w->sub[a] * s;
}

/* The padding prod_a P_a / E_a of the F_op and steps in w (P_a the extent
 * padded to a multiple of F_a S_a): asked only under a max_padding
 * constraint, so that the default search pays no division per axis for
 * it (issue 45: 1.6 % of a DenseNet-121 compile). */
static double steps_padding(const worker *w) {
    const rotor_expr *e = w->c->e;
    double pad = 1.0;
    for (int a = 0; a < e->naxes; a++) {
        int64_t unit = w->plan.fop[a] * w->steps[a];
        int64_t padded = (e->extent[a] + unit - 1) / unit * unit;
        pad *= (double)padded / (double)e->extent[a];
    }
    return pad;
}

/* With F_op and the steps S fixed: padding, compute, floors, then f_t.
 * The axes before `from` have L_a and s_a as their levels set them
 * (search_steps), and rot says whether any of their S_a exceeds 1.  True
 * when its time alone cut it (steps_dead). */
static bool search_steps_leaf(worker *w, int from, bool rot) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    w->st.step_vectors++;
    for (int a = from; a < e->naxes; a++) {
        step_set(w, a, w->steps[a]);
        rot |= w->steps[a] > 1;
    }
    if (c->cons.max_padding > 0 && steps_padding(w) > c->cons.max_padding * (1 + SLACK)) {
        w->st.steps_pruned++;
        return false;
    }
    w->compute = c->m->step_bound(c->m, e, c->chip, w->plan.fop, w->steps, w->sub);
    double lat = steps_latency(w, e->naxes - 1), tb = w->compute + w->comm_floor + lat;
    /* search_prune never prunes less with more memory (the cap, and the
     * front's entries up to m grow with m), so a time that is pruned with no
     * memory at all is pruned with the floors: most step vectors of a
     * frontier search fail its time cap, and skip the floors' arithmetic */
    if (search_prune(w, tb, 0)) {
        search_floor_note(w, dead_floor(tb), 0); /* the multiples steps_dead cuts */
        w->st.steps_pruned++;
        return steps_dead(w, tb);
    }
    int64_t mem = rot ? c->chip->shift_buffer_bytes : 0;
    for (int t = 0; t < e->ntensors; t++) {
        w->min_bytes[t] = e->naxes > 1 && !e->tensors[t].has_axis[e->naxes - 1] ? w->sfl[e->naxes - 2][t]
                                                                                 : step_floor(w, t);
        mem += w->min_bytes[t];
    }
    if (search_prune(w, tb, mem)) {
        search_floor_note(w, tb, mem);
        w->st.steps_pruned++;
        return false;
    }
    if (w->joint) {
        int64_t g[ROTOR_MAX_TENSORS];
        for (int t = 0; t < e->ntensors; t++) g[t] = step_ring_gcd(w, t, e->naxes - 1);
        if (joint_pruned(w, tb, mem, w->compute, e->naxes - 1, g, rot)) {
            search_floor_note(w, tb, mem);
            w->st.steps_pruned++;
            return false;
        }
    }
    /* the divisors of each S_a, listed again only where S_a changed: the
     * step search's inner levels move one axis at a time */
    for (int a = 0; a < e->naxes; a++)
        if (w->divs_of[a] != w->steps[a]) {
            search_divisors(w->steps[a], w->divs[a], &w->ndivs[a]);
            w->divs_of[a] = w->steps[a];
        }
    dfs_tensor(w, 0, w->compute + lat, mem);
    return false;
}


/* A prefix of the steps, the rest still 1: raising any S_b never lowers the
 * compute time nor the padding (docs/cost-model.md, "Bounds"), so the prefix's
 * compute with the remaining S_b = 1 bounds every completion.  Its time
 * floor (compute and the F_op's communication floor) into *tb; false when
 * the padding alone prunes it. */
static bool steps_prefix_time(worker *w, int a, double *tb, double *compute) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    /* the prefix's sub-task extents as its levels set them, each later
     * axis's at S_b = 1 (ceil(E_b / F_b), fop_setup's len_any): the same
     * integers as ceil(E_b / (F_b S_b)) afresh, without a division each;
     * kept in w->psub by the levels as they go (search_steps), not
     * copied here per prefix (issue 42: the copy was 1 % of a DenseNet-121
     * compile's instructions) */
    if (c->cons.max_padding > 0 && steps_padding(w) > c->cons.max_padding * (1 + SLACK)) return false;
    *compute = c->m->step_bound(c->m, e, c->chip, w->plan.fop, w->steps, w->psub);
    *tb = *compute + w->comm_floor + steps_latency(w, a);
    return true;
}


/* A floor on memory once S_0..S_a are chosen: a tensor whose axes are all
 * among them has its step_floor, exact in everything but f_t; the others
 * their F_op floor.  Rotation needs the shift buffer. */
static int64_t steps_prefix_mem(worker *w, int a, bool rot) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    int64_t mem = rot ? c->chip->shift_buffer_bytes : 0;
    for (int t = 0; t < e->ntensors; t++) {
        /* a tensor without axis a has the floor of the shorter prefix */
        w->sgcd[a][t] = step_ring_gcd(w, t, a);
        int64_t f = a > 0 && !e->tensors[t].has_axis[a] ? w->sfl[a - 1][t]
                                                        : step_floor_upto(w, t, a, w->sgcd[a][t]);
        w->sfl[a][t] = f;
        mem += f > w->weak[t] ? f : w->weak[t];
    }
    /* under the cap by the cheap floors: each windowed tensor's exact
     * floor, up to what the others' floors leave it under the cap */
    for (int t = 0; t < e->ntensors && mem <= c->cap; t++) {
        if ((a > 0 && !e->tensors[t].has_axis[a]) || !tensor_windowed(&e->tensors[t])) continue;
        int64_t f = w->sfl[a][t], was = f > w->weak[t] ? f : w->weak[t];
        int64_t room = c->cap - (mem - was); /* >= was, as mem <= cap */
        /* a cost decision, not a bound: with room for 2.5 times the
         * cheap floor the walk is not asked (the largest gap seen is 2.4x,
         * conformer-m's sub.conv2; at 3x DenseNet-121 b128 paid 10 % for
         * walks that pruned nothing; without the gate, after the walk's
         * thirty-fifth-session rework, Conformer-M b32 and b64 ran 1 % fewer
         * instructions and ResNet-50 b8 4 % more); skipping it only prunes
         * less, and what it prunes is over the cap, so the plans found are
         * the same */
        if (room / 5 * 2 >= was) continue;
        int64_t least = tensor_least(w, t, a, room < INT64_MAX ? room + 1 : room, true);
        if (least > room) {
            mem += least - was;
            w->sfl[a][t] = least;
        }
    }
    return mem;
}

/* Level a of the steps.  A value whose time alone is cut (steps_dead)
 * cuts its multiples at this level: they are skipped unasked. */
#define DEAD_MAX 32
static void search_steps(worker *w, const step_choices *sc, int a, bool rot) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    if (a == e->naxes) {
        search_steps_leaf(w, 0, false);
        return;
    }
    int64_t dead[DEAD_MAX];
    int ndead = 0;
    for (int i = 0; i < sc->n[a]; i++) {
        int64_t sa = sc->v[a][i];
        bool skip = false;
        for (int j = 0; j < ndead && !skip; j++) skip = sa % dead[j] == 0;
        if (skip) {
            w->st.steps_pruned++;
            continue;
        }
        w->steps[a] = sa;
        if (a + 1 == e->naxes) {
            if (search_steps_leaf(w, a, rot) && ndead < DEAD_MAX) dead[ndead++] = sa;
            continue;
        }
        step_set(w, a, sa);
        w->psub[a] = w->sub[a];
        /* the time first: pruned with no memory, it is pruned with the
         * prefix's floors too (search_prune is monotone in memory), and
         * those cost a step_floor_upto per tensor.  With S_a = 1 the time
         * is the shorter prefix's, but the memory floor has risen (the
         * axis's sub-task is no longer bounded by Smax_a) and the
         * incumbent or the front may have moved: both are asked again. */
        double tb, compute;
        if (!steps_prefix_time(w, a, &tb, &compute)) {
            w->st.steps_pruned++;
            continue;
        }
        if (search_prune(w, tb, 0)) {
            search_floor_note(w, dead_floor(tb), 0); /* the multiples steps_dead cuts */
            w->st.steps_pruned++;
            if (steps_dead(w, tb) && ndead < DEAD_MAX) dead[ndead++] = sa;
            continue;
        }
        int64_t mem = steps_prefix_mem(w, a, rot || sa > 1);
        if (mem > c->cap || search_prune(w, tb, mem) ||
            joint_pruned(w, tb, mem, compute, a, NULL, rot || sa > 1)) {
            search_floor_note(w, tb, mem);
            w->st.steps_pruned++;
            continue;
        }
        search_steps(w, sc, a + 1, rot || sa > 1);
    }
    w->steps[a] = 1;
    w->psub[a] = w->len_any[a];
}

/* The shares P_X of an F_op and their divisors into w (the step choices
 * and the joint floor read them), kept for the next call with the same
 * F_op (search_fop_joint_cut, then search_fop). */
static void fop_shares(worker *w, const int64_t *fop) {
    const rotor_expr *e = w->c->e;
    if (w->pdiv_set && memcmp(w->pdiv_fop, fop, (size_t)e->naxes * sizeof *fop) == 0) return;
    for (int t = 0; t < e->ntensors; t++) {
        w->share[t] = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) w->share[t] *= fop[a];
        search_divisors(w->share[t], w->pdiv[t], &w->npdiv[t]);
    }
    memcpy(w->pdiv_fop, fop, (size_t)e->naxes * sizeof *fop);
    w->pdiv_set = true;
}

/* Sets up the joint floor for the F_op in w (after fop_shares): on in a
 * frontier search whose tensors are all plain, on a chip whose shifts do
 * not overlap compute.  lam = 1 / beta (1 / (2 beta) on a mesh, as
 * tensor_bound halves the shifts there). */
static bool joint_ready(worker *w, const int64_t *fop) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    w->joint = c->frontier && !c->chip->compute_overlap;
    for (int t = 0; t < e->ntensors && w->joint; t++)
        for (int d = 0; d < e->tensors[t].ndims; d++)
            if (e->tensors[t].dims[d].nterms != 1 || e->tensors[t].dims[d].coef[0] != 1) w->joint = false;
    if (!w->joint) return false;
    w->lam = 1.0 / rotor_chip_link_bw(c->chip);
    if (c->chip->topology == ROTOR_TOPO_MESH) w->lam /= 2;
    for (int t = 0; t < e->ntensors; t++) w->jmemo_u[t] = 0; /* U_X >= 1 element: none kept */
    for (int a = 0; a < e->naxes; a++) w->len_any[a] = (e->extent[a] + fop[a] - 1) / fop[a];
    return true;
}

/* The F_op's joint floor before its full bounds (search_fop_full_bounds):
 * t and compute its time and compute floors, m its memory floor without
 * the shift buffer (the all-ones plan has none).  True when the front
 * covers every plan of the F_op. */
bool search_fop_joint_cut(worker *w, const int64_t *fop, double t, double compute, int64_t m) {
    fop_shares(w, fop);
    return joint_ready(w, fop) && joint_pruned(w, t, m, compute, -1, NULL, false);
}

/* The joint floor's k as the step search computes it (tests/
 * test_searchjoint.c checks it against every plan): the F_op fop with
 * steps[0..upto] chosen and the rest not yet (upto = -1: the F_op before
 * any step, upto = naxes - 1: a whole step vector, whose rings are bounded
 * by their gcd g_X).  NAN when the joint floor is off. */
double search_joint_floor(worker *w, const int64_t *fop, const int64_t *steps, int upto) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    w->pdiv_set = false;
    fop_shares(w, fop);
    if (!joint_ready(w, fop)) return NAN;
    memcpy(w->plan.fop, fop, sizeof w->plan.fop);
    bool rot = false;
    for (int a = 0; a < e->naxes; a++) {
        step_set(w, a, a <= upto ? steps[a] : 1);
        rot |= w->steps[a] > 1;
    }
    double compute = c->m->step_bound(c->m, e, c->chip, fop, upto < 0 ? NULL : w->steps, w->sub);
    int64_t g[ROTOR_MAX_TENSORS];
    for (int t = 0; t < e->ntensors; t++) {
        g[t] = 1;
        for (int a = 0; a < e->naxes; a++)
            if (e->tensors[t].has_axis[a]) g[t] = rotor_gcd(w->share[t], g[t] * w->steps[a]);
    }
    return joint_k(w, compute, upto, upto == e->naxes - 1 ? g : NULL, upto >= 0 && rot);
}

/* The union of the ascending lists a (na) and b (nb), ascending, into out. */
static int merge_divisors(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out) {
    int i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        int64_t x = j == nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        if (i < na && a[i] == x) i++;
        if (j < nb && b[j] == x) j++;
        out[n++] = x;
    }
    return n;
}

/* The F_op's values the step search reads (search_fop): the plan's F_op,
 * every S_a = 1, the shares, the step choices and their largest, the weak
 * floors, and step_floor_upto's values for the axes not yet chosen. */
static void fop_setup(worker *w, const int64_t *fop) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    rotor_plan_init(e, &w->plan);
    memcpy(w->plan.fop, fop, sizeof w->plan.fop);
    for (int a = 0; a < e->naxes; a++) {
        w->steps[a] = 1;
        w->divs_of[a] = 0; /* a worker is not cleared (search.c, worker_pool) */
    }
    fop_shares(w, fop);
    step_choices *sc = &w->sc;
    for (int a = 0; a < e->naxes; a++) {
        /* the divisors of the P_X of the tensors carrying a, each once,
         * ascending (so cheap steps come first) */
        int n = 0;
        for (int t = 0; t < e->ntensors; t++) {
            if (!e->tensors[t].has_axis[a]) continue;
            memcpy(w->scratch, sc->v[a], (size_t)n * sizeof *w->scratch);
            n = merge_divisors(w->scratch, n, w->pdiv[t], w->npdiv[t], sc->v[a]);
        }
        sc->n[a] = n;
        w->smax[a] = sc->v[a][n - 1];
    }
    for (int t = 0; t < e->ntensors; t++) w->weak[t] = search_tensor_weak_floor(c, t, fop);
    for (int a = 0; a < e->naxes; a++) {
        int64_t f = fop[a], smax = w->smax[a];
        w->len_any[a] = w->psub[a] = (e->extent[a] + f - 1) / f;
        w->sub_any[a] = (e->extent[a] + f * smax - 1) / (f * smax);
    }
    for (int t = 0; t < e->ntensors; t++)
        for (int from = 0; from <= e->naxes; from++) {
            /* the axes after the prefix, in order, as the bound once took them */
            int64_t rest = 1;
            for (int a = from; a < e->naxes; a++)
                if (e->tensors[t].has_axis[a] && rest < w->share[t]) rest *= w->smax[a];
            w->rest[t][from] = rest;
        }
}

/* step_floor_upto of tensor t as the step search computes it (tests/
 * test_searchcap.c checks it against every plan): the F_op fop with
 * steps[0..upto] chosen and the rest not yet (upto = naxes - 1: the whole
 * step vector). */
int64_t search_step_floor(worker *w, const int64_t *fop, const int64_t *steps, int upto, int t) {
    const rotor_expr *e = w->c->e;
    w->pdiv_set = false;
    fop_setup(w, fop);
    int64_t g = 1;
    for (int a = 0; a <= upto; a++) {
        step_set(w, a, steps[a]);
        if (e->tensors[t].has_axis[a]) g = rotor_gcd(w->share[t], g * steps[a]);
    }
    return step_floor_upto(w, t, upto, g);
}

/* tensor_least of tensor t as the step search computes it (tests/
 * test_searchcap.c checks it against the least bytes over the f_t and the
 * steps still open): F_op fop, steps[0..upto] chosen, answer at most limit. */
int64_t search_tensor_least(worker *w, const int64_t *fop, const int64_t *steps, int upto, int t, int64_t limit) {
    w->pdiv_set = false;
    fop_setup(w, fop);
    for (int a = 0; a <= upto; a++) step_set(w, a, steps[a]);
    return tensor_least(w, t, upto, limit, false);
}

void search_fop(worker *w, const int64_t *fop) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    fop_setup(w, fop);
    w->fop_min = INFINITY;
    step_choices *sc = &w->sc;
    if (joint_ready(w, fop)) {
        /* the F_op before any step, with its full bounds: the time floor
         * under the cap, the weak memory floors (no shift buffer: the
         * all-ones plan has none) */
        double compute = c->m->step_bound(c->m, e, c->chip, fop, NULL, NULL);
        int64_t mem = 0;
        for (int t = 0; t < e->ntensors; t++) mem += w->weak[t];
        if (joint_pruned(w, compute + w->comm_floor, mem, compute, -1, NULL, false)) {
            search_floor_note(w, compute + w->comm_floor, mem);
            w->st.steps_pruned++;
            return;
        }
    }
    search_steps(w, sc, 0, false);
}
