/* test_elkfig6.c — Elk Figure 6's demand trace (src/pipeline/elkfig6.c) and
 * the forced preload space it runs Static with (rotor_preload_options.
 * fixed_preload_space, src/hbm/designs.c).
 *
 * The hand-worked model: one core (each plan's share 1, one preload state:
 * the whole weights), HBM at 1 byte/ps (1,000 GB/s), links unbounded, SRAM
 * 400 bytes, one plan per operator:
 *
 *   op  hbm  exec ps  space
 *   0     0    100      10
 *   1   150    100     150
 *   2    10    100     100
 *   3    90      1     100   (a short execution before it: op 2's is 100, its own 1)
 *   4    10    100     100
 *   5     0    100      10
 *
 * Preload space 90 (execution space 310): op 1 (150) never fits it, so it
 * loads alone before its execution (a gap of 150 ps at 1 B/ps); op 2 is
 * preloaded during op 1 (10 B over 100 ps); op 3 only once op 2 has left,
 * during op 2 (90 B over 100 ps); op 4 during op 3 (10 B over 1 ps: 10 B/ps,
 * the peak, 10,000 GB/s) and op 5 has no bytes.
 * Preload space 250 (execution space 150): before execution 0, ops 1, 2 and
 * 3 fit (250), so they are the start-up, three gaps at 1 B/ps; op 4 is
 * issued during op 1 (10 B over ops 1-3: 201 ps).  The peak is the gaps'
 * 1,000 GB/s: the larger space spreads op 4's bytes, the peak falls 10x. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "rotor/hbm/preload.h"
#include "rotor/pipeline/elkfig6.h"

#define NOPS 6
static const rotor_preload_plan P[NOPS] = {{100, 10, 1, 0, 0},  {100, 150, 1, 0, 0}, {100, 100, 1, 0, 0},
                                           {1, 100, 1, 0, 0},   {100, 100, 1, 0, 0}, {100, 10, 1, 0, 0}};
static const int64_t HBM[NOPS] = {0, 150, 10, 90, 10, 0};

static rotor_preload_model *hand_model(rotor_preload_op_desc *ops) {
    static const char *names[NOPS] = {"op0", "op1", "op2", "op3", "op4", "op5"};
    for (int i = 0; i < NOPS; i++) ops[i] = (rotor_preload_op_desc){names[i], HBM[i], 0, false, 1, &P[i]};
    rotor_preload_chip chip = {.cores = 1, .sram_bytes = 400, .hbm_bw = 1000000000000, .link_bw = INT64_MAX / 4};
    rotor_preload_model *m;
    rotor_error err;
    cr_assert_eq(rotor_preload_model_create(&chip, ops, NOPS, &m, &err), ROTOR_OK, "%s", err.msg);
    return m;
}

/* Static at preload space R and its trace; the status of the schedule. */
static rotor_status fixed(const rotor_preload_model *m, const rotor_preload_op_desc *ops, int64_t R,
                          rotor_preload_result *r, rotor_elkfig6_series *s, rotor_error *err) {
    rotor_preload_options o = {.fixed_preload_space = true, .preload_space_bytes = R};
    rotor_status st = rotor_preload_schedule(m, ROTOR_PRELOAD_STATIC, &o, r, err);
    if (st) return st;
    memset(s, 0, sizeof *s);
    cr_assert_eq(rotor_elkfig6_trace(m, ops, r, s, err), ROTOR_OK, "%s", err->msg);
    return st;
}

static double integral_bytes(const rotor_elkfig6_series *s) {
    double b = 0;
    for (int k = 0; k < s->nseg; k++) b += s->gbps[k] * (s->t_us[k + 1] - s->t_us[k]) * 1e3; /* GB/s x us */
    return b;
}

Test(elkfig6, the_demand_integrates_to_every_byte_loaded_at_every_preload_space) {
    rotor_preload_op_desc ops[NOPS];
    rotor_preload_model *m = hand_model(ops);
    int fit = 0;
    for (int64_t R = 0; R <= 400; R += 10) {
        rotor_preload_result r;
        rotor_elkfig6_series s;
        rotor_error err;
        rotor_status st = fixed(m, ops, R, &r, &s, &err);
        if (R > 250) { /* the execution space left is below op 1's 150 (op 0's 10 above 390) */
            cr_assert_eq(st, ROTOR_ERR_NOFIT, "R %lld", (long long)R);
            if (R == 260)
                cr_assert_str_eq(err.msg, "static: op 1 (op1) needs 150 bytes of execution space per core, the "
                                          "preload space of 260 leaves 140");
            continue;
        }
        cr_assert_eq(st, ROTOR_OK, "R %lld: %s", (long long)R, err.msg);
        fit++;
        cr_assert_eq(s.hbm_bytes, 260);
        /* with no preload space nothing overlaps: every byte waits in a gap of its own */
        if (R == 0) cr_assert(s.serial_bytes == 260 && s.serial_preloads == 4 && s.peak_gbps == 1000);
        cr_assert(fabs(integral_bytes(&s) - 260) < 1e-6, "R %lld: %.9f bytes", (long long)R, integral_bytes(&s));
        /* the executions are the plans' times, back to back: 501 ps */
        cr_assert(fabs(s.exec_us - 501e-6) < 1e-12, "%.12f", s.exec_us);
        /* mean: every byte over the trace's length */
        cr_assert(fabs(s.mean_gbps * s.t_us[s.nseg] * 1e3 - 260) < 1e-6);
        rotor_elkfig6_series_free(&s);
        rotor_preload_result_free(&r);
    }
    cr_assert_eq(fit, 26);
    rotor_preload_model_free(m);
}

Test(elkfig6, a_larger_preload_space_spreads_a_short_windows_peak) {
    rotor_preload_op_desc ops[NOPS];
    rotor_preload_model *m = hand_model(ops);
    rotor_preload_result r;
    rotor_elkfig6_series small, large;
    rotor_error err;
    cr_assert_eq(fixed(m, ops, 90, &r, &small, &err), ROTOR_OK, "%s", err.msg);
    rotor_preload_result_free(&r);
    cr_assert_eq(fixed(m, ops, 250, &r, &large, &err), ROTOR_OK, "%s", err.msg);
    rotor_preload_result_free(&r);
    /* 90: op 1 alone in a gap; op 4's 10 bytes over op 3's 1 ps */
    cr_assert_eq(small.serial_preloads, 1);
    cr_assert_eq(small.serial_bytes, 150);
    cr_assert(fabs(small.peak_gbps - 10000) < 1e-6, "%.9f", small.peak_gbps);
    /* 250: the start-up's three gaps at the HBM's 1,000 GB/s, op 4 over 201 ps */
    cr_assert_eq(large.serial_preloads, 3);
    cr_assert_eq(large.serial_bytes, 250);
    cr_assert(fabs(large.peak_gbps - 1000) < 1e-6, "%.9f", large.peak_gbps);
    cr_assert(large.peak_gbps <= small.peak_gbps);
    int k = large.nseg - 4; /* executions 1..3 carry op 4's 10 / 201 bytes per ps */
    cr_assert(fabs(large.gbps[k] - 10.0 / 201 * 1e3) < 1e-9, "%.9f", large.gbps[k]);
    cr_assert(!large.serial[k] && large.serial[0] && large.serial[2] && !large.serial[3]);
    rotor_elkfig6_series_free(&small);
    rotor_elkfig6_series_free(&large);
    rotor_preload_model_free(m);
}

Test(elkfig6, the_forced_preload_space_is_respected) {
    rotor_preload_op_desc ops[NOPS];
    rotor_preload_model *m = hand_model(ops);
    for (int64_t R = 0; R <= 250; R += 10) {
        rotor_preload_options o = {.fixed_preload_space = true, .preload_space_bytes = R};
        rotor_preload_result r;
        rotor_error err;
        cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_STATIC, &o, &r, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(r.exec_cap_bytes, 400 - R);
        for (int i = 0; i < NOPS; i++) {
            /* the preloads on chip while op i runs stay within R, its plan within the rest */
            cr_assert(r.ops[i].resident_bytes <= R, "R %lld op %d: %lld resident", (long long)R, i,
                      (long long)r.ops[i].resident_bytes);
            cr_assert(r.ops[i].exec_space <= 400 - R);
        }
        rotor_preload_result_free(&r);
    }
    rotor_preload_model_free(m);
}

Test(elkfig6, a_fixed_preload_space_is_refused_outside_static_and_the_sram) {
    rotor_preload_op_desc ops[NOPS];
    rotor_preload_model *m = hand_model(ops);
    rotor_preload_result r;
    rotor_error err;
    rotor_preload_options o = {.fixed_preload_space = true, .preload_space_bytes = 100};
    cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_FULL, &o, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "fixed_preload_space: only static takes a fixed split, not full");
    o.preload_space_bytes = 401;
    cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_STATIC, &o, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "preload_space_bytes: expected 0..400 (the SRAM per core), got 401");
    rotor_preload_model_free(m);
}
