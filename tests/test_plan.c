/* test_plan.c — compute-shift plans (src/op/plan.c; T10 §4.1–§4.2;
 * cost-model-v1.md "A plan" and "Derived quantities"). */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "brute.h"
#include "op/planjson.h"
#include "rotor/op/plan.h"
#include "fixtures.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

#define MATMUL "C[m,n] += A[m,k] * B[k,n]"
enum { C_ = 0, A_ = 1, B_ = 2 };      /* MatMul tensors */
enum { M_ = 0, K_ = 1, N_ = 2 };      /* MatMul axes */

static rotor_plan plan3(const rotor_expr *e, int64_t f0, int64_t f1, int64_t f2) {
    rotor_plan p;
    rotor_plan_init(e, &p);
    p.fop[0] = f0, p.fop[1] = f1, p.fop[2] = f2;
    return p;
}

static rotor_plan_info derive_ok(const rotor_expr *e, const rotor_plan *p) {
    rotor_chip chip = mk2();
    rotor_plan_info info;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_plan_derive(e, &chip, p, &info, &err), ROTOR_OK, "%s", err.msg);
    return info;
}

static void derive_fails(const rotor_expr *e, const rotor_plan *p, rotor_status want, const char *msg) {
    rotor_chip chip = mk2();
    rotor_plan_info info;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_plan_derive(e, &chip, p, &info, &err), want, "status for \"%s\"", err.msg);
    assert_msg_has(err, msg);
}

/* The three numbers v[0 .. 2] of `what` (by MatMul axis: m, k, n; or by
 * tensor: C, A, B) are a, b and c. */
static void assert_three(const int64_t *v, int64_t a, int64_t b, int64_t c, const char *what) {
    cr_assert_eq(v[0], a, "%s[0]: %lld", what, (long long)v[0]);
    cr_assert_eq(v[1], b, "%s[1]: %lld", what, (long long)v[1]);
    cr_assert_eq(v[2], c, "%s[2]: %lld", what, (long long)v[2]);
}

/* The benchmark MatMul (m=32, k=5120, n=15360) under F_op = [fm, fk, fn]
 * fails to derive with status `want` and a message that has msg. */
static void benchmark_fails(int64_t fm, int64_t fk, int64_t fn, rotor_status want, const char *msg) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = plan3(&e, fm, fk, fn);
    derive_fails(&e, &p, want, msg);
}

/* ---- T10 Figure 6 (§4.1) ---------------------------------------------------- */

/* Figure 6: a [6,8] tensor on 8 cores with f_s = [2,1] is shared by 4 cores.
 * Modelled as X[i,j] in Y[i,r] += X[i,j] * W[j,r] with F_op i=2, j=1, r=4:
 * X lacks r, so P_X = F_r = 4 and f_s^X = [2,1]. */
Test(plan, fig6_tensor_on_8_cores_forms_2_rings_of_2) {
    rotor_expr e = make_expr("Y[i,r] += X[i,j] * W[j,r]", "i=6,j=8,r=4");
    cr_assert_str_eq(e.axis_name[0], "i");
    cr_assert_str_eq(e.axis_name[1], "j");
    cr_assert_str_eq(e.axis_name[2], "r");
    rotor_plan p = plan3(&e, 2, 1, 4);
    p.ft[1][1] = 2; /* f_t^X = [1,2] */
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.cores, 8);
    cr_assert_eq(info.sharing[1], 4);
    cr_assert_eq(info.ring_size[1], 2);
    cr_assert_eq(info.rings[1], 2); /* 4 / 2 = 2 rotation rings with 2 cores in each */
    /* sub-tensor [3,8] split into partitions [3,4] (Figure 6 (b)) */
    cr_assert_eq(info.sub_op[0], 3);
    cr_assert_eq(info.sub_op[1], 8);
    cr_assert_eq(info.part[1][0], 3);
    cr_assert_eq(info.part[1][1], 4);
    cr_assert_eq(info.bytes[1], 2 * 3 * 4);
}

/* Figure 6 (c): f_t = [1,4] gives 4 / 4 = 1 ring of 4 cores, partitions [3,2]. */
Test(plan, fig6_tensor_with_ft_1_4_forms_1_ring_of_4) {
    rotor_expr e = make_expr("Y[i,r] += X[i,j] * W[j,r]", "i=6,j=8,r=4");
    rotor_plan p = plan3(&e, 2, 1, 4);
    p.ft[1][1] = 4;
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.sharing[1], 4);
    cr_assert_eq(info.ring_size[1], 4);
    cr_assert_eq(info.rings[1], 1);
    cr_assert_eq(info.part[1][0], 3);
    cr_assert_eq(info.part[1][1], 2);
    cr_assert_eq(info.steps[1], 4);
    cr_assert_eq(info.total_steps, 4);
    cr_assert(info.rotates);
}

/* ---- T10 §4.2 ----------------------------------------------------------- */

/* §4.2: F_op = [2,3,1] on [m,n,k] makes 6 sub-operators, f_s^A = [2,1] (m,k),
 * f_s^B = [1,3] (k,n), f_s^C = [2,3] (m,n), each computing [M/2,K] x [K,N/3].
 * The spatial factor of X along a is F_op[a], so with M=4, K=6, N=6 the
 * sub-tensors are A [2,6], B [6,2], C [2,2].
 *
 * Sharing: A lacks n, so P_A = F_n = 3; B lacks m, so P_B = F_m = 2; C lacks
 * k, so P_C = 1.  The paper's text says B's sub-tensors are "shared by
 * P = 6/2 = 3 cores" with f_t^B = [3,1]; that is inconsistent with its own
 * f_s^B = [1,3] (3 sub-tensors on 6 cores: 6/3 = 2).  The 3-way sharing it
 * describes is A's; the spec's formula gives P_B = 2, and rotor follows the
 * spec. */
Test(plan, t10_42_fop_2_3_1_shares_A_over_3_cores_and_B_over_2) {
    rotor_expr e = make_expr(MATMUL, "m=4,k=6,n=6");
    rotor_plan p = plan3(&e, 2, 1, 3); /* m=2, k=1, n=3 */
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.cores, 6);
    cr_assert_eq(info.sharing[A_], 3);
    cr_assert_eq(info.sharing[B_], 2);
    cr_assert_eq(info.sharing[C_], 1);
    cr_assert_eq(info.part[A_][0], 2); cr_assert_eq(info.part[A_][1], 6);
    cr_assert_eq(info.part[B_][0], 6); cr_assert_eq(info.part[B_][1], 2);
    cr_assert_eq(info.part[C_][0], 2); cr_assert_eq(info.part[C_][1], 2);
    /* the paper's ring of 3 exists for A: f_t^A = [1,3] gives 1 ring */
    p.ft[A_][K_] = 3;
    info = derive_ok(&e, &p);
    cr_assert_eq(info.ring_size[A_], 3);
    cr_assert_eq(info.rings[A_], 1);
    /* and f_t^B = [3,1] (the paper's) does not divide P_B = 2 */
    p.ft[A_][K_] = 1;
    p.ft[B_][K_] = 3;
    derive_fails(&e, &p, ROTOR_ERR_INPUT, "prod f_t of B (3) does not divide its sharing degree P_B = 2");
}

/* Paper 003 "Partitioning rTensors": F_op = [2,1,4] on [m,k,n]: f_s^B = [1,4],
 * each sub-tensor of B shared by P = 8/4 = 2 cores; f_t^B = [2,1] forms
 * 2/2 = 1 ring. */
Test(plan, fop_2_1_4_shares_B_over_2_cores_in_1_ring) {
    rotor_expr e = make_expr(MATMUL, "m=2,k=4,n=4");
    rotor_plan p = plan3(&e, 2, 1, 4);
    p.ft[B_][K_] = 2;
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.cores, 8);
    cr_assert_eq(info.sharing[B_], 2);
    cr_assert_eq(info.ring_size[B_], 2);
    cr_assert_eq(info.rings[B_], 1);
}

/* Paper 003 "Aligning the rotations" (Figure 3): A with f_t = 4 along k and B
 * with f_t = 2 along k take S_k = 4 steps of sub-MatMul [m=1,k=1,n=1]; A
 * shifts after every step (3 times), B every 2 steps (once). */
Test(plan, aligned_ft_4_and_2_along_k_take_4_steps_A_shifts_3_B_shifts_1) {
    rotor_expr e = make_expr(MATMUL, "m=2,k=4,n=4");
    rotor_plan p = plan3(&e, 2, 1, 4); /* P_A = F_n = 4, P_B = F_m = 2 */
    p.ft[A_][K_] = 4;
    p.ft[B_][K_] = 2;
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.steps[K_], 4);
    cr_assert_eq(info.total_steps, 4);
    assert_three(info.sub_task, 1, 1, 1, "sub_task");
    assert_three(info.shifts, 0, 3, 1, "shifts"); /* C, A, B */
    /* partitions along k: A 4/4 = 1, B 4/2 = 2 */
    cr_assert_eq(info.part[A_][1], 1);
    cr_assert_eq(info.part[B_][0], 2);
    /* the walk agrees */
    int64_t sh[ROTOR_MAX_TENSORS];
    cr_assert(bf_walk(&e, info.steps, p.ft, p.order, sh));
    cr_assert_eq(sh[A_], 3);
    cr_assert_eq(sh[B_], 1);
}

/* T10 §4.2 "Sub-operator scheduling" (spec "Shifts"): one tensor split 3-way
 * along m, another 2-way along n; both loop orders take 5 shifts: m inner
 * 2 + 1 + 2, n inner 1 + 1 + 1 + 1 + 1. */
Test(plan, t10_schedule_takes_5_shifts_in_either_loop_order) {
    rotor_expr e = make_expr(MATMUL, "m=6,k=1,n=4");
    int64_t steps[ROTOR_MAX_AXES] = {3, 1, 2};
    int64_t ft_a[ROTOR_MAX_AXES] = {3, 1, 1}; /* A: 3-way along m */
    int64_t ft_b[ROTOR_MAX_AXES] = {1, 1, 2}; /* B: 2-way along n */
    int m_inner[3] = {K_, N_, M_}, n_inner[3] = {K_, M_, N_};
    cr_assert_eq(rotor_plan_shifts(&e, steps, ft_a, m_inner), 4);
    cr_assert_eq(rotor_plan_shifts(&e, steps, ft_b, m_inner), 1);
    cr_assert_eq(rotor_plan_shifts(&e, steps, ft_a, n_inner), 2);
    cr_assert_eq(rotor_plan_shifts(&e, steps, ft_b, n_inner), 3);
}

/* ---- invalid plans ------------------------------------------------------------ */

Test(plan, fop_outside_1_to_extent_is_refused) {
    benchmark_fails(0, 1, 1, ROTOR_ERR_INPUT, "F_op[m] = 0: expected 1 to E_m = 32");
    benchmark_fails(33, 1, 1, ROTOR_ERR_INPUT, "F_op[m] = 33: expected 1 to E_m = 32");
}

/* cost-model-v1.md "A plan": prod F_op <= N = 1472. */
Test(plan, fop_over_1472_cores_is_refused) {
    benchmark_fails(2, 1, 1472, ROTOR_ERR_INPUT, "F_op uses 2944 cores; the chip has 1472");
}

/* The benchmark MatMul on one core holds 2 * (32*5120 + 5120*15360 + 32*15360)
 * = 158,597,120 bytes; the chip has S = 638,976 (cost-model-v1.md "Inputs"). */
Test(plan, benchmark_on_one_core_does_not_fit_624_kib) {
    benchmark_fails(1, 1, 1, ROTOR_ERR_NOFIT, "needs 158597120 bytes per core; the chip has 638976");
}

Test(plan, ft_not_dividing_sharing_degree_is_refused) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = plan3(&e, 2, 1, 4); /* P_B = F_m = 2 */
    p.ft[B_][K_] = 4;
    derive_fails(&e, &p, ROTOR_ERR_INPUT, "prod f_t of B (4) does not divide its sharing degree P_B = 2");
}

/* Alignment (T10 §4.2): 4 and 6 along k do not divide one another. */
Test(plan, misaligned_ft_4_and_6_along_k_are_refused) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = plan3(&e, 6, 1, 4); /* P_A = 4, P_B = 6 */
    p.ft[A_][K_] = 4;
    p.ft[B_][K_] = 6;
    derive_fails(&e, &p, ROTOR_ERR_INPUT,
                 "f_t along k are not aligned: f_t_A_k = 4 and f_t_B_k = 6 do not divide one another");
}

Test(plan, ft_on_an_axis_the_tensor_lacks_is_refused) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = plan3(&e, 1, 1, 4);
    p.ft[A_][N_] = 2;
    derive_fails(&e, &p, ROTOR_ERR_INPUT, "f_t_A_n = 2: tensor A has no axis n (expected 1)");
    p.ft[A_][N_] = 0;
    derive_fails(&e, &p, ROTOR_ERR_INPUT, "f_t_A_n = 0: expected at least 1");
}

Test(plan, loop_order_that_is_no_permutation_is_refused) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = plan3(&e, 2, 2, 2);
    p.order[0] = 0, p.order[1] = 0, p.order[2] = 2;
    derive_fails(&e, &p, ROTOR_ERR_INPUT, "loop order is not a permutation of the 3 axes");
    p.order[1] = 3;
    derive_fails(&e, &p, ROTOR_ERR_INPUT, "loop order is not a permutation of the 3 axes");
}

/* ---- padding and partitions -------------------------------------------------- */

/* Spec "Worked numbers": F_op = [1,1,1472] pads n = 15360 to 16192
 * (11 * 1472) and gives s = (32, 5120, 11). */
Test(plan, fop_n_1472_pads_15360_to_16192) {
    rotor_expr e = make_expr(MATMUL, "m=32,k=5120,n=15360");
    rotor_plan p = plan3(&e, 1, 1, 1472);
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.padded[N_], 16192);
    cr_assert_eq(info.sub_op[N_], 11);
    assert_three(info.sub_task, 32, 5120, 11, "sub_task");
    cr_assert_eq(info.padding_ratio, 16192.0 / 15360.0);
    /* A whole (327,680 B), B 5120 x 11 (112,640 B), C 32 x 11 (704 B); no shift buffer */
    assert_three(info.bytes, 704, 327680, 112640, "bytes"); /* C, A, B */
    cr_assert_eq(info.memory, 441024);
    cr_assert(!info.rotates);
}

/* Padding is to a multiple of F_op * S_a: F_op n = 3 with S_n = 2 pads 10 to 12. */
Test(plan, padding_is_to_a_multiple_of_fop_times_steps) {
    rotor_expr e = make_expr(MATMUL, "m=4,k=4,n=10");
    rotor_plan p = plan3(&e, 2, 1, 3); /* P_C... C lacks k: P_C = 1; A lacks n: P_A = 3 */
    p.fop[M_] = 2;
    /* S_n = 2 needs some tensor with n to split it: B's P_B = F_m = 2 */
    p.ft[B_][N_] = 2;
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.steps[N_], 2);
    cr_assert_eq(info.padded[N_], 12);
    cr_assert_eq(info.sub_op[N_], 4);
    cr_assert_eq(info.sub_task[N_], 2);
    cr_assert_eq(info.part[B_][1], 2);  /* B splits n: 4 / 2 */
    cr_assert_eq(info.part[C_][1], 4);  /* C does not: L_n / 1 */
    cr_assert_eq(info.padding_ratio, 12.0 / 10.0);
}

/* Spec "Partition ... along a compound dimension a+b: L_a/f_a + L_b/f_b - 1". */
Test(plan, compound_window_partition_is_La_over_fa_plus_Lb_over_fb_minus_1) {
    rotor_expr e = make_expr("O[f,h] += I[c,h+kh] * W[f,c,kh]", "c=2,h=8,kh=3,f=2");
    /* axes: c, h, kh, f */
    rotor_plan p;
    rotor_plan_init(&e, &p);
    p.fop[1] = 2; /* F_h = 2: L_h = 4 */
    p.fop[3] = 2; /* F_f = 2: P_I = 2 */
    rotor_plan_info info = derive_ok(&e, &p);
    cr_assert_eq(info.sub_op[1], 4);
    cr_assert_eq(info.sub_op[2], 3);
    cr_assert_eq(info.part[1][1], 4 + 3 - 1);
    p.ft[1][1] = 2; /* I splits h: 4/2 + 3/1 - 1 = 4 */
    info = derive_ok(&e, &p);
    cr_assert_eq(info.part[1][1], 4);
    cr_assert_eq(info.bytes[1], 2 * 2 * 4);
    cr_assert_eq(info.memory, info.bytes[0] + info.bytes[1] + info.bytes[2] + 8192);
}

/* A strided window 2*h+kh spans 2*(x_h - 1) + (x_kh - 1) + 1 (plan.h,
 * rotor_dim_extent; the spec covers stride 1). */
Test(plan, strided_window_spans_stride_times_extent) {
    rotor_dim d = {.nterms = 2, .axis = {0, 1}, .coef = {2, 1}};
    int64_t len[2] = {4, 3};
    cr_assert_eq(rotor_dim_extent(&d, len), 2 * 3 + 2 + 1);
    rotor_dim plain = {.nterms = 1, .axis = {0, 0}, .coef = {1, 0}};
    cr_assert_eq(rotor_dim_extent(&plain, len), 4);
}

/* ---- the loop order ------------------------------------------------------------ */

static int64_t order_cost(const rotor_expr *e, const int64_t *steps,
                          int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES], const int64_t *bytes,
                          const int *order) {
    int64_t c = 0;
    for (int t = 0; t < e->ntensors; t++) c += rotor_plan_shifts(e, steps, ft[t], order) * bytes[t];
    return c;
}

/* Every permutation of the axes, recursively; the least cost. */
static void all_orders(const rotor_expr *e, const int64_t *steps,
                       int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES], const int64_t *bytes,
                       int *order, int depth, int64_t *best) {
    if (depth == e->naxes) {
        int64_t c = order_cost(e, steps, ft, bytes, order);
        if (c < *best) *best = c;
        return;
    }
    for (int i = depth; i < e->naxes; i++) {
        int t = order[depth];
        order[depth] = order[i];
        order[i] = t;
        all_orders(e, steps, ft, bytes, order, depth + 1, best);
        order[i] = order[depth];
        order[depth] = t;
    }
}

/* Invariant: for any aligned factors and partition sizes, rotor_plan_best_order
 * gives the least sum_X shifts(X) * bytes(X) over all permutations of the
 * axes, and the closed-form shifts equal the reflected walk's count. */
Test(plan, best_order_is_optimal_over_all_permutations) {
    const char *ops[] = {MATMUL, "C[b,m,n] += A[b,m,k] * B[b,k,n]", "O[f,h] += I[c,h+kh] * W[f,c,kh]",
                         "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]"};
    const char *dims[] = {"m=1,k=1,n=1", "b=1,m=1,k=1,n=1", "c=1,h=1,kh=1,f=1",
                          "b=1,f=1,c=1,h=1,w=1,kh=1,kw=1"};
    const int64_t step_values[] = {1, 2, 3, 4, 6, 8, 12};
    const uint64_t seed = 1234567;
    uint64_t rng = seed;
    for (int i = 0; i < 3000; i++) {
        int op = i < 2900 ? (int)(i % 3) : 3; /* 100 cases of the 7-axis conv */
        rotor_expr e = make_expr(ops[op], dims[op]);
        int64_t steps[ROTOR_MAX_AXES], ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES], bytes[ROTOR_MAX_TENSORS];
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++)
            for (int a = 0; a < ROTOR_MAX_AXES; a++) ft[t][a] = 1;
        for (int a = 0; a < e.naxes; a++) {
            steps[a] = bf_rand_range(&rng, 0, 2) ? 1 : step_values[bf_rand_range(&rng, 0, 6)];
            /* each tensor with the axis: a divisor of S_a; factors of a divisor
             * chain here are all divisors of S_a and at least one reaches S_a,
             * but pairwise divisibility is not needed for the objective */
            int last = -1;
            for (int t = 0; t < e.ntensors; t++) {
                if (!e.tensors[t].has_axis[a]) continue;
                int64_t f;
                do f = bf_rand_range(&rng, 1, steps[a]);
                while (steps[a] % f);
                ft[t][a] = f;
                last = t;
            }
            ft[last][a] = steps[a];
        }
        for (int t = 0; t < e.ntensors; t++) bytes[t] = bf_rand_range(&rng, 1, 1000);
        int order[ROTOR_MAX_AXES], perm[ROTOR_MAX_AXES];
        rotor_plan_best_order(&e, steps, ft, bytes, order);
        bool seen[ROTOR_MAX_AXES] = {false};
        for (int l = 0; l < e.naxes; l++) {
            cr_assert(order[l] >= 0 && order[l] < e.naxes && !seen[order[l]],
                      "seed %llu case %d: not a permutation", (unsigned long long)seed, i);
            seen[order[l]] = true;
            perm[l] = l;
        }
        int64_t best = INT64_MAX;
        all_orders(&e, steps, ft, bytes, perm, 0, &best);
        int64_t got = order_cost(&e, steps, ft, bytes, order);
        cr_assert_eq(got, best, "seed %llu case %d (%s): best_order costs %lld, optimum %lld",
                     (unsigned long long)seed, i, ops[op], (long long)got, (long long)best);
        /* the closed form counts what the walk counts (divisor factors) */
        int64_t walk[ROTOR_MAX_TENSORS];
        cr_assert(bf_walk(&e, steps, ft, order, walk));
        for (int t = 0; t < e.ntensors; t++)
            cr_assert_eq(rotor_plan_shifts(&e, steps, ft[t], order), walk[t],
                         "seed %llu case %d tensor %d: closed form %lld, walk %lld",
                         (unsigned long long)seed, i, t,
                         (long long)rotor_plan_shifts(&e, steps, ft[t], order), (long long)walk[t]);
    }
}

/* plan.h: axes with S_a = 1 go outermost in axis order; with nothing to shift
 * the order is the identity. */
Test(plan, best_order_without_steps_is_identity) {
    rotor_expr e = make_expr(MATMUL, "m=4,k=4,n=4");
    int64_t steps[ROTOR_MAX_AXES] = {1, 1, 1}, bytes[ROTOR_MAX_TENSORS] = {8, 8, 8};
    int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++)
        for (int a = 0; a < ROTOR_MAX_AXES; a++) ft[t][a] = 1;
    int order[ROTOR_MAX_AXES];
    rotor_plan_best_order(&e, steps, ft, bytes, order);
    cr_assert_eq(order[0], 0);
    cr_assert_eq(order[1], 1);
    cr_assert_eq(order[2], 2);
    /* T10 §4.2: the smaller tensor's axis goes inside (it is shifted more often) */
    steps[M_] = 3, steps[N_] = 2;
    ft[A_][M_] = 3, ft[B_][N_] = 2;
    bytes[A_] = 100, bytes[B_] = 10;
    rotor_plan_best_order(&e, steps, ft, bytes, order);
    cr_assert_eq(order[0], K_);
    cr_assert_eq(order[1], M_);
    cr_assert_eq(order[2], N_);
}

Test(plan, compare_orders_fop_then_ft_then_loop_order) {
    rotor_expr e = make_expr(MATMUL, "m=4,k=4,n=4");
    rotor_plan x = plan3(&e, 1, 2, 1), y = plan3(&e, 2, 1, 1);
    cr_assert_lt(rotor_plan_compare(&e, &x, &y), 0);
    cr_assert_gt(rotor_plan_compare(&e, &y, &x), 0);
    y = x;
    cr_assert_eq(rotor_plan_compare(&e, &x, &y), 0);
    y.ft[A_][M_] = 2;
    cr_assert_lt(rotor_plan_compare(&e, &x, &y), 0);
    y = x;
    y.order[0] = 1, y.order[1] = 0;
    cr_assert_lt(rotor_plan_compare(&e, &x, &y), 0);
}

/* rotor_json_int writes what "%lld" writes, the extremes included. */
Test(plan, json_integers_are_printed_as_lld_prints_them) {
    const int64_t v[] = {0, 7, -7, 10, -10, 99, 100, 1472, -1234567890123, 9007199254740993, INT64_MAX,
                         INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char want[32];
        snprintf(want, sizeof want, "%lld", (long long)v[i]);
        cJSON *x = rotor_json_int(v[i]);
        cr_assert(cJSON_IsRaw(x));
        cr_assert_str_eq(x->valuestring, want);
        cJSON_Delete(x);
    }
}
