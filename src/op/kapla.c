/* kapla.c — the fast solver (`--solver fast`): KAPLA's intra-layer
 * "stacking and caching by greedy cost descent" (KAPLA §IV-C, Algorithm 1)
 * on rotor's compute-shift plans, under the same cost model as the exact
 * search (search.c).  It never lists the plan space: it walks from a unit
 * plan, one enlargement at a time, and costs only the plans on its path and
 * their immediate neighbours.  docs/kapla.md has the map and the measured
 * gap to the exact optimum.
 *
 * How KAPLA's concepts map onto rotor (the paper targets a multi-level
 * buffer hierarchy of PE arrays; rotor has one SRAM level per core, spread
 * over N cores, and a plan is F_op, f_t per tensor and a loop order):
 *   - KAPLA's *stacking* (parallelise a tensor across buffers) is F_op: the
 *     operator partition factor decides what each core holds.  The unit
 *     tensor is F_op = 1 on every axis (one core holds all).
 *   - KAPLA's *caching* (enlarge the tensor kept in a buffer) is the
 *     temporal factor f_t: f_t^X = 1 keeps X's whole partition resident,
 *     f_t^X[a] > 1 keeps 1/f_t of it and rotates the rest in.  Enlarging a
 *     cached tensor is dividing one of its f_t by a prime.
 *   - KAPLA's "next smallest blocked size" along a dimension is, for F_op,
 *     the next F whose sub-operator extent ceil(E_a / F) is smaller (F_op
 *     need not divide E_a: rotor pads), and for f_t one prime factor.
 *   - KAPLA iterates over loop orders; rotor_plan_best_order gives the
 *     optimal order of fixed factors in closed form, so every plan costed
 *     here is costed under its best order.
 *   - KAPLA's access counts are rotor's cost model v1 (the model given in
 *     the options): every choice is made on the model's total time, never a
 *     proxy, and every plan is checked by rotor_plan_derive and costed by
 *     the model (rotor_cost_plan), never by a copy of either.
 * Decisions where the paper is silent (docs/kapla.md, "Decisions"):
 *   - Greedy choice.  KAPLA picks the dimension that helps the most-accessed
 *     tensor; rotor has one objective, so each step takes the move whose
 *     costed plan is fastest (the descent is on the true cost, which is
 *     what the most-accessed-tensor rule approximates).
 *   - Stacking walks until the cores are used up, taking the best move
 *     (next blocked size, or the blocked size at or above twice the
 *     factor) even when it is slower than the current plan (padding makes
 *     time jagged in F_op), and remembers the best F_op seen.
 *   - KAPLA keeps the top 4 inter-layer candidates (§IV-B); here the 16
 *     best F_op seen (POOL_K) each start a local descent over F_op whose
 *     moves set one axis to any of its blocked sizes (a line search),
 *     alone or with another axis refilled to the cores left.  Then kicks
 *     (a factor of 2 or 3 moved between two axes, then a narrow descent:
 *     one or two blocked sizes, or 1.5-4 times, per axis), RESTARTS
 *     seeded restarts of the narrow descent, and a descent moving two axes
 *     at once with a third refilled: the greedy alone stops where padding
 *     to the systolic array asks three or four axes to change together.
 *     A descent skips F_op whose model lower bound already loses.  The
 *     best TOP_K F_op get the full caching pass.
 *   - Validity by construction: every f_t move multiplies or divides by a
 *     prime of the tensor's free sharing degree P_X / Q_X or of f_t itself,
 *     so the ring always divides P_X; the caching pass first splits
 *     tensors (best time per byte saved) until the plan fits the cap, then
 *     only takes moves that keep it inside the cap.  Alignment (factors
 *     along an axis dividing one another) is checked by rotor_plan_derive.
 *   - The Pareto frontier (KAPLA has none): caching paths, the caching pass
 *     run backwards from every tensor fully cached, splitting the tensor
 *     that costs least time per byte saved until nothing splits, from the
 *     16 best F_op and from narrow descents under caps of 1/2, 1/4 and 1/8
 *     of the SRAM (those below the fastest plan's memory).  Every plan
 *     costed anywhere joins the front (pareto.c's search_front_add), so the
 *     frontier returned is the non-dominated set of all plans this solver
 *     costed; with --pareto the fastest plan is the front's first point.
 * The solver is sequential and deterministic: ties are broken by (time,
 * memory, plan order), whatever the thread count asked for. */
#include "rotor/base/hash.h"
#include "searchint.h"

#define TOP_K 6   /* F_op given the full caching pass */
#define POOL_K 16 /* F_op kept for the frontier's caching paths */
#define KICK_ROUNDS 4 /* rounds of kicks after the first, each from a better minimum */
#define RESTARTS 64   /* seeded restarts of the narrow descent */
#define RESTART_SEED 25
#define MEMO_BITS 14
#define MEMO_SIZE (1 << MEMO_BITS)
#define REFINE_MAX 64 /* rounds of the F_op descent (it stops sooner) */
#define PRIMES_MAX 12 /* distinct primes of n < 2^40 */

/* How good an F_op is under the current cap: fits (a plan fits the cap and
 * the constraints) before does not; then time, then memory (for F_op that
 * do not fit: memory after the fit phase, then time). */
typedef struct score {
    bool bad;
    double time;
    int64_t memory;
} score;

typedef struct memo_entry {
    uint32_t gen; /* 0: empty */
    int64_t fop[ROTOR_MAX_AXES];
    score s;
} memo_entry;

typedef struct top_entry {
    int64_t fop[ROTOR_MAX_AXES];
    score s;
} top_entry;

typedef struct kapla {
    const rotor_expr *e;
    const rotor_chip *chip;
    /* the chip with room for any plan: rotor_plan_derive refuses a plan
     * that overflows the SRAM, but the walk needs the memory of plans that
     * do not fit yet to head for ones that do (plans kept are checked
     * against the real chip: kapla_check) */
    rotor_chip roomy;
    const rotor_cost_model *m;
    rotor_constraints cons;
    int64_t cores;
    int64_t cap0; /* the SRAM or the options' memory_cap */
    int64_t cap;  /* the current solve's cap */
    /* blocked sizes per axis: each F with ceil(E_a / F) smaller than at F - 1 */
    int64_t *blocked[ROTOR_MAX_AXES];
    int nblocked[ROTOR_MAX_AXES];
    bool have_best;
    rotor_candidate best; /* fastest under cap0 of every plan costed */
    bool want_front;
    front fr;             /* every plan costed under cap0, non-dominated */
    memo_entry *memo;     /* F_op scores under the current cap */
    uint32_t gen;
    top_entry top[POOL_K];
    int ntop;
    int kicks; /* kick rounds so far */
    rotor_search_stats st;
} kapla;

/* ---- costing ------------------------------------------------------------ */

/* Plan p (F_op and f_t; its order is set here to the best one) checked and
 * costed by the model.  False when invalid.  A valid plan within cap0 and
 * the constraints joins the front and may become the best. */
static bool offer(kapla *k, const rotor_candidate *c) {
    bool ok = c->info.memory <= k->cap0 &&
              !(k->cons.max_padding > 0 && c->info.padding_ratio > k->cons.max_padding) &&
              c->info.cores >= k->cons.min_cores;
    if (!ok) return false;
    if (!k->have_best || rotor_candidate_compare(k->e, c, &k->best) < 0) {
        k->best = *c;
        k->have_best = true;
    }
    if (k->want_front) search_front_add(k->e, &k->fr, c);
    return true;
}

/* ... and, on a chip that overlaps, the plan with overlap too
 * (docs/cost-model.md, "Overlap"): c becomes it where it is faster and
 * fits, so that the moves that follow start from it. */
static bool cost_of(kapla *k, rotor_plan *p, rotor_candidate *c) {
    rotor_error err;
    k->st.plans++;
    p->overlap = false; /* a move from a plan with overlap starts without */
    if (rotor_plan_derive(k->e, &k->roomy, p, &c->info, &err)) return false;
    rotor_plan_best_order(k->e, c->info.steps, p->ft, c->info.bytes, p->order);
    c->plan = *p;
    if (rotor_cost_plan(k->m, k->e, &k->roomy, &c->plan, &c->info, &c->cost, &err)) return false;
    offer(k, c);
    if (!rotor_plan_may_overlap(k->e, &k->roomy, &c->plan, &c->info)) return true;
    rotor_candidate o = *c;
    o.plan.overlap = true;
    k->st.plans++;
    if (rotor_cost_plan(k->m, k->e, &k->roomy, &o.plan, &o.info, &o.cost, &err)) return true;
    if (offer(k, &o) && o.cost.total < c->cost.total) *c = o;
    return true;
}

/* Within the current cap and the constraints. */
static bool fits(const kapla *k, const rotor_candidate *c) {
    return c->info.memory <= k->cap &&
           !(k->cons.max_padding > 0 && c->info.padding_ratio > k->cons.max_padding) &&
           c->info.cores >= k->cons.min_cores;
}

/* The distinct primes of n, ascending. */
static int primes_of(int64_t n, int64_t *out) {
    int np = 0;
    for (int64_t p = 2; p * p <= n; p++)
        if (n % p == 0) {
            out[np++] = p;
            while (n % p == 0) n /= p;
        }
    if (n > 1) out[np++] = n;
    return np;
}

/* ---- caching: f_t under one F_op (KAPLA §IV-C "caching") --------------- */

/* The best move from *cur among the f_t moves: splits (f_t^X[a] times a
 * prime of P_X / Q_X) and, unless split_only, merges (f_t^X[a] divided by
 * one of its primes).  With split_only the move must save memory and the
 * best is the least time added per byte saved (the fit phase); otherwise
 * it must fit the cap and the best is the least (time, memory, plan).
 * False when no move qualifies. */
static bool best_ft_move(kapla *k, const rotor_candidate *cur, bool split_only, rotor_candidate *out) {
    const rotor_expr *e = k->e;
    bool have = false;
    double best_ratio = INFINITY;
    for (int t = 0; t < e->ntensors; t++) {
        int64_t free_share = cur->info.sharing[t] / cur->info.ring_size[t];
        int64_t sp[PRIMES_MAX];
        int nsp = primes_of(free_share, sp);
        for (int a = 0; a < e->naxes; a++) {
            if (!e->tensors[t].has_axis[a]) continue;
            int64_t mp[PRIMES_MAX];
            int nmp = split_only ? 0 : primes_of(cur->plan.ft[t][a], mp);
            for (int i = 0; i < nsp + nmp; i++) {
                rotor_plan p = cur->plan;
                if (i < nsp) p.ft[t][a] *= sp[i];
                else p.ft[t][a] /= mp[i - nsp];
                rotor_candidate c;
                if (!cost_of(k, &p, &c)) continue;
                if (split_only) {
                    if (c.info.memory >= cur->info.memory) continue;
                    double ratio = (c.cost.total - cur->cost.total) /
                                   (double)(cur->info.memory - c.info.memory);
                    if (!have || ratio < best_ratio) {
                        best_ratio = ratio;
                        *out = c;
                        have = true;
                    }
                } else if (fits(k, &c) && (!have || rotor_candidate_compare(e, &c, out) < 0)) {
                    *out = c;
                    have = true;
                }
            }
        }
    }
    return have;
}

/* The caching pass for one F_op under k->cap: from every tensor fully
 * cached (all f_t = 1), split the tensor that costs least time per byte
 * until the plan fits; then, with `descend`, take the best f_t move while
 * it is faster and fits.  Returns the score; *out is the plan when it fits. */
static score caching(kapla *k, const int64_t *fop, bool descend, rotor_candidate *out) {
    k->st.fops++;
    rotor_plan p;
    rotor_plan_init(k->e, &p);
    for (int a = 0; a < k->e->naxes; a++) p.fop[a] = fop[a];
    rotor_candidate cur;
    score s = {.bad = true, .time = INFINITY, .memory = INT64_MAX};
    if (!cost_of(k, &p, &cur)) return s;
    s.time = cur.cost.total; /* the unconstrained time guides an unfit walk */
    s.memory = cur.info.memory;
    rotor_candidate next;
    while (cur.info.memory > k->cap && best_ft_move(k, &cur, true, &next)) cur = next;
    if (!fits(k, &cur)) {
        s.memory = cur.info.memory; /* an unfit walk heads for less memory first */
        return s;
    }
    while (descend && best_ft_move(k, &cur, false, &next) && rotor_candidate_compare(k->e, &next, &cur) < 0)
        cur = next;
    *out = cur;
    return (score){.bad = false, .time = cur.cost.total, .memory = cur.info.memory};
}

/* ---- stacking: F_op (KAPLA §IV-C "stacking") ---------------------------- */

static int fop_cmp(const kapla *k, const int64_t *a, const int64_t *b) {
    for (int x = 0; x < k->e->naxes; x++)
        if (a[x] != b[x]) return a[x] < b[x] ? -1 : 1;
    return 0;
}

/* Negative when (s, f) is the better F_op. */
static int score_cmp(const kapla *k, score s, const int64_t *f, score u, const int64_t *g) {
    if (s.bad != u.bad) return s.bad ? 1 : -1;
    if (s.bad && s.memory != u.memory) return s.memory < u.memory ? -1 : 1;
    if (s.time != u.time) return s.time < u.time ? -1 : 1;
    if (s.memory != u.memory) return s.memory < u.memory ? -1 : 1;
    return fop_cmp(k, f, g);
}

/* Keeps the POOL_K best distinct F_op that fit: the first TOP_K for the
 * full caching pass, all for the frontier. */
static void top_add(kapla *k, const int64_t *fop, score s) {
    if (s.bad) return;
    for (int i = 0; i < k->ntop; i++)
        if (fop_cmp(k, k->top[i].fop, fop) == 0) return;
    int at = k->ntop;
    while (at > 0 && score_cmp(k, s, fop, k->top[at - 1].s, k->top[at - 1].fop) < 0) at--;
    if (at >= POOL_K) return;
    int n = k->ntop < POOL_K ? k->ntop + 1 : POOL_K;
    memmove(&k->top[at + 1], &k->top[at], (size_t)(n - 1 - at) * sizeof *k->top);
    memcpy(k->top[at].fop, fop, sizeof k->top[at].fop);
    k->top[at].s = s;
    k->ntop = n;
}

/* An F_op's score under the current cap (the fit phase of caching),
 * remembered for the rest of this cap's solve. */
static score fop_score(kapla *k, const int64_t *fop) {
    uint64_t h = ROTOR_FNV1A_SEED;
    for (int a = 0; a < k->e->naxes; a++) h = rotor_fnv1a_word(h, (uint64_t)fop[a]);
    memo_entry *slot = NULL;
    if (k->memo)
        for (int probe = 0; probe < 8; probe++) {
            memo_entry *m = &k->memo[(h + (uint64_t)probe) & (MEMO_SIZE - 1)];
            if (m->gen != k->gen) {
                slot = m;
                break;
            }
            if (fop_cmp(k, m->fop, fop) == 0) return m->s;
        }
    rotor_candidate c;
    score s = caching(k, fop, false, &c);
    top_add(k, fop, s);
    if (slot) {
        slot->gen = k->gen;
        memcpy(slot->fop, fop, sizeof slot->fop);
        slot->s = s;
    }
    return s;
}

/* prod F_op (INT64_MAX when that overflows: more than any chip's cores). */
static int64_t cores_of(const kapla *k, const int64_t *fop) {
    int64_t n = 1;
    for (int a = 0; a < k->e->naxes; a++)
        if (!rotor_mul_i64(n, fop[a], &n)) return INT64_MAX;
    return n;
}

/* The index of the largest blocked size of axis a not above lim (-1: none). */
static int blocked_upto(const kapla *k, int a, int64_t lim) {
    int lo = 0, hi = k->nblocked[a];
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (k->blocked[a][mid] <= lim) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

static int blocked_index(const kapla *k, int a, int64_t f) {
    int i = blocked_upto(k, a, f);
    return i < 0 ? 0 : i;
}

/* Offers the move to fop with score s as the step's choice. */
static void consider(kapla *k, const int64_t *fop, int64_t *best_fop, score *best_s, bool *have) {
    if (cores_of(k, fop) > k->cores) return;
    /* the model's lower bound on any plan of this F_op (its compute with
     * every S_a = 1, the exact search's first bound): strictly slower than
     * the step's best so far, it cannot be the step */
    if (*have && !best_s->bad && k->m->step_bound(k->m, k->e, k->chip, fop, NULL, NULL) > best_s->time) return;
    score s = fop_score(k, fop);
    if (!*have || score_cmp(k, s, fop, *best_s, best_fop) < 0) {
        memcpy(best_fop, fop, sizeof(int64_t) * ROTOR_MAX_AXES);
        *best_s = s;
        *have = true;
    }
}

/* consider(f), then f with each axis other than a and b (-1: none) refilled
 * to the largest blocked factor the cores left allow: a move that frees
 * cores on one axis is worth most when another axis takes them up. */
static void consider_refilled(kapla *k, const int64_t *f, int a, int b, int64_t *best_fop, score *best_s,
                              bool *have) {
    consider(k, f, best_fop, best_s, have);
    for (int c = 0; c < k->e->naxes; c++) {
        if (c == a || c == b) continue;
        int64_t others = cores_of(k, f) / f[c];
        int jc = blocked_upto(k, c, k->cores / others);
        if (jc < 0 || k->blocked[c][jc] == f[c]) continue;
        int64_t g[ROTOR_MAX_AXES];
        memcpy(g, f, sizeof g);
        g[c] = k->blocked[c][jc];
        consider(k, g, best_fop, best_s, have);
    }
}

/* The stacking walk: from the unit plan (F_op = 1), enlarge one axis per
 * step to its next blocked size or to the blocked size at or above twice
 * its factor, whichever step is best, until the cores are used up. */
static void stacking_walk(kapla *k, bool doubling, int64_t *seen) {
    const rotor_expr *e = k->e;
    int64_t fop[ROTOR_MAX_AXES];
    for (int a = 0; a < ROTOR_MAX_AXES; a++) fop[a] = 1;
    score ss = fop_score(k, fop);
    memcpy(seen, fop, sizeof fop);
    for (;;) {
        int64_t best[ROTOR_MAX_AXES];
        score bs;
        bool have = false;
        for (int a = 0; a < e->naxes; a++) {
            int i = blocked_index(k, a, fop[a]);
            int64_t save = fop[a];
            if (i + 1 < k->nblocked[a]) {
                fop[a] = k->blocked[a][i + 1];
                consider(k, fop, best, &bs, &have);
            }
            int j = blocked_upto(k, a, 2 * save - 1) + 1;
            if (doubling && j > i + 1 && j < k->nblocked[a]) {
                fop[a] = k->blocked[a][j];
                consider(k, fop, best, &bs, &have);
            }
            fop[a] = save;
        }
        if (!have) return;
        memcpy(fop, best, sizeof fop);
        if (score_cmp(k, bs, fop, ss, seen) < 0) {
            memcpy(seen, fop, sizeof fop);
            ss = bs;
        }
    }
}

/* The narrow moves of axis a from factor f: the indices of the blocked
 * sizes one or two away, or about 1.5, 2, 3 or 4 times larger or smaller
 * (the blocked size at or above), into cand (at most 12); their count. */
static int axis_moves(const kapla *k, int a, int64_t f, int *cand) {
    int i = blocked_index(k, a, f), nc = 0;
    for (int d = -2; d <= 2; d++)
        if (d) cand[nc++] = i + d;
    for (int64_t r = 2; r <= 4; r++) {
        cand[nc++] = blocked_upto(k, a, f * r - 1) + 1;
        cand[nc++] = blocked_upto(k, a, (f + r - 1) / r - 1) + 1;
    }
    cand[nc++] = blocked_upto(k, a, (f * 3 + 1) / 2 - 1) + 1;
    cand[nc++] = blocked_upto(k, a, (f * 2 + 2) / 3 - 1) + 1;
    return nc;
}

/* A neighbourhood of the descent: every F_op it reaches from cur is offered
 * to consider_refilled, which keeps the best in best/bs/have. */
typedef void (*neighbourhood)(kapla *k, const int64_t *cur, bool wide, int64_t *best, score *bs, bool *have);

/* One axis moved: one or two blocked sizes away, or 1.5-4 times larger or
 * smaller (with `wide`: every blocked size of that axis, a line search). */
static void one_axis_moves(kapla *k, const int64_t *cur, bool wide, int64_t *best, score *bs, bool *have) {
    for (int a = 0; a < k->e->naxes; a++) {
        int i = blocked_index(k, a, cur[a]);
        int cand[12], nc = axis_moves(k, a, cur[a], cand);
        if (wide) nc = k->nblocked[a];
        for (int ci = 0; ci < nc; ci++) {
            int j = wide ? ci : cand[ci];
            if (j == i || j < 0 || j >= k->nblocked[a]) continue;
            int64_t f[ROTOR_MAX_AXES];
            memcpy(f, cur, sizeof f);
            f[a] = k->blocked[a][j];
            consider_refilled(k, f, a, -1, best, bs, have);
        }
    }
}

/* Two axes moved at once, each a narrow move (axis_moves): a plateau of
 * padding often needs two axes to shrink while a third grows. */
static void two_axis_moves(kapla *k, const int64_t *cur, bool wide, int64_t *best, score *bs, bool *have) {
    (void)wide;
    for (int a = 0; a < k->e->naxes; a++)
        for (int b = a + 1; b < k->e->naxes; b++) {
            int ia = blocked_index(k, a, cur[a]), ib = blocked_index(k, b, cur[b]);
            int ca[12], cb[12], na = axis_moves(k, a, cur[a], ca), nb = axis_moves(k, b, cur[b], cb);
            for (int x = 0; x < na; x++)
                for (int y = 0; y < nb; y++) {
                    if (ca[x] == ia || cb[y] == ib || ca[x] < 0 || ca[x] >= k->nblocked[a] || cb[y] < 0 ||
                        cb[y] >= k->nblocked[b])
                        continue;
                    int64_t f[ROTOR_MAX_AXES];
                    memcpy(f, cur, sizeof f);
                    f[a] = k->blocked[a][ca[x]];
                    f[b] = k->blocked[b][cb[y]];
                    consider_refilled(k, f, a, b, best, bs, have);
                }
        }
}

/* The local descent over F_op from `from`: each round costs every F_op of
 * the neighbourhood, alone and with another axis refilled to the cores
 * left (grown or shrunk), and moves to the best while it is better.  The
 * F_op it stops at goes to *end when end is not NULL. */
static void descend(kapla *k, const int64_t *from, neighbourhood moves, bool wide, int64_t *end) {
    int64_t cur[ROTOR_MAX_AXES];
    memcpy(cur, from, sizeof cur);
    score cs = fop_score(k, cur);
    for (int round = 0; round < REFINE_MAX; round++) {
        int64_t best[ROTOR_MAX_AXES];
        score bs;
        bool have = false;
        moves(k, cur, wide, best, &bs, &have);
        if (!have || score_cmp(k, bs, best, cs, cur) >= 0) break;
        memcpy(cur, best, sizeof cur);
        cs = bs;
    }
    if (end) memcpy(end, cur, sizeof cur);
}

static void stacking_descent(kapla *k, const int64_t *from, bool wide, int64_t *end) {
    descend(k, from, one_axis_moves, wide, end);
}

/* Kicks out of the descent's local minimum (iterated local search; the
 * paper's greedy has none, but rotor's time is jagged in F_op because of
 * padding to the systolic array, so a descent stops where three axes must
 * change at once): from the best F_op so far, move a factor of about 2 or
 * 3 from one axis to another and descend again (narrow), for every pair of
 * axes with room to move. */
static void stacking_kicks(kapla *k) {
    const rotor_expr *e = k->e;
    if (!k->ntop) return;
    int64_t from[ROTOR_MAX_AXES];
    memcpy(from, k->top[0].fop, sizeof from);
    for (int a = 0; a < e->naxes; a++)
        for (int b = 0; b < e->naxes; b++) {
            if (a == b || k->nblocked[a] < 2 || k->nblocked[b] < 2) continue;
            for (int64_t r = 2; r <= 3; r++) {
                int64_t f[ROTOR_MAX_AXES];
                memcpy(f, from, sizeof f);
                if (f[b] < r) continue;
                int ja = blocked_upto(k, a, f[a] * r - 1) + 1;
                if (ja >= k->nblocked[a]) continue;
                f[a] = k->blocked[a][ja];
                f[b] = k->blocked[b][blocked_upto(k, b, (f[b] + r - 1) / r - 1) + 1];
                if (cores_of(k, f) > k->cores) continue;
                stacking_descent(k, f, false, NULL);
            }
        }
    /* again from a better minimum, if the kicks found one */
    if (fop_cmp(k, from, k->top[0].fop) != 0 && k->kicks++ < KICK_ROUNDS) stacking_kicks(k);
}

/* splitmix64: the restarts' fixed pseudo-random sequence. */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Restarts (iterated local search; KAPLA's greedy has none): RESTARTS
 * narrow descents from F_op drawn from a fixed seed, each axis a blocked
 * size drawn uniformly, then axes shrunk in order to the cores left.  They
 * reach the minima no path of one- or two-axis moves leads to from the
 * walks (a convolution whose optimum makes the sub-task's pixels fill the
 * systolic array needs four axes changed at once).  The seed is fixed, so
 * the result is deterministic. */
static void stacking_restarts(kapla *k) {
    const rotor_expr *e = k->e;
    uint64_t state = RESTART_SEED;
    for (int r = 0; r < RESTARTS; r++) {
        int64_t f[ROTOR_MAX_AXES];
        for (int a = 0; a < ROTOR_MAX_AXES; a++) f[a] = 1;
        for (int a = 0; a < e->naxes; a++)
            f[a] = k->blocked[a][next_random(&state) % (uint64_t)k->nblocked[a]];
        for (int a = 0; a < e->naxes && cores_of(k, f) > k->cores; a++) {
            int64_t others = cores_of(k, f) / f[a];
            int j = blocked_upto(k, a, k->cores / others);
            f[a] = k->blocked[a][j < 0 ? 0 : j];
        }
        if (cores_of(k, f) <= k->cores) stacking_descent(k, f, false, NULL);
    }
}

/* Starts a solve under a new cap: every memoised score is forgotten. */
static void new_cap(kapla *k, int64_t cap) {
    k->cap = cap;
    if (++k->gen == 0) { /* wrapped: clear every entry */
        if (k->memo) memset(k->memo, 0, (size_t)MEMO_SIZE * sizeof *k->memo);
        k->gen = 1;
    }
}

/* The solve under the memory cap (KAPLA §IV-C, Algorithm 1, one buffer
 * level): the two stacking walks, the wide F_op descent from their best
 * F_op and from each of the POOL_K best that fit (KAPLA §IV-B's top-k,
 * applied to F_op), the kicks, the restarts, the two-axis descent, then
 * the full caching pass on the TOP_K best F_op.  Every plan costed is offered to the best
 * and the front (cost_of), which is where the result is read. */
static void solve(kapla *k) {
    new_cap(k, k->cap0);
    k->ntop = 0;
    int64_t from[POOL_K + 2][ROTOR_MAX_AXES];
    stacking_walk(k, true, from[0]);
    stacking_walk(k, false, from[1]);
    int n = 2;
    for (int i = 0; i < k->ntop; i++) memcpy(from[n++], k->top[i].fop, sizeof from[0]);
    for (int i = 0; i < n; i++) stacking_descent(k, from[i], true, NULL);
    stacking_kicks(k);
    stacking_restarts(k);
    if (k->ntop) {
        int64_t best[ROTOR_MAX_AXES];
        memcpy(best, k->top[0].fop, sizeof best);
        descend(k, best, two_axis_moves, false, NULL);
    }
    top_entry top[POOL_K];
    int ntop = k->ntop < TOP_K ? k->ntop : TOP_K;
    memcpy(top, k->top, sizeof top);
    for (int i = 0; i < ntop; i++) {
        rotor_candidate c;
        caching(k, top[i].fop, true, &c);
    }
}

/* ---- setup and the frontier --------------------------------------------- */

static rotor_status kapla_init(kapla *k, const rotor_expr *e, const rotor_chip *chip,
                               const rotor_search_options *opt, rotor_error *err) {
    memset(k, 0, sizeof *k);
    if (!e->bound) return rotor_fail(err, ROTOR_ERR_INPUT, "search: the expression has no extents");
    k->e = e;
    k->chip = chip;
    k->roomy = *chip;
    k->roomy.sram_bytes = INT64_MAX / 4;
    k->m = opt && opt->model ? opt->model : rotor_cost_model_default();
    if (opt) k->cons = opt->constraints;
    k->cores = rotor_chip_cores(chip);
    k->cap0 = rotor_chip_sram(chip);
    if (k->cons.memory_cap > 0 && k->cons.memory_cap < k->cap0) k->cap0 = k->cons.memory_cap;
    k->cap = k->cap0;
    k->want_front = opt && opt->pareto;
    if (opt && opt->pareto_time_ratio != 0 && !(opt->pareto_time_ratio >= 1))
        return rotor_fail(err, ROTOR_ERR_INPUT, "search: pareto_time_ratio must be 0 or at least 1, got %g",
                          opt->pareto_time_ratio);
    if (k->cons.min_cores > k->cores)
        return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: min_cores=%lld exceeds the chip's %lld cores",
                          (long long)k->cons.min_cores, (long long)k->cores);
    for (int a = 0; a < e->naxes; a++) {
        /* F from 1 up to min(E_a, N), each the least with its ceil(E_a / F) */
        int64_t ext = e->extent[a], lim = ext < k->cores ? ext : k->cores;
        int n = 0;
        for (int64_t f = 1; f <= lim; n++) {
            int64_t c = (ext + f - 1) / f;
            if (c == 1) {
                n++;
                break;
            }
            f = (ext + c - 2) / (c - 1);
        }
        k->blocked[a] = malloc((size_t)n * sizeof *k->blocked[a]);
        if (!k->blocked[a]) return rotor_nomem(err);
        n = 0;
        for (int64_t f = 1; f <= lim;) {
            k->blocked[a][n++] = f;
            int64_t c = (ext + f - 1) / f;
            if (c == 1) break;
            f = (ext + c - 2) / (c - 1);
        }
        k->nblocked[a] = n;
    }
    k->memo = calloc(MEMO_SIZE, sizeof *k->memo); /* NULL: every score recomputed */
    return ROTOR_OK;
}

static void kapla_free(kapla *k) {
    for (int a = 0; a < ROTOR_MAX_AXES; a++) free(k->blocked[a]);
    free(k->memo);
    free(k->fr.v);
}

/* The frontier (KAPLA has none; docs/kapla.md, "Decisions"): from each
 * of the POOL_K best F_op of the solve, one caching path down in memory,
 * KAPLA's caching run backwards: from every tensor fully cached (all
 * f_t = 1), split the tensor whose split costs least time per byte saved,
 * and again, until no split saves memory.  Every plan costed on the way
 * (each step costs all the splits on offer) joins the front, which is the
 * frontier returned.  No capped solves: one path gives every memory level
 * of its F_op at once. */
static void kapla_frontier(kapla *k) {
    static const int64_t lean[] = {2, 4, 8}; /* caps: 1/2, 1/4, 1/8 of the memory cap */
    enum { NLEAN = sizeof lean / sizeof lean[0] };
    int64_t pool[POOL_K + NLEAN][ROTOR_MAX_AXES];
    int n = 0;
    for (int i = 0; i < k->ntop; i++) memcpy(pool[n++], k->top[i].fop, sizeof pool[0]);
    /* the lean descents: a narrow descent from the fastest plan's F_op
     * under caps of 1/2, 1/4 and 1/8 of the SRAM (or memory_cap), those
     * below 80% of the fastest plan's memory, each to an F_op that trades
     * time for memory, whose caching path fills the frontier's lean end
     * (F_op that look no leaner than others with every tensor cached may
     * be much leaner once split).  Where the fastest plan needs less than
     * a fraction of the SRAM, no operator competes for it much and no cap
     * applies: the paths of the best F_op alone give the frontier. */
    for (int r = 0; r < NLEAN; r++) {
        int64_t cap = k->cap0 / lean[r];
        if (cap < 1 || (double)cap > 0.8 * (double)k->best.info.memory) continue;
        new_cap(k, cap);
        stacking_descent(k, k->best.plan.fop, false, pool[n]);
        if (!fop_score(k, pool[n]).bad) n++;
    }
    k->cap = k->cap0;
    for (int i = 0; i < n && !k->fr.oom; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = fop_cmp(k, pool[j], pool[i]) == 0;
        if (seen) continue;
        rotor_plan p;
        rotor_plan_init(k->e, &p);
        for (int a = 0; a < k->e->naxes; a++) p.fop[a] = pool[i][a];
        rotor_candidate cur, next;
        if (!cost_of(k, &p, &cur)) continue;
        while (best_ft_move(k, &cur, true, &next)) cur = next;
    }
}

/* Plan c checked and costed again on the real chip, by the functions the
 * exact search uses: the fast solver's results are valid plans whose cost
 * is the model's.  A difference is a bug, reported as such. */
static rotor_status kapla_check(const kapla *k, rotor_candidate *c, rotor_error *err) {
    rotor_candidate again;
    again.plan = c->plan;
    rotor_error why;
    if (rotor_cost_plan(k->m, k->e, k->chip, &again.plan, &again.info, &again.cost, &why))
        return rotor_fail(err, ROTOR_ERR_INPUT, "fast solver: internal error: a plan it kept is invalid: %s",
                          why.msg);
    if (again.cost.total != c->cost.total || again.info.memory != c->info.memory)
        return rotor_fail(err, ROTOR_ERR_INPUT, "fast solver: internal error: a plan's cost differs on the real chip");
    *c = again;
    return ROTOR_OK;
}

rotor_status kapla_search(const rotor_expr *e, const rotor_chip *chip, const rotor_search_options *opt,
                          rotor_search_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    double t0 = omp_get_wtime();
    kapla *k = malloc(sizeof *k);
    if (!k) return rotor_nomem(err);
    rotor_status rc = kapla_init(k, e, chip, opt, err);
    if (!rc) {
        solve(k);
        if (!k->have_best)
            rc = rotor_fail(err, ROTOR_ERR_NOFIT,
                            "no valid plan fits: the fast solver found no plan of this operator within %lld "
                            "bytes per core and the constraints (try --solver exact)",
                            (long long)k->cap0);
    }
    if (!rc && k->want_front) {
        double ratio = opt->pareto_time_ratio;
        double time_cap = ratio > 0 ? k->best.cost.total * ratio : INFINITY;
        kapla_frontier(k);
        if (k->fr.oom) rc = rotor_nomem(err);
        int n = 0;
        for (int i = 0; i < k->fr.n; i++) n += k->fr.v[i].cost.total <= time_cap;
        if (!rc && !(out->pareto = malloc((size_t)(n ? n : 1) * sizeof *out->pareto))) rc = rotor_nomem(err);
        if (!rc) {
            /* the front is by memory ascending, time descending */
            for (int i = k->fr.n - 1; i >= 0; i--)
                if (k->fr.v[i].cost.total <= time_cap) out->pareto[out->npareto++] = k->fr.v[i];
        }
    }
    if (!rc) {
        out->best = k->best;
        rc = kapla_check(k, &out->best, err);
    }
    for (int i = 0; i < out->npareto && !rc; i++) rc = kapla_check(k, &out->pareto[i], err);
    if (opt && opt->progress) opt->progress(opt->progress_ctx, 1, 1);
    k->st.threads = 1;
    k->st.wall_seconds = omp_get_wtime() - t0;
    out->stats = k->st;
    if (rc) {
        free(out->pareto);
        out->pareto = NULL;
        out->npareto = 0;
    }
    kapla_free(k);
    free(k);
    return rc;
}
