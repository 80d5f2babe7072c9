/* test_searchbig.c — issue 45, the large batches (h-big): the two prunings
 * that round added to the exact search, each against an answer that does
 * not use it.
 *
 * 1. The weak memory floor of an F_op counts each compound (window)
 *    dimension as its longer term's partition (op/bound.c, weak_elems), as
 *    the step floor's windows do.  It must stay a floor: for every F_op of
 *    small strided convolutions, no tensor of any plan (any steps S_a, any
 *    f_t dividing them with a product dividing P_X) holds fewer bytes, found
 *    here by enumeration.  The walk's one-pass copy (search_fop_cheap_mem)
 *    must agree with it, and the rule must matter: on some F_op it exceeds
 *    the old floor (windows counted as one element).
 * 2. The step search tries a step vector's time before its memory floors
 *    (op/steps.c): search_prune is monotone in memory, so a time pruned
 *    with no memory is pruned with any.  Every frontier cut by a time ratio
 *    (the compiler's first searches) must equal the brute force's frontier
 *    points under that ratio, on small MatMuls and strided convolutions. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "brute.h"
#include "fixtures.h"
#include "op/searchint.h"

/* ---- 1. the weak floor ---------------------------------------------------- */

typedef struct least {
    const rotor_expr *e;
    const rotor_tensor *x;
    const int64_t *fop;
    int64_t share;
    int axes[ROTOR_MAX_AXES], naxes;
    int64_t part[ROTOR_MAX_AXES]; /* partition extent L_a / f_a */
    int64_t best;                 /* least elements over every plan */
} least;

/* Every S_a in 1..E_a (larger steps only pad more) and f_a | S_a with the
 * product of the f_a dividing P_X, axis by axis. */
static void least_visit(least *l, int i, int64_t q) {
    if (i == l->naxes) {
        int64_t elems = 1;
        for (int d = 0; d < l->x->ndims; d++) {
            const rotor_dim *dim = &l->x->dims[d];
            int64_t len[2];
            for (int k = 0; k < dim->nterms; k++) len[k] = l->part[dim->axis[k]];
            elems *= rotor_dim_extent(dim, len);
        }
        if (elems < l->best) l->best = elems;
        return;
    }
    int a = l->axes[i];
    int64_t ext = l->e->extent[a], fa = l->fop[a];
    for (int64_t s = 1; s <= ext; s++) {
        int64_t len = (ext + fa * s - 1) / (fa * s) * s; /* L_a */
        for (int64_t f = 1; f <= s; f++) {
            if (s % f || l->share % (q * f)) continue;
            l->part[a] = len / f;
            least_visit(l, i + 1, q * f);
        }
    }
}

static int64_t least_bytes(const ctx *c, int t, const int64_t *fop) {
    least l = {.e = c->e, .x = &c->e->tensors[t], .fop = fop, .share = 1, .best = INT64_MAX};
    for (int a = 0; a < c->e->naxes; a++) {
        if (!l.x->has_axis[a]) l.share *= fop[a];
        else l.axes[l.naxes++] = a;
    }
    least_visit(&l, 0, 1);
    return l.best * c->chip->element_bytes;
}

/* The floor before this round: compound dimensions at one element. */
static int64_t old_weak(const ctx *c, int t, const int64_t *fop) {
    const rotor_expr *e = c->e;
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
    return (int64_t)ceil(elems / (double)share) * c->chip->element_bytes;
}

/* Every F_op vector of c's operator with at most `room` cores, each given
 * to visit(arg) in fop[] (the search's lattice: F_a in 1..E_a, their
 * product within the cores). */
static void each_fop(const ctx *c, int64_t *fop, int a, int64_t room, void (*visit)(void *), void *arg) {
    if (a == c->e->naxes) {
        visit(arg);
        return;
    }
    for (int64_t f = 1; f <= c->e->extent[a] && f <= room; f++) {
        fop[a] = f;
        each_fop(c, fop, a + 1, room / f, visit, arg);
    }
    fop[a] = 1;
}

/* A search context of `text` over `dims` on mk2_small(cores, 1 MiB, 32 B)
 * into *c, *e and *chip (the caller's storage). */
static void small_ctx(ctx *c, rotor_expr *e, rotor_chip *chip, const char *text, const char *dims,
                      int64_t cores) {
    *e = make_expr(text, dims);
    *chip = mk2_small(cores, 1 << 20, 32);
    memset(c, 0, sizeof *c);
    c->e = e;
    c->chip = chip;
    c->cores = cores;
}

typedef struct fop_walk {
    ctx *c;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t fops, stronger; /* F_op checked; tensors whose floor rose */
} fop_walk;

static void check_fop(fop_walk *w) {
    const ctx *c = w->c;
    int64_t sum = 0;
    for (int t = 0; t < c->e->ntensors; t++) {
        int64_t weak = search_tensor_weak_floor(c, t, w->fop), least_b = least_bytes(c, t, w->fop);
        cr_assert_leq(weak, least_b, "%s: tensor %d, F_op %lld,%lld,%lld,%lld...: floor %lld above a plan's %lld",
                      c->e->text, t, (long long)w->fop[0], (long long)w->fop[1], (long long)w->fop[2],
                      (long long)w->fop[3], (long long)weak, (long long)least_b);
        cr_assert_geq(weak, old_weak(c, t, w->fop), "%s: the floor fell below the old one", c->e->text);
        if (weak > old_weak(c, t, w->fop)) w->stronger++;
        sum += weak;
    }
    int64_t mb;
    double ones;
    search_fop_cheap_mem(c, w->fop, &mb, &ones);
    cr_assert_eq(mb, sum, "%s: the walk's weak floor %lld, the per-tensor sum %lld", c->e->text, (long long)mb,
                 (long long)sum);
    cr_assert_eq(search_fop_mem_bound(c, w->fop), sum);
    w->fops++;
}

static void visit_fop(void *w) { check_fop(w); }

static void weak_floor_holds(const char *text, const char *dims, int64_t cores, int64_t *stronger) {
    rotor_expr e;
    rotor_chip chip;
    ctx c;
    small_ctx(&c, &e, &chip, text, dims, cores);
    fop_walk w = {.c = &c};
    each_fop(&c, w.fop, 0, cores, visit_fop, &w);
    cr_assert_gt(w.fops, 0);
    *stronger += w.stronger;
}

Test(searchbig, the_window_weak_floor_is_at_most_every_plans_bytes, .timeout = 240) {
    int64_t stronger = 0;
    /* strides 1 to 4 and kernels as long as the output (AlexNet's first
     * layer is stride 4, kernel 11) */
    weak_floor_holds("O[f,h] += I[c,4*h+kh] * W[f,c,kh]", "f=3,c=2,h=7,kh=5", 12, &stronger);
    weak_floor_holds("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=2,c=3,h=6,kh=6", 12, &stronger);
    weak_floor_holds("O[f,h] += I[c,h+kh] * W[f,c,kh]", "f=4,c=2,h=5,kh=3", 8, &stronger);
    weak_floor_holds("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=1,h=4,w=3,kh=3,kw=2", 8,
                     &stronger);
    cr_log_info("%lld tensor floors above the old ones", (long long)stronger);
    cr_assert_gt(stronger, 100, "the window rule should raise many floors, raised %lld", (long long)stronger);
}

/* The floor before the strides counted (2026-11-30): each compound
 * dimension at its longer term's ceil(E_a / F_a). */
static int64_t window_weak(const ctx *c, int t, const int64_t *fop) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int64_t share = 1;
    for (int a = 0; a < e->naxes; a++)
        if (!x->has_axis[a]) share *= fop[a];
    double elems = 1;
    for (int d = 0; d < x->ndims; d++) {
        int64_t most = 1;
        for (int k = 0; k < x->dims[d].nterms; k++) {
            int a = x->dims[d].axis[k];
            int64_t l = (e->extent[a] + fop[a] - 1) / fop[a];
            if (l > most) most = l;
        }
        elems *= (double)most;
    }
    return (int64_t)ceil(elems / (double)share) * c->chip->element_bytes;
}

typedef struct stride_walk {
    ctx *c;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t fops, raised, tight; /* tensor floors above the window floor; equal to the least plan */
} stride_walk;

static void stride_check(stride_walk *w) {
    const ctx *c = w->c;
    for (int t = 0; t < c->e->ntensors; t++) {
        int64_t weak = search_tensor_weak_floor(c, t, w->fop), least_b = least_bytes(c, t, w->fop);
        cr_assert_leq(weak, least_b, "%s: tensor %d, F_op %lld,%lld,%lld,%lld: floor %lld above a plan's %lld",
                      c->e->text, t, (long long)w->fop[0], (long long)w->fop[1], (long long)w->fop[2],
                      (long long)w->fop[3], (long long)weak, (long long)least_b);
        int64_t before = window_weak(c, t, w->fop);
        cr_assert_geq(weak, before, "%s: the floor fell below the window floor", c->e->text);
        w->raised += weak > before;
        w->tight += weak == least_b && weak > before;
    }
    int64_t mb;
    double ones;
    search_fop_cheap_mem(c, w->fop, &mb, &ones);
    cr_assert_eq(mb, search_fop_mem_bound(c, w->fop), "%s: the walk's weak floor differs", c->e->text);
    double all = 0;
    for (int t = 0; t < c->e->ntensors; t++) all += search_all_ones_bytes_of(c, w->fop, t);
    cr_assert_eq(ones, all, "%s: the walk's all-ones bytes differ", c->e->text);
    w->fops++;
}

static void visit_stride(void *w) { stride_check(w); }

static void stride_floor_holds(const char *text, const char *dims, int64_t cores, stride_walk *sum) {
    rotor_expr e;
    rotor_chip chip;
    ctx c;
    small_ctx(&c, &e, &chip, text, dims, cores);
    stride_walk w = {.c = &c};
    each_fop(&c, w.fop, 0, cores, visit_stride, &w);
    cr_assert_gt(w.fops, 0);
    cr_assert_gt(w.raised, 0, "%s: the stride raised no floor", text);
    sum->fops += w.fops;
    sum->raised += w.raised;
    sum->tight += w.tight;
}

/* The weak floor counts a term's stride c as l + (c - 1) max(0, l - P_X), a
 * window's other term adding c_j (ceil(l_j / P_X) - 1)
 * (op/bound.c, weak_elems).  Against every plan's bytes, enumerated, on
 * convolutions of strides 2 and 4 and windows 3, 7 and 11 (AlexNet's first
 * layer: stride 4, window 11).  A floor raised by the stride and equal to
 * the least plan's bytes must occur (a 1-wide-partition window term, the
 * input not shared): a floor inflated by even one element fails there. */
Test(searchbig, the_strided_weak_floor_is_at_most_every_plans_bytes, .timeout = 240) {
    stride_walk sum = {0};
    stride_floor_holds("O[f,h] += I[c,4*h+kh] * W[f,c,kh]", "f=2,c=2,h=9,kh=11", 12, &sum);
    stride_floor_holds("O[f,h] += I[c,4*h+kh] * W[f,c,kh]", "f=3,c=1,h=8,kh=3", 12, &sum);
    stride_floor_holds("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=2,c=2,h=10,kh=7", 12, &sum);
    stride_floor_holds("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=4,c=2,h=7,kh=3", 8, &sum);
    stride_floor_holds("O[b,f,h,w] += I[b,c,4*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=2,f=2,c=1,h=5,w=4,kh=3,kw=7", 8,
                       &sum);
    cr_log_info("%lld F_op, %lld tensor floors raised by the stride, %lld of them tight", (long long)sum.fops,
                (long long)sum.raised, (long long)sum.tight);
    cr_assert_gt(sum.tight, 0, "no floor raised by the stride meets the least plan's bytes");
}

/* ---- 2. the step search's time first -------------------------------------- */

static bool close_rel(double x, double y) { return fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y)); }

static void ratio_frontier_equals_brute(const char *label, const rotor_expr *e, const rotor_chip *chip,
                                        double ratio) {
    static bf_result r;
    bf_search(e, chip, NULL, &r);
    cr_assert(!r.front_overflow, "%s", label);
    rotor_search_options o = {.pareto = true, .pareto_time_ratio = ratio, .threads = 1,
                              .pareto_method = ROTOR_PARETO_SINGLE_PASS};
    rotor_search_result s;
    rotor_error err;
    rotor_status st = rotor_search(e, chip, &o, &s, &err);
    if (!r.found) {
        cr_assert_eq(st, ROTOR_ERR_NOFIT, "%s", label);
        return;
    }
    cr_assert_eq(st, ROTOR_OK, "%s: %s", label, err.msg);
    int want = 0;
    for (int j = 0; j < r.nfront; j++)
        if (r.front[j].total <= ratio * r.best_total * (1 + 1e-12)) want++;
    cr_assert_eq(s.npareto, want, "%s, ratio %g: %d points, the brute force %d", label, ratio, s.npareto, want);
    for (int i = 0; i < s.npareto; i++) {
        bool hit = false;
        for (int j = 0; j < r.nfront && !hit; j++)
            hit = s.pareto[i].info.memory == r.front[j].memory && close_rel(s.pareto[i].cost.total, r.front[j].total);
        cr_assert(hit, "%s, ratio %g: point %d (%.17g, %lld) not the brute force's", label, ratio, i,
                  s.pareto[i].cost.total, (long long)s.pareto[i].info.memory);
    }
    rotor_search_result_free(&s);
}

Test(searchbig, time_ratio_frontiers_equal_the_brute_force, .timeout = 300) {
    const uint64_t seed = 4545;
    uint64_t rng = seed;
    double ratios[] = {1.0, 1.3, 2.0};
    for (int i = 0; i < 16; i++) {
        char dims[96], label[256];
        const char *text;
        int64_t tot;
        if (i % 2 == 0) {
            int64_t m = bf_rand_range(&rng, 2, 12), k = bf_rand_range(&rng, 2, 12), n = bf_rand_range(&rng, 2, 12);
            snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)m, (long long)k, (long long)n);
            text = "C[m,n] += A[m,k] * B[k,n]";
            tot = 2 * (m * n + m * k + k * n);
        } else {
            text = bf_rand_strided_conv(&rng, 4, 7, dims, sizeof dims, &tot);
        }
        int64_t cores = bf_rand_range(&rng, 2, 8), buf = 16;
        int64_t sram = tot * bf_rand_range(&rng, 3, 10) / (4 * cores) + buf;
        rotor_chip chip = mk2_small(cores, sram, buf);
        rotor_expr e = make_expr(text, dims);
        for (size_t k = 0; k < sizeof ratios / sizeof ratios[0]; k++) {
            snprintf(label, sizeof label, "seed %llu case %d: %s [%s] cores=%lld sram=%lld",
                     (unsigned long long)seed, i, text, dims, (long long)cores, (long long)sram);
            ratio_frontier_equals_brute(label, &e, &chip, ratios[k]);
        }
    }
}

/* ---- 3. multiples of a step whose time alone is cut ------------------------ */

/* The property cost model v1 claims (rotor_cost_model.step_bound_multiples):
 * multiplying one S_a by an integer never lowers step_bound, on MatMuls,
 * strided convolutions and a vector op, over random F_op and steps. */
Test(searchbig, v1_step_bound_never_falls_on_a_multiple_of_a_step) {
    const rotor_cost_model *m = rotor_cost_model_default();
    cr_assert(m->step_bound_multiples);
    rotor_chip chip = mk2();
    struct { const char *text, *dims; } ops[] = {
        {"C[m,n] += A[m,k] * B[k,n]", "m=249,k=200,n=77"},
        {"O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=3,c=19,h=28,kh=3,w=27,kw=3,f=40"},
        {"Y[s,d] = X[s,d] + Z[s,d]", "s=333,d=97"},
    };
    uint64_t rng = 45;
    int64_t checked = 0;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        rotor_expr e = make_expr(ops[o].text, ops[o].dims);
        for (int trial = 0; trial < 3000; trial++) {
            int64_t fop[ROTOR_MAX_AXES], steps[ROTOR_MAX_AXES], sub[ROTOR_MAX_AXES], sub2[ROTOR_MAX_AXES];
            for (int a = 0; a < e.naxes; a++) {
                fop[a] = bf_rand_range(&rng, 1, e.extent[a] < 8 ? e.extent[a] : 8);
                steps[a] = bf_rand_range(&rng, 1, 12);
            }
            for (int a = 0; a < e.naxes; a++) {
                int64_t unit = fop[a] * steps[a];
                sub[a] = (e.extent[a] + unit - 1) / unit;
            }
            double t = m->step_bound(m, &e, &chip, fop, steps, sub);
            int a = (int)bf_rand_range(&rng, 0, e.naxes - 1);
            int64_t k = bf_rand_range(&rng, 2, 9);
            int64_t steps2[ROTOR_MAX_AXES];
            memcpy(steps2, steps, sizeof steps2);
            memcpy(sub2, sub, sizeof sub2);
            steps2[a] *= k;
            sub2[a] = (e.extent[a] + fop[a] * steps2[a] - 1) / (fop[a] * steps2[a]);
            double t2 = m->step_bound(m, &e, &chip, fop, steps2, sub2);
            cr_assert_geq(t2, t * (1 - 1e-15), "%s: axis %d x%lld: %.17g < %.17g", ops[o].text, a, (long long)k,
                          t2, t);
            checked++;
        }
    }
    cr_assert_eq(checked, 9000);
}

/* The skipping search against the same search that skips nothing (a copy of
 * v1 that does not claim the property): every frontier, cut by a time
 * ratio as the compiler's first searches are, and every capped optimum
 * are the same plans, on shapes of the zoo's kind at a few hundred cores. */
Test(searchbig, skipping_multiples_changes_no_frontier, .timeout = 300) {
    rotor_cost_model plain = *rotor_cost_model_default();
    plain.step_bound_multiples = false;
    rotor_chip chip = mk2();
    chip.cores_per_chip = 96;
    struct { const char *text, *dims; } ops[] = {
        {"C[b,t,n] += X[b,c,t,f] * W[c,f,n]", "b=2,c=32,t=63,f=5,n=48"},
        {"S[b,h,m,n] += (Q[b,h,m,k] + U[h,k]) * K[b,h,k,n]", "b=2,h=4,m=63,k=16,n=63"},
        {"O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=4,c=16,h=14,kh=3,w=14,kw=3,f=32"},
    };
    int points = 0, fewer = 0;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        rotor_expr e = make_expr(ops[o].text, ops[o].dims);
        for (int method = ROTOR_PARETO_EPSILON; method <= ROTOR_PARETO_SINGLE_PASS; method++) {
            rotor_search_options skip = {.pareto = true, .pareto_time_ratio = 2, .threads = 1,
                                         .pareto_method = (rotor_pareto_method)method};
            rotor_search_options all = skip;
            all.model = &plain;
            rotor_search_result a, b;
            rotor_error err;
            cr_assert_eq(rotor_search(&e, &chip, &skip, &a, &err), ROTOR_OK, "%s", err.msg);
            cr_assert_eq(rotor_search(&e, &chip, &all, &b, &err), ROTOR_OK, "%s", err.msg);
            points += a.npareto;
            cr_assert_eq(a.npareto, b.npareto, "%s, method %d: %d points, %d without skipping", ops[o].dims, method,
                         a.npareto, b.npareto);
            for (int i = 0; i < a.npareto; i++)
                cr_assert_eq(memcmp(&a.pareto[i].plan, &b.pareto[i].plan, sizeof a.pareto[i].plan), 0,
                             "%s, method %d: point %d differs", ops[o].dims, method, i);
            cr_assert_eq(memcmp(&a.best.plan, &b.best.plan, sizeof a.best.plan), 0);
            cr_assert_leq(a.stats.step_vectors, b.stats.step_vectors);
            fewer += a.stats.step_vectors < b.stats.step_vectors;
            rotor_search_result_free(&a);
            rotor_search_result_free(&b);
        }
    }
    cr_log_info("%d frontier points; %d of 6 searches skipped step vectors", points, fewer);
    cr_assert_geq(points, 12, "frontiers worth the name: %d points", points);
    cr_assert_geq(fewer, 3, "the rule should skip something: %d of 6 searches did", fewer);
}

/* 3. A session's scan decodes the F_op it does not prune by index
 *    (op/fopwalk.c, search_fop_decode), resuming from its previous decode.
 *    Every index of the lattice, visited in order and with random gaps as
 *    the scan skips pruned F_op, must give the walk's vector at that index,
 *    the same as a fresh decode. */
typedef struct order_walk {
    const rotor_expr *e;
    int64_t (*v)[ROTOR_MAX_AXES];
    int64_t n, cap, fop[ROTOR_MAX_AXES];
} order_walk;

static void order_all(order_walk *o, int a, int64_t room) {
    if (a == o->e->naxes) {
        cr_assert_lt(o->n, o->cap);
        memcpy(o->v[o->n++], o->fop, sizeof o->fop);
        return;
    }
    int64_t hi = o->e->extent[a] < room ? o->e->extent[a] : room;
    for (int64_t f = 1; f <= hi; f++) {
        o->fop[a] = f;
        order_all(o, a + 1, room / f);
    }
    o->fop[a] = 1;
}

static void decode_matches_walk(const char *text, const char *dims, int64_t cores) {
    rotor_expr e = make_expr(text, dims);
    ctx c;
    memset(&c, 0, sizeof c);
    c.e = &e;
    c.cores = cores;
    c.counts = malloc((size_t)(e.naxes + 1) * (size_t)(cores + 1) * sizeof *c.counts);
    cr_assert_not_null(c.counts);
    for (int64_t i = 0; i < (int64_t)(e.naxes + 1) * (cores + 1); i++) c.counts[i] = -1;
    int64_t n = search_fop_count(&c, 0, cores);
    order_walk o = {.e = &e, .cap = n};
    o.v = malloc((size_t)n * sizeof *o.v);
    cr_assert_not_null(o.v);
    order_all(&o, 0, cores);
    cr_assert_eq(o.n, n);
    uint64_t seed = 12345;
    for (int gaps = 0; gaps < 4; gaps++) {
        fop_cursor cur = {.n = 0};
        for (int64_t i = 0; i < n;) {
            int64_t fop[ROTOR_MAX_AXES] = {0}, fresh[ROTOR_MAX_AXES] = {0};
            fop_cursor none = {.n = 0};
            search_fop_decode(&c, &cur, i, fop);
            search_fop_decode(&c, &none, i, fresh);
            for (int a = 0; a < e.naxes; a++) {
                cr_assert_eq(fop[a], o.v[i][a], "index %lld axis %d: %lld %lld", (long long)i, a, (long long)fop[a], (long long)o.v[i][a]);
                cr_assert_eq(fresh[a], o.v[i][a], "index %lld axis %d (fresh)", (long long)i, a);
            }
            /* gaps 0: every index; then random skips up to 2, 50, 5000 */
            int64_t span = gaps == 0 ? 1 : gaps == 1 ? 2 : gaps == 2 ? 50 : 5000;
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            i += 1 + (int64_t)((seed >> 33) % (uint64_t)span);
        }
    }
    free(o.v);
    free(c.counts);
}

Test(searchbig, the_scans_resumed_decode_is_the_walks_order) {
    decode_matches_walk("C[m,n] += A[m,k] * B[k,n]", "m=37,n=12,k=29", 64);
    decode_matches_walk("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=8,f=16,c=6,h=14,w=14,kh=3,kw=3", 128);
    decode_matches_walk("Y[i] += X[i]", "i=50", 40);
    decode_matches_walk("C[b,t,n] += X[b,c,t,f] * W[c,f,n]", "b=8,c=256,t=249,f=19,n=256", 96);
}

/* ---- 4. the keep list compacted as the walk goes -------------------------- */

/* search_keep_push (op/fopwalk.c) drops, whenever the list reaches its soft
 * length, the entries the incumbent prunes at that moment.  keep_order
 * filters the list once more against the walk's final incumbent, so the
 * compacted list, filtered at the end, must be exactly the list of every
 * pushed entry filtered at the end: the same entries in the same order.
 * Here 200,000 entries with random time and memory floors (some over the
 * cap) are offered while the incumbent falls in steps from infinity, and an
 * entry is pushed only when the incumbent does not prune it then, as
 * pass1_consider does.  A compaction that dropped a survivor (a wrong
 * prune: one with its floors raised by 1% fails), kept order badly or lost
 * an entry would fail here; the list must also stay shorter than
 * everything pushed (it compacted). */
Test(searchbig, the_compacted_keep_list_is_the_walks_list_filtered_at_its_end) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=8,k=8,n=8");
    rotor_chip chip = mk2_small(16, 4096, 64);
    ctx c;
    memset(&c, 0, sizeof c);
    c.e = &e;
    c.chip = &chip;
    c.cap = 3000;
    c.time_cap = INFINITY;
    double inf = INFINITY;
    uint64_t bits;
    memcpy(&bits, &inf, sizeof bits);
    atomic_store(&c.incumbent, bits);
    static worker w;
    memset(&w, 0, sizeof w);
    w.c = &c;
    fop_list l = {0};
    const int64_t total = 200000;
    fop_entry *all = malloc((size_t)total * sizeof *all);
    cr_assert_not_null(all);
    int64_t nall = 0, longest = 0;
    uint64_t rng = 777;
    for (int64_t i = 0; i < total; i++) {
        /* the incumbent: none for the first 2,000 entries, then falling
         * every 1,000 from 1e6 as (1 - i / total)^2 to 5,000 */
        double left = 1 - (double)i / (double)total;
        if (i >= 2000 && i % 1000 == 0) offer_incumbent(&c, 1e6 * left * left + 5000);
        fop_entry f = {.index = i};
        f.bound = (double)bf_rand_range(&rng, 1, 2000000) / 2;
        f.compute = f.bound;
        f.mem_bound = bf_rand_range(&rng, 1, 3200);
        f.fop[0] = i;
        if (search_prune(&w, f.bound, f.mem_bound)) continue;
        all[nall++] = f;
        cr_assert(search_keep_push(&w, &l, &f));
        if (l.n > longest) longest = l.n;
    }
    int64_t a = 0, b = 0, survivors = 0;
    for (;; a++, b++) {
        while (a < l.n && search_prune(&w, l.v[a].bound, l.v[a].mem_bound)) a++;
        while (b < nall && search_prune(&w, all[b].bound, all[b].mem_bound)) b++;
        if (a == l.n || b == nall) break;
        cr_assert_eq(l.v[a].index, all[b].index, "survivor %lld: entry %lld, want %lld", (long long)survivors,
                     (long long)l.v[a].index, (long long)all[b].index);
        cr_assert_eq(memcmp(&l.v[a], &all[b], sizeof all[b]), 0);
        survivors++;
    }
    cr_assert(a == l.n && b == nall, "one list has survivors the other lacks (%lld of %lld, %lld of %lld)",
              (long long)a, (long long)l.n, (long long)b, (long long)nall);
    cr_log_info("%lld pushed, %lld survive, the list at most %lld long", (long long)nall, (long long)survivors,
                (long long)longest);
    cr_assert_gt(survivors, 10, "a test worth the name: %lld survivors", (long long)survivors);
    cr_assert_lt(longest, nall, "the list compacted: at most %lld of %lld", (long long)longest, (long long)nall);
    free(l.v);
    free(all);
}

/* ---- 5. the walk's carried v1 floor ----------------------------------------- */

/* search_pass1_walk carries v1's compute floor from axis to axis
 * (op/searchint.h, v1_floor) instead of calling the model's step_bound at
 * every F_op.  Walked here in the same order with the same carrying, every
 * F_op's carried floor must be the model's own double, bit for bit: on
 * MatMuls, stride-1 and strided convolutions (the batch, Mg, Ng and Kg
 * groups and the window's axes), a vector op and a one-axis contraction,
 * on chips of several sizes.  A floor off by one ulp fails. */
typedef struct floor_walk {
    const rotor_cost_model *m;
    const rotor_expr *e;
    const rotor_chip *chip;
    v1_floor v;
    ctx oc;      /* search_output_floor's: e and out_floor_k */
    ctx *table;  /* NULL, or a session's table of floors to put each F_op's in */
    int64_t fop[ROTOR_MAX_AXES];
    int64_t n, bad, split;
} floor_walk;

static void floor_walk_at(floor_walk *w, int a, int64_t room) {
    if (a == w->e->naxes) {
        double fast = v1_floor_leaf(&w->v, w->fop[w->e->naxes - 1]);
        double ref = w->m->step_bound(w->m, w->e, w->chip, w->fop, NULL, NULL);
        if (memcmp(&fast, &ref, sizeof fast) != 0 && w->bad++ < 3)
            cr_log_error("F_op %lld %lld %lld ...: %.17g != %.17g", (long long)w->fop[0],
                         (long long)w->fop[1 % w->e->naxes], (long long)w->fop[2 % w->e->naxes], fast, ref);
        /* the output's floor carried likewise (v1_floor_out) */
        double out = v1_floor_out(&w->v, w->fop[w->e->naxes - 1]), out_ref = search_output_floor(&w->oc, w->fop);
        if (memcmp(&out, &out_ref, sizeof out) != 0 && w->bad++ < 3)
            cr_log_error("F_op %lld %lld %lld ...: output floor %.17g != %.17g", (long long)w->fop[0],
                         (long long)w->fop[1 % w->e->naxes], (long long)w->fop[2 % w->e->naxes], out, out_ref);
        if (out > 0) w->split++;
        if (w->table) search_cf_put(w->table, w->n, out > 0 ? float_coarse(ref + out) : float_down(ref));
        w->n++;
        return;
    }
    int64_t hi = w->e->extent[a] < room ? w->e->extent[a] : room;
    bool carry = a < w->v.last;
    double base = carry ? v1_floor_base(&w->v, a) : 0, red = w->v.red;
    for (int64_t f = 1; f <= hi; f++) {
        w->fop[a] = f;
        if (carry) v1_floor_axis(&w->v, a, f, base, red);
        floor_walk_at(w, a + 1, room / f);
    }
    if (carry) v1_floor_restore(&w->v, a, base, red);
}

static int64_t floor_walk_check(const char *text, const char *dims, const rotor_chip *chip, int64_t cores) {
    rotor_expr e = make_expr(text, dims);
    floor_walk w = {.m = rotor_cost_model_default(), .e = &e, .chip = chip};
    w.oc.e = &e;
    w.oc.out_floor_k = search_output_floor_k(w.m, &e, chip);
    search_v1_floor_init(&w.v, w.m, &e, chip);
    cr_assert(w.v.on, "%s: the v1 floor applies", text);
    floor_walk_at(&w, 0, cores);
    cr_assert_eq(w.bad, 0, "%s [%s]: %lld of %lld F_op differ", text, dims, (long long)w.bad, (long long)w.n);
    return w.n;
}

Test(searchbig, the_walks_carried_v1_floor_is_the_models_bit_for_bit, .timeout = 240) {
    rotor_chip big = mk2(), small = mk2_small(64, 1 << 20, 64);
    int64_t n = 0;
    n += floor_walk_check("C[m,n] += A[m,k] * B[k,n]", "m=249,k=200,n=77", &big, big.cores_per_chip);
    n += floor_walk_check("C[m,n] += A[m,k] * B[k,n]", "m=37,k=29,n=12", &small, 64);
    n += floor_walk_check("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=256,f=64,c=64,h=56,w=56,kh=3,kw=3",
                          &big, 512);
    n += floor_walk_check("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=3,c=19,h=28,kh=7,w=27,kw=7,f=40",
                          &big, big.cores_per_chip);
    n += floor_walk_check("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=5,c=3,h=100,kh=3", &small, 64);
    n += floor_walk_check("C[b,t,n] += X[b,c,t,f] * W[c,f,n]", "b=8,c=256,t=249,f=19,n=256", &big, 256);
    n += floor_walk_check("Y[s,d] = X[s,d] + Z[s,d]", "s=333,d=97", &big, big.cores_per_chip);
    n += floor_walk_check("Y[i] += X[i]", "i=5000", &big, big.cores_per_chip);
    cr_assert_eq(n, 852980, "%lld F_op checked", (long long)n);
    /* a systolic array of odd sides (rotor_cost_pad_to divides; a power of
     * two masks), and last axes past the leaves' table of ceil(E / f)
     * (V1_LQ: factors from it on divide) */
    rotor_chip odd = mk2_small(4096, 1 << 20, 64);
    odd.systolic_rows = 12;
    odd.systolic_cols = 20;
    int64_t m = 0;
    m += floor_walk_check("C[m,n] += A[m,k] * B[k,n]", "m=37,k=29,n=3000", &odd, 4096);
    m += floor_walk_check("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=3,f=21,c=2500,h=9,w=7,kh=3,kw=3",
                          &odd, 4096);
    m += floor_walk_check("C[m,n] += A[m,k] * B[k,n]", "m=3,k=5,n=4000", &big, 4096);
    m += floor_walk_check("Y[i] += X[i]", "i=9000", &odd, 4096);
    cr_assert_gt(m, 100000, "%lld F_op checked", (long long)m);
    /* any other model keeps its own step_bound */
    rotor_cost_model other = *rotor_cost_model_default();
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=8,k=8,n=8");
    v1_floor v;
    search_v1_floor_init(&v, &other, &e, &big);
    cr_assert(!v.on);
}

/* A session's floors (ctx.cf) keep each F_op's compute floor plus its
 * output's floor, rounded down to 8 mantissa bits where the output's
 * floor is not 0 (float_coarse): its table of distinct floors holds at most
 * CF_VALUES, and with the sums at full precision AlexNet's conv1 at batch
 * 1,024 overflowed it (its capped searches then walked every F_op again,
 * 3x slower).  Walked as pass 1 walks it, its lattice's floors fit with
 * room to spare. */
Test(searchbig, the_coarse_floors_of_alexnets_conv1_fit_a_sessions_table, .timeout = 240) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("O[b,f,h,w] += I[b,c,4*h+kh,4*w+kw] * W[f,c,kh,kw]",
                             "b=1024,f=64,c=3,h=55,w=55,kh=11,kw=11");
    floor_walk w = {.m = rotor_cost_model_default(), .e = &e, .chip = &chip};
    w.oc.e = &e;
    w.oc.out_floor_k = search_output_floor_k(w.m, &e, &chip);
    cr_assert_gt(w.oc.out_floor_k, 0);
    search_v1_floor_init(&w.v, w.m, &e, &chip);
    floor_walk_at(&w, 0, chip.cores_per_chip);
    int64_t n = w.n;
    cr_assert_gt(n, 900000, "%lld F_op", (long long)n);
    ctx table;
    memset(&table, 0, sizeof table);
    table.cf = malloc((size_t)n * sizeof *table.cf);
    cr_assert_not_null(table.cf);
    ctx oc = w.oc;
    w = (floor_walk){.m = rotor_cost_model_default(), .e = &e, .chip = &chip, .oc = oc, .table = &table};
    search_v1_floor_init(&w.v, w.m, &e, &chip);
    floor_walk_at(&w, 0, chip.cores_per_chip);
    cr_assert_eq(w.bad, 0);
    cr_assert_gt(w.split, n / 2, "the output's floor is on for %lld of %lld F_op", (long long)w.split, (long long)n);
    cr_assert(!table.cf_lost, "the table overflowed");
    cr_assert_lt(table.ncf_val, 8192, "%d distinct floors", table.ncf_val);
    free(table.cf);
    free(table.cf_val);
    free(table.cf_hash);
}

/* ---- 6. a session's per-F_op caches, kept sparse (h-mem) -------------------- */

/* The per-F_op values (op/searchint.h, fop_cache) live in blocks made on
 * first write: an F_op has no record until one is made in its block, a
 * record reads 0 ("not yet") in every field when made, keeps what is
 * written, and F_op outside [0, n) have none.  Here every 13th F_op of
 * 100,003 is written (its own values), and every F_op is read back: the
 * written ones exactly, their block's others all 0, the rest none; one
 * block is made per block touched, no more. */
Test(searchbig, the_sparse_per_fop_records_read_back_what_was_written) {
    const int64_t n = 100003;
    fop_cache fc;
    cr_assert(search_fop_cache_init(&fc, n, true));
    cr_assert_null(fop_rec_at(&fc, 0));
    cr_assert_null(search_fop_rec_make(&fc, -1));
    cr_assert_null(search_fop_rec_make(&fc, n));
    int64_t blocks = 0, last = -1;
    for (int64_t i = 0; i < n; i += 13) {
        fop_rec *r = search_fop_rec_make(&fc, i);
        cr_assert_not_null(r);
        cr_assert(r->weak == 0 && r->ones == 0 && r->floor == 0 && r->lb_cap == 0 && r->lb == 0);
        *r = (fop_rec){.weak = (int32_t)i + 1, .ones = (int32_t)i + 2, .floor = 2 * (int32_t)i + 1,
                       .lb_cap = (int32_t)i + 5, .lb = (float)i};
        if (i / FOPC_B != last) blocks++;
        last = i / FOPC_B;
    }
    cr_assert_eq(fc.nblocks, blocks);
    for (int64_t i = 0; i < n; i++) {
        const fop_rec *r = fop_rec_at(&fc, i);
        bool block_made = false;
        for (int64_t j = i / FOPC_B * FOPC_B; j < (i / FOPC_B + 1) * FOPC_B; j++) block_made |= j % 13 == 0 && j < n;
        if (i % 13 == 0) {
            cr_assert_not_null(r);
            cr_assert(r->weak == i + 1 && r->ones == i + 2 && r->floor == 2 * i + 1 && r->lb_cap == i + 5 &&
                          r->lb == (float)i,
                      "F_op %lld reads other values", (long long)i);
        } else if (block_made) {
            cr_assert_not_null(r);
            cr_assert(r->weak == 0 && r->ones == 0 && r->floor == 0 && r->lb_cap == 0 && r->lb == 0,
                      "F_op %lld was never written", (long long)i);
        } else {
            cr_assert_null(r, "F_op %lld has a record in a block never made", (long long)i);
        }
    }
    cr_assert_null(fop_rec_at(&fc, -1));
    cr_assert_null(fop_rec_at(&fc, n));
    search_fop_cache_free(&fc);
}

/* The compute floors (ctx.cf) are places in a table of distinct floats:
 * each F_op reads back its float bit for bit, equal floats share a place,
 * and when CF_VALUES distinct floors are in the table the next new one
 * finds no room: its F_op stays CF_NOT_YET and the ctx says so (cf_lost,
 * which turns the scan off), while floors already in the table still go
 * in. */
Test(searchbig, the_compute_floors_table_reads_back_every_float) {
    const int64_t n = 90000;
    ctx c;
    memset(&c, 0, sizeof c);
    c.cf = malloc((size_t)n * sizeof *c.cf);
    cr_assert_not_null(c.cf);
    for (int64_t i = 0; i < n; i++) c.cf[i] = CF_NOT_YET;
    /* 1,000 distinct floors over the first 20,000 F_op */
    for (int64_t i = 0; i < 20000; i++) cr_assert(search_cf_put(&c, i, (float)(i % 1000) * 0.37f + 1e-6f));
    cr_assert_eq(c.ncf_val, 1000);
    for (int64_t i = 0; i < 20000; i++) {
        float want = (float)(i % 1000) * 0.37f + 1e-6f, got = c.cf_val[c.cf[i]];
        cr_assert(memcmp(&want, &got, sizeof want) == 0, "F_op %lld reads %g, not %g", (long long)i, got, want);
        cr_assert_eq(c.cf[i], c.cf[i % 1000]);
    }
    /* then a new floor per F_op until the table is full */
    int64_t put = 0;
    for (int64_t i = 20000; i < n; i++) {
        bool ok = search_cf_put(&c, i, 1e3f + (float)i);
        cr_assert_eq(ok, put < CF_VALUES - 1000, "F_op %lld: put %d with %lld new floors", (long long)i, ok,
                     (long long)put);
        if (ok) put++;
        else cr_assert_eq(c.cf[i], CF_NOT_YET);
    }
    cr_assert(c.cf_lost);
    cr_assert_eq(c.ncf_val, CF_VALUES);
    cr_assert(search_cf_put(&c, 0, 0.37f * 5 + 1e-6f), "a floor in the table still goes in");
    cr_assert_eq(c.cf[0], c.cf[5]);
    free(c.cf);
    free(c.cf_val);
    free(c.cf_hash);
}

/* The scan compares codes, not floors (op/fopwalk.c, scan_filtered): after
 * search_cf_order the table of floors ascends, every F_op reads back the
 * float it was given bit for bit, a floor put again finds its new code (the
 * hash follows the renumbering, and the last put is forgotten), and a new
 * floor joins after the others until the next ordering.  Floors go in out
 * of order (a walk meets them so); a renumbering that kept the old codes
 * in the F_op, or the old places in the hash, fails here. */
Test(searchbig, ordering_the_floors_codes_keeps_every_floor) {
    const int64_t n = 5000;
    ctx c;
    memset(&c, 0, sizeof c);
    c.nfops = n;
    c.cf = malloc((size_t)n * sizeof *c.cf);
    cr_assert_not_null(c.cf);
    float want[5000];
    for (int64_t i = 0; i < n; i++) {
        c.cf[i] = CF_NOT_YET;
        /* 997 distinct floors in a scrambled order, every 7th F_op broken */
        want[i] = (float)((i * 389) % 997) * 0.25f + 1e-7f;
        if (i % 7 == 3) c.cf[i] = CF_BROKEN;
        else cr_assert(search_cf_put(&c, i, want[i]));
    }
    cr_assert_eq(c.ncf_val, 997);
    cr_assert_neq(c.cf_last, 0);
    cr_assert(search_cf_order(&c));
    cr_assert_eq(c.cf_last, 0, "the last put is forgotten");
    for (int32_t k = 1; k < c.ncf_val; k++) cr_assert_lt(c.cf_val[k - 1], c.cf_val[k], "place %d", k);
    for (int64_t i = 0; i < n; i++) {
        if (i % 7 == 3) {
            cr_assert_eq(c.cf[i], CF_BROKEN);
            continue;
        }
        float got = c.cf_val[c.cf[i]];
        cr_assert(memcmp(&want[i], &got, sizeof got) == 0, "F_op %lld reads %g, not %g", (long long)i, got, want[i]);
    }
    /* put again: the same (new) code, the last floor put before too; a
     * new floor: the next place */
    cr_assert(search_cf_put(&c, 10, want[n - 1]));
    cr_assert_eq(c.cf[10], c.cf[n - 1], "the last floor put: code %d, not %d", c.cf[10], c.cf[n - 1]);
    uint16_t code = c.cf[11];
    cr_assert(search_cf_put(&c, 3, want[11]));
    cr_assert_eq(c.cf[3], code);
    cr_assert(search_cf_put(&c, 17, 1e6f));
    cr_assert_eq(c.cf[17], 997);
    cr_assert(search_cf_order(&c));
    cr_assert_eq(c.cf[17], 997, "the largest floor takes the last place");
    cr_assert_eq(c.cf[3], code);
    free(c.cf);
    free(c.cf_val);
    free(c.cf_hash);
}

/* ---- 7. the archive, grown as it fills ------------------------------------- */

/* A plan of memory m and time t (the archive reads nothing else). */
static rotor_candidate archived(int64_t m, double t) {
    rotor_candidate c;
    memset(&c, 0, sizeof c);
    c.info.memory = m;
    c.cost.total = t;
    return c;
}

/* The archive (op/searchint.h) grows by doubling up to ARCHIVE_MAX and
 * keeps a Pareto front of (memory, time): a dominated plan is turned away,
 * a plan drops the entries it dominates, and once full a plan that would
 * need room is turned away with `dropped` set, the entries kept as they
 * were. */
Test(searchbig, the_archive_grows_to_its_bound_and_keeps_a_front) {
    archive *ar = search_archive_new();
    cr_assert_not_null(ar);
    cr_assert_eq(ar->n, 0);
    cr_assert_eq(ar->cap, 0, "nothing allocated before the first plan");
    /* a front of 300 plans, each leaner and slower than the last */
    for (int i = 0; i < 300; i++) {
        rotor_candidate c = archived(1000 - i, 1.0 + i);
        search_archive_add(ar, &c);
        int want = i + 1 < ARCHIVE_MAX ? i + 1 : ARCHIVE_MAX;
        cr_assert_eq(ar->n, want, "after %d plans: %d entries", i + 1, ar->n);
        cr_assert(ar->cap >= ar->n && ar->cap <= ARCHIVE_MAX);
        cr_assert_eq(ar->dropped, i >= ARCHIVE_MAX, "plan %d", i);
    }
    cr_assert_eq(ar->cap, ARCHIVE_MAX);
    for (int k = 0; k < ar->n; k++) {
        /* memory ascending: the leanest (the last added of the kept) first */
        cr_assert_eq(ar->v[k].info.memory, 1000 - (ARCHIVE_MAX - 1) + k);
        cr_assert_eq(ar->v[k].cost.total, 1.0 + (ARCHIVE_MAX - 1 - k));
    }
    /* a dominated plan changes nothing; a dominating one replaces what it
     * beats, full or not */
    rotor_candidate slow = archived(1000, 500.0);
    search_archive_add(ar, &slow);
    cr_assert_eq(ar->n, ARCHIVE_MAX);
    rotor_candidate best = archived(900, 0.5);
    search_archive_add(ar, &best);
    cr_assert_eq(ar->n, ARCHIVE_MAX - 100, "the 101 entries of memory >= 900 gave way to one");
    cr_assert_eq(ar->v[ar->n - 1].info.memory, 900);
    cr_assert_eq(ar->v[ar->n - 1].cost.total, 0.5);
    search_archive_free(ar);
    search_archive_free(NULL);
}

/* ---- 8. the output's floor, against every plan ------------------------------ */

/* The output's floor (op/bound.c, "The output's floor"), added to the
 * compute floor in pass 1 and kept with it in a session's floors, must be
 * below every plan of its F_op: checked here against every valid plan and
 * loop order the brute force (tests/brute.h, written from the spec alone)
 * costs, on MatMuls and convolutions whose outputs are split over their
 * reduction axes, on chips of several sizes.  The floor must also matter:
 * on some plan it is most of the time beyond the compute. */
typedef struct out_check {
    ctx c;
    const rotor_cost_model *m;
    const rotor_chip *chip;
    int64_t plans, split, bad;
    double tightest; /* the largest floor / (total - compute floor) seen */
} out_check;

static void out_visit(void *arg, const rotor_plan *p, const bf_eval *ev) {
    out_check *k = arg;
    double compute = k->m->step_bound(k->m, k->c.e, k->chip, p->fop, NULL, NULL);
    double out = search_output_floor(&k->c, p->fop);
    k->plans++;
    if (out > 0) k->split++;
    if (compute + out > ev->total && k->bad++ < 3)
        cr_log_error("F_op %lld %lld %lld: compute %.17g + output %.17g > plan %.17g", (long long)p->fop[0],
                     (long long)p->fop[1], (long long)p->fop[2], compute, out, ev->total);
    if (out > 0 && ev->total > compute && out / (ev->total - compute) > k->tightest)
        k->tightest = out / (ev->total - compute);
}

static void out_floor_check(const char *text, const char *dims, const rotor_chip *chip, int64_t cap) {
    rotor_expr e = make_expr(text, dims);
    out_check k = {.m = rotor_cost_model_default(), .chip = chip};
    k.c.e = &e;
    k.c.out_floor_k = search_output_floor_k(k.m, &e, chip);
    cr_assert_gt(k.c.out_floor_k, 0, "%s: the floor applies", text);
    bf_limits lim = {.memory_cap = cap, .visit = out_visit, .visit_ctx = &k};
    bf_result *r = malloc(sizeof *r);
    cr_assert_not_null(r);
    bf_search(&e, chip, &lim, r);
    cr_assert_eq(k.bad, 0, "%s [%s]: %lld of %lld plans below the floor", text, dims, (long long)k.bad,
                 (long long)k.plans);
    cr_assert_gt(k.split, 100, "%s: %lld plans with a split output", text, (long long)k.split);
    /* some plan meets it: 1 % higher fails (measured) */
    cr_assert_gt(k.tightest, 0.999, "%s: the floor is at most %.3f of the rest", text, k.tightest);
    free(r);
}

Test(searchbig, the_output_floor_is_below_every_plan, .timeout = 240) {
    rotor_chip small = mk2_small(16, 1 << 20, 64), tight = mk2_small(12, 6000, 256);
    out_floor_check("C[m,n] += A[m,k] * B[k,n]", "m=12,k=30,n=8", &small, 0);
    out_floor_check("C[m,n] += A[m,k] * B[k,n]", "m=6,k=20,n=9", &tight, 0);
    out_floor_check("O[b,f,h] += I[b,c,h+kh] * W[f,c,kh]", "b=2,f=4,c=6,h=5,kh=3", &small, 0);
    out_floor_check("O[f,h] += I[c,2*h+kh] * W[f,c,kh]", "f=5,c=8,h=6,kh=2", &tight, 0);
    /* where the floor does not hold, it is off: a mesh, overlap, a vector
     * op (an output is always of plain axes: rotor_expr_make) */
    rotor_expr mm = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=12,k=30,n=8");
    rotor_chip mesh = small;
    mesh.topology = ROTOR_TOPO_MESH;
    cr_assert_eq(search_output_floor_k(rotor_cost_model_default(), &mm, &mesh), 0);
    rotor_chip overlap = small;
    overlap.compute_overlap = 1;
    cr_assert_eq(search_output_floor_k(rotor_cost_model_default(), &mm, &overlap), 0);
    rotor_expr sum = make_expr("Y[i] += X[i,j]", "i=8,j=9");
    cr_assert_eq(search_output_floor_k(rotor_cost_model_default(), &sum, &small), 0);
}

/* ---- 6. the walk's cut ----------------------------------------------------- */

/* What a session's walks left unknown (CF_NOT_YET), counted, and the least
 * ratio of such an F_op's compute floor (the model's step_bound, which the
 * walk's carried floor equals bit for bit) to ctx.cf_above: above 1 for
 * every one, or the cut left an F_op a later scan would have worked on. */
static int64_t cut_left(ctx *c, double *least_ratio) {
    fop_cursor cur = {.n = 0};
    int64_t left = 0, fop[ROTOR_MAX_AXES];
    *least_ratio = INFINITY;
    for (int64_t i = 0; i < c->nfops; i++) {
        if (c->cf[i] != CF_NOT_YET) continue;
        left++;
        search_fop_decode(c, &cur, i, fop);
        double floor = c->m->step_bound(c->m, c->e, c->chip, fop, NULL, NULL);
        if (floor / c->cf_above < *least_ratio) *least_ratio = floor / c->cf_above;
    }
    return left;
}

/* A session's first walk passes over the leaves whose compute floor is
 * above WALK_CUT times its limit (op/fopwalk.c, "The walk's cut"): on a
 * DenseNet-121 1x1 convolution at batch 8 it leaves more than a third of
 * the F_op unknown, each with a floor above ctx.cf_above, the nearest
 * within 10 % of it (the cut is where it says).  A capped search whose
 * limit is above cf_above (no plan it knows fits) walks again and fills
 * the floors up to its own cut; both answers equal a fresh search's. */
Test(searchbig, the_walks_cut_leaves_only_floors_above_its_limit, .timeout = 240) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=8,c=512,h=14,kh=1,w=14,kw=1,f=128");
    rotor_search_options so = {.threads = 2};
    rotor_search_session *s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search_session_open(&e, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    ctx *c = search_session_ctx(s);
    rotor_candidate first, tight;
    cr_assert_eq(rotor_search_session_best(s, 0, 0, &first, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_not_null(c->cf);
    cr_assert(isfinite(c->cf_above), "the first walk cut nothing");
    double ratio;
    int64_t left = cut_left(c, &ratio);
    cr_log_info("first walk: %lld of %lld F_op left, above %g (the plan's %g); least ratio %.6f", (long long)left,
                (long long)c->nfops, c->cf_above, first.cost.total, ratio);
    cr_assert_gt(left, c->nfops / 3, "%lld of %lld F_op left", (long long)left, (long long)c->nfops);
    cr_assert_gt(ratio, 1.0, "an F_op left at %.9f of the cut", ratio);
    cr_assert_lt(ratio, 1.1, "the nearest F_op left is %.3f times the cut", ratio);
    /* 9,960 bytes: the frontier's point under it runs 6.02 us, 5.2 times
     * the fastest (1.16 us at 15,196 bytes; rotor plan --pareto) */
    int64_t cap = 9960;
    cr_assert_eq(rotor_search_session_best(s, cap, 0, &tight, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(tight.cost.total, WALK_CUT * first.cost.total, "%g against %g", tight.cost.total,
                 first.cost.total);
    int64_t left2 = cut_left(c, &ratio);
    cr_log_info("capped walk: %lld F_op left, above %g; least ratio %.6f", (long long)left2, c->cf_above, ratio);
    cr_assert_lt(left2, left, "the capped search did not walk again");
    cr_assert_gt(ratio, 1.0, "an F_op left at %.9f of the cut", ratio);
    rotor_candidate want[2] = {first, tight};
    int64_t caps[2] = {0, cap};
    for (int k = 0; k < 2; k++) {
        rotor_search_options fo = {.threads = 2, .constraints = {.memory_cap = caps[k]}};
        rotor_search_result r;
        cr_assert_eq(rotor_search(&e, &chip, &fo, &r, &err), ROTOR_OK, "%s", err.msg);
        cr_assert(memcmp(&r.best.plan, &want[k].plan, sizeof r.best.plan) == 0 &&
                      r.best.cost.total == want[k].cost.total,
                  "cap %lld: the session's plan is not a fresh search's", (long long)caps[k]);
        rotor_search_result_free(&r);
    }
    rotor_search_session_close(s);
}

/* ---- 7. the searched floor ------------------------------------------------- */

/* Every plan the brute force costs, checked against its F_op's record: a
 * plan under the record's cap runs in at least the record's time floor
 * (op/fopwalk.c, "The searched floor"). */
typedef struct searched_check {
    int64_t n, (*fop)[ROTOR_MAX_AXES]; /* the session's F_op, by index */
    const fop_rec **rec;               /* their records with a time floor, or NULL */
    int naxes;
    int64_t plans, under, bad, tight;
} searched_check;

static void searched_visit(void *arg, const rotor_plan *p, const bf_eval *ev) {
    searched_check *k = arg;
    k->plans++;
    for (int64_t i = 0; i < k->n; i++) {
        if (memcmp(k->fop[i], p->fop, (size_t)k->naxes * sizeof *p->fop) != 0) continue;
        const fop_rec *r = k->rec[i];
        if (!r || ev->memory > r->lb_cap) return;
        k->under++;
        if (ev->total < (double)r->lb * (1 - 1e-9) && k->bad++ < 3)
            cr_log_error("F_op %lld: a plan of %lld bytes under %d runs %.9g, below the floor %.9g", (long long)i,
                         (long long)ev->memory, r->lb_cap, ev->total, (double)r->lb);
        if (ev->total <= (double)r->lb * (1 + 1e-6)) k->tight++;
        return;
    }
}

/* A session walks down its frontier as the compiler does (each cap the
 * last point's memory - 1), then every record is checked against the brute
 * force.  Some floor is met by a plan (the F_op's best under the cap): a
 * floor from the plans costed alone, without the parts the search cut, is
 * above some plan and fails (checked). */
static void searched_floor_check(const char *text, const char *dims, const rotor_chip *chip) {
    rotor_expr e = make_expr(text, dims);
    rotor_search_options so = {.threads = 2};
    rotor_search_session *s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search_session_open(&e, chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    ctx *c = search_session_ctx(s);
    rotor_candidate p;
    cr_assert_eq(rotor_search_session_best(s, 0, 0, &p, NULL, &err), ROTOR_OK, "%s", err.msg);
    int points = 1;
    while (points < 12 && p.info.memory > 1 &&
           rotor_search_session_best(s, p.info.memory - 1, 0, &p, NULL, &err) == ROTOR_OK)
        points++;
    cr_assert_gt(points, 3, "%s: %d frontier points", text, points);
    searched_check k = {.n = c->nfops, .naxes = e.naxes};
    k.fop = malloc((size_t)c->nfops * sizeof *k.fop);
    k.rec = calloc((size_t)c->nfops, sizeof *k.rec);
    cr_assert(k.fop && k.rec);
    fop_cursor cur = {.n = 0};
    int64_t kept = 0;
    for (int64_t i = 0; i < c->nfops; i++) {
        search_fop_decode(c, &cur, i, k.fop[i]);
        const fop_rec *r = fop_rec_at(&c->fc, i);
        if (r && r->lb_cap > 0) k.rec[i] = r, kept++;
    }
    cr_assert_gt(kept, 10, "%s: %lld records with a time floor", text, (long long)kept);
    bf_limits lim = {.visit = searched_visit, .visit_ctx = &k};
    bf_result *res = malloc(sizeof *res);
    cr_assert_not_null(res);
    bf_search(&e, chip, &lim, res);
    cr_log_info("%s: %d points, %lld records, %lld of %lld plans under their record's cap, %lld at its floor", text,
                points, (long long)kept, (long long)k.under, (long long)k.plans, (long long)k.tight);
    cr_assert_eq(k.bad, 0, "%s [%s]: %lld plans below their F_op's floor", text, dims, (long long)k.bad);
    cr_assert_gt(k.tight, 0, "%s: no floor is met", text);
    free(res);
    free(k.fop);
    free(k.rec);
    rotor_search_session_close(s);
}

Test(searchbig, the_searched_floor_is_below_every_plan_under_its_cap, .timeout = 240) {
    rotor_chip small = mk2_small(16, 1 << 20, 64);
    searched_floor_check("O[b,f,h] += I[b,c,h+kh] * W[f,c,kh]", "b=4,f=16,c=16,h=6,kh=3", &small);
    searched_floor_check("O[b,f,h] += I[b,c,2*h+kh] * W[f,c,kh]", "b=2,f=16,c=16,h=6,kh=3", &small);
    searched_floor_check("C[m,n] += A[m,k] * B[k,n]", "m=24,k=32,n=16", &small);
}
