/* test_vgm.c — the virtual-global-memory baseline (src/compile/vgm*.c, T10
 * §2.2): the reserved slice, Roller's tile construction and its time against
 * the linear layout worked by hand, the oracle's tiles and transfer bounds,
 * the refusal of a model whose VGM alone overflows, and T10 beating both. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/op/cost.h"
#include "rotor/op/plan.h"
#include "rotor/model/group.h"
#include "rotor/compile/vgm.h"
#include "rotor/model/zoo.h"
#include "fixtures.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* A stack of FFNs (ffn_stack: layers, tokens, hidden, ffn) in g and the VGM
 * baseline `kind` of it on the IPU Mk2 into v; the library's status, with
 * its message in err. */
static rotor_status vgm_ffn(rotor_graph *g, int layers, int64_t tokens, int64_t hidden, int64_t ffn,
                            rotor_vgm_kind kind, rotor_vgm_result *v, rotor_error *err) {
    ffn_stack(g, layers, tokens, hidden, ffn);
    rotor_chip chip = mk2();
    return rotor_vgm_compile(g, &chip, kind, v, err);
}

Test(vgm, the_slice_holds_every_weight_and_the_peak_of_live_activations) {
    rotor_graph g;
    rotor_vgm_result v;
    rotor_error err;
    cr_assert_eq(vgm_ffn(&g, 1, 128, 1024, 4096, ROTOR_VGM_ROLLER, &v, &err), ROTOR_OK, "%s", err.msg);
    /* weights: 2 x 1024 x 4096 x 2 B over 1472 cores, 11397 B each (rounded up) */
    int64_t w = 2 * ((1024 * 4096 * 2 + 1471) / 1472);
    /* live at op 0: x0 (128x1024) and h0 (128x4096); at op 1: h0 and x1 */
    int64_t x0 = (128 * 1024 * 2 + 1471) / 1472, h0 = (128 * 4096 * 2 + 1471) / 1472;
    cr_assert_eq(v.vgm_bytes, w + x0 + h0);
    cr_assert_eq(v.local_bytes, 638976 - v.vgm_bytes);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

Test(vgm, oracle_tiles_fit_and_every_core_receives_its_tiles_each_round) {
    rotor_graph g;
    rotor_vgm_result v;
    rotor_error err;
    rotor_chip chip = mk2();
    cr_assert_eq(vgm_ffn(&g, 2, 512, 1024, 4096, ROTOR_VGM_ORACLE, &v, &err), ROTOR_OK, "%s", err.msg);
    double sum = 0;
    for (int o = 0; o < v.nops; o++) {
        const rotor_vgm_op *r = &v.ops[o];
        const rotor_expr *e = &g.ops[o].expr;
        cr_assert_leq(r->tile_bytes, v.local_bytes);
        int64_t cores = 1, sub[ROTOR_MAX_AXES];
        for (int a = 0; a < e->naxes; a++) {
            cores *= r->fop[a];
            sub[a] = (e->extent[a] + r->fop[a] * r->steps[a] - 1) / (r->fop[a] * r->steps[a]);
        }
        cr_assert_leq(cores, 1472);
        /* compute as the cost model computes a sub-task, once per round */
        cr_assert_float_eq(r->compute_s, (double)r->rounds * rotor_cost_v1_subtask(e, &chip, sub),
                           1e-15);
        /* loads: at least each input tile over one link, every round */
        double in_bytes = 2.0 * ((double)sub[0] * (double)sub[1] + (double)sub[1] * (double)sub[2]);
        cr_assert_geq(r->load_s * (1 + 1e-12), (double)r->rounds * in_bytes / 5.5e9);
        cr_assert_float_eq(r->total_s, r->compute_s + r->load_s + r->store_s, 1e-15);
        sum += r->total_s;
    }
    cr_assert_float_eq(v.total_s, sum, 1e-12 * sum);
    /* the repeated layer costs the same */
    cr_assert_eq(v.ops[2].total_s, v.ops[0].total_s);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

Test(vgm, t10_beats_load_compute_store_on_an_ffn_stack) {
    rotor_graph g;
    rotor_vgm_result v;
    rotor_compile_result t;
    rotor_error err;
    cr_assert_eq(vgm_ffn(&g, 3, 256, 1024, 4096, ROTOR_VGM_ROLLER, &v, &err), ROTOR_OK, "%s", err.msg);
    rotor_chip chip = mk2();
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &t, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_lt(t.total_s, v.total_s, "T10 %.6g s vs VGM %.6g s", t.total_s, v.total_s);
    /* both compute the same sub-task model: VGM's extra time is transfers */
    cr_assert_gt(v.load_s + v.store_s, 0);
    rotor_compile_result_free(&t);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

Test(vgm, weights_beyond_the_sram_are_refused_with_the_slice_size) {
    rotor_graph g;
    rotor_vgm_result v;
    rotor_error err;
    cr_assert_eq(vgm_ffn(&g, 48, 8, 8192, 32768, ROTOR_VGM_ROLLER, &v, &err), ROTOR_ERR_NOFIT);
    assert_msg_has(err, "vgm: the model does not fit: the VGM slice needs");
    cr_assert_null(v.ops);
    rotor_graph_free(&g);
}

/* BERT-Large at batch 128 leaves the VGM 1095 bytes per core after its
 * slice (weights and peak activations, evenly): less than one 16 x 16 FP16
 * tile of each of a MatMul's three tensors (3 * 512 B), so the baseline does
 * not fit, as Roller and PopART run out of memory in T10 Figure 12. */
Test(vgm, a_slice_that_leaves_no_room_for_a_systolic_tile_does_not_fit) {
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    rotor_zoo_options zo = {.batch = 128};
    rotor_graph raw, g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-large", &zo, &raw, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&raw, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&raw);
    rotor_vgm_result r;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ROLLER, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert(strstr(err.msg, "vgm: op 'l0.qkv' (MatMul) needs 1536 bytes per core for its smallest aligned "
                              "tile; the VGM leaves 1095"), "%s", err.msg);
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ORACLE, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert(strstr(err.msg, "vgm: op 'l0.qkv' (MatMul) needs 1536 bytes per core for one systolic tile of "
                              "each tensor; the VGM leaves 1095"), "%s", err.msg);
    rotor_graph_free(&g);
}

/* A graph `name` of one MatMul "mm", c[m,n] = a[m,k] * b[k,n]: b is the
 * weight, c the output. */
static void one_matmul(rotor_graph *g, const char *name, int64_t m, int64_t k, int64_t n) {
    rotor_graph_init(g, name);
    int a = add_value2d(g, "a", m, k, ROTOR_ROLE_ACTIVATION);
    int b = add_value2d(g, "b", k, n, ROTOR_ROLE_WEIGHT);
    int c = add_value2d(g, "c", m, n, ROTOR_ROLE_ACTIVATION);
    add_matmul(g, "mm", a, b, c, m, k, n);
    g->values[c].is_output = true;
}

/* One MatMul C[m,n] += A[m,k] * B[k,n], m = n = 64, k = 16, in g, and
 * Roller's baseline of it into v on ipu-mk2 cut to 4 cores (link latency
 * alpha_ns). */
static void roller_one_matmul(rotor_graph *g, double alpha_ns, rotor_vgm_result *v) {
    one_matmul(g, "one-matmul", 64, 16, 64);
    rotor_chip chip = mk2();
    char set[64];
    rotor_error err;
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=4", &err), ROTOR_OK, "%s", err.msg);
    snprintf(set, sizeof set, "link_latency_ns=%g", alpha_ns);
    cr_assert_eq(rotor_chip_set(&chip, set, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_vgm_compile(g, &chip, ROTOR_VGM_ROLLER, v, &err), ROTOR_OK, "%s", err.msg);
}

/* Roller's construction, by hand.  The start tile spans one 16 x 16 quantum
 * of each group: (m, k, n) = (16, 16, 16), 16 tiles.  Growing m to 32 saves
 * 4096 B of traffic (B loaded by 8 tasks, not 16) for 1024 B more tile:
 * score 4; n ties and m comes first.  Then n (4096 B for 1536: 2.7) beats
 * m (2048 B for 2048: 1).  (32, 16, 32) is the last tile with one per core;
 * the path grows on to the whole output (the SRAM allows), and those larger
 * tiles shrink back to four.  The smaller tiles run 2 or 4 waves: Roller's
 * micro-model moves 4 x 1536 B per core for (16,16,16), 2 x 2560 B for
 * (32,16,16), 4096 B for (32,16,32), with the same compute, and the
 * measurement agrees: (32, 16, 32) wins. */
Test(vgm, roller_grows_the_tile_for_reuse_until_every_core_has_one) {
    rotor_graph g;
    rotor_vgm_result v;
    roller_one_matmul(&g, 0, &v);
    const rotor_vgm_op *r = &v.ops[0];
    /* the expression's axes: m, k, n */
    cr_assert_eq(r->tile[0], 32);
    cr_assert_eq(r->tile[1], 16);
    cr_assert_eq(r->tile[2], 32);
    cr_assert_eq(r->tasks, 4);
    cr_assert_eq(r->waves, 1);
    cr_assert_eq(r->rounds, 1);
    cr_assert_eq(r->tile_bytes, 4096); /* A 32 x 16, B 16 x 32, C 32 x 32 */
    double beta = 5.5e9, rate = 250e12 / 4;
    cr_assert_float_eq(r->compute_s, 2.0 * 32 * 32 * 16 / rate, 1e-20);
    cr_assert_float_eq(r->predicted_s, 4096 / beta + r->compute_s, 1e-20);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

/* The same tile against the linear layout, by hand.  A (64 x 16, 2048 B)
 * lies 512 B per core: rows 0-31, read by cores 0 and 1, on cores 0 and 1.
 * B (16 x 64) lies 4 rows per core; the columns 0-31 (cores 0, 2) and 32-63
 * (cores 1, 3) take 256 B of each core.  Core 0 receives 1024 - 512 of A and
 * 1024 - 256 of B: 1280 B; every core likewise.  An owner sends each byte
 * once: 512 (A) + 256 + 256 (B's two halves) = 1024 B.  The load takes
 * 1280 B / beta.  C (64 x 64) lies 16 rows per core: each core's 32 x 32
 * tile is half its own, and it sends the other 16 rows x 64 B = 1024 B. */
Test(vgm, roller_is_timed_against_the_linear_layout_by_hand) {
    rotor_graph g;
    rotor_vgm_result v;
    roller_one_matmul(&g, 0, &v);
    double beta = 5.5e9;
    cr_assert_float_eq(v.ops[0].load_s, 1280 / beta, 1e-20);
    cr_assert_float_eq(v.ops[0].store_s, 1024 / beta, 1e-20);
    cr_assert_float_eq(v.total_s, v.ops[0].compute_s + 2304 / beta, 1e-20);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

/* Every exchange round pays the link latency: one load round, one store. */
Test(vgm, roller_pays_the_link_latency_on_every_round) {
    rotor_graph g;
    rotor_vgm_result v;
    roller_one_matmul(&g, 1000, &v);
    cr_assert_eq(v.ops[0].tile[0], 32);
    cr_assert_eq(v.ops[0].tile[2], 32);
    cr_assert_float_eq(v.ops[0].load_s, 1280 / 5.5e9 + 1e-6, 1e-18);
    cr_assert_float_eq(v.ops[0].store_s, 1024 / 5.5e9 + 1e-6, 1e-18);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

/* Where the output has fewer tiles than the chip has cores, Roller splits
 * the reduction (scale-out): a 64 x 64 output, k = 4096, on 1472 cores.
 * Each task streams its share of the reduction tiles and stores a partial
 * sum; the grid keeps every core busy. */
Test(vgm, roller_splits_the_reduction_when_the_output_has_too_few_tiles) {
    rotor_graph g;
    one_matmul(&g, "wide-k", 64, 4096, 64);
    rotor_chip chip = mk2();
    rotor_vgm_result v;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ROLLER, &v, &err), ROTOR_OK, "%s", err.msg);
    const rotor_vgm_op *r = &v.ops[0];
    int64_t tm = r->tile[0], tk = r->tile[1], tn = r->tile[2]; /* m, k, n */
    int64_t gsp = ((64 + tm - 1) / tm) * ((64 + tn - 1) / tn), gred = (4096 + tk - 1) / tk;
    cr_assert_geq(gsp * gred, 1472, "the grid keeps every core busy");
    int64_t fk = gsp < 1472 ? 1472 / gsp : 1;
    if (fk > gred) fk = gred;
    cr_assert_gt(fk, 1, "tile %lld x %lld x %lld", (long long)tm, (long long)tk, (long long)tn);
    cr_assert_eq(r->tasks, gsp * fk);
    cr_assert_eq(r->rounds, (gred + fk - 1) / fk);
    cr_assert_leq(r->tasks, 1472);
    cr_assert_eq(r->waves, 1);
    cr_assert_gt(r->store_s, 0, "partial sums are stored");
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

/* The oracle bounds Roller, operator by operator, on a BERT-Base layer. */
Test(vgm, the_oracle_is_never_slower_than_roller) {
    rotor_chip chip = mk2();
    rotor_zoo_options zo = {.batch = 2, .layers = 1};
    rotor_graph raw, g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-base", &zo, &raw, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&raw, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&raw);
    rotor_vgm_result roller, oracle;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ROLLER, &roller, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ORACLE, &oracle, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(roller.kind, ROTOR_VGM_ROLLER);
    cr_assert_eq(oracle.kind, ROTOR_VGM_ORACLE);
    for (int o = 0; o < g.nops; o++)
        cr_assert_leq(oracle.ops[o].total_s, roller.ops[o].total_s, "op %s", g.ops[o].name);
    cr_assert_lt(oracle.total_s, roller.total_s);
    rotor_vgm_result_free(&roller);
    rotor_vgm_result_free(&oracle);
    rotor_graph_free(&g);
}

/* An operator over quantized integers is tiled and timed at its own element
 * size and rate, as T10 costs it: an FFN stack of uint8 values on a chip
 * with int8_tops 500 gets the baseline of the float stack on a chip of
 * 1-byte elements at 500 TFLOP/s, field for field, with both kinds.  It
 * took the chip's 2 bytes and FP16 rate until 2026-12-02, and T10 over it
 * counted the int8 rate as its own gain (two QLinearMatMuls: 3.00x, 1.51x
 * priced alike). */
Test(vgm, a_quantized_operator_is_priced_at_its_own_element_size_and_rate) {
    for (int kind = 0; kind < 2; kind++) {
        rotor_vgm_kind k = kind ? ROTOR_VGM_ORACLE : ROTOR_VGM_ROLLER;
        rotor_graph q, f;
        rotor_chip chip, same;
        ffn_uint8_pair(&q, &f, &chip, &same);
        rotor_vgm_result vq, vf;
        rotor_error err;
        cr_assert_eq(rotor_vgm_compile(&q, &chip, k, &vq, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_vgm_compile(&f, &same, k, &vf, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(vq.vgm_bytes, vf.vgm_bytes);
        cr_assert_eq(vq.total_s, vf.total_s, "%s: %.9g against %.9g us", rotor_vgm_kind_name(k), vq.total_s * 1e6,
                     vf.total_s * 1e6);
        for (int o = 0; o < vq.nops; o++) {
            cr_assert_eq(vq.ops[o].compute_s, vf.ops[o].compute_s);
            cr_assert_eq(vq.ops[o].load_s, vf.ops[o].load_s);
            cr_assert_eq(vq.ops[o].tile_bytes, vf.ops[o].tile_bytes);
        }
        /* and not the float stack's on the chip itself */
        rotor_vgm_result v2;
        cr_assert_eq(rotor_vgm_compile(&f, &chip, k, &v2, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_lt(vq.total_s, v2.total_s);
        rotor_vgm_result_free(&v2);
        rotor_vgm_result_free(&vq);
        rotor_vgm_result_free(&vf);
        rotor_graph_free(&q);
        rotor_graph_free(&f);
    }
}
