/* test_kaplabase.c — KAPLA's baselines (src/op/kaplabase.c, KAPLA §V):
 * R (random sampling at 0.1 per level) and M (annealing on a learned
 * surrogate) return valid plans costed by the model, the same plan for the
 * same operator (seeded), never a faster plan than the exact search, and R
 * stays off the optimum by its own margin; the kapla-edge preset; and
 * `rotor reproduce kapla`'s library on the LSTM (src/pipeline/kaplarepro.c),
 * inference and training (Fig. 7). */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/op/cost.h"
#include "rotor/op/search.h"
#include "rotor/pipeline/kaplarepro.h"

#define CONV "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]"
#define CONV_DIMS "b=64,c=256,h=13,w=13,kh=3,kw=3,f=384" /* AlexNet's conv4 at batch 64 */

static rotor_search_result solve(const rotor_expr *e, const rotor_chip *chip, rotor_solver s, bool pareto) {
    rotor_search_options o = {.solver = s, .pareto = pareto, .threads = 1};
    rotor_search_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(e, chip, &o, &r, &err), ROTOR_OK, "%s (%s): %s", e->text, rotor_solver_name(s),
                 err.msg);
    return r;
}

/* The plan again through rotor_cost_plan on the chip: valid, same cost. */
static void check_costed(const rotor_expr *e, const rotor_chip *chip, const rotor_candidate *c) {
    rotor_plan p = c->plan;
    rotor_plan_info info;
    rotor_cost cost;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), e, chip, &p, &info, &cost, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(cost.total, c->cost.total);
    cr_assert_leq(info.memory, rotor_chip_sram(chip));
}

Test(kaplabase, names_round_trip) {
    rotor_solver s;
    cr_assert(rotor_solver_find("random", &s) && s == ROTOR_SOLVER_RANDOM);
    cr_assert(rotor_solver_find("ml", &s) && s == ROTOR_SOLVER_ML);
    cr_assert_str_eq(rotor_solver_name(ROTOR_SOLVER_RANDOM), "random");
    cr_assert_str_eq(rotor_solver_name(ROTOR_SOLVER_ML), "ml");
    cr_assert(!rotor_solver_find("rnd", &s));
}

Test(kaplabase, r_and_m_are_deterministic_valid_and_never_beat_exact) {
    const char *texts[] = {CONV, "C[m,n] += A[m,k] * B[k,n]", "C[m,n] += A[m,k] * B[k,n]"};
    const char *dims[] = {CONV_DIMS, "m=64,k=4096,n=4096", "m=64,k=784,n=1500"};
    rotor_chip chip = mk2();
    for (int i = 0; i < 3; i++) {
        rotor_expr e = make_expr(texts[i], dims[i]);
        rotor_search_result x = solve(&e, &chip, ROTOR_SOLVER_EXACT, false);
        for (rotor_solver s = ROTOR_SOLVER_RANDOM; s <= ROTOR_SOLVER_ML; s++) {
            rotor_search_result a = solve(&e, &chip, s, false), b = solve(&e, &chip, s, false);
            cr_assert_eq(a.best.cost.total, b.best.cost.total, "%s %s", dims[i], rotor_solver_name(s));
            cr_assert_eq(memcmp(&a.best.plan, &b.best.plan, sizeof a.best.plan), 0);
            cr_assert_eq(a.stats.plans, b.stats.plans);
            cr_assert_geq(a.best.cost.total, x.best.cost.total, "%s %s beats exact", dims[i], rotor_solver_name(s));
            check_costed(&e, &chip, &a.best);
        }
    }
}

Test(kaplabase, r_gap_on_alexnet_conv4_is_fixed) {
    /* R keeps 10% of the blocked F_op and draws f_t under them: on this
     * convolution it lands 14.09% off the optimum (83.349209 us); M 9.29%
     * (the values of seed 44; a change to the sampling changes them) */
    rotor_expr e = make_expr(CONV, CONV_DIMS);
    rotor_chip chip = mk2();
    rotor_search_result x = solve(&e, &chip, ROTOR_SOLVER_EXACT, false);
    rotor_search_result r = solve(&e, &chip, ROTOR_SOLVER_RANDOM, false);
    rotor_search_result m = solve(&e, &chip, ROTOR_SOLVER_ML, false);
    cr_assert_float_eq(x.best.cost.total, 83.349209e-6, 1e-12);
    cr_assert_float_eq(r.best.cost.total / x.best.cost.total - 1, 0.1409, 5e-5, "R gap %.6f",
                       r.best.cost.total / x.best.cost.total - 1);
    cr_assert_float_eq(m.best.cost.total / x.best.cost.total - 1, 0.0929, 5e-5, "M gap %.6f",
                       m.best.cost.total / x.best.cost.total - 1);
    cr_assert_leq(m.stats.plans, 2048); /* 32 rounds of 32 measurements, each with its overlap variant at most */
}

Test(kaplabase, frontier_is_non_dominated_and_ends_at_the_best) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=4096,n=4096");
    rotor_chip chip = mk2();
    rotor_search_result r = solve(&e, &chip, ROTOR_SOLVER_RANDOM, true);
    cr_assert_gt(r.npareto, 0);
    cr_assert_eq(r.pareto[0].cost.total, r.best.cost.total);
    for (int i = 1; i < r.npareto; i++) {
        cr_assert_gt(r.pareto[i].cost.total, r.pareto[i - 1].cost.total);
        cr_assert_lt(r.pareto[i].info.memory, r.pareto[i - 1].info.memory);
    }
    rotor_search_result_free(&r);
}

Test(kaplabase, rate_out_of_range_and_nofit_are_one_line) {
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=4096,k=4096,n=4096");
    rotor_chip chip = mk2();
    chip.cores_per_chip = 4;
    chip.sram_bytes = 65536;
    rotor_search_options o = {.solver = ROTOR_SOLVER_RANDOM};
    rotor_search_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(&e, &chip, &o, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert(strstr(err.msg, "the random baseline drew no plan"), "%s", err.msg);
    o.baseline_rate = 1.5;
    cr_assert_eq(rotor_search(&e, &chip, &o, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "search: baseline_rate must be in (0, 1], got 1.5");
}

Test(kaplabase, edge_preset) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("kapla-edge", &c, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_cores(&c), 16);
    cr_assert_eq(rotor_chip_sram(&c), 512 * 1024);
    cr_assert_float_eq(rotor_chip_matrix_rate(&c) * 16, 4.096e12, 1e3);
    cr_assert_eq(rotor_chip_validate(&c, &err), ROTOR_OK, "%s", err.msg);
}

Test(kaplabase, reproduce_lstm) {
    const rotor_kaplarepro_net *n = rotor_kaplarepro_find("lstm");
    cr_assert_not_null(n);
    cr_assert_null(rotor_kaplarepro_find("bert"));
    rotor_chip chip = mk2(), edge;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("kapla-edge", &edge, &err), ROTOR_OK);
    rotor_kaplarepro_options o = {.nets = &n, .nnets = 1, .threads = 1};
    rotor_kaplarepro_result r;
    cr_assert_eq(rotor_kaplarepro_run(&o, &chip, &edge, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.nmodels, 1);
    const rotor_kaplarepro_model *m = &r.models[0];
    cr_assert_eq(m->fig9.layers, 1); /* the four gates' one MatMul shape */
    cr_assert_float_eq(m->fig9.rel[0], 1.0, 1e-12);
    cr_assert_geq(m->fig9.rel[1], 1.0);
    cr_assert_geq(m->fig9.rel[2], 1.0);
    cr_assert_geq(m->fig9.rel[3], 1.0);
    /* Fig. 7, its SGD step's layers: the forward MatMul (64 x 1000 x
     * 4000), its input's gradient (reducing the 4000 gates) and its
     * weight's (reducing the batch of 64); the update is element-wise */
    cr_assert_eq(m->fig7.layers, 3);
    cr_assert_eq(m->fig7.pass_layers[ROTOR_KAPLAREPRO_FORWARD], 1);
    cr_assert_eq(m->fig7.pass_layers[ROTOR_KAPLAREPRO_BACKWARD], 2);
    cr_assert_eq(m->fig7.pass_layers[ROTOR_KAPLAREPRO_UPDATE], 0);
    cr_assert_float_eq(m->fig7.rel[0], 1.0, 1e-12);
    for (int s = 1; s < ROTOR_KAPLAREPRO_SOLVERS; s++) cr_assert_geq(m->fig7.rel[s], 1.0);
    cr_assert_gt(m->fig7.rel[2], 1.1); /* R: 16.4% off */
    cr_assert_eq(r.train_layers, 3);
    cr_assert_leq(r.train_layer_worst[1], 0.10); /* issue 44: K within 10% at worst */
    /* its first three MatMuls, all of one shape, so one allocation (the
     * three are equal): 2 output dimensions x 7 micro-batch counts, and one
     * run */
    cr_assert_eq(m->seg.stages, 3);
    cr_assert_eq(m->seg.total, 15);
    cr_assert_eq(m->seg.valid, 9);
    cr_assert_eq(m->seg.pareto, 1);
    cr_assert_float_eq(m->seg.k_cost[ROTOR_KAPLAREPRO_KS - 1], 1.0, 1e-12);
    rotor_kaplarepro_free(&r);
}
