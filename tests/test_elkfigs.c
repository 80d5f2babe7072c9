/* test_elkfigs.c — Elk's Table 2 factors as the scheduler counts them
 * (rotor_preload_factors, src/hbm/; Elk §4.3-§4.4), and Figure 23's sweep
 * (src/pipeline/elkfigs.c; Elk §6.4).
 *
 * The hand-worked model: one core, so every plan's share is 1 and each
 * operator has one preload state (its whole weights), two identical layers
 * of four operators:
 *
 *   op   hbm bytes  plans (time ps, space bytes)
 *   A    30         (100, 30) (50, 40) (20, 60), and (120, 50) dominated
 *   B    30         (100, 30)
 *   C    30         (100, 30)
 *   D     0         (10, 10)
 *
 * N = 8 operators.  §4.4's "HBM-heavy": above the average, 180 / 8 = 22.5
 * bytes, so A, B and C: H = 3.  P = 3, A's Pareto plans.  With SRAM for
 * everything (1000 bytes) every heavy operator can be preloaded last: C = 3;
 * and the induction (§4.2) lets operator 0 overlap 0 to 7 later preloads:
 * K = 8.  With 70 bytes, an operator executing (30) holds at most one other
 * preloaded heavy operator (30): the suffix tree's last heavy slot can take
 * B or C but not A (A last means B and C wait on chip while A runs: 90 >
 * 70), so C = 2 < H = 3, as Elk's OPT-30B (5 < 6); and while B runs (30)
 * C (30) and D (0) may wait preloaded, not A as well (90): preload numbers
 * 0, 1 and 2, K = 3 (D running, 10, holds A and B: also 3). */
#include <criterion/criterion.h>

#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/hbm/preload.h"
#include "rotor/pipeline/elkfigs.h"

static const rotor_preload_plan PA[] = {{100, 30, 1, 0, 0}, {50, 40, 1, 0, 0}, {20, 60, 1, 0, 0}, {120, 50, 1, 0, 0}};
static const rotor_preload_plan PB[] = {{100, 30, 1, 0, 0}};
static const rotor_preload_plan PD[] = {{10, 10, 1, 0, 0}};

static rotor_preload_factors factors_at(int64_t sram) {
    rotor_preload_op_desc ops[8];
    for (int t = 0; t < 2; t++) {
        rotor_preload_op_desc *o = &ops[4 * t];
        o[0] = (rotor_preload_op_desc){"A", 30, 1, true, 4, PA};
        o[1] = (rotor_preload_op_desc){"B", 30, 1, false, 1, PB};
        o[2] = (rotor_preload_op_desc){"C", 30, 1, false, 1, PB};
        o[3] = (rotor_preload_op_desc){"D", 0, 1, false, 1, PD};
    }
    rotor_preload_chip chip = {.cores = 1, .sram_bytes = sram, .hbm_bw = 1000000000000, .link_bw = 10000000000000000};
    rotor_preload_model *m;
    rotor_error err;
    cr_assert_eq(rotor_preload_model_create(&chip, ops, 8, &m, &err), ROTOR_OK, "%s", err.msg);
    rotor_preload_result r;
    cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_FULL, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    rotor_preload_factors f = r.factors;
    rotor_preload_result_free(&r);
    /* basic enumerates no preload number and no order */
    cr_assert_eq(rotor_preload_schedule(m, ROTOR_PRELOAD_BASIC, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.factors.ops, 8);
    cr_assert_eq(r.factors.preload_numbers, 0);
    cr_assert_eq(r.factors.heavy, 0);
    rotor_preload_result_free(&r);
    rotor_preload_model_free(m);
    return f;
}

/* Full's factors at this SRAM are C, H, P, K, N. */
static void assert_factors(int64_t sram, int64_t c, int64_t h, int64_t p, int64_t k, int64_t n) {
    rotor_preload_factors f = factors_at(sram);
    cr_assert_eq(f.heavy_fit, c, "C %lld", (long long)f.heavy_fit);
    cr_assert_eq(f.heavy, h, "H %lld", (long long)f.heavy);
    cr_assert_eq(f.plans, p, "P %lld", (long long)f.plans);
    cr_assert_eq(f.preload_numbers, k, "K %lld", (long long)f.preload_numbers);
    cr_assert_eq(f.ops, n, "N %lld", (long long)f.ops);
}

Test(table2, roomy_sram_counts_c3_h3_p3_k8_n8) { assert_factors(1000, 3, 3, 3, 8, 8); }

Test(table2, tight_sram_fits_two_of_three_heavy_operators) { assert_factors(70, 2, 3, 3, 3, 8); }

Test(table2, paper_rows) {
    const rotor_preload_factors *p = rotor_elk_table2_paper("llama2-70b");
    cr_assert_not_null(p);
    cr_assert_eq(p->heavy_fit, 6);
    cr_assert_eq(p->heavy, 6);
    cr_assert_eq(p->plans, 168);
    cr_assert_eq(p->preload_numbers, 86);
    cr_assert_eq(p->ops, 3808);
    cr_assert_eq(rotor_elk_table2_paper("opt-30b")->heavy_fit, 5);
    cr_assert_null(rotor_elk_table2_paper("bert-base"));
}

/* Figure 23 (Elk §6.4): "Elk-Full significantly outperforms other designs
 * regardless of core counts" -- in rotor at least never slower than Basic
 * or Static, at every core count (Full's search includes Static's split,
 * docs/preload.md), and the HBM follows the cores at 2.7 GB/s each. */
Test(fig23, full_never_slower_than_basic_or_static) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &chip, &err), ROTOR_OK, "%s", err.msg);
    const char *models[] = {"opt-1.3b"};
    const int64_t cores[] = {184, 368};
    rotor_elkcores_options o = {.models = models, .nmodels = 1, .cores = cores, .ncores = 2, .batch = 1, .seq = 128,
                                .layers = 2, .threads = 2};
    rotor_elkcores_result r;
    cr_assert_eq(rotor_elkcores_run(&o, &chip, &r, &err), ROTOR_OK, "%s", err.msg);
    for (int k = 0; k < 2; k++) {
        const rotor_elk_point *p = rotor_elkcores_at(&r, 0, k);
        cr_assert(p->fits, "%lld cores", (long long)cores[k]);
        cr_assert_float_eq(p->tbps, 2.7 * (double)cores[k] * 4 / 1000, 1e-9);
        cr_assert_leq(p->latency_s[ROTOR_PRELOAD_FULL], p->latency_s[ROTOR_PRELOAD_STATIC]);
        cr_assert_leq(p->latency_s[ROTOR_PRELOAD_FULL], p->latency_s[ROTOR_PRELOAD_BASIC]);
        cr_assert_leq(p->latency_s[ROTOR_PRELOAD_IDEAL], p->latency_s[ROTOR_PRELOAD_FULL] * (1 + 1e-9));
        cr_assert_eq(p->factors.ops > 0, true);
    }
    rotor_elkcores_summary s;
    rotor_elkcores_summarise(&r, -1, &s);
    cr_assert_eq(s.points, 2);
    cr_assert_eq(s.full_slower, 0);
    cr_assert_geq(s.full_over_static, 1.0);
    rotor_elkcores_free(&r);
}

/* Elk "scale[s] the ICCA chip": every core keeps its compute as it keeps
 * its SRAM, so DiT-XL (2 layers, one image), compute-bound, takes about
 * twice as long on half the cores; with the chip's 250 TFLOP/s kept at
 * every count (until 2026-12-02) 184 cores computed as fast per chip as
 * 368, and Ideal barely moved. */
Test(fig23, each_core_keeps_its_compute) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &chip, &err), ROTOR_OK, "%s", err.msg);
    const int64_t cores[] = {184, 368};
    rotor_elkcores_options o = {.dit_model = "dit-xl", .cores = cores, .ncores = 2, .batch = 1, .seq = 128,
                                .layers = 2, .threads = 2};
    rotor_elkcores_result r;
    cr_assert_eq(rotor_elkcores_run(&o, &chip, &r, &err), ROTOR_OK, "%s", err.msg);
    double t[2];
    for (int k = 0; k < 2; k++) {
        const rotor_elk_point *p = rotor_elkcores_at(&r, 0, k);
        cr_assert(p->fits);
        t[k] = p->latency_s[ROTOR_PRELOAD_IDEAL];
        /* never above the cores' share of the chip's 250 TFLOP/s */
        cr_assert_leq(p->tflops[ROTOR_PRELOAD_IDEAL], 250.0 * (double)cores[k] / 1472, "%lld cores: %.6g TFLOP/s",
                      (long long)cores[k], p->tflops[ROTOR_PRELOAD_IDEAL]);
    }
    cr_assert_gt(t[0], 1.8 * t[1], "184 cores %.6g ms, 368 cores %.6g ms", t[0] * 1e3, t[1] * 1e3);
    rotor_elkcores_free(&r);
}

Test(fig23, refuses_a_chip_without_hbm) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK, "%s", err.msg);
    const char *models[] = {"opt-1.3b"};
    rotor_elkcores_options o = {.models = models, .nmodels = 1, .batch = 1, .seq = 128};
    rotor_elkcores_result r;
    cr_assert_eq(rotor_elkcores_run(&o, &chip, &r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "has no HBM"), "%s", err.msg);
    rotor_elkcores_free(&r);
}
