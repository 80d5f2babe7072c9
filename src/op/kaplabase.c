/* kaplabase.c — KAPLA's two heuristic baselines (KAPLA §V, "Baseline
 * solvers") on rotor's plan space, under the same cost model as the exact
 * search (B, search.c) and the fast solver (K, kapla.c):
 *
 *   R (`--solver random`): Timeloop's random search as KAPLA runs it: at
 *     every level of the plan space each candidate is evaluated with a
 *     fixed probability, p = 0.1 on the multi-node chip ("no less than 0.1
 *     at each level to guarantee finding valid schemes").  rotor's plan has
 *     two levels that are searched (a loop order is the closed-form best one
 *     for every solver, rotor_plan_best_order):
 *       level 1, spatial: every F_op whose factors are blocked sizes (the
 *         least F with its ceil(E_a / F), KAPLA's "blocked sizes", as
 *         kapla.c stacks them) with prod F_op <= N; each kept with
 *         probability p;
 *       level 2, temporal: under a kept F_op, the f_t of every tensor (its
 *         ring, a divisor of its sharing degree P_X, spread over its axes
 *         prime by prime); round(p x the ring choices, at least 1) of them
 *         are drawn, each tensor's ring uniform over its divisors.
 *     Plans that are invalid or overflow the SRAM are skipped, as R skips
 *     invalid schemes; R fails (ROTOR_ERR_NOFIT) when none of its draws
 *     fits.  Level 1 is capped at R_MAX_FOPS kept F_op (the rest of the
 *     enumeration is still drawn, so the cap only truncates, never biases
 *     what is kept before it): a 7-axis convolution has up to ~10^6 such
 *     F_op, and 10% of them, each with its f_t draws, would cost far more
 *     than the exact branch and bound.
 *   M (`--solver ml`): AutoTVM's tuner (KAPLA: "simulated annealing guided
 *     by XGBoost", 1024 iterations of a batch of 128 per layer).  rotor's M
 *     is the same loop, smaller: ML_ROUNDS rounds; in each, simulated
 *     annealing over a *surrogate* of the cost (not the cost) proposes the
 *     ML_BATCH unmeasured plans it predicts fastest, they are measured by the
 *     cost model, and the surrogate is refitted on every measurement.  The
 *     surrogate is ridge regression of log(time) on log features (each
 *     axis's sub-extent ceil(E_a / F_a) and F_a, each tensor's ring, the
 *     cores used), not gradient-boosted trees: XGBoost is not a dependency
 *     of rotor, and a linear model in log space is the simplest learned
 *     model that ranks plans at all (rotor's time is close to a product of
 *     powers of these quantities: compute over cores, shifts over rings).
 *     The budget (ML_ROUNDS x ML_BATCH = 1024 measurements against AutoTVM's
 *     131,072) fits `rotor reproduce kapla`'s three minutes.
 * Both are seeded (ROTOR_BASELINE_SEED, splitmix64) and sequential: the same
 * operator and chip give the same plan.  Neither can beat B: every plan they
 * return is checked by rotor_plan_derive and costed by rotor_cost_plan, the
 * functions the exact search's optimum is the minimum of. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/hash.h"
#include "rotor/op/sample.h"
#include "searchint.h"

#define R_RATE 0.1          /* KAPLA §V: R's probability per level (multi-node), the default */
#define R_MAX_FOPS 4096     /* level-1 F_op kept at most (see above) */
#define R_MAX_FT_DRAWS 16   /* f_t draws per kept F_op at most */
#define ML_ROUNDS 32        /* AutoTVM's iterations (KAPLA: 1024) */
#define ML_BATCH 32         /* plans measured per round (KAPLA: 128) */
#define ML_SA_STEPS 256     /* annealing steps per round on the surrogate */
#define ML_CHAINS 8         /* annealing chains per round */
#define ML_FEATURES (2 * ROTOR_MAX_AXES + ROTOR_MAX_TENSORS + 2)
#define ML_MEMO_BITS 14

typedef struct base {
    const rotor_expr *e;
    const rotor_chip *chip;
    const rotor_cost_model *m;
    rotor_constraints cons;
    int64_t cores, cap;
    int64_t *blocked[ROTOR_MAX_AXES];
    int nblocked[ROTOR_MAX_AXES];
    rotor_rng rng;
    double rate; /* R's probability per level */
    bool have;
    rotor_candidate best;
    bool want_front;
    front fr; /* with pareto: every plan costed, non-dominated (as kapla.c's) */
    rotor_search_stats st;
} base;

/* ---- shared: blocked sizes, costing ---------------------------------------- */

/* The blocked sizes of axis a (each F in 1..min(E_a, N), the least with its
 * ceil(E_a / F)), ascending. */
static bool blocked_sizes(base *b, int a) {
    int64_t ext = b->e->extent[a], lim = ext < b->cores ? ext : b->cores;
    int64_t cap = 2 * (int64_t)sqrt((double)ext) + 4, n = 0;
    int64_t *v = malloc((size_t)cap * sizeof *v);
    if (!v) return false;
    int64_t f = 1;
    while (f <= lim && n < cap) {
        v[n++] = f;
        int64_t c = (ext + f - 1) / f; /* the sub-extent at f; the next F has c - 1 */
        if (c <= 1) break;
        f = (ext + c - 2) / (c - 1);
    }
    b->blocked[a] = v;
    b->nblocked[a] = (int)n;
    return true;
}

static bool in_constraints(const base *b, const rotor_candidate *c) {
    return c->info.memory <= b->cap &&
           !(b->cons.max_padding > 0 && c->info.padding_ratio > b->cons.max_padding) &&
           c->info.cores >= b->cons.min_cores;
}

/* Plan p costed under its best order (and with overlap where the chip
 * allows it and it is faster), into c; false when invalid or outside the
 * cap and constraints.  A valid plan may become the best. */
static bool measure(base *b, rotor_plan *p, rotor_candidate *c) {
    rotor_error err;
    b->st.plans++;
    p->overlap = false;
    if (rotor_plan_derive(b->e, b->chip, p, &c->info, &err)) return false;
    rotor_plan_best_order(b->e, c->info.steps, p->ft, c->info.bytes, p->order);
    c->plan = *p;
    if (rotor_cost_plan(b->m, b->e, b->chip, &c->plan, &c->info, &c->cost, &err) || !in_constraints(b, c))
        return false;
    if (rotor_plan_may_overlap(b->e, b->chip, &c->plan, &c->info)) {
        rotor_candidate o = *c;
        o.plan.overlap = true;
        b->st.plans++;
        if (!rotor_cost_plan(b->m, b->e, b->chip, &o.plan, &o.info, &o.cost, &err) && in_constraints(b, &o) &&
            o.cost.total < c->cost.total)
            *c = o;
    }
    if (!b->have || rotor_candidate_compare(b->e, c, &b->best) < 0) b->best = *c, b->have = true;
    if (b->want_front) search_front_add(b->e, &b->fr, c);
    return true;
}

/* Tensor t's sharing degree under p's F_op: the product over the axes it
 * lacks. */
static int64_t share_of(const base *b, const rotor_plan *p, int t) {
    int64_t s = 1;
    for (int a = 0; a < b->e->naxes; a++)
        if (!b->e->tensors[t].has_axis[a]) s *= p->fop[a];
    return s;
}

static int ndivisors(int64_t n) {
    int k = 0;
    for (int64_t d = 1; d * d <= n; d++)
        if (n % d == 0) k += d * d == n ? 1 : 2;
    return k;
}

/* Tensor t's f_t: ring q spread over its axes prime by prime, each prime on
 * an axis drawn uniformly. */
static void spread_ring(base *b, rotor_plan *p, int t, int64_t q) {
    int axes[ROTOR_MAX_AXES], nx = 0;
    for (int a = 0; a < b->e->naxes; a++) {
        p->ft[t][a] = 1;
        if (b->e->tensors[t].has_axis[a]) axes[nx++] = a;
    }
    for (int64_t f = 2; q > 1 && nx > 0; f++)
        while (q % f == 0) {
            q /= f;
            p->ft[t][axes[rotor_rng_below(&b->rng, nx)]] *= f;
        }
}

/* A uniform divisor of n (the k-th, k drawn). */
static int64_t draw_divisor(base *b, int64_t n) {
    int64_t k = rotor_rng_below(&b->rng, ndivisors(n));
    for (int64_t d = 1; d * d <= n; d++)
        if (n % d == 0) {
            if (k-- == 0) return d;
            if (d * d != n && k-- == 0) return n / d;
        }
    return 1;
}

static double uniform01(base *b) { return (double)(rotor_rng_next(&b->rng) >> 11) * 0x1.0p-53; }

/* ---- R: random sampling at KAPLA's rate -------------------------------------- */

typedef struct r_walk {
    rotor_plan p;
    int64_t kept;
} r_walk;

/* Level 2 under the F_op in w->p: round(p x the ring choices) draws. */
static void r_level2(base *b, r_walk *w) {
    double choices = 1;
    for (int t = 0; t < b->e->ntensors; t++) choices *= ndivisors(share_of(b, &w->p, t));
    int64_t n = llround(b->rate * choices);
    if (n < 1) n = 1;
    if (n > R_MAX_FT_DRAWS) n = R_MAX_FT_DRAWS;
    for (int64_t i = 0; i < n; i++) {
        for (int t = 0; t < b->e->ntensors; t++) spread_ring(b, &w->p, t, draw_divisor(b, share_of(b, &w->p, t)));
        rotor_plan q = w->p;
        rotor_candidate c;
        measure(b, &q, &c);
    }
}

/* Level 1: every blocked F_op with product <= left, axis by axis; each
 * complete one kept with probability p. */
static void r_level1(base *b, r_walk *w, int a, int64_t left) {
    if (a == b->e->naxes) {
        if (uniform01(b) < b->rate && w->kept < R_MAX_FOPS) {
            w->kept++;
            r_level2(b, w);
        }
        return;
    }
    for (int i = 0; i < b->nblocked[a] && b->blocked[a][i] <= left; i++) {
        w->p.fop[a] = b->blocked[a][i];
        r_level1(b, w, a + 1, left / b->blocked[a][i]);
    }
}

static void solve_random(base *b) {
    r_walk w;
    rotor_plan_init(b->e, &w.p);
    w.kept = 0;
    r_level1(b, &w, 0, b->cores);
}

/* ---- M: annealing on a learned surrogate ------------------------------------ */

/* A configuration: an index into each axis's blocked sizes, and each
 * tensor's f_t. */
typedef struct ml_conf {
    int idx[ROTOR_MAX_AXES];
    int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];
} ml_conf;

typedef struct ml_state {
    ml_conf *seen;         /* measured, in order */
    double *y;             /* log time, or NAN when invalid */
    int nseen, capseen;
    uint64_t *memo;        /* hashes of measured confs (open addressing, 0 empty) */
    double w[ML_FEATURES]; /* the surrogate's weights */
    bool fitted;
} ml_state;

static void conf_plan(const base *b, const ml_conf *c, rotor_plan *p) {
    rotor_plan_init(b->e, p);
    for (int a = 0; a < b->e->naxes; a++) p->fop[a] = b->blocked[a][c->idx[a]];
    memcpy(p->ft, c->ft, sizeof p->ft);
}

static uint64_t conf_hash(const ml_conf *c) {
    uint64_t h = rotor_fnv1a_bytes(ROTOR_FNV1A_SEED, c, sizeof *c);
    return h ? h : 1;
}

/* Looks h up; inserts it when add.  True when it was there. */
static bool memo_has(ml_state *s, uint64_t h, bool add) {
    size_t mask = ((size_t)1 << ML_MEMO_BITS) - 1, i = (size_t)h & mask;
    for (size_t n = 0; n <= mask && s->memo[i]; n++, i = (i + 1) & mask)
        if (s->memo[i] == h) return true;
    if (add && !s->memo[i]) s->memo[i] = h;
    return false;
}

static void features(const base *b, const ml_conf *c, double *x) {
    memset(x, 0, ML_FEATURES * sizeof *x);
    double cores = 1;
    for (int a = 0; a < b->e->naxes; a++) {
        int64_t f = b->blocked[a][c->idx[a]], ext = b->e->extent[a];
        x[2 * a] = log((double)((ext + f - 1) / f));
        x[2 * a + 1] = log((double)f);
        cores *= (double)f;
    }
    for (int t = 0; t < b->e->ntensors; t++) {
        double ring = 1;
        for (int a = 0; a < b->e->naxes; a++) ring *= (double)c->ft[t][a];
        x[2 * ROTOR_MAX_AXES + t] = log(ring);
    }
    x[ML_FEATURES - 2] = log(cores);
    x[ML_FEATURES - 1] = 1; /* the intercept */
}

static double predict(const base *b, const ml_state *s, const ml_conf *c) {
    double x[ML_FEATURES], y = 0;
    features(b, c, x);
    for (int i = 0; i < ML_FEATURES; i++) y += s->w[i] * x[i];
    return y;
}

/* Ridge regression of log time on the features over the valid
 * measurements: (X'X + lambda I) w = X'y by Gaussian elimination with
 * partial pivoting. */
static void fit(const base *b, ml_state *s) {
    enum { F = ML_FEATURES };
    double A[F][F + 1];
    memset(A, 0, sizeof A);
    int n = 0;
    for (int k = 0; k < s->nseen; k++) {
        if (isnan(s->y[k])) continue;
        double x[F];
        features(b, &s->seen[k], x);
        for (int i = 0; i < F; i++) {
            for (int j = 0; j < F; j++) A[i][j] += x[i] * x[j];
            A[i][F] += x[i] * s->y[k];
        }
        n++;
    }
    if (n < 2) return;
    for (int i = 0; i < F; i++) A[i][i] += 1e-3;
    for (int c = 0; c < F; c++) {
        int piv = c;
        for (int r = c + 1; r < F; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
        for (int j = 0; j <= F; j++) {
            double t = A[c][j];
            A[c][j] = A[piv][j];
            A[piv][j] = t;
        }
        for (int r = 0; r < F; r++) {
            if (r == c || A[c][c] == 0) continue;
            double f = A[r][c] / A[c][c];
            for (int j = c; j <= F; j++) A[r][j] -= f * A[c][j];
        }
    }
    for (int i = 0; i < F; i++) s->w[i] = A[i][i] != 0 ? A[i][F] / A[i][i] : 0;
    s->fitted = true;
}

/* A random neighbour: one axis moved to an adjacent blocked size (within
 * the cores), or one prime of a tensor's f_t moved in or out. */
static void neighbour(base *b, const ml_conf *from, ml_conf *to) {
    *to = *from;
    const rotor_expr *e = b->e;
    if (rotor_rng_below(&b->rng, 2) == 0) {
        int a = (int)rotor_rng_below(&b->rng, e->naxes);
        int i = to->idx[a] + (rotor_rng_below(&b->rng, 2) ? 1 : -1);
        if (i < 0 || i >= b->nblocked[a]) return;
        to->idx[a] = i;
        int64_t cores = 1;
        for (int x = 0; x < e->naxes; x++) cores *= b->blocked[x][to->idx[x]];
        if (cores > b->cores) *to = *from;
        /* the rings stay divisors of the sharing degree: reset them */
        for (int t = 0; t < e->ntensors && to->idx[a] != from->idx[a]; t++)
            for (int x = 0; x < e->naxes; x++) to->ft[t][x] = 1;
        return;
    }
    int t = (int)rotor_rng_below(&b->rng, e->ntensors);
    rotor_plan p;
    conf_plan(b, to, &p);
    int64_t share = share_of(b, &p, t), ring = 1;
    for (int x = 0; x < e->naxes; x++) ring *= to->ft[t][x];
    int64_t q = draw_divisor(b, share);
    if (share % (ring * q) == 0 && rotor_rng_below(&b->rng, 2)) ring *= q;
    else if (ring % q == 0) ring /= q;
    rotor_plan_init(e, &p);
    spread_ring(b, &p, t, ring);
    memcpy(to->ft[t], p.ft[t], sizeof to->ft[t]);
}

static bool ml_measure(base *b, ml_state *s, const ml_conf *c) {
    if (s->nseen == s->capseen) {
        int n = s->capseen ? 2 * s->capseen : 256;
        ml_conf *v = realloc(s->seen, (size_t)n * sizeof *v);
        if (!v) return false;
        s->seen = v;
        double *y = realloc(s->y, (size_t)n * sizeof *y);
        if (!y) return false;
        s->y = y;
        s->capseen = n;
    }
    rotor_plan p;
    conf_plan(b, c, &p);
    rotor_candidate cand;
    s->seen[s->nseen] = *c;
    s->y[s->nseen++] = measure(b, &p, &cand) ? log(cand.cost.total) : NAN;
    return true;
}

/* One round: ML_CHAINS annealing chains on the surrogate from the best
 * measured plans, collecting the ML_BATCH unmeasured configurations of
 * least predicted time, which are then measured. */
static bool ml_round(base *b, ml_state *s) {
    ml_conf batch[ML_BATCH];
    double pred[ML_BATCH];
    int nb = 0;
    for (int ch = 0; ch < ML_CHAINS; ch++) {
        /* the start: a random valid measured conf among the better half */
        int k = (int)rotor_rng_below(&b->rng, s->nseen), tries = 0;
        while (isnan(s->y[k]) && tries++ < 64) k = (int)rotor_rng_below(&b->rng, s->nseen);
        ml_conf cur = s->seen[k], nxt;
        double pc = predict(b, s, &cur), temp = 1.0;
        for (int step = 0; step < ML_SA_STEPS; step++, temp *= 0.98) {
            neighbour(b, &cur, &nxt);
            double pn = predict(b, s, &nxt);
            if (pn < pc || uniform01(b) < exp((pc - pn) / temp)) cur = nxt, pc = pn;
            if (memo_has(s, conf_hash(&cur), false)) continue;
            int worst = 0;
            bool dup = false;
            for (int i = 0; i < nb; i++) {
                dup = dup || memcmp(&batch[i], &cur, sizeof cur) == 0;
                if (pred[i] > pred[worst]) worst = i;
            }
            if (dup) continue;
            if (nb < ML_BATCH) batch[nb] = cur, pred[nb++] = pc;
            else if (pc < pred[worst]) batch[worst] = cur, pred[worst] = pc;
        }
    }
    for (int i = 0; i < nb; i++) {
        memo_has(s, conf_hash(&batch[i]), true);
        if (!ml_measure(b, s, &batch[i])) return false;
    }
    fit(b, s);
    return true;
}

static bool solve_ml(base *b) {
    ml_state s = {0};
    bool ok = (s.memo = calloc((size_t)1 << ML_MEMO_BITS, sizeof *s.memo)) != NULL;
    /* round 0: ML_BATCH random configurations (AutoTVM's first batch) */
    for (int i = 0; ok && i < ML_BATCH; i++) {
        ml_conf c;
        memset(&c, 0, sizeof c);
        int64_t left = b->cores;
        for (int a = 0; a < b->e->naxes; a++) {
            int n = 0;
            while (n < b->nblocked[a] && b->blocked[a][n] <= left) n++;
            c.idx[a] = (int)rotor_rng_below(&b->rng, n);
            left /= b->blocked[a][c.idx[a]];
        }
        rotor_plan p;
        conf_plan(b, &c, &p);
        for (int t = 0; t < b->e->ntensors; t++) spread_ring(b, &p, t, draw_divisor(b, share_of(b, &p, t)));
        memcpy(c.ft, p.ft, sizeof c.ft);
        if (memo_has(&s, conf_hash(&c), true)) continue;
        ok = ml_measure(b, &s, &c);
    }
    if (ok) fit(b, &s);
    for (int r = 1; ok && r < ML_ROUNDS; r++) ok = ml_round(b, &s);
    free(s.seen);
    free(s.y);
    free(s.memo);
    return ok;
}

/* ---- the entry ------------------------------------------------------------- */

/* The frontier: the non-dominated plans of all those costed, by time
 * ascending, within ratio x the fastest (0: all). */
static rotor_status frontier_out(base *b, double ratio, rotor_search_result *out, rotor_error *err) {
    if (b->fr.oom) return rotor_nomem(err);
    double cap = ratio > 0 ? b->best.cost.total * ratio : INFINITY;
    if (!(out->pareto = malloc((size_t)(b->fr.n ? b->fr.n : 1) * sizeof *out->pareto))) return rotor_nomem(err);
    for (int i = b->fr.n - 1; i >= 0; i--) /* the front is by memory ascending, time descending */
        if (b->fr.v[i].cost.total <= cap) out->pareto[out->npareto++] = b->fr.v[i];
    return ROTOR_OK;
}

rotor_status kapla_base_search(const rotor_expr *e, const rotor_chip *chip, const rotor_search_options *opt,
                              rotor_search_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (!e->bound) return rotor_fail(err, ROTOR_ERR_INPUT, "search: the expression has no extents");
    if (opt->pareto_time_ratio != 0 && !(opt->pareto_time_ratio >= 1))
        return rotor_fail(err, ROTOR_ERR_INPUT, "search: pareto_time_ratio must be 0 or at least 1, got %g",
                          opt->pareto_time_ratio);
    double t0 = omp_get_wtime();
    base b;
    memset(&b, 0, sizeof b);
    b.e = e;
    b.chip = chip;
    b.m = opt->model ? opt->model : rotor_cost_model_default();
    b.cons = opt->constraints;
    b.cores = rotor_chip_cores(chip);
    b.cap = rotor_chip_sram(chip);
    if (b.cons.memory_cap > 0 && b.cons.memory_cap < b.cap) b.cap = b.cons.memory_cap;
    b.rng.state = ROTOR_BASELINE_SEED;
    b.want_front = opt->pareto;
    b.rate = opt->baseline_rate > 0 ? opt->baseline_rate : R_RATE;
    if (!(b.rate <= 1)) return rotor_fail(err, ROTOR_ERR_INPUT, "search: baseline_rate must be in (0, 1], got %g", b.rate);
    rotor_status rc = ROTOR_OK;
    for (int a = 0; a < e->naxes && !rc; a++)
        if (!blocked_sizes(&b, a)) rc = rotor_nomem(err);
    if (!rc && opt->solver == ROTOR_SOLVER_RANDOM) solve_random(&b);
    else if (!rc && !solve_ml(&b)) rc = rotor_nomem(err);
    if (!rc && !b.have)
        rc = rotor_fail(err, ROTOR_ERR_NOFIT,
                        "no valid plan fits: the %s baseline drew no plan of this operator within %lld bytes per "
                        "core and the constraints (try --solver exact)",
                        rotor_solver_name(opt->solver), (long long)b.cap);
    if (!rc && b.want_front) rc = frontier_out(&b, opt->pareto_time_ratio, out, err);
    for (int a = 0; a < ROTOR_MAX_AXES; a++) free(b.blocked[a]);
    free(b.fr.v);
    if (opt->progress) opt->progress(opt->progress_ctx, 1, 1);
    b.st.threads = 1;
    b.st.wall_seconds = omp_get_wtime() - t0;
    out->stats = b.st;
    if (!rc) out->best = b.best;
    return rc;
}
