/* search.c — exact branch-and-bound search over compute-shift plans
 * (T10 §4.3.1; cost-model-v1.md is the objective).
 *
 * Three levels, each pruned by a lower bound that holds for everything below:
 *   1. F_op.  Lower bound: the model's op_bound (v1: the compute of the same
 *      F_op with every S_a = 1, which no choice of steps can beat) and a
 *      memory bound.  A first pass walks all F_op, costs the all-ones plan
 *      (a valid plan whenever it fits) of those that might beat the
 *      incumbent so far, and keeps the F_op whose bounds survive, sorted by
 *      bound.  A session first searches the F_op of its archived plans
 *      nearest above the cap (probe_archive), so the walk prunes at once.
 *   2. Steps S_a.  S_a is some tensor's f_t along a, and f_t^X divides P_X, so
 *      S_a ranges over the divisors of the P_X of the tensors carrying a.  The
 *      steps fix padding, L_a, s_a and so the whole compute time.
 *   3. f_t per tensor, depth first.  Each f_t^X[a] divides S_a (alignment with
 *      S_a the largest makes every factor divide it), factors along an axis
 *      form a chain, and some tensor reaches S_a.  Each tensor adds its
 *      tensor_bound; memory adds exactly.
 * Leaves are costed under their optimal loop order.
 *
 * Pruning is strict with a relative slack of 1e-9, so plans whose time ties
 * the optimum are always reached and the winner is the least by
 * (time, memory, plan order) — whatever the thread count.  Threads share only
 * the incumbent time (an atomic); every thread keeps its own candidates and
 * frontier, merged in a fixed order at the end. */
#include "rotor/op/search.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLACK 1e-9
/* Most divisors of any n < 2^31 (1,344 for 2,095,133,040); N <= 2^30. */
#define MAX_DIVISORS 1536
#define MAX_STEP_CHOICES (MAX_DIVISORS * ROTOR_MAX_TENSORS)

/* ---- constraints ------------------------------------------------------- */

rotor_status rotor_constraints_parse(const char *text, rotor_constraints *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    const char *s = text ? text : "";
    while (*s) {
        const char *comma = strchr(s, ',');
        int len = comma ? (int)(comma - s) : (int)strlen(s);
        char item[128];
        if (len <= 0 || len >= (int)sizeof item)
            return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: expected key=value, got '%.*s'",
                              len > 0 ? len : 0, s);
        memcpy(item, s, (size_t)len);
        item[len] = '\0';
        char *eq = strchr(item, '=');
        if (!eq)
            return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: expected key=value, got '%s'", item);
        *eq = '\0';
        const char *key = item, *val = eq + 1;
        char *end;
        if (strcmp(key, "max_padding") == 0) {
            double v = strtod(val, &end);
            if (end == val || *end || !(v >= 1.0) || v > 1e6)
                return rotor_fail(err, ROTOR_ERR_INPUT,
                                  "constraints: max_padding: expected a ratio >= 1 (padded/original), got '%s'",
                                  val);
            out->max_padding = v;
        } else if (strcmp(key, "min_cores") == 0 || strcmp(key, "memory_cap") == 0) {
            long long v = strtoll(val, &end, 10);
            if (end == val || *end || v < 1 || v > ((int64_t)1 << 40))
                return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: %s: expected a positive integer, got '%s'",
                                  key, val);
            if (key[1] == 'i') out->min_cores = v;
            else out->memory_cap = v;
        } else {
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "constraints: unknown key '%s' (known: min_cores, max_padding, memory_cap)",
                              key);
        }
        s = comma ? comma + 1 : s + len;
    }
    return ROTOR_OK;
}

/* ---- candidates ---------------------------------------------------------- */

int rotor_candidate_compare(const rotor_expr *e, const rotor_candidate *a, const rotor_candidate *b) {
    if (a->cost.total != b->cost.total) return a->cost.total < b->cost.total ? -1 : 1;
    if (a->info.memory != b->info.memory) return a->info.memory < b->info.memory ? -1 : 1;
    return rotor_plan_compare(e, &a->plan, &b->plan);
}

/* ---- shared search context ------------------------------------------- */

typedef struct fop_entry {
    int64_t fop[ROTOR_MAX_AXES];
    double bound;
    double compute;  /* the model's op_bound (step_bound with any steps) */
    int64_t mem_bound;
    int64_t index; /* in the walk of pass 1 (the floors' cache key) */
} fop_entry;

/* A small Pareto archive of (memory, time) over the plans a search costed:
 * entries by memory ascending, so by time descending.  It only seeds the
 * next search of the Pareto loop with a plan that fits its tighter cap (an
 * incumbent to prune against); which plans it keeps never changes a result,
 * because every search is exact on its own. */
#define ARCHIVE_MAX 256
typedef struct archive {
    int n;
    bool dropped; /* a plan was turned away for room: it no longer covers all */
    rotor_candidate v[ARCHIVE_MAX];
} archive;

static void archive_add(archive *ar, const rotor_candidate *cand) {
    int64_t m = cand->info.memory;
    double t = cand->cost.total;
    /* the last entry with memory <= m dominates cand if it is no slower */
    int lo = 0, hi = ar->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ar->v[mid].info.memory <= m) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && ar->v[lo - 1].cost.total <= t) return;
    /* drop the entries cand dominates: memory >= m and time >= t */
    int at = lo > 0 && ar->v[lo - 1].info.memory == m ? lo - 1 : lo;
    int end = at;
    while (end < ar->n && ar->v[end].cost.total >= t) end++;
    if (end == at && ar->n == ARCHIVE_MAX) { /* full: keep what is there */
        ar->dropped = true;
        return;
    }
    memmove(&ar->v[at + 1], &ar->v[end], (size_t)(ar->n - end) * sizeof *ar->v);
    ar->n -= end - at - 1;
    ar->v[at] = *cand;
}

/* A Pareto front of (memory, time) over plans, for the single-pass frontier
 * search: entries by memory ascending and so time strictly descending; of
 * two plans with equal time and memory the one first in plan order stays.
 * Such a front, read from its fastest end, is exactly the frontier the
 * epsilon-constraint loop finds (fastest plan, then the fastest with less
 * memory than the last, ...). */
typedef struct front {
    int n, cap;
    bool oom;
    rotor_candidate *v;
} front;

/* Entries with memory <= m: their count (binary search). */
static int front_upto(const front *f, int64_t m) {
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (f->v[mid].info.memory <= m) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void front_add(const rotor_expr *e, front *f, const rotor_candidate *cand) {
    int64_t m = cand->info.memory;
    double t = cand->cost.total;
    int lo = front_upto(f, m);
    if (lo > 0) {
        const rotor_candidate *x = &f->v[lo - 1];
        if (x->cost.total < t) return;
        if (x->cost.total == t &&
            (x->info.memory < m || rotor_candidate_compare(e, x, cand) <= 0)) return;
    }
    /* cand stays: drop what it beats (memory >= m and time >= t) */
    int at = lo > 0 && f->v[lo - 1].info.memory == m ? lo - 1 : lo;
    int end = at;
    while (end < f->n && f->v[end].cost.total >= t) end++;
    if (end == at) {
        if (f->n == f->cap) {
            int ncap = f->cap ? 2 * f->cap : 64;
            rotor_candidate *nv = realloc(f->v, (size_t)ncap * sizeof *nv);
            if (!nv) {
                f->oom = true;
                return;
            }
            f->v = nv;
            f->cap = ncap;
        }
        memmove(&f->v[at + 1], &f->v[at], (size_t)(f->n - at) * sizeof *f->v);
        f->n++;
    } else if (end > at + 1) {
        memmove(&f->v[at + 1], &f->v[end], (size_t)(f->n - end) * sizeof *f->v);
        f->n -= end - at - 1;
    }
    f->v[at] = *cand;
}

/* Is every plan with time >= t and memory >= m beaten by an entry that is
 * strictly faster (beyond the slack) with no more memory? */
static bool front_dominates(const front *f, double t, int64_t m) {
    int k = front_upto(f, m);
    return k > 0 && f->v[k - 1].cost.total * (1 + SLACK) < t;
}

typedef struct ctx {
    const rotor_expr *e;
    const rotor_chip *chip;
    const rotor_cost_model *m;
    rotor_constraints cons;
    int64_t cores;  /* N */
    int64_t cap;    /* memory cap per core */
    int last_tensor[ROTOR_MAX_AXES]; /* last tensor carrying each axis */
    int last_axis[ROTOR_MAX_TENSORS]; /* last axis of each tensor */
    _Atomic uint64_t incumbent;      /* bits of the best time so far (positive doubles order as integers) */
    /* The tensor floors of each F_op do not depend on the cap, so the
     * Pareto loop's repeated searches compute each once: floors[i] is the
     * sum for the i-th F_op of the walk in pass 1 (-1: not yet computed).
     * NULL when the walk is too long to keep (then they are recomputed). */
    int32_t *floors; /* clamped to INT32_MAX: still floors */
    int64_t nfloors;
    /* A session's (rotor_search_session) time floors under the cap:
     * lb[i] is cap_time_floor of the i-th F_op under cap lb_cap[i], still a
     * floor under any smaller cap (fewer plans fit).  NULL outside sessions. */
    float *lb;       /* rounded down: still floors */
    int32_t *lb_cap; /* clamped to INT32_MAX: still true */
    /* ... and each F_op's cheap values, so that later searches skip their
     * arithmetic: compute floor (rounded down; -1: not yet, -2: broken
     * constraint; kept from a session's first search on, nfops long), weak
     * memory floor (-1: not yet) and all-ones bytes (clamped down). */
    float *cf;
    int32_t *weak, *ones;
    int64_t nfops;  /* F_op vectors the walk of pass 1 visits (-1: not yet counted) */
    int64_t *counts; /* a session's fop_count table by axis and room, or NULL */
    bool cf_filled;  /* a walk has filled every cache: later searches scan them (pass1_scan) */
    archive *spare; /* plans earlier searches costed, for the next seed; may be NULL */
    bool frontier;  /* single-pass frontier search: prune by dominance, keep a front */
    double time_cap; /* plans slower than this are not wanted (INFINITY: all) */
    bool session;    /* a rotor_search_session's: keeps lb */
    struct knap_scratch **knaps; /* per search thread, kept across searches */
    int nknaps;
    /* the seed worker and one per search thread, kept across searches: a
     * worker's scratch is most of a megabyte, not worth clearing each time */
    struct worker *pool;
    int npool;
    int64_t full_cap; /* a session's cap without a memory_cap: no arrays until below it */
} ctx;

static double incumbent(ctx *c) {
    uint64_t bits = atomic_load_explicit(&c->incumbent, memory_order_relaxed);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void offer_incumbent(ctx *c, double t) {
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    uint64_t cur = atomic_load_explicit(&c->incumbent, memory_order_relaxed);
    while (bits < cur &&
           !atomic_compare_exchange_weak_explicit(&c->incumbent, &cur, bits, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* Candidate steps per axis: divisors of the P_X of tensors carrying the axis. */
typedef struct step_choices {
    int64_t v[ROTOR_MAX_AXES][MAX_STEP_CHOICES];
    int n[ROTOR_MAX_AXES];
} step_choices;

/* Per-thread state: the current partial plan, counters and best plan. */
typedef struct worker {
    ctx *c;
    rotor_plan plan;
    int64_t steps[ROTOR_MAX_AXES];
    int64_t len[ROTOR_MAX_AXES];  /* L_a */
    int64_t sub[ROTOR_MAX_AXES];  /* s_a */
    int64_t share[ROTOR_MAX_TENSORS];
    int64_t bytes[ROTOR_MAX_TENSORS];
    int64_t min_bytes[ROTOR_MAX_TENSORS]; /* bytes(X) with every f_t = S: a floor */
    int64_t divs[ROTOR_MAX_AXES][MAX_DIVISORS]; /* divisors of S_a */
    int ndivs[ROTOR_MAX_AXES];
    double compute;
    bool have_best;
    rotor_candidate best;
    rotor_search_stats st;
    step_choices sc;
    int64_t scratch[MAX_DIVISORS];
    archive *seen; /* the plans this worker costed (Pareto loop only), or NULL */
    archive *own;  /* the archive it owns for that (kept with the worker) */
    int64_t weak[ROTOR_MAX_TENSORS]; /* per-tensor memory floor of the F_op */
    int64_t smax[ROTOR_MAX_AXES];    /* largest S_a on offer */
    front front;                     /* the frontier search's plans */
    struct knap_scratch *knap;       /* cap_time_floor's lists (pass 2) */
    double comm_floor;               /* cap_time_floor of the F_op being searched */
    /* step_floor_upto(t, a) of the current steps prefix, by level a: a
     * tensor without axis a keeps the value of level a - 1 */
    int64_t sfl[ROTOR_MAX_AXES][ROTOR_MAX_TENSORS];
    int64_t sgcd[ROTOR_MAX_AXES][ROTOR_MAX_TENSORS]; /* ... and its ring gcd */
    /* per F_op (search_fop), for step_floor_upto's axes not yet chosen:
     * ceil(E_a / F_a), ceil(E_a / (F_a Smax_a)), and the product of the
     * Smax_b of X's axes b after a prefix (growing only while below P_X) */
    int64_t len_any[ROTOR_MAX_AXES], sub_any[ROTOR_MAX_AXES];
    int64_t rest[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES + 1];
} worker;

/* Would a plan with time >= t and memory >= m be pruned? */
static bool prune(worker *w, double t, int64_t m) {
    if (m > w->c->cap) return true;
    if (t > w->c->time_cap * (1 + SLACK)) return true;
    if (w->c->frontier) return front_dominates(&w->front, t, m);
    return t > incumbent(w->c) * (1 + SLACK);
}

static void offer(worker *w, const rotor_candidate *cand) {
    const rotor_expr *e = w->c->e;
    if (cand->cost.total > w->c->time_cap) return;
    if (w->c->frontier) {
        front_add(e, &w->front, cand);
        return;
    }
    if (!w->have_best || rotor_candidate_compare(e, cand, &w->best) < 0) {
        w->best = *cand;
        w->have_best = true;
    }
    offer_incumbent(w->c, cand->cost.total);
}

/* Cost the complete plan in w->plan (f_t and F_op set) under its best order. */
static void leaf(worker *w) {
    ctx *c = w->c;
    w->st.plans++;
    rotor_plan_best_order(c->e, w->steps, w->plan.ft, w->bytes, w->plan.order);
    rotor_candidate cand;
    cand.plan = w->plan;
    rotor_error err;
    if (rotor_cost_plan(c->m, c->e, c->chip, &cand.plan, &cand.info, &cand.cost, &err)) return;
    if (cand.info.memory > c->cap) return;
    if (c->cons.max_padding > 0 && cand.info.padding_ratio > c->cons.max_padding) return;
    if (w->seen) archive_add(w->seen, &cand);
    offer(w, &cand);
}

/* Depth-first over tensors t..nt-1, each choosing its f_t vector axis by axis.
 * time_lb and mem_lb cover tensors before t exactly (bounds) and the rest by
 * their floors. */
static void dfs_axis(worker *w, int t, int ai, int64_t q, double time_lb, int64_t mem_rest);

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
        leaf(w);
        return;
    }
    dfs_axis(w, t, 0, 1, time_lb, mem_rest);
}

static void dfs_axis(worker *w, int t, int ai, int64_t q, double time_lb, int64_t mem_rest) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    /* skip axes the tensor lacks */
    while (ai < e->naxes && !x->has_axis[ai]) ai++;
    if (ai == e->naxes) {
        /* the vector is complete: bytes, bounds, then the next tensor */
        int64_t bytes = c->chip->element_bytes;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dim = &x->dims[d];
            int64_t l[2];
            for (int k = 0; k < dim->nterms; k++) l[k] = w->len[dim->axis[k]] / w->plan.ft[t][dim->axis[k]];
            bytes *= rotor_dim_extent(dim, l);
        }
        w->bytes[t] = bytes;
        int64_t rings = w->share[t] / q;
        double tb = time_lb + c->m->tensor_bound(c->m, e, c->chip, t, bytes, q, rings);
        int64_t mr = mem_rest - w->min_bytes[t] + bytes;
        if (prune(w, tb, mr)) {
            w->st.nodes_pruned++;
            return;
        }
        dfs_tensor(w, t + 1, tb, mr);
        return;
    }
    int a = ai;
    int64_t s = w->steps[a];
    bool must_cover = false;
    if (c->last_tensor[a] == t && s > 1) {
        must_cover = true;
        for (int u = 0; u < t; u++)
            if (e->tensors[u].has_axis[a] && w->plan.ft[u][a] == s) must_cover = false;
    }
    for (int i = 0; i < w->ndivs[a]; i++) {
        int64_t f = w->divs[a][i];
        if (must_cover && f != s) continue;
        if (w->share[t] % (q * f) != 0) continue;
        /* chain: pairwise divisibility with earlier tensors on this axis */
        bool ok = true;
        for (int u = 0; u < t && ok; u++)
            if (e->tensors[u].has_axis[a]) {
                int64_t g = w->plan.ft[u][a];
                ok = f % g == 0 || g % f == 0;
            }
        if (!ok) continue;
        w->plan.ft[t][a] = f;
        dfs_axis(w, t, ai + 1, q * f, time_lb, mem_rest);
    }
    w->plan.ft[t][a] = 1;
}

/* The divisors of n (n <= 2^31), ascending. */
static void divisors(int64_t n, int64_t *out, int *count) {
    int k = 0, nb = 0;
    int64_t big[MAX_DIVISORS / 2 + 1];
    for (int64_t d = 1; d * d <= n; d++)
        if (n % d == 0) {
            out[k++] = d;
            if (d != n / d) big[nb++] = n / d;
        }
    for (int i = nb - 1; i >= 0; i--) out[k++] = big[i];
    *count = k;
}

static int64_t gcd64(int64_t a, int64_t b) {
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
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
/* The same floor when only S_0..S_upto are chosen: an axis b not yet
 * chosen has L_b >= ceil(E_b / F_b) and s_b >= ceil(E_b / (F_b Smax_b)), and
 * gcd(P_X, x y) <= gcd(P_X, x) y bounds the ring from above. */
/* g is gcd(P_X, prod S_a) over X's axes up to `upto` (the caller carries
 * it from level to level); the values of the axes not yet chosen were
 * computed once for the F_op (search_fop). */
static int64_t step_floor_upto(const worker *w, int t, int upto, int64_t g) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int64_t at_s = c->chip->element_bytes;
    double plain = 1, compound = 1;
    int64_t len[ROTOR_MAX_AXES], sub[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) {
        if (!x->has_axis[a]) continue;
        len[a] = a <= upto ? w->len[a] : w->len_any[a];
        sub[a] = a <= upto ? w->sub[a] : w->sub_any[a];
    }
    int64_t rest = w->rest[t][upto + 1];
    if (rest > 1) g = g * rest < w->share[t] ? g * rest : w->share[t];
    /* A compound extent c (L_a/f_a - 1) + L_b/f_b is at least either term's
     * L/f (every L/f >= 1, c >= 1), so a third floor counts each compound
     * dimension as its longer term: the factors of the axes so counted
     * multiply to a divisor of prod f_t^X, so to at most g. */
    double windows = 1;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        int64_t l[2];
        for (int k = 0; k < dim->nterms; k++) l[k] = sub[dim->axis[k]];
        int64_t ext = rotor_dim_extent(dim, l);
        at_s *= ext;
        if (dim->nterms == 1) {
            plain *= (double)len[dim->axis[0]];
        } else {
            compound *= (double)ext;
            int64_t l0 = len[dim->axis[0]], l1 = len[dim->axis[1]];
            windows *= (double)(l0 > l1 ? l0 : l1);
        }
    }
    double by_ring = ceil(plain / (double)g) * compound * (double)c->chip->element_bytes;
    double by_window = ceil(plain * windows / (double)g) * (double)c->chip->element_bytes;
    if (by_window > by_ring) by_ring = by_window;
    return by_ring > (double)at_s ? (by_ring > 9e15 ? (int64_t)9e15 : (int64_t)by_ring) : at_s;
}

/* gcd(P_X, prod S_a) over X's axes up to level a, from level a - 1's:
 * gcd(P, xy) = gcd(P, gcd(P, x) y), and every factor stays <= N so nothing
 * overflows. */
static int64_t step_ring_gcd(const worker *w, int t, int a) {
    int64_t prev = a > 0 ? w->sgcd[a - 1][t] : 1;
    return w->c->e->tensors[t].has_axis[a] ? gcd64(w->share[t], prev * w->steps[a]) : prev;
}

static int64_t step_floor(const worker *w, int t) {
    int last = w->c->e->naxes - 1;
    return step_floor_upto(w, t, last, step_ring_gcd(w, t, last));
}

/* With F_op and the steps S fixed: padding, compute, floors, then f_t. */
static void search_steps_leaf(worker *w) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    w->st.step_vectors++;
    double pad = 1.0;
    bool rot = false;
    for (int a = 0; a < e->naxes; a++) {
        int64_t unit = w->plan.fop[a] * w->steps[a];
        int64_t padded = (e->extent[a] + unit - 1) / unit * unit;
        w->len[a] = padded / w->plan.fop[a];
        w->sub[a] = w->len[a] / w->steps[a];
        pad *= (double)padded / (double)e->extent[a];
        rot |= w->steps[a] > 1;
    }
    if (c->cons.max_padding > 0 && pad > c->cons.max_padding * (1 + SLACK)) {
        w->st.steps_pruned++;
        return;
    }
    w->compute = c->m->step_bound(c->m, e, c->chip, w->plan.fop, w->steps, w->sub);
    int64_t mem = rot ? c->chip->shift_buffer_bytes : 0;
    for (int t = 0; t < e->ntensors; t++) {
        w->min_bytes[t] = e->naxes > 1 && !e->tensors[t].has_axis[e->naxes - 1] ? w->sfl[e->naxes - 2][t]
                                                                                 : step_floor(w, t);
        mem += w->min_bytes[t];
    }
    if (prune(w, w->compute + w->comm_floor, mem)) {
        w->st.steps_pruned++;
        return;
    }
    for (int a = 0; a < e->naxes; a++) divisors(w->steps[a], w->divs[a], &w->ndivs[a]);
    dfs_tensor(w, 0, w->compute, mem);
}


/* A prefix of the steps, the rest still 1: raising any S_b never lowers the
 * compute time nor the padding (docs/cost-model.md, "Bounds"), so the prefix's
 * compute with the remaining S_b = 1 bounds every completion. */
static bool steps_prefix_survives(worker *w, int64_t mem) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    int64_t sub[ROTOR_MAX_AXES];
    double pad = 1.0;
    for (int b = 0; b < e->naxes; b++) {
        int64_t unit = w->plan.fop[b] * w->steps[b];
        int64_t padded = (e->extent[b] + unit - 1) / unit * unit;
        sub[b] = padded / unit;
        pad *= (double)padded / (double)e->extent[b];
    }
    if (c->cons.max_padding > 0 && pad > c->cons.max_padding * (1 + SLACK)) return false;
    double tb = c->m->step_bound(c->m, e, c->chip, w->plan.fop, w->steps, sub);
    return !prune(w, tb + w->comm_floor, mem);
}

static int64_t tensor_weak_floor(const ctx *c, int t, const int64_t *fop);

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
    return mem;
}

static void search_steps(worker *w, const step_choices *sc, int a, bool rot) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    if (a == e->naxes) {
        search_steps_leaf(w);
        return;
    }
    for (int i = 0; i < sc->n[a]; i++) {
        int64_t sa = sc->v[a][i];
        w->steps[a] = sa;
        if (a + 1 < e->naxes) {
            int64_t unit = w->plan.fop[a] * sa;
            w->len[a] = (e->extent[a] + unit - 1) / unit * sa;
            w->sub[a] = w->len[a] / sa;
            int64_t mem = steps_prefix_mem(w, a, rot || sa > 1);
            if (mem > c->cap || (sa > 1 && !steps_prefix_survives(w, mem))) {
                w->st.steps_pruned++;
                continue;
            }
        }
        search_steps(w, sc, a + 1, rot || sa > 1);
    }
    w->steps[a] = 1;
}

static void search_fop(worker *w, const int64_t *fop) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    rotor_plan_init(e, &w->plan);
    memcpy(w->plan.fop, fop, sizeof w->plan.fop);
    for (int a = 0; a < e->naxes; a++) w->steps[a] = 1;
    for (int t = 0; t < e->ntensors; t++) {
        w->share[t] = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) w->share[t] *= fop[a];
    }
    step_choices *sc = &w->sc;
    for (int a = 0; a < e->naxes; a++) {
        int n = 0;
        for (int t = 0; t < e->ntensors; t++) {
            if (!e->tensors[t].has_axis[a]) continue;
            int64_t *d = w->scratch;
            int nd;
            divisors(w->share[t], d, &nd);
            for (int i = 0; i < nd; i++) {
                bool dup = false;
                for (int j = 0; j < n && !dup; j++) dup = sc->v[a][j] == d[i];
                if (!dup) sc->v[a][n++] = d[i];
            }
        }
        /* ascending, so cheap steps come first */
        for (int i = 1; i < n; i++) {
            int64_t v = sc->v[a][i];
            int j = i;
            while (j > 0 && sc->v[a][j - 1] > v) {
                sc->v[a][j] = sc->v[a][j - 1];
                j--;
            }
            sc->v[a][j] = v;
        }
        sc->n[a] = n;
        w->smax[a] = sc->v[a][n - 1];
    }
    for (int t = 0; t < e->ntensors; t++) w->weak[t] = tensor_weak_floor(c, t, fop);
    for (int a = 0; a < e->naxes; a++) {
        int64_t f = fop[a], smax = w->smax[a];
        w->len_any[a] = (e->extent[a] + f - 1) / f;
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
    search_steps(w, sc, 0, false);
}

/* ---- first pass over F_op ------------------------------------------------ */

typedef struct fop_list {
    fop_entry *v;
    int64_t n, cap;
    bool oom;
} fop_list;

/* A floor on memory for any plan with this F_op: each tensor's plain
 * dimensions hold at least prod ceil(E_a / F_a) / P_X elements (its f_t
 * multiply to at most P_X), its compound dimensions at least one. */
static int64_t tensor_weak_floor(const ctx *c, int t, const int64_t *fop) {
    const rotor_expr *e = c->e;
    int64_t mem = 0;
    {
        const rotor_tensor *x = &e->tensors[t];
        int64_t share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!x->has_axis[a]) share *= fop[a];
        double elems = 1;
        for (int d = 0; d < x->ndims; d++)
            if (x->dims[d].nterms == 1) {
                int a = x->dims[d].axis[0];
                elems *= (double)((e->extent[a] + fop[a] - 1) / fop[a]);
            }
        double q = ceil(elems / (double)share);
        if (q > 1e15) q = 1e15;
        mem += (int64_t)q * c->chip->element_bytes;
    }
    return mem;
}

static int64_t fop_mem_bound(const ctx *c, const int64_t *fop) {
    int64_t mem = 0;
    for (int t = 0; t < c->e->ntensors; t++) mem += tensor_weak_floor(c, t, fop);
    return mem;
}

/* The least bytes(X) of any plan with this F_op, over every f_t^X vector
 * whose product divides P_X (alignment with the other tensors ignored, so
 * this is a floor, not the minimum).  With f = f_t^X[a] dividing S_a, the
 * partition extent L_a / f = ceil(E_a / (F_a S_a)) S_a / f is an integer at
 * least E_a / (F_a f), so at least ceil(E_a / (F_a f)) whatever the steps;
 * compound extents grow with their terms.  The vectors are a walk of the
 * divisor lattice of P_X (at most a few thousand points for P_X <= N). */
typedef struct floor_walk {
    const ctx *c;
    const rotor_tensor *x;
    const int64_t *fop;
    int axes[ROTOR_MAX_AXES];
    int naxes;
    int64_t f[ROTOR_MAX_AXES];
    const int64_t *div; /* divisors of P_X, ascending */
    int ndiv;
    double best;
} floor_walk;

/* Elements of X with f_t[axes[j]] = fw->f for j < i and = room for the
 * axes not yet chosen: a lower bound for every completion of the prefix,
 * since partitions only shrink as f grows (exact when i == naxes). */
static double floor_walk_elems(const floor_walk *fw, int i, int64_t room) {
    const rotor_expr *e = fw->c->e;
    int64_t l[ROTOR_MAX_AXES];
    for (int j = 0; j < fw->naxes; j++) {
        int a = fw->axes[j];
        int64_t unit = fw->fop[a] * (j < i ? fw->f[a] : room);
        l[a] = (e->extent[a] + unit - 1) / unit;
    }
    double elems = 1;
    for (int d = 0; d < fw->x->ndims; d++) {
        const rotor_dim *dim = &fw->x->dims[d];
        int64_t ld[2];
        for (int k = 0; k < dim->nterms; k++) ld[k] = l[dim->axis[k]];
        elems *= (double)rotor_dim_extent(dim, ld);
    }
    return elems;
}

/* Branch and bound over the divisor lattice, largest factors first so that
 * a small best is found early and the prefix bound cuts the rest. */
static void floor_walk_visit(floor_walk *fw, int i, int64_t room) {
    double bound = floor_walk_elems(fw, i, room);
    if (bound >= fw->best) return;
    if (i == fw->naxes) {
        fw->best = bound;
        return;
    }
    int a = fw->axes[i];
    /* f may exceed E_a / F_a (the axis is then padded up to F_a * f), and
     * such an f can be the only divisor of P_X that fits: no cut-off here.
     * Every divisor of room divides P_X, so only P_X's divisors are tried. */
    for (int k = fw->ndiv - 1; k >= 0; k--) {
        int64_t f = fw->div[k];
        if (f > room || room % f) continue;
        fw->f[a] = f;
        floor_walk_visit(fw, i + 1, room / f);
    }
    fw->f[a] = 1;
}

static int64_t fop_tensor_floor(const ctx *c, int t, const int64_t *fop, int64_t share) {
    const rotor_expr *e = c->e;
    floor_walk fw = {.c = c, .x = &e->tensors[t], .fop = fop, .best = INFINITY};
    for (int a = 0; a < e->naxes; a++) {
        fw.f[a] = 1;
        if (fw.x->has_axis[a]) fw.axes[fw.naxes++] = a;
    }
    int64_t div[MAX_DIVISORS];
    divisors(share, div, &fw.ndiv);
    fw.div = div;
    floor_walk_visit(&fw, 0, share);
    double b = fw.best * (double)c->chip->element_bytes;
    return b > 9e15 ? (int64_t)9e15 : (int64_t)b;
}

/* Memory per core of the F_op's all-ones plan (every f_t = 1, nothing
 * rotates, no shift buffer): every tensor's whole partition. */
static double all_ones_bytes_of(const ctx *c, const int64_t *fop, int t) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    double elems = 1;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        int64_t l[2];
        for (int k = 0; k < dim->nterms; k++) {
            int a = dim->axis[k];
            l[k] = (e->extent[a] + fop[a] - 1) / fop[a];
        }
        elems *= (double)rotor_dim_extent(dim, l);
    }
    return elems * (double)c->chip->element_bytes;
}

static double all_ones_bytes(const ctx *c, const int64_t *fop) {
    double bytes = 0;
    for (int t = 0; t < c->e->ntensors; t++) bytes += all_ones_bytes_of(c, fop, t);
    return bytes;
}

/* The weak memory floor (fop_mem_bound) and the all-ones bytes
 * (all_ones_bytes) of an F_op in one pass over its tensors: the walk of
 * pass 1 computes both for most F_op vectors. */
static void fop_cheap_mem(const ctx *c, const int64_t *fop, int64_t *mb, double *ones) {
    const rotor_expr *e = c->e;
    int64_t l1[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) l1[a] = (e->extent[a] + fop[a] - 1) / fop[a];
    int64_t weak = 0;
    double all = 0;
    for (int t = 0; t < e->ntensors; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!x->has_axis[a]) share *= fop[a];
        double plain = 1, elems = 1;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dim = &x->dims[d];
            if (dim->nterms == 1) {
                double l = (double)l1[dim->axis[0]];
                plain *= l;
                elems *= (double)rotor_dim_extent(dim, &l1[dim->axis[0]]);
            } else {
                int64_t l[2] = {l1[dim->axis[0]], l1[dim->axis[1]]};
                elems *= (double)rotor_dim_extent(dim, l);
            }
        }
        double q = ceil(plain / (double)share);
        if (q > 1e15) q = 1e15;
        weak += (int64_t)q * c->chip->element_bytes;
        all += elems * (double)c->chip->element_bytes;
    }
    *mb = weak;
    *ones = all;
}

/* ---- the time floor of an F_op under the memory cap ---------------------- */

/* Under a tight cap the compute floor of an F_op says little: the plans that
 * fit must rotate their tensors, and rotating costs communication.  This
 * floor couples the two (T10 §4.3.1 searches the same space; the bound is
 * rotor's).  For every tensor X and every ring size Q dividing P_X, let
 * b_X(Q) be the least bytes(X) over f_t^X vectors with product Q, each
 * plain partition extent floored at ceil(E_a / (F_a f)) and compound ones
 * grown from those (the floor of fop_tensor_floor, per Q).  Every plan with
 * this F_op and memory M <= cap picks some Q_X per tensor, and then
 *   bytes(X) >= b_X(Q_X),  so  sum_X b_X(Q_X) + B_buf [some Q_X > 1] <= cap,
 *   time >= op_bound(F_op) + sum_X tensor_bound(X, bytes(X), Q_X, P_X / Q_X)
 *        >= op_bound(F_op) + sum_X tensor_bound(X, b_X(Q_X), Q_X, P_X / Q_X)
 * (the model's bound inequality, step_bound >= op_bound, and tensor_bound
 * not decreasing in bytes, which docs/cost-model.md asks of every model).
 * So the least right-hand side over the choices of Q_X that fit the cap
 * (a small multiple-choice knapsack) bounds every plan of the F_op.  The
 * plan without rotation (every f_t = 1) is the one choice that needs no
 * shift buffer. */

typedef struct knap_opt {
    int64_t bytes;
    double time;
} knap_opt;

/* The divisor lattice of a ring size P: its divisors ascending and every
 * triple (j, i, k) with div[i] * div[k] = div[j], by j then i.  The dynamic
 * program of tensor_options walks these pairs once per dimension; finding
 * them costs a division per pair of divisors, so each worker keeps the
 * lattices of the last P it met in a small direct-mapped cache (they depend
 * on P alone).  P with more divisors or pairs than fit take the loops. */
#define LAT_DIV 256
#define LAT_PAIRS 1024
#define LAT_SLOTS 64
typedef struct lattice {
    int64_t share; /* 0: empty */
    int nd, npairs;
    int64_t div[LAT_DIV];
    uint16_t pj[LAT_PAIRS], pi[LAT_PAIRS], pk[LAT_PAIRS];
} lattice;

#define KNAP_MAX 8192
typedef struct knap_scratch {
    lattice lat[LAT_SLOTS];
    knap_opt opt[ROTOR_MAX_TENSORS][MAX_DIVISORS]; /* per tensor, by bytes, time falling */
    int nopt[ROTOR_MAX_TENSORS];
    knap_opt cur[KNAP_MAX], next[KNAP_MAX];
    int64_t div[MAX_DIVISORS];
    double g[MAX_DIVISORS], ng[MAX_DIVISORS], ext[MAX_DIVISORS];
} knap_scratch;

static int knap_opt_cmp(const void *x, const void *y) {
    const knap_opt *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    return 0;
}

/* Sorts v and keeps its Pareto front: bytes ascending, time strictly falling. */
static int knap_front(knap_opt *v, int n) {
    if (n > 48) {
        qsort(v, (size_t)n, sizeof *v, knap_opt_cmp);
    } else {
        /* most lists are a tensor's few ring sizes: insertion sort, which
         * orders them as qsort does (equal entries are equal values) */
        for (int i = 1; i < n; i++) {
            knap_opt x = v[i];
            int j = i;
            while (j > 0 && knap_opt_cmp(&v[j - 1], &x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || v[i].time < v[k - 1].time) v[k++] = v[i];
    return k;
}

/* Index of d among the ascending divisors div[0..n-1] (d is one of them). */
static int div_index(const int64_t *div, int n, int64_t d) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (div[mid] < d) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The lattice of `share` from ks's cache, built on a miss; NULL when it
 * does not fit a slot. */
static const lattice *lattice_of(knap_scratch *ks, int64_t share) {
    lattice *l = &ks->lat[share % LAT_SLOTS];
    if (l->share == share) return l;
    int nd;
    divisors(share, ks->div, &nd);
    if (nd > LAT_DIV) return NULL;
    int np = 0;
    for (int j = 0; j < nd; j++)
        for (int i = 0; i <= j; i++) {
            if (ks->div[j] % ks->div[i]) continue;
            if (np == LAT_PAIRS) {
                l->share = 0;
                return NULL;
            }
            l->pj[np] = (uint16_t)j;
            l->pi[np] = (uint16_t)i;
            l->pk[np] = (uint16_t)div_index(ks->div, nd, ks->div[j] / ks->div[i]);
            np++;
        }
    memcpy(l->div, ks->div, (size_t)nd * sizeof *l->div);
    l->nd = nd;
    l->npairs = np;
    l->share = share;
    return l;
}

/* Tensor t's options (b_X(Q), tensor_bound) over the ring sizes Q | P_X
 * with b_X(Q) <= cap, as a Pareto front into ks->opt[t].  b_X(Q) is a
 * product over the dimensions of their extents, each depending on the
 * factors of its own axes only, so it is a min-product over the ways to
 * split Q among the dimensions: a dynamic program over the divisors of P_X
 * (g[Q] = least elements of the dimensions so far with product Q).  A
 * tensor naming an axis in two dimensions gets one option, its
 * fop_tensor_floor with time 0 (still a floor, just weaker). */
static int64_t tensor_options(const ctx *c, knap_scratch *ks, int t, const int64_t *fop, int64_t share) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int uses[ROTOR_MAX_AXES] = {0};
    bool simple = true;
    for (int d = 0; d < x->ndims; d++)
        for (int k = 0; k < x->dims[d].nterms; k++)
            if (++uses[x->dims[d].axis[k]] > 1) simple = false;
    if (!simple) {
        int64_t floor = fop_tensor_floor(c, t, fop, share);
        ks->opt[t][0].bytes = floor;
        ks->opt[t][0].time = 0;
        ks->nopt[t] = floor <= c->cap;
        return floor;
    }
    int nd;
    const lattice *lat = lattice_of(ks, share);
    if (lat) {
        nd = lat->nd;
        memcpy(ks->div, lat->div, (size_t)nd * sizeof *ks->div);
    } else {
        divisors(share, ks->div, &nd);
    }
    const int64_t *div = ks->div;
    for (int j = 0; j < nd; j++) ks->g[j] = j == 0 ? 1.0 : INFINITY;
    for (int d = 0; lat && d < x->ndims; d++) {
        /* the same dynamic program as below over the lattice's pairs: the
         * same minima over the same products */
        const rotor_dim *dim = &x->dims[d];
        if (dim->nterms == 1) {
            int a = dim->axis[0];
            for (int i = 0; i < nd; i++) {
                int64_t q = div[i];
                int64_t l = (e->extent[a] + fop[a] * q - 1) / (fop[a] * q);
                ks->ext[i] = (double)rotor_dim_extent(dim, &l);
            }
        } else {
            int a0 = dim->axis[0], a1 = dim->axis[1];
            for (int i = 0; i < nd; i++) ks->ext[i] = INFINITY;
            for (int p = 0; p < lat->npairs; p++) {
                int64_t u = div[lat->pi[p]], v = div[lat->pk[p]];
                int64_t l[2] = {(e->extent[a0] + fop[a0] * u - 1) / (fop[a0] * u),
                                (e->extent[a1] + fop[a1] * v - 1) / (fop[a1] * v)};
                double x1 = (double)rotor_dim_extent(dim, l);
                if (x1 < ks->ext[lat->pj[p]]) ks->ext[lat->pj[p]] = x1;
            }
        }
        for (int j = 0; j < nd; j++) ks->ng[j] = INFINITY;
        for (int p = 0; p < lat->npairs; p++) {
            double v = ks->g[lat->pk[p]] * ks->ext[lat->pi[p]];
            if (v < ks->ng[lat->pj[p]]) ks->ng[lat->pj[p]] = v;
        }
        memcpy(ks->g, ks->ng, (size_t)nd * sizeof *ks->g);
    }
    for (int d = 0; !lat && d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        /* ext[i]: least extent of this dimension when its factors multiply to div[i] */
        for (int i = 0; i < nd; i++) {
            int64_t q = div[i];
            if (dim->nterms == 1) {
                int a = dim->axis[0];
                int64_t l = (e->extent[a] + fop[a] * q - 1) / (fop[a] * q);
                ks->ext[i] = (double)rotor_dim_extent(dim, &l);
                continue;
            }
            double best = INFINITY;
            int a0 = dim->axis[0], a1 = dim->axis[1];
            for (int u = 0; u <= i; u++) {
                if (q % div[u]) continue;
                int64_t l[2] = {(e->extent[a0] + fop[a0] * div[u] - 1) / (fop[a0] * div[u]),
                                (e->extent[a1] + fop[a1] * (q / div[u]) - 1) / (fop[a1] * (q / div[u]))};
                double v = (double)rotor_dim_extent(dim, l);
                if (v < best) best = v;
            }
            ks->ext[i] = best;
        }
        for (int j = 0; j < nd; j++) {
            double best = INFINITY;
            for (int i = 0; i <= j; i++) {
                if (div[j] % div[i]) continue;
                double v = ks->g[div_index(div, nd, div[j] / div[i])] * ks->ext[i];
                if (v < best) best = v;
            }
            ks->ng[j] = best;
        }
        memcpy(ks->g, ks->ng, (size_t)nd * sizeof *ks->g);
    }
    int n = 0;
    double least = INFINITY;
    for (int j = 0; j < nd; j++) {
        double b = ks->g[j] * (double)c->chip->element_bytes;
        if (b < least) least = b;
        if (!(b <= (double)c->cap)) continue;
        int64_t bytes = (int64_t)b;
        ks->opt[t][n].bytes = bytes;
        ks->opt[t][n].time = c->m->tensor_bound(c->m, e, c->chip, t, bytes, div[j], share / div[j]);
        n++;
    }
    ks->nopt[t] = knap_front(ks->opt[t], n);
    return least > 9e15 ? (int64_t)9e15 : (int64_t)least;
}

/* The least sum over tensors of an option's time, the options' bytes
 * summing to at most budget (INFINITY: no choice fits).  Tensor by tensor,
 * the partial sums are kept as a Pareto front; the last tensor takes its
 * fastest option that fits.  A front outgrowing the scratch gives up with
 * 0 (no bound, still valid). */
static double knap_least_time(knap_scratch *ks, int nt, int64_t budget) {
    int64_t rest[ROTOR_MAX_TENSORS + 1]; /* least bytes of tensors t.. */
    rest[nt] = 0;
    for (int t = nt - 1; t >= 0; t--) {
        if (ks->nopt[t] == 0) return INFINITY;
        rest[t] = rest[t + 1] + ks->opt[t][0].bytes;
    }
    if (rest[0] > budget) return INFINITY;
    int ncur = 1;
    ks->cur[0].bytes = 0;
    ks->cur[0].time = 0;
    for (int t = 0; t + 1 < nt; t++) {
        int n = 0;
        for (int i = 0; i < ncur; i++)
            for (int j = 0; j < ks->nopt[t]; j++) {
                int64_t b = ks->cur[i].bytes + ks->opt[t][j].bytes;
                if (b + rest[t + 1] > budget) break; /* options by bytes ascending */
                if (n == KNAP_MAX) return 0;
                ks->next[n].bytes = b;
                ks->next[n].time = ks->cur[i].time + ks->opt[t][j].time;
                n++;
            }
        ncur = knap_front(ks->next, n);
        memcpy(ks->cur, ks->next, (size_t)ncur * sizeof *ks->cur);
    }
    const knap_opt *last = ks->opt[nt - 1];
    int nlast = ks->nopt[nt - 1];
    double best = INFINITY;
    for (int i = 0; i < ncur; i++) {
        int64_t room = budget - ks->cur[i].bytes;
        /* the last option with bytes <= room is the fastest that fits */
        int lo = 0, hi = nlast;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (last[mid].bytes <= room) lo = mid + 1;
            else hi = mid;
        }
        if (lo > 0 && ks->cur[i].time + last[lo - 1].time < best) best = ks->cur[i].time + last[lo - 1].time;
    }
    return best;
}

/* The strong memory floor of an F_op: the least bytes of every tensor (the
 * floors of fop_tensor_floor, computed by tensor_options, which also leaves
 * each tensor's options in ks: *ready says so), plus the shift buffer when
 * the one plan that does not rotate (every f_t = 1, so every S_a = 1) does
 * not fit: then every plan of this F_op rotates. */
static int64_t fop_strong_floor(const ctx *c, knap_scratch *ks, const int64_t *fop, int64_t index,
                                bool *ready) {
    const rotor_expr *e = c->e;
    int32_t *cached = c->floors && index >= 0 && index < c->nfloors ? &c->floors[index] : NULL;
    int64_t mem = 0;
    *ready = false;
    if (cached && *cached >= 0) {
        mem = *cached;
    } else {
        for (int t = 0; t < e->ntensors; t++) {
            int64_t share = 1;
            for (int a = 0; a < e->naxes; a++)
                if (!e->tensors[t].has_axis[a]) share *= fop[a];
            mem += tensor_options(c, ks, t, fop, share);
        }
        *ready = true;
        if (cached) *cached = mem < INT32_MAX ? (int32_t)mem : INT32_MAX;
    }
    if (all_ones_bytes(c, fop) > (double)c->cap) mem += c->chip->shift_buffer_bytes;
    return mem;
}

/* A floor on the tensors' share of the time (beyond step_bound) of every
 * plan with this F_op that fits c->cap (see above): added to the compute
 * floor of any steps, it bounds the plans with those steps, so the step
 * search uses it too.  INFINITY: no plan fits. */
static double cap_time_floor(const ctx *c, knap_scratch *ks, const int64_t *fop, bool ready) {
    const rotor_expr *e = c->e;
    int64_t share[ROTOR_MAX_TENSORS];
    for (int t = 0; t < e->ntensors; t++) {
        share[t] = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share[t] *= fop[a];
        if (!ready) tensor_options(c, ks, t, fop, share[t]);
    }
    double best = INFINITY;
    /* no rotation: the all-ones plan, every Q_X = 1, no shift buffer */
    double ones = all_ones_bytes(c, fop);
    if (ones <= (double)c->cap) {
        double t1 = 0;
        for (int t = 0; t < e->ntensors; t++) {
            int64_t b = (int64_t)(all_ones_bytes_of(c, fop, t));
            t1 += c->m->tensor_bound(c->m, e, c->chip, t, b, 1, share[t]);
        }
        best = t1;
    }
    /* rotation: the shift buffer, any Q_X (Q_X = 1 included: a relaxation) */
    int64_t budget = c->cap - c->chip->shift_buffer_bytes;
    if (budget >= 0) {
        double r = knap_least_time(ks, e->ntensors, budget);
        if (r < best) best = r;
    }
    return best;
}

#define PROBE_MAX 4
/* sessions on chips up to this many cores keep a table of subtree sizes */
#define COUNTS_MAX_CORES 16384
typedef struct pass1 {
    ctx *c;
    worker *w;       /* seeds the incumbent with all-ones plans */
    fop_list *keep;
    int64_t index;   /* F_op vectors visited so far (the floors cache key) */
    int64_t fop[ROTOR_MAX_AXES];
    /* F_op searched in full before the walk (probe_archive): not kept */
    int64_t probed[PROBE_MAX][ROTOR_MAX_AXES];
    int nprobed;
} pass1;


/* The all-ones plan of an F_op that fits the cap (every f_t = 1: valid
 * whenever it fits), costed when it might beat the incumbent: its time is at
 * least tb (a floor of every plan of the F_op) plus each tensor's
 * tensor_bound at ring 1 with its exact bytes (the model's bound
 * inequality).  Seeding as the walk goes, instead of costing every all-ones
 * plan before it, costs only the few that improve on the incumbent (for v1
 * the floor is the plan's time), and the walk prunes with each. */
static void seed_all_ones(worker *w, const int64_t *fop, double tb) {
    ctx *c = w->c;
    const rotor_expr *e = c->e;
    if (prune(w, tb, 0)) return;
    double t1 = tb;
    int64_t mem = 0;
    for (int t = 0; t < e->ntensors; t++) {
        int64_t share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share *= fop[a];
        int64_t b = (int64_t)all_ones_bytes_of(c, fop, t);
        mem += b;
        t1 += c->m->tensor_bound(c->m, e, c->chip, t, b, 1, share);
    }
    if (prune(w, t1, mem)) return;
    rotor_plan_init(e, &w->plan);
    memcpy(w->plan.fop, fop, sizeof w->plan.fop);
    for (int a = 0; a < e->naxes; a++) w->steps[a] = 1;
    memset(w->bytes, 0, sizeof w->bytes);
    leaf(w);
}

static void pass1_consider(pass1 *p, int64_t index, double tb);

static void pass1_visit(pass1 *p) {
    ctx *c = p->c;
    const rotor_expr *e = c->e;
    int64_t index = p->index++;
    bool cache = c->cf && index < c->nfops;
    double tb;
    if (cache && c->cf[index] == -2) return;
    if (cache && c->cf[index] >= 0) {
        tb = c->cf[index];
    } else {
        if (c->cons.min_cores > 0 || c->cons.max_padding > 0) {
            int64_t cores = 1;
            double pad = 1.0;
            for (int a = 0; a < e->naxes; a++) {
                cores *= p->fop[a];
                int64_t padded = (e->extent[a] + p->fop[a] - 1) / p->fop[a] * p->fop[a];
                pad *= (double)padded / (double)e->extent[a];
            }
            /* S_a > 1 only pads more, so the all-ones padding bounds the F_op's */
            if (cores < c->cons.min_cores ||
                (c->cons.max_padding > 0 && pad > c->cons.max_padding * (1 + SLACK))) {
                if (cache) c->cf[index] = -2;
                return;
            }
        }
        /* Only the cheap bounds here, and those cached by earlier searches
         * of a session; the floors that cost a divisor walk
         * (fop_full_bounds) wait for pass 2, where the incumbent has
         * tightened and most F_op never need them. */
        tb = c->m->step_bound(c->m, e, c->chip, p->fop, NULL, NULL);
        if (cache) {
            float f = (float)tb;
            if ((double)f > tb) f = nextafterf(f, -INFINITY);
            c->cf[index] = f;
        }
    }
    pass1_consider(p, index, tb);
}

/* The F_op in p->fop, the index-th of the walk, with compute floor tb: its
 * memory floors, the all-ones seed, and the keep list. */
static void pass1_consider(pass1 *p, int64_t index, double tb) {
    ctx *c = p->c;
    worker *w = p->w;
    bool cache = c->weak && index < c->nfloors;
    w->st.fops++;
    double compute = tb;
    /* the compute floor alone prunes most F_op once the incumbent is good:
     * their memory floors are not worth computing */
    if (prune(w, tb, 0)) return;
    int64_t mb;
    double ones;
    if (cache && c->weak[index] >= 0) {
        mb = c->weak[index];
        ones = (double)c->ones[index];
    } else {
        fop_cheap_mem(c, p->fop, &mb, &ones);
        if (cache) {
            c->weak[index] = mb < INT32_MAX ? (int32_t)mb : INT32_MAX;
            c->ones[index] = ones < (double)INT32_MAX ? (int32_t)ones : INT32_MAX;
        }
    }
    if (prune(w, tb, mb)) return;
    if (c->floors && index < c->nfloors && c->floors[index] >= 0) {
        int64_t strong = c->floors[index];
        if (ones > (double)c->cap) strong += c->chip->shift_buffer_bytes;
        if (strong > mb) mb = strong;
    }
    if (c->lb && index < c->nfloors && c->lb_cap[index] >= c->cap && c->lb[index] > tb) tb = c->lb[index];
    if (tb == INFINITY || prune(w, tb, mb)) return;
    if (ones <= (double)c->cap) seed_all_ones(w, p->fop, tb);
    for (int i = 0; i < p->nprobed; i++)
        if (memcmp(p->probed[i], p->fop, sizeof p->fop) == 0) return;
    fop_list *l = p->keep;
    if (l->n == l->cap) {
        int64_t ncap = l->cap ? 2 * l->cap : 1024;
        fop_entry *nv = realloc(l->v, (size_t)ncap * sizeof *nv);
        if (!nv) {
            l->oom = true;
            return;
        }
        l->v = nv;
        l->cap = ncap;
    }
    fop_entry *f = &l->v[l->n++];
    memcpy(f->fop, p->fop, sizeof f->fop);
    f->bound = tb;
    f->compute = compute;
    f->mem_bound = mb;
    f->index = index;
}

/* The F_op's strong memory floor and its time floor under the cap (pass 2,
 * worker w): false when they prune it.  A session caches both. */
static bool fop_full_bounds(worker *w, fop_entry *f) {
    ctx *c = w->c;
    bool ready;
    int64_t mb = f->mem_bound;
    int64_t strong = fop_strong_floor(c, w->knap, f->fop, f->index, &ready);
    if (strong > mb) mb = strong;
    if (prune(w, f->bound, mb)) return false;
    w->comm_floor = cap_time_floor(c, w->knap, f->fop, ready);
    double tb = f->compute + w->comm_floor;
    if (c->lb && f->index >= 0 && f->index < c->nfloors) {
        float r = (float)tb;
        if ((double)r > tb) r = nextafterf(r, -INFINITY);
        c->lb[f->index] = r;
        c->lb_cap[f->index] = c->cap < INT32_MAX ? (int32_t)c->cap : INT32_MAX;
    }
    return tb != INFINITY && !prune(w, tb, mb);
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
static void probe_archive(ctx *c, worker *ws, int nthreads, pass1 *p) {
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
        f->mem_bound = fop_mem_bound(c, f->fop);
        f->index = -1; /* not looked up in the caches */
        memcpy(p->probed[p->nprobed++], fop, sizeof p->probed[0]);
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int i = 0; i < p->nprobed; i++) {
        worker *w = &ws[omp_get_thread_num()];
        if (prune(w, fe[i].bound, fe[i].mem_bound) || !fop_full_bounds(w, &fe[i])) continue;
        search_fop(w, fe[i].fop);
    }
}

static void pass1_walk(pass1 *p, int a, int64_t room) {
    const rotor_expr *e = p->c->e;
    if (a == e->naxes) {
        pass1_visit(p);
        return;
    }
    int64_t hi = e->extent[a] < room ? e->extent[a] : room;
    for (int64_t f = 1; f <= hi; f++) {
        p->fop[a] = f;
        pass1_walk(p, a + 1, room / f);
    }
    p->fop[a] = 1;
}

/* The number of F_op vectors pass1_walk visits from axis a with `room`
 * cores left (the length of the floors cache).  With c->counts (a table by
 * axis and room, -1: not yet known) each count is computed once. */
static int64_t fop_count(ctx *c, int a, int64_t room) {
    const rotor_expr *e = c->e;
    if (a == e->naxes) return 1;
    int64_t *memo = c->counts ? &c->counts[a * (c->cores + 1) + room] : NULL;
    if (memo && *memo >= 0) return *memo;
    int64_t hi = e->extent[a] < room ? e->extent[a] : room, n = 0;
    if (a + 1 == e->naxes) n = hi;
    else
        for (int64_t f = 1; f <= hi; f++) n += fop_count(c, a + 1, room / f);
    if (memo) *memo = n;
    return n;
}

/* The index-th F_op vector of the walk into fop (c->counts is set): at
 * each axis, skip the subtrees of the smaller factors. */
static void fop_decode(const ctx *c, int64_t index, int64_t *fop) {
    const rotor_expr *e = c->e;
    int64_t room = c->cores;
    for (int a = 0; a < e->naxes; a++) {
        int64_t hi = e->extent[a] < room ? e->extent[a] : room;
        int64_t f = 1;
        if (a + 1 == e->naxes) {
            f = index + 1; /* each subtree of the last axis is one vector */
        } else {
            /* counting the whole lattice filled every entry read here */
            const int64_t *next = &c->counts[(a + 1) * (c->cores + 1)];
            for (; f < hi; f++) {
                int64_t n = next[room / f];
                if (index < n) break;
                index -= n;
            }
        }
        fop[a] = f;
        room /= f;
    }
}

/* Pass 1 over a session's filled caches: every F_op's compute floor is in
 * c->cf, so a linear scan finds the few the incumbent does not prune and
 * decodes only those, instead of walking the lattice. */
static void pass1_scan(pass1 *p) {
    ctx *c = p->c;
    worker *w = p->w;
    /* prune(w, t, 0) holds for every t above thr (sessions search for the
     * fastest plan, not a front): most F_op stop at one comparison.  Only
     * this thread moves the incumbent meanwhile, in pass1_consider. */
    double thr = fmin(c->time_cap * (1 + SLACK), incumbent(c) * (1 + SLACK));
    int64_t skipped = 0;
    for (int64_t i = 0; i < c->nfloors; i++) {
        float v = c->cf[i];
        if (v < 0) continue; /* breaks a constraint */
        if (v > thr) {
            skipped++;
            continue;
        }
        double tb = v;
        int64_t mb = 0;
        if (c->weak[i] >= 0) {
            /* the cached floors, as pass1_consider reads them, before
             * paying for the decoding */
            mb = c->weak[i];
            if (c->floors[i] >= 0) {
                int64_t strong = c->floors[i];
                if (c->ones[i] > c->cap) strong += c->chip->shift_buffer_bytes;
                if (strong > mb) mb = strong;
            }
            if (c->lb_cap[i] >= c->cap && c->lb[i] > tb) tb = c->lb[i];
        }
        if (tb == INFINITY || prune(w, tb, mb)) {
            w->st.fops++;
            continue;
        }
        fop_decode(c, i, p->fop);
        pass1_consider(p, i, v);
        thr = fmin(c->time_cap * (1 + SLACK), incumbent(c) * (1 + SLACK));
    }
    w->st.fops += skipped;
    p->index = c->nfloors;
}

typedef struct fop_key {
    double bound;
    int64_t pos; /* in the keep list */
} fop_key;

static int fop_key_cmp(const void *x, const void *y) {
    const fop_key *a = x, *b = y;
    if (a->bound != b->bound) return a->bound < b->bound ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static void merge_stats(rotor_search_stats *to, const rotor_search_stats *from) {
    to->fops += from->fops;
    to->fops_searched += from->fops_searched;
    to->step_vectors += from->step_vectors;
    to->steps_pruned += from->steps_pruned;
    to->plans += from->plans;
    to->nodes_pruned += from->nodes_pruned;
}

/* One exact branch and bound for the fastest plan under c->cap.  Returns
 * false when out of memory; *have says whether any plan fits. */
/* c->pool with room for the seed and nthreads workers (false: out of
 * memory).  Each search resets what it reads before writing; the rest is
 * scratch that search_fop and the step search fill before use. */
static bool worker_pool(ctx *c, int nthreads) {
    if (c->npool >= nthreads + 1) return true;
    for (int i = 0; i < c->npool; i++) free(c->pool[i].own);
    free(c->pool);
    c->npool = 0;
    c->pool = calloc((size_t)nthreads + 1, sizeof *c->pool);
    if (!c->pool) return false;
    c->npool = nthreads + 1;
    for (int i = 0; i < c->npool; i++) c->pool[i].c = c;
    return true;
}

static bool search_once(ctx *c, int nthreads, rotor_candidate *best, bool *have,
                        rotor_search_stats *st, front *out_front) {
    const rotor_expr *e = c->e;
    double inf = INFINITY;
    uint64_t infbits;
    memcpy(&infbits, &inf, sizeof infbits);
    atomic_store(&c->incumbent, infbits);

    /* Pass 1: the walk over F_op keeps those whose bounds survive the
     * incumbent, best bound first, and seeds the incumbent with all-ones
     * plans as it goes (seed_all_ones).  Before it, an archived plan that
     * fits and the F_op of archived plans just above the cap (probe_archive)
     * give it an incumbent to start from. */
    if (!worker_pool(c, nthreads)) return false;
    worker *seed = &c->pool[0], *ws = &c->pool[1];
    for (int i = 0; i <= nthreads; i++) {
        worker *w = &c->pool[i];
        w->have_best = false;
        memset(&w->st, 0, sizeof w->st);
        memset(&w->front, 0, sizeof w->front);
        w->seen = NULL;
    }
    if (c->spare) {
        /* the fastest plan an earlier search costed that fits this cap */
        for (int i = c->spare->n - 1; i >= 0; i--)
            if (c->spare->v[i].info.memory <= c->cap) {
                offer(seed, &c->spare->v[i]);
                break;
            }
        seed->seen = c->spare;
    }
    if (c->nfops < 0) {
        /* a session's table of subtree sizes, for pass1_scan's decoding */
        if (c->session && c->cores <= COUNTS_MAX_CORES &&
            (c->counts = malloc((size_t)(c->e->naxes + 1) * (size_t)(c->cores + 1) * sizeof *c->counts)))
            for (int64_t i = 0; i < (int64_t)(c->e->naxes + 1) * (c->cores + 1); i++) c->counts[i] = -1;
        c->nfops = fop_count(c, 0, c->cores);
    }
    fop_list keep = {0};
    /* 4 bytes per F_op vector (24 in a session); past 2^22 vectors
     * recompute instead.  A session keeps each F_op's compute floor from its
     * first search on, so that its first capped search scans them instead
     * of walking again (the floor costs the model's op_bound per F_op), and
     * the rest only from its first search below its full cap (the
     * compiler's first search, for the fastest plan, is the only one of
     * most sessions). */
    bool small = c->nfops <= ((int64_t)1 << 22);
    size_t nalloc = (size_t)(c->nfops ? c->nfops : 1);
    if (c->session && small && !c->cf && (c->cf = malloc(nalloc * sizeof *c->cf)))
        for (int64_t i = 0; i < c->nfops; i++) c->cf[i] = -1;
    if (!c->floors && small && !(c->session && c->cap >= c->full_cap)) {
        c->floors = malloc(nalloc * sizeof *c->floors);
        if (c->floors) {
            c->nfloors = c->nfops;
            for (int64_t i = 0; i < c->nfops; i++) c->floors[i] = -1;
        }
        if (c->floors && c->cf) {
            c->lb = malloc(nalloc * sizeof *c->lb);
            c->lb_cap = malloc(nalloc * sizeof *c->lb_cap);
            c->weak = malloc(nalloc * sizeof *c->weak);
            c->ones = malloc(nalloc * sizeof *c->ones);
            if (!c->lb || !c->lb_cap || !c->weak || !c->ones) {
                free(c->lb);
                free(c->lb_cap);
                free(c->weak);
                free(c->ones);
                c->lb = NULL;
                c->lb_cap = NULL;
                c->weak = c->ones = NULL;
            }
            for (int64_t i = 0; c->lb && i < c->nfops; i++) {
                c->lb_cap[i] = -1;
                c->weak[i] = -1;
            }
        }
    }
    bool oom = false;
    for (int i = 0; i < nthreads; i++) {
        if (c->spare && !ws[i].own && !(ws[i].own = malloc(sizeof *ws[i].own))) oom = true;
        if (c->spare && ws[i].own) {
            ws[i].own->n = 0;
            ws[i].own->dropped = false;
            ws[i].seen = ws[i].own;
        }
        if (!oom && i >= c->nknaps) {
            /* kept for the ctx's later searches: the lattices they cache stay true */
            struct knap_scratch **nk = realloc(c->knaps, (size_t)(i + 1) * sizeof *nk);
            if (nk) c->knaps = nk;
            if (nk && (nk[i] = malloc(sizeof *nk[i]))) {
                for (int k = 0; k < LAT_SLOTS; k++) nk[i]->lat[k].share = 0;
                c->nknaps = i + 1;
            }
        }
        if (i < c->nknaps) ws[i].knap = c->knaps[i];
        else oom = true;
    }
    pass1 p = {.c = c, .w = seed, .keep = &keep};
    if (!oom) probe_archive(c, ws, nthreads, &p);
    if (!oom && c->cf_filled && c->weak && c->counts) pass1_scan(&p);
    else if (!oom) pass1_walk(&p, 0, c->cores);
    /* a walk with every cache in place: later searches may scan them (the
     * first below the full cap walks, reading the compute floors the full
     * cap's walk left, since most of its F_op need their memory floors) */
    if (!oom && c->weak) c->cf_filled = true;
    oom |= keep.oom;
    /* The incumbent has tightened since most F_op were kept: drop those it
     * now prunes before sorting the rest. */
    int64_t kept = 0;
    for (int64_t i = 0; i < keep.n && !oom; i++)
        if (!prune(seed, keep.v[i].bound, keep.v[i].mem_bound)) keep.v[kept++] = keep.v[i];
    keep.n = kept;
    /* Sorted by (bound, F_op): the list is in walk order, which is F_op
     * order, so (bound, position) keys order it the same way and sort
     * faster than the entries themselves. */
    fop_key *order = keep.n ? malloc((size_t)keep.n * sizeof *order) : NULL;
    if (keep.n && !order) oom = true;
    for (int64_t i = 0; i < keep.n && !oom; i++) {
        order[i].bound = keep.v[i].bound;
        order[i].pos = i;
    }
    if (keep.n && !oom) qsort(order, (size_t)keep.n, sizeof *order, fop_key_cmp);
    for (int i = 0; i < nthreads && !oom; i++) {
        if (c->frontier && seed->front.n) {
            /* every thread starts from the first pass's front */
            front *f = &ws[i].front;
            f->v = malloc((size_t)seed->front.n * sizeof *f->v);
            if (!f->v) {
                oom = true;
                continue;
            }
            memcpy(f->v, seed->front.v, (size_t)seed->front.n * sizeof *f->v);
            f->n = f->cap = seed->front.n;
        }
    }
    if (oom) keep.n = 0;

    /* Pass 2: the surviving F_op in parallel.  Threads share only the
     * incumbent time; each keeps its own best, merged below in thread order
     * under a total order, so the result does not depend on the schedule. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (int64_t k = 0; k < keep.n; k++) {
        int64_t i = order[k].pos;
        worker *w = &ws[omp_get_thread_num()];
        if (prune(w, keep.v[i].bound, keep.v[i].mem_bound)) continue;
        if (!fop_full_bounds(w, &keep.v[i])) continue;
        search_fop(w, keep.v[i].fop);
    }

    merge_stats(st, &seed->st);
    st->fops_searched += keep.n;
    *have = seed->have_best;
    *best = seed->best;
    for (int i = 0; i < nthreads; i++) {
        worker *w = &ws[i];
        merge_stats(st, &w->st);
        if (w->have_best && (!*have || rotor_candidate_compare(e, &w->best, best) < 0)) {
            *best = w->best;
            *have = true;
        }
        if (w->seen)
            for (int k = 0; k < w->seen->n; k++) archive_add(c->spare, &w->seen->v[k]);
        /* the fronts merge in thread order; the union's front does not
         * depend on which thread found what */
        for (int k = 0; k < w->front.n; k++) front_add(e, &seed->front, &w->front.v[k]);
        oom |= w->front.oom;
        free(w->front.v);
        w->front.v = NULL;
    }
    oom |= seed->front.oom;
    if (c->frontier && !oom) {
        *out_front = seed->front;
        seed->front.v = NULL;
        *have = out_front->n > 0;
        if (*have) *best = out_front->v[out_front->n - 1];
    }
    if (oom) {
        free(seed->front.v);
        seed->front.v = NULL;
        free(keep.v);
        free(order);
        return false;
    }
    free(keep.v);
    free(order);
    return true;
}

/* Measured (docs/performance.md): on plain contractions the single pass is
 * 1.3-7x faster than the epsilon loop, since each of the loop's searches
 * walks every F_op again.  With compound dimensions (convolutions) the
 * memory floors are loose, the front's memory-lean end fills late and the
 * single pass can be 40x slower (ResNet-50 conv1), while each capped search
 * of the loop prunes hard on memory: there the loop is the default. */
static bool pareto_single_pass(const rotor_expr *e, rotor_pareto_method m) {
    if (m != ROTOR_PARETO_AUTO) return m == ROTOR_PARETO_SINGLE_PASS;
    for (int t = 0; t < e->ntensors; t++)
        for (int d = 0; d < e->tensors[t].ndims; d++)
            if (e->tensors[t].dims[d].nterms > 1) return false;
    return true;
}

/* The search proper, after rotor_search has set up c (which it frees). */
static rotor_status search_run(ctx *c, const rotor_search_options *opt, double t0,
                               rotor_search_result *out, rotor_error *err) {
    int nthreads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    int64_t cap0 = c->cap;

    rotor_search_stats st = {0};
    bool have = false;
    front fr = {0};
    c->frontier = opt && opt->pareto && pareto_single_pass(c->e, opt->pareto_method);
    bool capped = opt && opt->pareto && opt->pareto_time_ratio > 0;
    bool ok;
    if (c->frontier && capped) {
        /* the fastest plan first, then the front below its time cap */
        c->frontier = false;
        ok = search_once(c, nthreads, &out->best, &have, &st, NULL);
        c->frontier = true;
        if (ok && have) {
            c->time_cap = out->best.cost.total * opt->pareto_time_ratio;
            ok = search_once(c, nthreads, &out->best, &have, &st, &fr);
        }
    } else {
        ok = search_once(c, nthreads, &out->best, &have, &st, &fr);
        /* the epsilon loop below then prunes every capped search by time */
        if (ok && have && capped) c->time_cap = out->best.cost.total * opt->pareto_time_ratio;
    }
    if (!ok) return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
    if (c->frontier && have) {
        out->pareto = malloc((size_t)fr.n * sizeof *out->pareto);
        if (!out->pareto) {
            free(fr.v);
            return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
        }
        for (int i = 0; i < fr.n; i++) out->pareto[i] = fr.v[fr.n - 1 - i];
        out->npareto = fr.n;
    }
    free(fr.v);
    if (!have) {
        st.threads = nthreads;
        st.wall_seconds = omp_get_wtime() - t0;
        out->stats = st;
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "no valid plan fits: every plan of this operator needs more than %lld bytes "
                          "per core or breaks a constraint",
                          (long long)cap0);
    }
    if (opt && opt->pareto && !c->frontier) {
        int n = 0, capn = 16;
        /* from here on, searches keep what they cost to seed the next one */
        c->spare = calloc(1, sizeof *c->spare);
        rotor_candidate *v = malloc((size_t)capn * sizeof *v);
        if (!v || !c->spare) {
            free(v);
            return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
        }
        v[n++] = out->best;
        for (;;) {
            c->cap = v[n - 1].info.memory - 1;
            rotor_candidate next;
            bool found = false;
            if (!search_once(c, nthreads, &next, &found, &st, NULL)) {
                free(v);
                return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
            }
            if (!found) break;
            if (n == capn) {
                capn *= 2;
                rotor_candidate *nv = realloc(v, (size_t)capn * sizeof *v);
                if (!nv) {
                    free(v);
                    return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
                }
                v = nv;
            }
            v[n++] = next;
        }
        out->pareto = v;
        out->npareto = n;
    }
    st.threads = nthreads;
    st.wall_seconds = omp_get_wtime() - t0;
    out->stats = st;
    return ROTOR_OK;
}

/* The frontier by the epsilon-constraint method: the fastest plan (ties:
 * least memory, then plan order) is the first point; each next point is the
 * fastest plan with strictly less memory than the last, until none fits.
 * Every point so found is Pareto-optimal, and every frontier point is found
 * (its memory lies below the previous point's, and nothing faster fits
 * there).  Each step is one exact search with a tighter cap, whose memory
 * bounds then prune hard.  The single pass (ctx.frontier) instead keeps the
 * front of every plan it costs and prunes a node only when a front entry
 * with no more memory than the node's floor is faster than its time bound;
 * no frontier point is ever so dominated, and the front read from its fast
 * end is the same list.  pareto_single_pass picks between them. */
/* Sets up c for e on chip under opt (c's arrays are left NULL). */
static rotor_status ctx_init(ctx *c, const rotor_expr *e, const rotor_chip *chip,
                             const rotor_search_options *opt, rotor_error *err) {
    memset(c, 0, sizeof *c);
    if (!e->bound) return rotor_fail(err, ROTOR_ERR_INPUT, "search: the expression has no extents");
    c->e = e;
    c->chip = chip;
    c->m = opt && opt->model ? opt->model : rotor_cost_model_default();
    if (opt) c->cons = opt->constraints;
    c->cores = rotor_chip_cores(chip);
    c->cap = chip->sram_bytes;
    c->time_cap = INFINITY;
    c->nfops = -1;
    if (opt && opt->pareto_time_ratio != 0 && !(opt->pareto_time_ratio >= 1))
        return rotor_fail(err, ROTOR_ERR_INPUT, "search: pareto_time_ratio must be 0 or at least 1, got %g",
                          opt->pareto_time_ratio);
    if (c->cons.memory_cap > 0 && c->cons.memory_cap < c->cap) c->cap = c->cons.memory_cap;
    if (c->cons.min_cores > c->cores)
        return rotor_fail(err, ROTOR_ERR_INPUT, "constraints: min_cores=%lld exceeds the chip's %lld cores",
                          (long long)c->cons.min_cores, (long long)c->cores);
    for (int a = 0; a < e->naxes; a++) {
        c->last_tensor[a] = -1;
        for (int t = 0; t < e->ntensors; t++)
            if (e->tensors[t].has_axis[a]) c->last_tensor[a] = t;
    }
    for (int t = 0; t < e->ntensors; t++) {
        c->last_axis[t] = -1;
        for (int a = 0; a < e->naxes; a++)
            if (e->tensors[t].has_axis[a]) c->last_axis[t] = a;
    }
    return ROTOR_OK;
}

static void ctx_free(ctx *c) {
    for (int i = 0; i < c->npool; i++) free(c->pool[i].own);
    free(c->pool);
    free(c->counts);
    for (int i = 0; i < c->nknaps; i++) free(c->knaps[i]);
    free(c->knaps);
    free(c->floors);
    free(c->lb);
    free(c->lb_cap);
    free(c->cf);
    free(c->weak);
    free(c->ones);
    free(c->spare);
}

rotor_status rotor_search(const rotor_expr *e, const rotor_chip *chip,
                          const rotor_search_options *opt, rotor_search_result *out,
                          rotor_error *err) {
    memset(out, 0, sizeof *out);
    double t0 = omp_get_wtime();
    ctx c;
    rotor_status rc = ctx_init(&c, e, chip, opt, err);
    if (!rc) rc = search_run(&c, opt, t0, out, err);
    ctx_free(&c);
    return rc;
}

/* ---- sessions ------------------------------------------------------------ */

/* A session answers many capped searches of one operator (the compiler's
 * walk down a frontier, T10 §4.3.2).  Each answer is exactly rotor_search's
 * under that cap; what carries over only prunes sooner: the F_op floors
 * (cap-independent), each F_op's time floor under the last cap it was
 * computed for (a floor under any smaller cap too), and an archive of plans
 * costed so far, whose fastest plan under the new cap seeds the incumbent. */
struct rotor_search_session {
    ctx c;
    int threads;
    int64_t cap0; /* the chip's SRAM or the options' memory_cap */
};

rotor_status rotor_search_session_open(const rotor_expr *e, const rotor_chip *chip,
                                       const rotor_search_options *opt, rotor_search_session **out,
                                       rotor_error *err) {
    *out = NULL;
    rotor_search_session *s = calloc(1, sizeof *s);
    if (!s) return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
    rotor_status rc = ctx_init(&s->c, e, chip, opt, err);
    if (!rc && opt && opt->pareto)
        rc = rotor_fail(err, ROTOR_ERR_INPUT, "search: a session finds single plans, not frontiers");
    if (!rc && !(s->c.spare = calloc(1, sizeof *s->c.spare)))
        rc = rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
    if (rc) {
        ctx_free(&s->c);
        free(s);
        return rc;
    }
    s->c.session = true;
    s->c.full_cap = s->c.cap;
    s->threads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    s->cap0 = s->c.cap;
    *out = s;
    return ROTOR_OK;
}

rotor_status rotor_search_session_best(rotor_search_session *s, int64_t cap, int threads,
                                       rotor_candidate *best, rotor_search_stats *stats,
                                       rotor_error *err) {
    ctx *c = &s->c;
    c->cap = cap > 0 && cap < s->cap0 ? cap : s->cap0;
    int nthreads = threads > 0 ? threads : s->threads;
    rotor_search_stats st = {0};
    double t0 = omp_get_wtime();
    bool have = false;
    if (!search_once(c, nthreads, best, &have, &st, NULL))
        return rotor_fail(err, ROTOR_ERR_NOMEM, "search: out of memory");
    st.threads = nthreads;
    st.wall_seconds = omp_get_wtime() - t0;
    if (stats) *stats = st;
    if (!have)
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "no valid plan fits: every plan of this operator needs more than %lld bytes "
                          "per core or breaks a constraint",
                          (long long)c->cap);
    return ROTOR_OK;
}

void rotor_search_session_close(rotor_search_session *s) {
    if (!s) return;
    ctx_free(&s->c);
    free(s);
}

void rotor_search_result_free(rotor_search_result *r) {
    if (!r) return;
    free(r->pareto);
    r->pareto = NULL;
    r->npareto = 0;
}
