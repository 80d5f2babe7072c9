/* test_emu.c — the functional emulator and its checks (src/op/emu.c; T10 §4.4;
 * cost-model-v1.md "Time"). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/op/cost.h"
#include "rotor/op/emu.h"
#include "rotor/op/sample.h"
#include <omp.h>
#include "fixtures.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

enum { C_ = 0, A_ = 1, B_ = 2 }; /* MatMul tensors */
enum { M_ = 0, K_ = 1, N_ = 2 }; /* MatMul axes */

/* Everything one emulated run needs, on the heap. */
typedef struct run {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    rotor_cost cost;
    rotor_place *pl;
    float *in[ROTOR_MAX_TENSORS];
    float *out;
    double *ref, *mag;
    rotor_emu_result res;
    rotor_error err;
} run;

static void run_setup(run *r, const rotor_chip *chip) {
    r->err.msg[0] = '\0';
    cr_assert_eq(rotor_cost_plan(rotor_cost_model_default(), &r->e, chip, &r->p, &r->info, &r->cost, &r->err),
                 ROTOR_OK, "%s", r->err.msg);
    cr_assert_eq(rotor_place_make(&r->e, &r->p, &r->info, &r->pl, &r->err), ROTOR_OK, "%s", r->err.msg);
    memset(r->in, 0, sizeof r->in);
    for (int t = 1; t < r->e.ntensors; t++)
        r->in[t] = malloc((size_t)rotor_emu_tensor_elems(&r->e, t, NULL) * sizeof(float));
    int64_t ny = rotor_emu_tensor_elems(&r->e, 0, NULL);
    r->out = malloc((size_t)ny * sizeof(float));
    r->ref = malloc((size_t)ny * sizeof(double));
    r->mag = malloc((size_t)ny * sizeof(double));
    rotor_emu_random_inputs(&r->e, 7, r->in);
    cr_assert_eq(rotor_emu_reference(&r->e, (const float *const *)r->in, r->ref, r->mag, &r->err), ROTOR_OK,
                 "%s", r->err.msg);
}

static rotor_status run_emu(run *r, const rotor_chip *chip, const rotor_emu_options *opt) {
    return rotor_emu_run(r->pl, chip, opt, (const float *const *)r->in, r->out, &r->res, &r->err);
}

static void run_free(run *r) {
    rotor_place_free(r->pl);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) free(r->in[t]);
    free(r->out);
    free(r->ref);
    free(r->mag);
}

static void matmul(run *r, const char *dims, int64_t fm, int64_t fk, int64_t fn) {
    matmul_plan(dims, fm, fk, fn, &r->e, &r->p);
}

/* The benchmark text's example chain on ipu-mk2 (F_op = [2,1,4], A f_t = 4
 * and B f_t = 2 along k), set up in r and emulated with opt. */
static rotor_status chain_emu(run *r, const rotor_emu_options *opt) {
    rotor_chip chip = mk2();
    matmul(r, "m=64,k=96,n=80", 2, 1, 4);
    r->p.ft[A_][K_] = 4, r->p.ft[B_][K_] = 2;
    run_setup(r, &chip);
    return run_emu(r, &chip, opt);
}

/* The checks `rotor verify` makes: result within tolerance, every core
 * shifted every tensor exactly shifts(X) times, exchange time == model. */
static void assert_verified(const run *r, const char *ctx) {
    double err = rotor_emu_max_error(&r->e, r->out, r->ref, r->mag);
    cr_assert(err <= ROTOR_EMU_TOLERANCE, "%s: error %g", ctx, err);
    for (int t = 0; t < r->e.ntensors; t++) {
        cr_assert_eq(r->res.shifts_min[t], r->info.shifts[t], "%s: tensor %d min shifts", ctx, t);
        cr_assert_eq(r->res.shifts_max[t], r->info.shifts[t], "%s: tensor %d max shifts", ctx, t);
    }
    cr_assert(r->res.exchange_time == r->cost.comm, "%s: exchange %.17g != model %.17g", ctx,
              r->res.exchange_time, r->cost.comm);
    cr_assert_eq(r->res.steps, r->info.total_steps);
}

/* T10 Figure 10: 3x3 MatMul on 3x3 cores, A and B rotating 3-way along k.
 * Two transitions, each moving one element of A and one of B per core. */
Test(emu, fig10_3x3_matmul_on_9_cores_computes_C_exactly_with_2_shifts_each) {
    rotor_chip chip = mk2();
    run r;
    matmul(&r, "m=3,k=3,n=3", 3, 1, 3);
    r.p.ft[A_][K_] = 3, r.p.ft[B_][K_] = 3;
    run_setup(&r, &chip);
    cr_assert_eq(run_emu(&r, &chip, NULL), ROTOR_OK, "%s", r.err.msg);
    assert_verified(&r, "fig10");
    cr_assert_eq(r.res.transitions, 2);
    cr_assert_eq(r.res.exchange_bytes, 2 * (2 + 2)); /* 2 transitions x (A + B), FP16 */
    cr_assert_eq(r.res.bytes_max[A_], 4);
    run_free(&r);
}

/* The benchmark text's example: F_op = [2,1,4], A f_t = 4 and B f_t = 2
 * along k.  Every core shifts A 3 times and B once; the emulated exchange
 * time equals the model's (3 * bytes(A) + bytes(B)) / beta. */
Test(emu, chain_A4_B2_every_core_shifts_A_3_B_1_and_exchange_equals_model) {
    int64_t core_shifts[3 * 8];
    run r;
    cr_assert_eq(chain_emu(&r, &(rotor_emu_options){.core_shifts = core_shifts}), ROTOR_OK, "%s", r.err.msg);
    assert_verified(&r, "chain");
    for (int c = 0; c < 8; c++) {
        cr_assert_eq(core_shifts[A_ * 8 + c], 3);
        cr_assert_eq(core_shifts[B_ * 8 + c], 1);
        cr_assert_eq(core_shifts[C_ * 8 + c], 0);
    }
    /* A partition: 32 x 24 FP16 = 1536 B; B: 48 x 20 = 1920 B */
    cr_assert_eq(r.info.bytes[A_], 1536);
    cr_assert_eq(r.info.bytes[B_], 1920);
    cr_assert_eq(r.res.exchange_bytes, 3 * 1536 + 1920);
    cr_assert(r.res.exchange_time == (3.0 * 1536 + 1920) / 5.5e9);
    run_free(&r);
}

/* A 1,472-core plan (every ipu-mk2 core) with small tiles runs and is exact:
 * memory is proportional to the data held, not to cores x tensor size. */
Test(emu, all_1472_cores_with_rotating_B_verify) {
    rotor_chip chip = mk2();
    run r;
    matmul(&r, "m=64,k=96,n=80", 4, 8, 46);
    r.p.ft[B_][K_] = 4;                      /* P_B = F_m = 4: one ring of 4 */
    r.p.ft[A_][M_] = 23, r.p.ft[A_][K_] = 2; /* P_A = F_n = 46: a 23 x 2 ring, chain 2 | 4 on k */
    run_setup(&r, &chip);
    cr_assert_eq(r.info.cores, 1472);
    cr_assert_eq(run_emu(&r, &chip, NULL), ROTOR_OK, "%s", r.err.msg);
    assert_verified(&r, "1472");
    run_free(&r);
}

/* Shifts pass through the 8 KiB shift buffer: a 64 x 96 FP16 partition of A
 * (12 KiB) takes 2 copies per shift. */
Test(emu, partition_of_12_KiB_takes_2_shift_buffer_copies_per_shift) {
    rotor_chip chip = mk2();
    run r;
    matmul(&r, "m=64,k=192,n=32", 1, 1, 2);
    r.p.ft[A_][K_] = 2;
    run_setup(&r, &chip);
    cr_assert_eq(r.info.bytes[A_], 64 * 96 * 2);
    cr_assert_eq(run_emu(&r, &chip, NULL), ROTOR_OK, "%s", r.err.msg);
    assert_verified(&r, "buffer");
    cr_assert_eq(r.info.shifts[A_], 1);
    cr_assert_eq(r.res.copies_max[A_], 2);
    run_free(&r);
}

/* A core whose SRAM cannot hold its partitions is an error naming the bytes,
 * not a crash. */
Test(emu, sram_too_small_for_the_partitions_is_a_clear_error) {
    run r;
    cr_assert_eq(chain_emu(&r, &(rotor_emu_options){.sram_bytes = 4096}), ROTOR_ERR_NOFIT);
    /* C 32x20, A 32x24, B 48x20 in FP16, + 8 KiB shift buffer */
    cr_assert_eq(r.info.memory, 1280 + 1536 + 1920 + 8192);
    assert_msg_has(r.err, "every core must hold 12928 bytes");
    assert_msg_has(r.err, "has 4096 bytes of SRAM");
    run_free(&r);
}

Test(emu, unknown_function_is_refused_by_name) {
    rotor_chip chip = mk2();
    rotor_expr e;
    cr_assert_eq(rotor_expr_make("Y[s,d] = bessel(X[s,d])", "s=4,d=4", &e, NULL), ROTOR_OK);
    rotor_plan p;
    rotor_plan_init(&e, &p);
    rotor_plan_info info;
    cr_assert_eq(rotor_plan_derive(&e, &chip, &p, &info, NULL), ROTOR_OK); /* plans fine */
    rotor_place *pl;
    cr_assert_eq(rotor_place_make(&e, &p, &info, &pl, NULL), ROTOR_OK);
    float x[16] = {0}, y[16];
    const float *in[2] = {NULL, x};
    rotor_emu_result res;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_emu_run(pl, &chip, NULL, in, y, &res, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "function 'bessel'");
    rotor_place_free(pl);
}

/* ---- mutation tests: the check must be able to fail ----------------------- */

/* Fig 10 with K = 9: rings of 3 along k, 3 elements per partition. */
static void mutation_run(run *r, const rotor_chip *chip) {
    matmul(r, "m=6,k=9,n=6", 3, 1, 3);
    r->p.ft[A_][K_] = 3, r->p.ft[B_][K_] = 3;
    run_setup(r, chip);
}

Test(emu, corrupted_placement_is_detected_by_the_tag_check_and_by_the_numbers) {
    rotor_chip chip = mk2();
    run r;
    mutation_run(&r, &chip);
    rotor_emu_options opt = {.mutation = ROTOR_EMU_CORRUPT_PLACEMENT, .mutate_tensor = A_, .mutate_core = 4};
    cr_assert_eq(run_emu(&r, &chip, &opt), ROTOR_ERR_INPUT);
    assert_msg_has(r.err, "at step 0 core 4 needs partition");
    opt.no_tag_check = true;
    cr_assert_eq(run_emu(&r, &chip, &opt), ROTOR_OK, "%s", r.err.msg);
    cr_assert_gt(rotor_emu_max_error(&r.e, r.out, r.ref, r.mag), 100 * ROTOR_EMU_TOLERANCE);
    run_free(&r);
}

Test(emu, skipped_shift_is_detected) {
    rotor_chip chip = mk2();
    run r;
    mutation_run(&r, &chip);
    rotor_emu_options opt = {.mutation = ROTOR_EMU_SKIP_SHIFT, .mutate_tensor = B_, .mutate_core = 2,
                             .mutate_transition = 1, .no_tag_check = true};
    cr_assert_eq(run_emu(&r, &chip, &opt), ROTOR_OK, "%s", r.err.msg);
    cr_assert_gt(rotor_emu_max_error(&r.e, r.out, r.ref, r.mag), 100 * ROTOR_EMU_TOLERANCE);
    cr_assert_eq(r.res.shifts_min[B_], 1); /* core 2 received B once, not twice */
    opt.no_tag_check = false;
    cr_assert_eq(run_emu(&r, &chip, &opt), ROTOR_ERR_INPUT);
    assert_msg_has(r.err, "at step 2 core 2 needs partition");
    run_free(&r);
}

Test(emu, ring_walked_the_wrong_way_is_detected) {
    rotor_chip chip = mk2();
    run r;
    mutation_run(&r, &chip);
    rotor_emu_options opt = {.mutation = ROTOR_EMU_REVERSE_RING, .mutate_tensor = A_, .no_tag_check = true};
    cr_assert_eq(run_emu(&r, &chip, &opt), ROTOR_OK, "%s", r.err.msg);
    cr_assert_gt(rotor_emu_max_error(&r.e, r.out, r.ref, r.mag), 100 * ROTOR_EMU_TOLERANCE);
    /* the bytes moved are the same: only the order is wrong */
    cr_assert(r.res.exchange_time == r.cost.comm);
    opt.no_tag_check = false;
    cr_assert_eq(run_emu(&r, &chip, &opt), ROTOR_ERR_INPUT);
    run_free(&r);
}

/* ---- property: random operators, random valid plans ----------------------- */

static const char *const ops[] = {
    PROPERTY_OPS,
    "Y[s,d] = gelu(X[s,d])",
    "Y[s] += X[s,d]",
    "Y[s] += exp(X[s,d])",
    "Y[s,d] = max(X[s,d], Z[s,d]) * sigmoid(H[d]) - tanh(Bb[d])",
    "Y[s] += X[s,d] * W[d] * V[d]",
    "C[m,n] += A[m,k,j] * B[k,n]",
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* Every kind of operator with odd extents (padding), sampled plans with
 * replication, chains and factors on two axes of one tensor: each verifies,
 * and the emulated exchange time equals the model's communication time.
 * 750 trials (1500 found nothing more); the coverage floors are half those
 * asked of 1500 (seed 31337 gives at least 54 of each kind, 292 rotating,
 * 43 two-axis, 262 replicated, 488 padded). */
Test(emu, random_operators_and_plans_verify_and_exchange_equals_model, .timeout = 120) {
    const uint64_t seed = 31337;
    rotor_rng rng = {seed};
    rotor_chip chip = mk2();
    int kinds[NOPS] = {0}, rotating = 0, two_axes = 0, replicated = 0, padded = 0;
    for (int trial = 0; trial < 750; trial++) {
        run r;
        int op = (int)rotor_rng_below(&rng, NOPS);
        cr_assert_eq(rotor_expr_parse(ops[op], &r.e, NULL), ROTOR_OK);
        char dims[256];
        cr_assert_eq(bind_random(&rng, &r.e, 17, dims, sizeof dims), ROTOR_OK);
        rotor_plan_info info;
        cr_assert_eq(rotor_sample_plan(&r.e, &chip, 96, &rng, &r.p, &info, NULL), ROTOR_OK);
        run_setup(&r, &chip);
        char ctx[512];
        snprintf(ctx, sizeof ctx, "seed %llu trial %d: %s with %s", (unsigned long long)seed, trial, ops[op],
                 dims);
        cr_assert_eq(run_emu(&r, &chip, NULL), ROTOR_OK, "%s: %s", ctx, r.err.msg);
        assert_verified(&r, ctx);
        kinds[op]++;
        rotating += r.info.rotates;
        replicated += r.info.rings[0] > 1 || r.info.rings[1] > 1;
        padded += r.info.padding_ratio > 1.0;
        for (int t = 0; t < r.e.ntensors; t++) {
            int split = 0;
            for (int a = 0; a < r.e.naxes; a++) split += r.p.ft[t][a] > 1;
            two_axes += split >= 2;
        }
        run_free(&r);
    }
    for (int op = 0; op < NOPS; op++) cr_assert_gt(kinds[op], 40, "%s sampled %d times", ops[op], kinds[op]);
    cr_assert_gt(rotating, 250);
    cr_assert_gt(two_axes, 30);
    cr_assert_gt(replicated, 200);
    cr_assert_gt(padded, 400);
}

/* The emulator and the direct reference run in parallel (cores, and chunks
 * of an output axis) and give the same bits on 1 thread and on 4: every
 * element's terms are summed in one order.  128 x 96 x 160 is 2 M points,
 * above both parallel thresholds. */
Test(emu, one_thread_and_four_give_the_same_bits) {
    rotor_chip chip = mk2();
    run r;
    matmul(&r, "m=128,k=96,n=160", 8, 1, 16);
    r.p.ft[A_][K_] = 4, r.p.ft[B_][K_] = 4;
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    run_setup(&r, &chip);
    int64_t ny = rotor_emu_tensor_elems(&r.e, 0, NULL);
    float *out1 = malloc((size_t)ny * sizeof *out1);
    double *ref1 = malloc((size_t)ny * sizeof *ref1);
    cr_assert_eq(run_emu(&r, &chip, NULL), ROTOR_OK, "%s", r.err.msg);
    memcpy(out1, r.out, (size_t)ny * sizeof *out1);
    memcpy(ref1, r.ref, (size_t)ny * sizeof *ref1);
    omp_set_num_threads(4);
    cr_assert_eq(run_emu(&r, &chip, NULL), ROTOR_OK, "%s", r.err.msg);
    cr_assert_eq(rotor_emu_reference(&r.e, (const float *const *)r.in, r.ref, r.mag, &r.err), ROTOR_OK);
    omp_set_num_threads(threads);
    cr_assert(memcmp(out1, r.out, (size_t)ny * sizeof *out1) == 0, "the emulated output differs");
    cr_assert(memcmp(ref1, r.ref, (size_t)ny * sizeof *ref1) == 0, "the reference differs");
    assert_verified(&r, "threads");
    free(out1);
    free(ref1);
    run_free(&r);
}

/* Conformer-M's positional attention scores (l*.mhsa.scores_pos), the plan
 * the exact search chose at batch 16 that placement used to refuse: F_op
 * b=4 n=4, k split 4 / 8 / 4 in Q / V / P (Q's rings run along n, P's along
 * b, V's along both; docs/placement.md "Choosing offsets"), on 16 cores.
 * The result matches the direct reference, every core shifts Q and P 3
 * times and V 7, and the exchange time is the model's. */
Test(emu, conformer_scores_pos_k_split_4_8_4_computes_the_reference) {
    rotor_chip chip = mk2();
    run r;
    cr_assert_eq(rotor_expr_make("S[b,h,m,n] += (Q[b,h,m,k] + V[h,k]) * P[h,k,n]", "b=4,h=2,m=3,k=16,n=8", &r.e, NULL),
                 ROTOR_OK);
    int b = rotor_expr_axis(&r.e, "b"), h = rotor_expr_axis(&r.e, "h"), m = rotor_expr_axis(&r.e, "m"),
        k = rotor_expr_axis(&r.e, "k"), n = rotor_expr_axis(&r.e, "n");
    rotor_plan_init(&r.e, &r.p);
    r.p.fop[b] = 4, r.p.fop[n] = 4;
    r.p.ft[1][k] = 4, r.p.ft[2][k] = 8, r.p.ft[3][k] = 4;
    const int order[5] = {b, h, m, n, k};
    memcpy(r.p.order, order, sizeof order);
    run_setup(&r, &chip);
    cr_assert_eq(r.info.cores, 16);
    int64_t core_shifts[4 * 16];
    cr_assert_eq(run_emu(&r, &chip, &(rotor_emu_options){.core_shifts = core_shifts}), ROTOR_OK, "%s", r.err.msg);
    assert_verified(&r, "scores_pos");
    for (int c = 0; c < 16; c++) {
        cr_assert_eq(core_shifts[1 * 16 + c], 3);
        cr_assert_eq(core_shifts[2 * 16 + c], 7);
        cr_assert_eq(core_shifts[3 * 16 + c], 3);
        cr_assert_eq(core_shifts[0 * 16 + c], 0);
    }
    run_free(&r);
}
