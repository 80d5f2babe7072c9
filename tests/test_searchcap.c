/* test_searchcap.c — issue 45, searches under a tight memory cap on
 * compound (window) dimensions: the step search's memory floor of a tensor
 * (op/steps.c, step_floor_upto and its counted floor, counted_best, which
 * counts a window's rows at their stride).
 *
 * 1. The floor must hold for every plan below the node it is computed for:
 *    for every F_op of small strided convolutions, every step vector and
 *    every f_t of every tensor (the plans rotor_cost_plan accepts), each
 *    tensor's bytes against its floor at each prefix of the steps.  A floor
 *    made too strong (the stride counted on both terms of a window, say)
 *    fails this.  And it must be tight where it matters: at some whole step
 *    vector rotating a window's axis, the input's floor is its least bytes.
 * 2. The search's answer under a cap, plan or no fit, and its time, must be
 *    the brute force's (tests/brute.h): every cap from just below the
 *    leanest plan up through the frontier's memories. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brute.h"
#include "fixtures.h"
#include "searchfix.h"

/* A bare search context for expression e on chip (its SRAM the cap, no
 * time cap) in *c, and a worker on it (the caller frees it). */
static worker *bare_worker(ctx *c, const rotor_expr *e, const rotor_chip *chip, int64_t cores) {
    searchfix_ctx(c, e, chip, cores);
    c->cap = chip->sram_bytes;
    c->time_cap = INFINITY;
    worker *w = calloc(1, sizeof *w);
    cr_assert_not_null(w);
    w->c = c;
    return w;
}

/* ---- 1. the floor holds over every plan ----------------------------------- */

typedef struct cap_walk {
    ctx *c;
    worker *w;
    int64_t fop[ROTOR_MAX_AXES];
    rotor_plan plan;
    int64_t steps[ROTOR_MAX_AXES];
    int64_t floors[ROTOR_MAX_AXES][ROTOR_MAX_TENSORS]; /* by prefix, of the current steps */
    int64_t least[ROTOR_MAX_TENSORS];                  /* least bytes over the plans of the steps */
    int64_t plans;
    int64_t tight; /* step vectors rotating a window's axis whose input floor is its least bytes */
    int64_t windowed; /* ... step vectors rotating a window's axis with a plan */
    int64_t asked;    /* floors compared with their formula (1a) */
    void (*on_steps)(void *); /* what each step vector is asked (cap_fops_visit) */
} cap_walk;

/* bytes(X) of the plan in j->plan under j->steps, as the search counts them */
static int64_t plan_bytes(const cap_walk *j, int t) {
    const rotor_expr *e = j->c->e;
    const rotor_tensor *x = &e->tensors[t];
    int64_t bytes = j->c->chip->element_bytes;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        int64_t l[2];
        for (int k = 0; k < dim->nterms; k++) {
            int a = dim->axis[k];
            int64_t unit = j->fop[a] * j->steps[a];
            l[k] = (e->extent[a] + unit - 1) / unit * j->steps[a] / j->plan.ft[t][a];
        }
        bytes *= rotor_dim_extent(dim, l);
    }
    return bytes;
}

static void cap_check_plan(cap_walk *j) {
    const ctx *c = j->c;
    const rotor_expr *e = c->e;
    rotor_plan_info info;
    rotor_cost cost;
    if (!searchfix_cost_at(c, &j->plan, j->steps, &info, &cost)) return;
    j->plans++;
    for (int t = 0; t < e->ntensors; t++) {
        int64_t b = plan_bytes(j, t);
        if (b < j->least[t]) j->least[t] = b;
        for (int upto = 0; upto < e->naxes; upto++)
            cr_assert_geq(b, j->floors[upto][t],
                          "%s: F_op %lld,%lld,%lld,%lld steps %lld,%lld,%lld,%lld,... tensor %s upto %d: "
                          "%lld bytes below the floor %lld",
                          e->text, (long long)j->fop[0], (long long)j->fop[1], (long long)j->fop[2],
                          (long long)j->fop[3], (long long)j->steps[0], (long long)j->steps[1],
                          (long long)j->steps[2], (long long)j->steps[3], e->tensors[t].name, upto,
                          (long long)b, (long long)j->floors[upto][t]);
    }
}

/* Every f_t of tensors t.. along axes a.. (f | S_a, the product | P_X). */
static void cap_ft(cap_walk *j, int t, int a, int64_t q) {
    const rotor_expr *e = j->c->e;
    if (t == e->ntensors) {
        cap_check_plan(j);
        return;
    }
    if (a == e->naxes) {
        cap_ft(j, t + 1, 0, 1);
        return;
    }
    if (!e->tensors[t].has_axis[a]) {
        cap_ft(j, t, a + 1, q);
        return;
    }
    int64_t share = 1;
    for (int b = 0; b < e->naxes; b++)
        if (!e->tensors[t].has_axis[b]) share *= j->fop[b];
    for (int64_t f = 1; f <= j->steps[a]; f++) {
        if (j->steps[a] % f || share % (q * f)) continue;
        j->plan.ft[t][a] = f;
        cap_ft(j, t, a + 1, q * f);
    }
    j->plan.ft[t][a] = 1;
}

/* Whether tensor t has a window (a dimension of two terms) with an axis
 * that the steps rotate. */
static bool window_rotates(const cap_walk *j, int t) {
    const rotor_tensor *x = &j->c->e->tensors[t];
    for (int d = 0; d < x->ndims; d++)
        for (int k = 0; x->dims[d].nterms > 1 && k < x->dims[d].nterms; k++)
            if (j->steps[x->dims[d].axis[k]] > 1) return true;
    return false;
}

/* fixture_each_steps' visit: a step vector's floors, then every f_t. */
static void cap_steps_visit(void *arg) {
    cap_walk *j = arg;
    const rotor_expr *e = j->c->e;
    for (int upto = 0; upto < e->naxes; upto++)
        for (int t = 0; t < e->ntensors; t++)
            j->floors[upto][t] = search_step_floor(j->w, j->fop, j->steps, upto, t);
    for (int t = 0; t < e->ntensors; t++) j->least[t] = INT64_MAX;
    rotor_plan_init(e, &j->plan);
    memcpy(j->plan.fop, j->fop, sizeof j->plan.fop);
    cap_ft(j, 0, 0, 1);
    for (int t = 1; t < e->ntensors; t++)
        if (j->least[t] < INT64_MAX && window_rotates(j, t)) {
            j->windowed++;
            if (j->least[t] == j->floors[e->naxes - 1][t]) j->tight++;
        }
}

/* fixture_each_fop's visit: every step vector the search offers the F_op
 * (S_a a divisor of the P_X of a tensor carrying a) */
static void cap_fops_visit(void *arg) {
    cap_walk *j = arg;
    fixture_each_steps(j->c->e, j->fop, j->steps, j->c->cores, 0, j->on_steps, j);
}

/* Every step vector of every F_op of text [dims] on a small chip of
 * `cores`, each asked on_steps; the walk's counts into *out. */
static void each_step_vector(const char *text, const char *dims, int64_t cores, void (*on_steps)(void *),
                             cap_walk *out) {
    rotor_expr e = make_expr(text, dims);
    rotor_chip chip = mk2_small(cores, 1 << 20, 32);
    ctx c;
    cap_walk j = {.c = &c, .w = bare_worker(&c, &e, &chip, cores), .on_steps = on_steps};
    fixture_each_fop(&e, j.fop, 0, cores, cap_fops_visit, &j);
    free(j.w);
    j.c = NULL, j.w = NULL;
    *out = j;
}

static void cap_floor_holds(const char *text, const char *dims, int64_t cores) {
    cap_walk j;
    each_step_vector(text, dims, cores, cap_steps_visit, &j);
    cr_log_info("%s [%s]: %lld plans, the input's floor tight at %lld of %lld windowed step vectors", text, dims,
                (long long)j.plans, (long long)j.tight, (long long)j.windowed);
    cr_assert_gt(j.plans, 100, "%s: %lld plans", text, (long long)j.plans);
    cr_assert_gt(j.tight, 0, "%s: the floor is never tight where a window rotates (%lld step vectors)", text,
                 (long long)j.windowed);
}

Test(searchcap, the_step_floor_is_at_most_every_plans_bytes, .timeout = 240) {
    cap_floor_holds("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=4,c=3,h=6,kh=3", 8);
    cap_floor_holds("O[f,h] += I[c,3*h+kh] * W[f,c,kh]", "f=2,c=2,h=6,kh=2", 12);
    cap_floor_holds("O[f,h] += I[c,h+kh] * W[f,c,kh]", "f=3,c=2,h=8,kh=3", 8);
    cap_floor_holds("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=2,h=3,w=2,kh=3,kw=2", 8);
}

/* ---- 1a. the floor is its formula ------------------------------------------
 *
 * step_floor_upto takes its three floors in one pass and asks the counted
 * floor's choices only where they could raise the result (steps.c).  Those
 * are speed, not a change: the integer must be the one the definitions give,
 * computed here the plain way, every choice of counted terms tried (3 per
 * window).  A skip that kept a floor the choices would have raised, or a
 * ring bound taken in another order, gives another integer. */

/* P_X of tensor t under fop */
static int64_t ref_share(const rotor_expr *e, const int64_t *fop, int t) {
    int64_t share = 1;
    for (int b = 0; b < e->naxes; b++)
        if (!e->tensors[t].has_axis[b]) share *= fop[b];
    return share;
}

static int64_t ref_gcd(int64_t a, int64_t b) { return b ? ref_gcd(b, a % b) : a; }

/* The floor of tensor t with steps[0..upto] chosen (docs/cost-model.md,
 * "Bounds": the ring, window and counted floors, and the all-S extents). */
static int64_t ref_floor(const ctx *c, const int64_t *fop, const int64_t *steps, int upto, int t, bool *raised) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int64_t share = ref_share(e, fop, t), len[ROTOR_MAX_AXES], sub[ROTOR_MAX_AXES], smax[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) {
        smax[a] = 1; /* the largest S_a offered: the largest P_X of a tensor carrying a */
        for (int u = 0; u < e->ntensors; u++)
            if (e->tensors[u].has_axis[a] && ref_share(e, fop, u) > smax[a]) smax[a] = ref_share(e, fop, u);
        int64_t unit = fop[a] * steps[a];
        len[a] = a <= upto ? (e->extent[a] + unit - 1) / unit * steps[a] : (e->extent[a] + fop[a] - 1) / fop[a];
        sub[a] = a <= upto ? len[a] / steps[a] : (e->extent[a] + fop[a] * smax[a] - 1) / (fop[a] * smax[a]);
    }
    int64_t g = 1, rest = 1;
    for (int a = 0; a < e->naxes; a++) {
        if (!x->has_axis[a]) continue;
        if (a <= upto) g = ref_gcd(share, g * steps[a]);
        else if (rest < share) rest *= smax[a];
    }
    if (rest > 1) g = g * rest < share ? g * rest : share;
    double eb = (double)c->chip->element_bytes, plain = 1, compound = 1, windows = 1;
    int64_t at_s = c->chip->element_bytes;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        int64_t l[2];
        for (int k = 0; k < dim->nterms; k++) l[k] = sub[dim->axis[k]];
        at_s *= rotor_dim_extent(dim, l);
        if (dim->nterms == 1) {
            plain *= (double)len[dim->axis[0]];
        } else {
            compound *= (double)rotor_dim_extent(dim, l);
            int64_t l0 = len[dim->axis[0]], l1 = len[dim->axis[1]];
            windows *= (double)(l0 > l1 ? l0 : l1);
        }
    }
    double best = ceil(plain / (double)g) * compound * eb;
    double by_window = ceil(plain * windows / (double)g) * eb;
    if (by_window > best) best = by_window;
    /* the counted floor: each window counts one term or none; none at all
     * with more than three windows */
    double h[3][3], others = best > (double)at_s ? best : (double)at_s;
    int ax[3][3], nwin = 0;
    bool counted = true;
    int64_t gc0 = 1, r0 = 1;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        if (dim->nterms == 1) {
            int a = dim->axis[0];
            if (a <= upto) gc0 = ref_gcd(share, gc0 * steps[a]);
            else if (r0 < share) r0 *= smax[a];
            continue;
        }
        if (nwin == 3) {
            counted = false;
            continue;
        }
        h[nwin][0] = (double)(1 + dim->coef[0] * (sub[dim->axis[0]] - 1) + dim->coef[1] * (sub[dim->axis[1]] - 1));
        ax[nwin][0] = -1;
        for (int k = 0; k < 2; k++) {
            int j = 1 - k, a = dim->axis[k];
            int64_t ck = dim->coef[k], lk = len[a], kk = 1 - ck + dim->coef[j] * (sub[dim->axis[j]] - 1);
            int64_t fmax = a <= upto && steps[a] < share ? steps[a] : share;
            int64_t hk = ck * lk + kk * (kk >= 0 ? 1 : fmax);
            h[nwin][k + 1] = (double)(hk > lk ? hk : lk);
            ax[nwin][k + 1] = a;
        }
        nwin++;
    }
    int combos = counted && nwin ? 1 : 0;
    for (int i = 0; i < nwin; i++) combos *= 3;
    for (int m = 0; m < combos; m++) {
        double num = plain;
        int64_t gc = gc0, r = r0;
        for (int i = 0, code = m; i < nwin; i++, code /= 3) {
            int a = ax[i][code % 3];
            num *= h[i][code % 3];
            if (a < 0) continue;
            if (a <= upto) gc = ref_gcd(share, gc * steps[a]);
            else if (r < share) r *= smax[a];
        }
        int64_t gr = r >= share || gc * r >= share ? share : gc * r;
        double v = ceil(num / (double)gr) * eb;
        if (v > best) best = v;
    }
    *raised = best > others;
    return best > (double)at_s ? (best > 9e15 ? (int64_t)9e15 : (int64_t)best) : at_s;
}

/* fixture_each_steps' visit: every prefix's floor of every tensor */
static void formula_steps_visit(void *arg) {
    cap_walk *j = arg;
    const rotor_expr *e = j->c->e;
    for (int upto = 0; upto < e->naxes; upto++)
        for (int t = 0; t < e->ntensors; t++) {
            bool raised;
            int64_t got = search_step_floor(j->w, j->fop, j->steps, upto, t);
            int64_t want = ref_floor(j->c, j->fop, j->steps, upto, t, &raised);
            if (got != want) {
                char at[256];
                int n = 0;
                for (int a = 0; a < e->naxes && n < (int)sizeof at - 48; a++)
                    n += snprintf(at + n, sizeof at - (size_t)n, " %s F %lld S %lld", e->axis_name[a],
                                  (long long)j->fop[a], (long long)j->steps[a]);
                cr_assert_fail("%s:%s, upto %d, tensor %s: %lld, the formula %lld", e->text, at, upto,
                               e->tensors[t].name, (long long)got, (long long)want);
            }
            j->asked++;
            j->tight += raised; /* here: floors the counted choices raised */
        }
}

/* Every floor of text [dims] on `cores` equals its formula; the number of
 * those the counted choices raised into *raised. */
static void floor_is_formula(const char *text, const char *dims, int64_t cores, int64_t *raised) {
    cap_walk j;
    each_step_vector(text, dims, cores, formula_steps_visit, &j);
    cr_log_info("%s [%s]: %lld floors, %lld raised by the counted choices", text, dims, (long long)j.asked,
                (long long)j.tight);
    cr_assert_gt(j.asked, 1000, "%s: %lld floors", text, (long long)j.asked);
    *raised = j.tight;
}

Test(searchcap, the_step_floor_is_its_formula, .timeout = 240) {
    int64_t raised[6];
    floor_is_formula("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=4,c=3,h=6,kh=3", 8, &raised[0]);
    floor_is_formula("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=2,h=3,w=3,kh=3,kw=3", 4,
                     &raised[1]);
    floor_is_formula("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=2,h=3,w=2,kh=3,kw=2", 8,
                     &raised[2]);
    floor_is_formula("O[b,f,h] += I[b,c,h] * W[f,c]", "b=2,f=4,c=3,h=4", 8, &raised[3]);
    /* three windows, and four (the counted floor off) */
    floor_is_formula("O[f,d,h,w] += I[c,d+kd,2*h+kh,w+kw] * W[f,c,kd,kh,kw]", "f=2,c=2,d=2,h=2,w=2,kd=2,kh=2,kw=2",
                     4, &raised[4]);
    floor_is_formula("O[f,d,h,w,v] += I[c,d+kd,h+kh,w+kw,v+kv] * W[f,c,kd,kh,kw,kv]",
                     "f=2,c=1,d=2,h=2,w=2,v=2,kd=2,kh=2,kw=2,kv=2", 2, &raised[5]);
    /* the choices decide some floors of every windowed case here, so a
     * skip that kept a floor they raise shows */
    for (int i = 0; i < 5; i++)
        if (i != 3) cr_assert_gt(raised[i], 0, "case %d: the counted choices never raised a floor", i);
    cr_assert_eq(raised[3], 0, "a plain contraction has no window to count");
    cr_assert_eq(raised[5], 0, "four windows: no counted floor");
}

/* ---- 1b. the exact floor of a tensor (steps.c, tensor_least) ------------- */

typedef struct least_check {
    ctx *c;
    worker *w;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t steps[ROTOR_MAX_AXES];
    int64_t ft[ROTOR_MAX_AXES];
    int64_t exact, strict; /* prefixes where the floor met the least, and where it was below it */
} least_check;

static int64_t lc_share(const least_check *j, int t) {
    int64_t share = 1;
    for (int b = 0; b < j->c->e->naxes; b++)
        if (!j->c->e->tensors[t].has_axis[b]) share *= j->fop[b];
    return share;
}

/* the least bytes of tensor t over its f_t (f | S_a, the product | P_X),
 * by brute force, at the whole step vector j->steps */
static int64_t lc_least_ft(least_check *j, int t, int a, int64_t q) {
    const rotor_expr *e = j->c->e;
    if (a == e->naxes) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t bytes = j->c->chip->element_bytes;
        for (int d = 0; d < x->ndims; d++) {
            int64_t l[2];
            for (int k = 0; k < x->dims[d].nterms; k++) {
                int b = x->dims[d].axis[k];
                int64_t unit = j->fop[b] * j->steps[b];
                l[k] = (e->extent[b] + unit - 1) / unit * j->steps[b] / j->ft[b];
            }
            bytes *= rotor_dim_extent(&x->dims[d], l);
        }
        return bytes;
    }
    if (!e->tensors[t].has_axis[a]) return lc_least_ft(j, t, a + 1, q);
    int64_t best = INT64_MAX, share = lc_share(j, t);
    for (int64_t f = 1; f <= j->steps[a]; f++) {
        if (j->steps[a] % f || share % (q * f)) continue;
        j->ft[a] = f;
        int64_t b = lc_least_ft(j, t, a + 1, q * f);
        if (b < best) best = b;
    }
    j->ft[a] = 1;
    return best;
}

/* Steps a.. of every completion (S_a a divisor of a P_X of a tensor
 * carrying a, the choices the search offers); least[t] gets each tensor's
 * least bytes over them.  At each prefix, tensor_least must equal it
 * (limit above it) and be min(least, limit) under a limit. */
static void lc_steps(least_check *j, int a, int64_t *least) {
    const rotor_expr *e = j->c->e;
    if (a == e->naxes) {
        for (int t = 0; t < e->ntensors; t++) least[t] = lc_least_ft(j, t, 0, 1);
    } else {
        for (int t = 0; t < e->ntensors; t++) least[t] = INT64_MAX;
        for (int64_t s = 1; s <= j->c->cores; s++) {
            if (!fixture_step_offered(e, j->fop, a, s)) continue;
            j->steps[a] = s;
            int64_t sub[ROTOR_MAX_TENSORS];
            lc_steps(j, a + 1, sub);
            for (int t = 0; t < e->ntensors; t++)
                if (sub[t] < least[t]) least[t] = sub[t];
        }
        j->steps[a] = 1;
    }
    if (a == 0) return; /* the F_op before any step: not asked */
    for (int t = 0; t < e->ntensors; t++) {
        int64_t got = search_tensor_least(j->w, j->fop, j->steps, a - 1, t, INT64_MAX);
        cr_assert_eq(got, least[t], "%s: F_op %lld,%lld,%lld steps %lld,%lld,%lld upto %d tensor %s: floor %lld, least %lld",
                     e->text, (long long)j->fop[0], (long long)j->fop[1], (long long)j->fop[2],
                     (long long)j->steps[0], (long long)j->steps[1], (long long)j->steps[2], a - 1,
                     e->tensors[t].name, (long long)got, (long long)least[t]);
        int64_t lim = least[t] / 2 + 1;
        cr_assert_eq(search_tensor_least(j->w, j->fop, j->steps, a - 1, t, lim), lim < least[t] ? lim : least[t]);
        int64_t cheap = search_step_floor(j->w, j->fop, j->steps, a - 1, t);
        cr_assert_leq(cheap, least[t]);
        if (cheap == least[t]) j->exact++;
        else j->strict++;
    }
}

/* fixture_each_fop's visit: every prefix of every step vector */
static void lc_fops_visit(void *arg) {
    int64_t least[ROTOR_MAX_TENSORS];
    lc_steps(arg, 0, least);
}

/* The bare context of an exact-floor check (cap the SRAM, no time cap)
 * and its worker, in *j with every factor and step 1; the caller frees
 * j->w. */
static void least_begin(least_check *j, ctx *c, const rotor_expr *e, const rotor_chip *chip, int64_t cores) {
    *j = (least_check){.c = c, .w = bare_worker(c, e, chip, cores)};
    for (int a = 0; a < ROTOR_MAX_AXES; a++) j->ft[a] = j->steps[a] = j->fop[a] = 1;
}

static void least_is_exact(const char *text, const char *dims, int64_t cores) {
    rotor_expr e = make_expr(text, dims);
    rotor_chip chip = mk2_small(cores, 1 << 20, 32);
    ctx c;
    least_check j;
    least_begin(&j, &c, &e, &chip, cores);
    fixture_each_fop(&e, j.fop, 0, cores, lc_fops_visit, &j);
    cr_log_info("%s [%s]: the cheap floor below the least at %lld of %lld prefixes", text, dims,
                (long long)j.strict, (long long)(j.strict + j.exact));
    cr_assert_gt(j.exact + j.strict, 100, "%s: too few prefixes", text);
    cr_assert_gt(j.strict, 0, "%s: the exact floor never above step_floor_upto", text);
    free(j.w);
}

/* The exact floor is the least bytes of each tensor over every f_t and
 * every completion of the steps (the chain and coverage rules aside), at
 * every prefix of small strided, 1x1 and 3x3 convolutions; step_floor_upto
 * is at most it, and strictly below it at some prefix of a strided one. */
Test(searchcap, the_tensor_floor_is_the_least_bytes, .timeout = 240) {
    least_is_exact("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=4,c=3,h=6,kh=3", 8);
    least_is_exact("O[f,h] += I[c,3*h+kh] * W[f,c,kh]", "f=2,c=2,h=6,kh=2", 12);
    least_is_exact("O[b,f,h] += I[b,c,h] * W[f,c]", "b=2,f=4,c=3,h=4", 8);
    least_is_exact("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=2,h=3,w=3,kh=3,kw=3", 8);
    least_is_exact("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=2,h=3,w=2,kh=3,kw=2", 8);
}

/* A ring with more divisors than the walk keeps on the stack (steps.c,
 * LEAST_POOL, 512 options: the input's 3 axes take 180 each, the divisors
 * of P_I = F_f = 277,200 = 2^4 3^2 5^2 7 11), so its options come from the
 * heap.  The walk must still be the least bytes, at whole step vectors and
 * with the last axis (one of the input's) open: the other two axes' steps
 * bound the input's f_t, so the brute force stays small. */
static void lc_pool_steps(least_check *j, int a, int it) {
    const rotor_expr *e = j->c->e;
    if (a == e->naxes - 1) {
        int64_t least[ROTOR_MAX_TENSORS];
        lc_steps(j, a, least);
        return;
    }
    if (!e->tensors[it].has_axis[a]) {
        lc_pool_steps(j, a + 1, it);
        return;
    }
    /* a few divisors of the axis's extent (c = 12, h = 30, kh = 3) */
    const int64_t opts[] = {1, 3, 4, 6, 10, 12};
    for (int i = 0; i < 6; i++) {
        if (e->extent[a] % opts[i]) continue;
        j->steps[a] = opts[i];
        lc_pool_steps(j, a + 1, it);
    }
    j->steps[a] = 1;
}

Test(searchcap, the_tensor_floor_past_the_stack_pool, .timeout = 120) {
    int64_t cores = 277200;
    rotor_expr e = make_expr("O[f,h] += W[f,c,kh] * I[c,2*h+kh]", "f=277200,c=12,h=30,kh=3");
    rotor_chip chip = mk2_small(cores, 1 << 20, 32);
    ctx c;
    least_check j;
    least_begin(&j, &c, &e, &chip, cores);
    int it = 0;
    while (it < e.ntensors && strcmp(e.tensors[it].name, "I") != 0) it++;
    cr_assert_lt(it, e.ntensors);
    int fa = rotor_expr_axis(&e, "f");
    cr_assert(fa >= 0 && fa < e.naxes - 1 && e.tensors[it].has_axis[e.naxes - 1],
              "the last axis must be one of the input's (%s of %s %s %s %s)", e.axis_name[e.naxes - 1],
              e.axis_name[0], e.axis_name[1], e.axis_name[2], e.axis_name[3]);
    j.fop[fa] = cores;
    lc_pool_steps(&j, 0, it);
    cr_assert_eq(j.w->npdiv[it], 180, "P_I has %d divisors", j.w->npdiv[it]);
    cr_assert_gt(j.exact + j.strict, 100, "too few prefixes: %lld", (long long)(j.exact + j.strict));
    cr_assert_gt(j.strict, 0, "the exact floor never above step_floor_upto");
    free(j.w);
}

/* ---- 2. the search under caps against the brute force --------------------- */

#define REL 1e-12

/* rotor_search under memory_cap = cap against bf_search under the same cap:
 * both find no plan, or the same least time. */
static void cap_case(const char *label, const rotor_expr *e, const rotor_chip *chip, int64_t cap) {
    static bf_result r; /* 64 KiB frontier: keep it off the stack */
    bf_limits lim = {.memory_cap = cap};
    bf_search(e, chip, &lim, &r);
    rotor_search_options o = {.threads = 2};
    o.constraints.memory_cap = cap;
    rotor_search_result s;
    rotor_error err = {{0}};
    rotor_status st = rotor_search(e, chip, &o, &s, &err);
    if (!r.found) {
        cr_assert_eq(st, ROTOR_ERR_NOFIT, "%s cap %lld: brute force finds no plan; search says %d (%s)", label,
                     (long long)cap, st, err.msg);
        return;
    }
    cr_assert_eq(st, ROTOR_OK, "%s cap %lld: search failed: %s (brute force optimum %.17g at %lld bytes)", label,
                 (long long)cap, err.msg, r.best_total, (long long)r.best_memory);
    cr_assert(fabs(s.best.cost.total - r.best_total) <= REL * r.best_total,
              "%s cap %lld: search %.17g (%lld bytes) != brute force %.17g (%lld bytes)", label, (long long)cap,
              s.best.cost.total, (long long)s.best.info.memory, r.best_total, (long long)r.best_memory);
    cr_assert_leq(s.best.info.memory, cap, "%s cap %lld: over the cap", label, (long long)cap);
    rotor_search_result_free(&s);
}

/* Every cap around the frontier's memories: one below the leanest plan (no
 * fit), each point's memory, and one byte below each. */
static void caps_hold(const char *text, const char *dims, int64_t cores, int64_t buf) {
    static bf_result all;
    rotor_expr e = make_expr(text, dims);
    rotor_chip chip = mk2_small(cores, 1 << 20, buf);
    bf_limits lim = {0};
    bf_search(&e, &chip, &lim, &all);
    cr_assert(all.found && !all.front_overflow, "%s: no brute-force frontier", text);
    int n = all.nfront;
    int64_t mem[64] = {0};
    cr_assert_leq(n, 64, "%s: %d frontier points", text, n);
    for (int i = 0; i < n; i++) mem[i] = all.front[i].memory;
    int64_t least = mem[0];
    for (int i = 1; i < n; i++)
        if (mem[i] < least) least = mem[i];
    char label[256];
    snprintf(label, sizeof label, "%s [%s] cores=%lld buf=%lld", text, dims, (long long)cores, (long long)buf);
    cap_case(label, &e, &chip, least - 1);
    for (int i = 0; i < n; i++) {
        cap_case(label, &e, &chip, mem[i]);
        if (mem[i] - 1 > least) cap_case(label, &e, &chip, mem[i] - 1);
    }
}

Test(searchcap, the_search_under_each_cap_is_the_brute_force, .timeout = 300) {
    caps_hold("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=4,c=3,h=6,kh=3", 8, 16);
    caps_hold("O[f,h] += I[c,3*h+kh] * W[f,c,kh]", "f=2,c=4,h=5,kh=2", 6, 16);
    caps_hold("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=2,h=3,w=2,kh=3,kw=2", 8, 32);
    caps_hold("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=1,f=2,c=2,h=3,w=3,kh=2,kw=2", 8, 32);
    caps_hold("O[f,h,w] += I[c,h+kh,w+kw] * W[f,c,kh,kw]", "f=2,c=2,h=3,w=3,kh=3,kw=3", 8, 32);
    caps_hold("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=4,c=2,h=2,w=2,kh=3,kw=3", 8, 16);
}
