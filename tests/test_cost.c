/* test_cost.c — cost model v1 (src/op/cost.c; cost-model-v1.md "Time" and
 * "Worked numbers"). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brute.h"
#include "rotor/op/cost.h"
#include "fixtures.h"

#define MATMUL "C[m,n] += A[m,k] * B[k,n]"
enum { C_ = 0, A_ = 1, B_ = 2 };
enum { M_ = 0, K_ = 1, N_ = 2 };

static rotor_cost cost_ok(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                          rotor_plan_info *info) {
    rotor_cost c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), e, chip, p, info, &c, &err), ROTOR_OK,
                 "%s", err.msg);
    cr_assert_eq(c.total, c.compute + c.comm + c.reduction);
    return c;
}

static rotor_plan plan3(const rotor_expr *e, int64_t f0, int64_t f1, int64_t f2) {
    rotor_plan p;
    rotor_plan_init(e, &p);
    p.fop[0] = f0, p.fop[1] = f1, p.fop[2] = f2;
    return p;
}

/* R_mm = 250e12 / 1472 FLOP/s per core, beta = 5.5e9 B/s (spec "Inputs"). */
#define RMM (250e12 / 1472)
#define BETA 5.5e9

/* The spec's worked MatMul (m = 32, k = 5120, n = 15360) on ipu-mk2 under
 * F_op = [fm, fk, fn], A split fa-way along k: its cost, its plan in info. */
static rotor_cost spec_cost(int64_t fm, int64_t fk, int64_t fn, int64_t fa, rotor_plan_info *info) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_chip chip = mk2();
    rotor_plan p = plan3(&e, fm, fk, fn);
    p.ft[A_][K_] = fa;
    return cost_ok(&e, &chip, &p, info);
}

/* Spec "Worked numbers": F_op = [1,1,1472], all f_t = 1: s = (32, 5120, 11),
 * compute 2 * 32 * 5120 * pad(11,16) / R_mm = 30.87007744 us, nothing else. */
Test(cost, spec_fop_1_1_1472_costs_30_870077_us_compute_only) {
    rotor_plan_info info;
    rotor_cost c = spec_cost(1, 1, 1472, 1, &info);
    cr_assert_lt(fabs(c.total - 30.870077e-6), 5e-13, "total %.17g", c.total);
    cr_assert_eq(c.compute, 2.0 * 32 * 5120 * 16 / RMM);
    cr_assert_eq(c.comm, 0.0);
    cr_assert_eq(c.reduction, 0.0);
    /* memory: A 32*5120*2 + B 5120*11*2 + C 32*11*2, no shift buffer */
    cr_assert_eq(info.memory, 327680 + 112640 + 704);
}

/* Spec "Worked numbers": F_op = [1,4,368]: n pads to 368 * 42 = 15456,
 * s = (32, 1280, 42); compute 2 * 32 * 1280 * 48 / R_mm = 23.15255808 us and
 * C is reduced over R_C = F_k = 4 rings: 3/4 * (32*42*2) / beta = 0.36654 us;
 * total 23.519 us. */
Test(cost, spec_fop_1_4_368_costs_23_519_us) {
    rotor_plan_info info;
    rotor_cost c = spec_cost(1, 4, 368, 1, &info);
    cr_assert_lt(fabs(c.total - 23.519e-6), 5e-10, "total %.17g", c.total);
    cr_assert_eq(info.sub_task[N_], 42);
    cr_assert_eq(info.rings[C_], 4);
    cr_assert_eq(c.compute, 2.0 * 32 * 1280 * 48 / RMM);
    cr_assert_eq(c.comm, 0.0);
    cr_assert_lt(fabs(c.reduction - 0.75 * 2688 / BETA), 1e-22);
    /* memory: A 32*1280*2 + B 1280*42*2 + C 32*42*2 */
    cr_assert_eq(info.memory, 81920 + 107520 + 2688);
}

/* Spec "Communication time" and "Memory per core": F_op = [1,4,368] with A
 * split 2-way along k (P_A = F_n = 368): S_k = 2, A shifts once, its
 * partition is 32 * 640 * 2 = 40,960 bytes, and the 8,192-byte shift buffer
 * is reserved.  Compute is unchanged (T * t_sub with s_k halved). */
Test(cost, rotation_charges_shifts_times_bytes_over_beta_and_reserves_8192) {
    rotor_plan_info info;
    rotor_cost c = spec_cost(1, 4, 368, 2, &info);
    cr_assert_eq(info.total_steps, 2);
    cr_assert_eq(info.shifts[A_], 1);
    cr_assert_eq(info.shifts[B_], 0);
    cr_assert_eq(info.bytes[A_], 40960);
    cr_assert_eq(info.bytes[B_], 1280 * 42 * 2); /* B does not split k: holds L_k */
    cr_assert_eq(info.memory, 40960 + 107520 + 2688 + 8192);
    cr_assert(info.rotates);
    cr_assert_eq(c.comm, 40960 / BETA);
    cr_assert_eq(c.compute, 2.0 * (2.0 * 32 * 640 * 48 / RMM));
    cr_assert_lt(fabs(c.reduction - 0.75 * 2688 / BETA), 1e-22);
}

/* Spec "Reduction": (R_Y - 1)/R_Y * bytes(Y)/beta + (R_Y - 1) * alpha, and
 * "Communication time" adds alpha * (T - 1).  alpha = 100 ns here. */
Test(cost, latency_adds_alpha_per_step_and_per_reduction_round) {
    rotor_expr e = make_expr(MATMUL, "m=16,k=64,n=16");
    rotor_chip chip = mk2();
    chip.link_latency_ns = 100;
    rotor_plan p = plan3(&e, 1, 8, 2); /* R_C = F_k = 8, P_A = F_n = 2 */
    p.ft[A_][K_] = 2;                   /* T = 2 */
    rotor_plan_info info;
    rotor_cost c = cost_ok(&e, &chip, &p, &info);
    /* L_k = 8, A partition 16 x 4, C partition 16 x 8 */
    cr_assert_eq(info.bytes[A_], 16 * 4 * 2);
    cr_assert_eq(info.bytes[C_], 16 * 8 * 2);
    cr_assert_lt(fabs(c.comm - (1 * 128 / BETA + 100e-9 * 1)), 1e-20, "%.17g", c.comm);
    cr_assert_lt(fabs(c.reduction - (7.0 / 8.0 * 256 / BETA + 7 * 100e-9)), 1e-20, "%.17g",
                 c.reduction);
}

/* Spec "Compute": ops other than contractions use flops_per_point *
 * prod s_a / R_vec (rotor's ipu-mk2 R_vec = 62.5e12 / 1472). */
Test(cost, elementwise_and_reduction_use_the_vector_rate) {
    rotor_chip chip = mk2();
    const double rvec = 62.5e12 / 1472;
    rotor_expr e = make_expr("Y[s,d] = X[s,d] + Z[s,d]", "s=10,d=30");
    rotor_plan p;
    rotor_plan_init(&e, &p);
    p.fop[0] = 2, p.fop[1] = 3;
    rotor_plan_info info;
    rotor_cost c = cost_ok(&e, &chip, &p, &info);
    cr_assert_eq(c.compute, 1.0 * 5 * 10 / rvec);
    cr_assert_eq(c.comm + c.reduction, 0.0);

    rotor_expr r = make_expr("Y[s] += X[s,d]", "s=10,d=30");
    rotor_plan_init(&r, &p);
    p.fop[1] = 3; /* Y shared by F_d = 3 cores: R_Y = 3 partial sums of 10 elements */
    c = cost_ok(&r, &chip, &p, &info);
    cr_assert_eq(c.compute, 1.0 * 10 * 10 / rvec);
    cr_assert_lt(fabs(c.reduction - 2.0 / 3.0 * 20 / BETA), 1e-22);
    /* no 16-padding on the vector unit: s = 3 costs 3 points, not 16 */
    rotor_expr small = make_expr("Y[s] += X[s,d]", "s=3,d=1");
    rotor_plan_init(&small, &p);
    c = cost_ok(&small, &chip, &p, &info);
    cr_assert_eq(c.compute, 3.0 / rvec);
}

/* Spec "Compute": contraction groups; batch axes multiply without padding,
 * Mg, Kg, Ng each pad to 16. */
Test(cost, batch_matmul_pads_m_k_n_to_16_but_not_the_batch) {
    rotor_chip chip = mk2();
    rotor_expr e = make_expr("C[b,m,n] += A[b,m,k] * B[b,k,n]", "b=3,m=5,k=17,n=33");
    int64_t sub[ROTOR_MAX_AXES] = {3, 5, 17, 33};
    cr_assert_eq(rotor_cost_v1_subtask(&e, &chip, sub), 2.0 * 3 * 16 * 32 * 48 / RMM);
}

Test(cost, cost_model_table_finds_v1_by_name_only) {
    cr_assert_geq(rotor_cost_model_count(), 1);
    const rotor_cost_model *v1 = rotor_cost_model_find("v1");
    cr_assert_not_null(v1);
    cr_assert_str_eq(v1->name, "v1");
    cr_assert_eq(rotor_cost_model_default(), v1);
    cr_assert_eq(rotor_cost_model_at(0), v1);
    cr_assert_null(rotor_cost_model_find("nope"));
    cr_assert_null(rotor_cost_model_at(rotor_cost_model_count()));
    cr_assert_null(rotor_cost_model_at(-1));
}

Test(cost, invalid_plan_returns_the_derive_error) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_chip chip = mk2();
    rotor_plan p = plan3(&e, 2, 1, 1472);
    rotor_plan_info info;
    rotor_cost c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &e, &chip, &p, &info, &c, &err),
                 ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "2944 cores") != NULL, "%s", err.msg);
}

/* Invariant (cost.h): for every valid plan, total >= step_bound(F_op, S) +
 * sum_X tensor_bound(X) and step_bound(F_op, S) >= step_bound(F_op, any);
 * and v1 agrees with the brute-force evaluator of tests/brute.h. */
Test(cost, bounds_hold_and_v1_matches_brute_force_on_random_plans) {
    const uint64_t seed = 8675309;
    uint64_t rng = seed;
    const rotor_cost_model *m = rotor_cost_model_default();
    int checked = 0;
    for (int i = 0; i < 20000 && checked < 3000; i++) {
        char dims[64];
        snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)bf_rand_range(&rng, 1, 64),
                 (long long)bf_rand_range(&rng, 1, 64), (long long)bf_rand_range(&rng, 1, 64));
        rotor_expr e = make_expr(MATMUL, dims);
        rotor_chip chip = mk2();
        chip.link_latency_ns = (double)bf_rand_range(&rng, 0, 1) * 30;
        rotor_plan p;
        rotor_plan_init(&e, &p);
        for (int a = 0; a < 3; a++) p.fop[a] = bf_rand_range(&rng, 1, e.extent[a] < 8 ? e.extent[a] : 8);
        /* f_t: random divisors of what is left of P_X (alignment is left to chance) */
        for (int t = 0; t < 3; t++) {
            int64_t left = 1;
            for (int a = 0; a < 3; a++)
                if (!e.tensors[t].has_axis[a]) left *= p.fop[a];
            for (int a = 0; a < 3; a++) {
                if (!e.tensors[t].has_axis[a]) continue;
                int64_t f;
                do f = bf_rand_range(&rng, 1, left);
                while (left % f);
                p.ft[t][a] = f;
                left /= f;
            }
        }
        int perm = (int)bf_rand_range(&rng, 0, 5);
        const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        memcpy(p.order, orders[perm], sizeof orders[perm]);
        rotor_plan_info info;
        rotor_cost c;
        rotor_error err;
        bf_chip bc = bf_chip_of(&chip);
        bf_eval ev;
        bool bvalid = bf_evaluate(&e, &bc, &p, &ev);
        rotor_status st = rotor_cost_plan(m, &e, &chip, &p, &info, &c, &err);
        cr_assert_eq(st == ROTOR_OK, bvalid, "seed %llu case %d: rotor says %d (%s), brute force %d",
                     (unsigned long long)seed, i, st, err.msg, bvalid);
        if (!bvalid) continue;
        checked++;
        cr_assert(fabs(c.total - ev.total) <= 1e-12 * ev.total, "seed %llu case %d: %.17g vs %.17g",
                  (unsigned long long)seed, i, c.total, ev.total);
        cr_assert_eq(info.memory, ev.memory, "seed %llu case %d", (unsigned long long)seed, i);
        for (int t = 0; t < 3; t++)
            cr_assert_eq(info.shifts[t], ev.shifts[t], "seed %llu case %d tensor %d: %lld vs walk %lld",
                         (unsigned long long)seed, i, t, (long long)info.shifts[t], (long long)ev.shifts[t]);
        double sb = m->step_bound(m, &e, &chip, p.fop, info.steps, info.sub_task);
        double ob = m->step_bound(m, &e, &chip, p.fop, NULL, NULL);
        double lb = sb;
        for (int t = 0; t < 3; t++)
            lb += m->tensor_bound(m, &e, &chip, t, info.bytes[t], info.ring_size[t], info.rings[t]);
        cr_assert_leq(ob, sb * (1 + 1e-12), "seed %llu case %d: op bound %.17g > step bound %.17g",
                      (unsigned long long)seed, i, ob, sb);
        cr_assert_leq(lb, c.total * (1 + 1e-12), "seed %llu case %d: bound %.17g > total %.17g",
                      (unsigned long long)seed, i, lb, c.total);
    }
    cr_assert_geq(checked, 500, "only %d valid random plans", checked);
}
