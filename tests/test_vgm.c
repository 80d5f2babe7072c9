/* test_vgm.c — the virtual-global-memory baseline (src/compile/vgm.c, T10 §2.2):
 * the reserved slice, tiles that fit, transfer lower bounds, the refusal of a
 * model whose VGM alone overflows, and T10 beating it. */
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

Test(vgm, the_slice_holds_every_weight_and_the_peak_of_live_activations) {
    rotor_graph g;
    ffn_stack(&g, 1, 128, 1024, 4096);
    rotor_chip chip = mk2();
    rotor_vgm_result v;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, &v, &err), ROTOR_OK, "%s", err.msg);
    /* weights: 2 x 1024 x 4096 x 2 B over 1472 cores, 11397 B each (rounded up) */
    int64_t w = 2 * ((1024 * 4096 * 2 + 1471) / 1472);
    /* live at op 0: x0 (128x1024) and h0 (128x4096); at op 1: h0 and x1 */
    int64_t x0 = (128 * 1024 * 2 + 1471) / 1472, h0 = (128 * 4096 * 2 + 1471) / 1472;
    cr_assert_eq(v.vgm_bytes, w + x0 + h0);
    cr_assert_eq(v.local_bytes, 638976 - v.vgm_bytes);
    rotor_vgm_result_free(&v);
    rotor_graph_free(&g);
}

Test(vgm, every_tile_fits_and_every_core_receives_its_tiles_each_round) {
    rotor_graph g;
    ffn_stack(&g, 2, 512, 1024, 4096);
    rotor_chip chip = mk2();
    rotor_vgm_result v;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, &v, &err), ROTOR_OK, "%s", err.msg);
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
    ffn_stack(&g, 3, 256, 1024, 4096);
    rotor_chip chip = mk2();
    rotor_vgm_result v;
    rotor_compile_result t;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, &v, &err), ROTOR_OK, "%s", err.msg);
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
    ffn_stack(&g, 48, 8, 8192, 32768);
    rotor_chip chip = mk2();
    rotor_vgm_result v;
    rotor_error err;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, &v, &err), ROTOR_ERR_NOFIT);
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
    cr_assert_eq(rotor_vgm_compile(&g, &chip, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert(strstr(err.msg, "vgm: op 'l0.qkv' (MatMul) needs 1536 bytes per core for one systolic tile of "
                              "each tensor; the VGM leaves 1095"), "%s", err.msg);
    rotor_graph_free(&g);
}
