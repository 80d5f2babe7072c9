/* test_kapla.c — the fast solver (src/op/kapla.c, KAPLA §IV-C) against
 * the cost model and the exact search (src/op/search.c), which is the
 * optimum: every fast plan is valid and costs what the model says, it is
 * never faster than the optimum, its frontier is a frontier, and its
 * results do not depend on the thread count.  Random cases come from fixed
 * seeds, printed with each case. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brute.h"
#include "fixtures.h"
#include "rotor/op/cost.h"
#include "rotor/op/search.h"

/* An ipu-mk2 shrunk to `cores` cores with `sram` bytes per core. */
static rotor_chip shrunk(int64_t cores, int64_t sram) {
    rotor_chip c = mk2();
    c.cores_per_chip = cores;
    c.chips = 1;
    c.sram_bytes = sram;
    return c;
}

static rotor_search_result solve(const rotor_expr *e, const rotor_chip *chip, rotor_solver s, bool pareto,
                                 int threads) {
    rotor_search_options o = {.solver = s, .pareto = pareto, .threads = threads};
    rotor_search_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(e, chip, &o, &r, &err), ROTOR_OK, "%s: %s", e->text, err.msg);
    return r;
}

/* A random MatMul, batch MatMul or 2-D convolution small enough for the
 * exact search to answer at once. */
static rotor_expr random_op(uint64_t *s, char *label, size_t cap) {
    char dims[160];
    const char *text;
    switch (bf_rand(s) % 3) {
    case 0:
        text = "C[m,n] += A[m,k] * B[k,n]";
        snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)bf_rand_range(s, 1, 300),
                 (long long)bf_rand_range(s, 1, 300), (long long)bf_rand_range(s, 1, 300));
        break;
    case 1:
        text = "C[b,m,n] += A[b,m,k] * B[b,k,n]";
        snprintf(dims, sizeof dims, "b=%lld,m=%lld,k=%lld,n=%lld", (long long)bf_rand_range(s, 1, 16),
                 (long long)bf_rand_range(s, 1, 64), (long long)bf_rand_range(s, 1, 64),
                 (long long)bf_rand_range(s, 1, 64));
        break;
    default:
        text = "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]";
        snprintf(dims, sizeof dims, "b=1,f=%lld,c=%lld,h=%lld,w=%lld,kh=3,kw=3", (long long)bf_rand_range(s, 1, 32),
                 (long long)bf_rand_range(s, 1, 32), (long long)bf_rand_range(s, 2, 11),
                 (long long)bf_rand_range(s, 2, 11));
    }
    snprintf(label, cap, "%s [%s]", text, dims);
    return make_expr(text, dims);
}

/* The plan checked and costed again by the functions the exact search
 * uses, on the chip: valid, same time and memory. */
static void assert_costs_what_the_model_says(const rotor_expr *e, const rotor_chip *chip, const rotor_candidate *c,
                                             const char *label) {
    rotor_plan p = c->plan;
    rotor_plan_info info;
    rotor_cost cost;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), e, chip, &p, &info, &cost, &err), ROTOR_OK, "%s: %s",
                 label, err.msg);
    cr_assert_eq(cost.total, c->cost.total, "%s: the model says %.9g s, the solver %.9g s", label, cost.total,
                 c->cost.total);
    cr_assert_eq(info.memory, c->info.memory, "%s", label);
    cr_assert_leq(info.memory, chip->sram_bytes, "%s", label);
}

/* What a property test checks of one random operator e on chip: its fast
 * result f and its exact one x (NULL where not asked for); label names the
 * seed and the operator. */
typedef void random_check(const rotor_expr *e, const rotor_chip *chip, const rotor_search_result *f,
                          const rotor_search_result *x, const char *label);

/* Runs check on `count` random operators (random_op, drawn from `seed`) on
 * a 64-core ipu-mk2 with 64 KiB per core, solved fast and, when `exact`,
 * exactly too; with frontiers when `pareto`. */
static void each_random_op(uint64_t seed, int count, bool pareto, bool exact, random_check *check) {
    rotor_chip chip = shrunk(64, 65536);
    uint64_t s = seed;
    for (int i = 0; i < count; i++) {
        char op[256], label[300];
        rotor_expr e = random_op(&s, op, sizeof op);
        snprintf(label, sizeof label, "seed %llu, %s", (unsigned long long)seed, op);
        rotor_search_result f = solve(&e, &chip, ROTOR_SOLVER_FAST, pareto, 1), x = {0};
        if (exact) x = solve(&e, &chip, ROTOR_SOLVER_EXACT, pareto, 1);
        check(&e, &chip, &f, exact ? &x : NULL, label);
        rotor_search_result_free(&f);
        if (exact) rotor_search_result_free(&x);
    }
}

static void validates_and_costs(const rotor_expr *e, const rotor_chip *chip, const rotor_search_result *f,
                                const rotor_search_result *x, const char *label) {
    (void)x;
    assert_costs_what_the_model_says(e, chip, &f->best, label);
    for (int k = 0; k < f->npareto; k++) assert_costs_what_the_model_says(e, chip, &f->pareto[k], label);
}

Test(kapla, every_fast_plan_validates_and_costs_what_the_model_says, .timeout = 60) {
    each_random_op(2501, 24, true, false, validates_and_costs);
}

static void never_faster(const rotor_expr *e, const rotor_chip *chip, const rotor_search_result *f,
                         const rotor_search_result *x, const char *label) {
    (void)e, (void)chip;
    cr_assert_geq(f->best.cost.total, x->best.cost.total, "%s: fast %.9g s beats the optimum %.9g s", label,
                  f->best.cost.total, x->best.cost.total);
}

Test(kapla, fast_best_is_never_faster_than_the_exact_optimum, .timeout = 60) {
    each_random_op(2502, 24, false, true, never_faster);
}

/* The fast solver's best time for e (text, dims) on chip in *fast, the
 * exact optimum in *exact. */
static void fast_and_exact(const char *text, const char *dims, const rotor_chip *chip, double *fast, double *exact) {
    rotor_expr e = make_expr(text, dims);
    rotor_search_result f = solve(&e, chip, ROTOR_SOLVER_FAST, false, 1);
    rotor_search_result x = solve(&e, chip, ROTOR_SOLVER_EXACT, false, 1);
    *fast = f.best.cost.total;
    *exact = x.best.cost.total;
    rotor_search_result_free(&f);
    rotor_search_result_free(&x);
}

/* Operators whose optimum the greedy descent reaches (checked against the
 * exact search here, which is itself checked against brute force in
 * test_search.c). */
Test(kapla, fast_finds_the_optimum_of_small_operators) {
    static const struct {
        const char *text, *dims;
        int64_t cores, sram;
    } cases[] = {
        {"C[m,n] += A[m,k] * B[k,n]", "m=64,k=64,n=64", 16, 65536},
        {"C[m,n] += A[m,k] * B[k,n]", "m=128,k=256,n=96", 64, 65536},
        {"C[m,n] += A[m,k] * B[k,n]", "m=32,k=512,n=512", 64, 16384},
        {"C[b,m,n] += A[b,m,k] * B[b,k,n]", "b=8,m=64,k=64,n=64", 64, 65536},
        {"O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=1,f=32,c=16,h=8,w=8,kh=3,kw=3", 64, 65536},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rotor_chip chip = shrunk(cases[i].cores, cases[i].sram);
        double fast, exact;
        fast_and_exact(cases[i].text, cases[i].dims, &chip, &fast, &exact);
        cr_assert_eq(fast, exact, "%s [%s]: fast %.9g s, optimum %.9g s", cases[i].text, cases[i].dims, fast, exact);
    }
}

/* docs/performance.md's optimum of the T10 benchmark MatMul: 20.888727924 us
 * at F_op = [2, 3, 244], every f_t = 1; the fast solver reaches it. */
Test(kapla, fast_reaches_the_t10_benchmark_optimum_at_fop_2_3_244) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=32,k=5120,n=15360");
    rotor_chip chip = mk2();
    rotor_search_result f = solve(&e, &chip, ROTOR_SOLVER_FAST, false, 1);
    cr_assert_float_eq(f.best.cost.total * 1e6, 20.888727924, 1e-8);
    cr_assert_eq(f.best.plan.fop[0], 2);
    cr_assert_eq(f.best.plan.fop[1], 3);
    cr_assert_eq(f.best.plan.fop[2], 244);
    rotor_search_result_free(&f);
}

/* A convolution whose optimum no walk or one- or two-axis descent reaches
 * (docs/kapla.md, "random Conv 6"): c=207, 27x27 pixels, 3x3, f=397 on
 * ipu-mk2.  The optimum, 5.2113 us, splits c=6, h=7, w=7, f=5, so that the
 * sub-task's pixels (4 x 4) fill the systolic array's 16 rows; without
 * the seeded restarts the solver stopped 8.0% off, at c=9, h=2, w=3, f=27. */
Test(kapla, restarts_reach_the_optimum_of_conv_c207_27x27_f397) {
    rotor_chip chip = mk2();
    double fast, exact;
    fast_and_exact("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=1,c=207,h=27,kh=3,w=27,kw=3,f=397", &chip,
                   &fast, &exact);
    cr_assert_eq(fast, exact, "fast %.9g s, optimum %.9g s", fast, exact);
}

/* A named gap (docs/kapla.md's table, "opt-13b b1 l0.ffn_up"): the
 * MatMul m=2048, k=5120, n=20480 on ipu-mk2 is memory-bound; the optimum
 * (1962.27 us, F_op 4,16,23) splits two tensors 4 x 4 in time, the solver's
 * caching pass, one prime at a time by time per byte saved, reaches F_op
 * 5,10,29 with other splits, 2.3% slower. */
Test(kapla, fast_is_2_percent_off_on_opt13b_ffn_up_prefill) {
    rotor_chip chip = mk2();
    double fast, exact;
    fast_and_exact("C[m,n] += A[m,k] * B[k,n]", "m=2048,k=5120,n=20480", &chip, &fast, &exact);
    double gap = fast / exact - 1;
    cr_assert(gap > 0.02 && gap < 0.025, "gap %.4f", gap);
}

static void sorted_frontier(const rotor_expr *e, const rotor_chip *chip, const rotor_search_result *f,
                            const rotor_search_result *x, const char *label) {
    (void)e, (void)chip, (void)x;
    cr_assert_geq(f->npareto, 1, "%s", label);
    cr_assert_eq(f->pareto[0].cost.total, f->best.cost.total, "%s", label);
    for (int k = 1; k < f->npareto; k++) {
        /* by time ascending and memory descending, both strictly: no
         * point is as fast with as little memory as another */
        cr_assert_gt(f->pareto[k].cost.total, f->pareto[k - 1].cost.total, "%s, point %d", label, k);
        cr_assert_lt(f->pareto[k].info.memory, f->pareto[k - 1].info.memory, "%s, point %d", label, k);
    }
}

Test(kapla, frontier_is_sorted_mutually_non_dominated_and_starts_at_the_best, .timeout = 60) {
    each_random_op(2503, 16, true, false, sorted_frontier);
}

/* The exact frontier's leanest point is the least memory of any plan; the
 * fast frontier never claims less (its points are real plans). */
static void never_leaner_than_any_plan(const rotor_expr *e, const rotor_chip *chip, const rotor_search_result *f,
                                       const rotor_search_result *x, const char *label) {
    (void)e, (void)chip;
    cr_assert_geq(f->pareto[f->npareto - 1].info.memory, x->pareto[x->npareto - 1].info.memory, "%s", label);
}

Test(kapla, fast_frontier_never_goes_below_the_least_memory_of_any_plan, .timeout = 60) {
    each_random_op(2504, 8, true, true, never_leaner_than_any_plan);
}

Test(kapla, results_do_not_depend_on_the_thread_count) {
    rotor_chip chip = mk2();
    static const char *const ops[][2] = {
        {"C[m,n] += A[m,k] * B[k,n]", "m=1024,k=1024,n=3072"},
        {"O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=1,f=128,c=64,h=28,w=28,kh=1,kw=1"},
    };
    for (int i = 0; i < 2; i++) {
        rotor_expr e = make_expr(ops[i][0], ops[i][1]);
        rotor_search_result a = solve(&e, &chip, ROTOR_SOLVER_FAST, true, 1);
        rotor_search_result b = solve(&e, &chip, ROTOR_SOLVER_FAST, true, 2);
        cr_assert_eq(rotor_plan_compare(&e, &a.best.plan, &b.best.plan), 0, "%s", ops[i][1]);
        cr_assert_eq(a.npareto, b.npareto, "%s", ops[i][1]);
        for (int k = 0; k < a.npareto; k++) {
            cr_assert_eq(rotor_plan_compare(&e, &a.pareto[k].plan, &b.pareto[k].plan), 0, "%s point %d", ops[i][1], k);
            cr_assert_eq(a.pareto[k].cost.total, b.pareto[k].cost.total);
        }
        rotor_search_result_free(&a);
        rotor_search_result_free(&b);
    }
}

Test(kapla, constraints_hold_in_every_fast_plan) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=100,k=300,n=500");
    rotor_chip chip = mk2();
    rotor_search_options o = {.solver = ROTOR_SOLVER_FAST, .pareto = true, .threads = 1,
                              .constraints = {.min_cores = 1024, .max_padding = 1.05, .memory_cap = 60000}};
    rotor_search_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(&e, &chip, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    for (int k = -1; k < r.npareto; k++) {
        const rotor_candidate *c = k < 0 ? &r.best : &r.pareto[k];
        cr_assert_geq(c->info.cores, 1024);
        cr_assert_leq(c->info.padding_ratio, 1.05);
        cr_assert_leq(c->info.memory, 60000);
    }
    rotor_search_result_free(&r);
}

Test(kapla, no_plan_fits_is_nofit_for_the_fast_solver_too) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=4096,k=4096,n=4096");
    rotor_chip chip = shrunk(4, 65536);
    rotor_search_options o = {.solver = ROTOR_SOLVER_FAST};
    rotor_search_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(&e, &chip, &o, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert(strstr(err.msg, "no valid plan fits"), "%s", err.msg);
    cr_assert_eq(r.npareto, 0);
}

Test(kapla, solver_names_round_trip_and_sessions_are_exact_only) {
    rotor_solver s;
    cr_assert(rotor_solver_find("fast", &s) && s == ROTOR_SOLVER_FAST);
    cr_assert(rotor_solver_find("exact", &s) && s == ROTOR_SOLVER_EXACT);
    cr_assert(!rotor_solver_find("fsat", &s));
    cr_assert_str_eq(rotor_solver_name(ROTOR_SOLVER_FAST), "fast");
    cr_assert_str_eq(rotor_solver_name(ROTOR_SOLVER_EXACT), "exact");
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=64,n=64");
    rotor_chip chip = mk2();
    rotor_search_options o = {.solver = ROTOR_SOLVER_FAST};
    rotor_search_session *sess;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search_session_open(&e, &chip, &o, &sess, &err), ROTOR_ERR_INPUT);
    cr_assert_null(sess);
}
