/* test_gtreplay.c — GraphTurbo's schedules replayed instance by instance on
 * the simulator (src/sim/gtreplay.c; docs/simulator.md, "GraphTurbo's
 * instances"). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/gtreplay.h"
#include "fixtures.h"

static int act(rotor_graph *g, const char *name) {
    int v;
    rotor_error err;
    int64_t shape[4] = {1, 4, 16, 16};
    cr_assert_eq(rotor_graph_add_value(g, name, ROTOR_DTYPE_F32, 4, shape, ROTOR_ROLE_ACTIVATION, &v, &err), ROTOR_OK,
                 "%s", err.msg);
    return v;
}

/* A 1x1 convolution of 4 channels on [1, 4, 16, 16] f32 (as
 * tests/test_graphturbo.c's conv with k = 1, s = 1). */
static int conv1x1(rotor_graph *g, const char *name, int x) {
    char wn[64], on[64];
    snprintf(wn, sizeof wn, "%s.w", name), snprintf(on, sizeof on, "%s.out", name);
    int64_t ws[4] = {4, 4, 1, 1};
    int w, y = act(g, on), op;
    rotor_error err;
    cr_assert_eq(rotor_graph_add_value(g, wn, ROTOR_DTYPE_F32, 4, ws, ROTOR_ROLE_WEIGHT, &w, &err), ROTOR_OK);
    int in[2] = {x, w};
    rotor_view view[ROTOR_MAX_TENSORS] = {{0}};
    view[1] = (rotor_view){.set = true, .dim = {0, 1, 2, 3}, .step = {1, 1, 1, 1}};
    rotor_op_desc d = {.name = name, .type = "Conv", .expr = "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]",
                       .dims = "b=1,f=4,c=4,h=16,w=16,kh=1,kw=1", .tensor_value = {y, x, w}, .inputs = in,
                       .ninputs = 2, .outputs = &y, .noutputs = 1, .view = view};
    cr_assert_eq(rotor_graph_add_op(g, &d, &op, &err), ROTOR_OK, "%s", err.msg);
    return y;
}

/* x -> c1 -> y -> c2 -> z on tests/test_graphturbo.c's hand-made cluster
 * (1 GFLOP/s, a 1 GB/s GB, 0.1 GB/s of DDR, LB and GB of 1 MiB, one unit
 * kind at a time): 4,096 bytes a tensor, 64 bytes of weights and 8,192 FLOPs
 * an operator; the model gives 165.248 and 83.2 us.  With 32 tiles:
 *  per-layer: c1 loads its weights (DDR 0-0.64 us, GB 0.64-0.704), then its
 *    tiles: 1.28 us of x from DDR, 0.256 us of compute, 1.28 us of y back to
 *    DDR each.  Tile t + 2 reads once tile t has computed, and a compute
 *    (0.256) is shorter than a read, so DDR never waits: reads and writes
 *    alternate (the last read ends at 0.704 + 62 x 1.28 = 80.064) and the
 *    last write ends 81.92 us after the first read began, 82.624 us.  c2's
 *    weights are ready when c1's last compute ends (80.32) but queue behind
 *    c1's last two writes on DDR, so they start at 82.624: c2 is the same,
 *    165.248 us in all, the model's to the picosecond.
 *  graphturbo: one instance, its weights streamed with its tiles: each tile
 *    brings 4 bytes of weights from DDR (0.04 us) and reads 128 bytes of x
 *    (1.28 us), computes both operators (0.512 us) and writes 128 bytes of
 *    z (1.28 us).  DDR starts at 0 and never waits (a compute is shorter
 *    than the read before it), so the run is DDR's work: 32 x 2.6 = 83.2 us,
 *    the model's again (y never leaves the LB). */
Test(gtreplay, a_chain_replays_as_the_model_by_hand) {
    rotor_graph g;
    rotor_graph_init(&g, "t");
    int x = act(&g, "x");
    int y = conv1x1(&g, "c1", x);
    int z = conv1x1(&g, "c2", y);
    rotor_error err;
    cr_assert_eq(rotor_graph_set_output(&g, z, &err), ROTOR_OK);
    rotor_dsa_cluster c = small_cluster(1 << 30);
    rotor_gtreplay_result r;
    cr_assert_eq(rotor_gtreplay_run(&g, &c, ROTOR_DSA_PER_LAYER, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(r.model_s, 165.248e-6, 1e-12);
    cr_assert_float_eq(r.simulated_s, 165.248e-6, 1e-15, "%.6f us", r.simulated_s * 1e6);
    cr_assert_eq(r.instances, 2);
    cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_DDR], 2 * (0.64e-6 + 81.92e-6), 1e-15);
    cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_GB], 2 * 0.064e-6, 1e-15);
    cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_MATRIX], 16.384e-6, 1e-15);
    cr_assert_eq(rotor_gtreplay_run(&g, &c, ROTOR_DSA_GRAPHTURBO, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(r.model_s, 83.2e-6, 1e-12);
    cr_assert_float_eq(r.simulated_s, 83.2e-6, 1e-15, "%.6f us", r.simulated_s * 1e6);
    cr_assert_eq(r.instances, 1);
    cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_DDR], 83.2e-6, 1e-15);
    cr_assert_float_eq(rotor_gtreplay_busiest_s(&r), 83.2e-6, 1e-15);
    rotor_graph_free(&g);
}

/* The GB serves reads and writes at gb_gbps each (docs/chip-format.md): on
 * the chain above with a GB of 0.01 GB/s and a DDR of 100 GB/s,
 *  graphturbo: the two operators' 128 bytes of weights are written into the
 *    GB from DDR (12.8 us on its write side) while the LB reads them (12.8
 *    us on its read side), both under the 16.384 us of compute: 16.384 us
 *    (one side for both: 25.6 us);
 *  per-layer: each operator's 64 bytes come from DDR (0.64 ns) into the LB
 *    through the GB (6.4 us; their landing's 6.4 us on the write side under
 *    it), then 8.192 us of compute over moves of 41 ns: 14.593 us each.
 * The replay runs the two sides as two servers and agrees within 5 %. */
Test(gtreplay, the_gbs_reads_and_writes_run_at_once) {
    rotor_graph g;
    rotor_graph_init(&g, "t");
    int x = act(&g, "x");
    int z = conv1x1(&g, "c2", conv1x1(&g, "c1", x));
    rotor_error err;
    cr_assert_eq(rotor_graph_set_output(&g, z, &err), ROTOR_OK);
    rotor_dsa_cluster c = small_cluster(1 << 30);
    c.gb_bw = 1e7, c.ddr_bw = 1e11;
    rotor_dsa_result m;
    cr_assert_eq(rotor_dsa_run(&g, &c, ROTOR_DSA_GRAPHTURBO, &m, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(m.seconds, 16.384e-6, 1e-12, "%.6f us", m.seconds * 1e6);
    cr_assert_float_eq(m.gb_s, 12.8e-6, 1e-12, "%.6f us", m.gb_s * 1e6);
    cr_assert_float_eq(m.gb_bytes, 256, 1e-9, "128 written, 128 read");
    rotor_gtreplay_result r;
    cr_assert_eq(rotor_gtreplay_run(&g, &c, ROTOR_DSA_GRAPHTURBO, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_GB], 12.8e-6, 1e-15);
    cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_GB_WRITE], 12.8e-6, 1e-15);
    cr_assert(r.simulated_s >= r.model_s && r.simulated_s < 1.05 * r.model_s, "%.6f us", r.simulated_s * 1e6);
    cr_assert_eq(rotor_dsa_run(&g, &c, ROTOR_DSA_PER_LAYER, &m, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(m.seconds, 2 * (0.64e-9 + 6.4e-6 + 8.192e-6), 1e-12, "%.6f us", m.seconds * 1e6);
    cr_assert_eq(rotor_gtreplay_run(&g, &c, ROTOR_DSA_PER_LAYER, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(r.simulated_s >= 0.99 * r.model_s && r.simulated_s < 1.05 * r.model_s, "%.6f us against %.6f",
              r.simulated_s * 1e6, r.model_s * 1e6);
    rotor_graph_free(&g);
}

/* ResNet-18 at batch 8 a cluster on stcp920: every step replays within 2 %
 * of the model (measured: +0.17 % to +1.55 % on 2026-12-01, -0.07 % to
 * +0.93 % before the GB's capacity; the gap is the tiles' fill and drain,
 * about 1/32 of an instance's shorter side, and the replay's DDR and GB
 * working at once where the model adds an instance's two kinds of moves),
 * and never ends before its busiest resource's work. */
Test(gtreplay, resnet18_replays_within_2_percent_of_the_model) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("stcp920", &chip, &err), ROTOR_OK);
    rotor_pipeline_options po = {.model = "resnet-18", .zoo = {.batch = 8}, .simplify = true, .graphturbo = true};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        rotor_gtreplay_result r;
        cr_assert_eq(rotor_gtreplay_run(&p.graph, &p.cluster, (rotor_dsa_step)k, &r, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_float_eq(r.model_s, p.dsa[k].seconds, 1e-12, "the model of the same schedule");
        double diff = r.simulated_s / r.model_s - 1;
        cr_assert(diff > -0.02 && diff < 0.02, "%s: model %.3f us, simulated %.3f us", rotor_dsa_step_name(k),
                  r.model_s * 1e6, r.simulated_s * 1e6);
        cr_assert_geq(r.simulated_s, rotor_gtreplay_busiest_s(&r) - 1e-12, "%s", rotor_dsa_step_name(k));
        cr_assert_float_eq(r.busy_s[ROTOR_GTREPLAY_DDR], p.dsa[k].ddr_s, 1e-8, "%s: DDR's work is the model's",
                           rotor_dsa_step_name(k));
        cr_assert_eq(r.instances, p.dsa[k].instances);
    }
    rotor_pipeline_free(&p);
}

Test(gtreplay, an_unknown_step_is_refused) {
    rotor_graph g;
    rotor_graph_init(&g, "t");
    rotor_dsa_cluster c = {.cores = 1, .lb_bytes = 1, .gb_bytes = 1, .gb_bw = 1, .ddr_bw = 1, .mm_rate = 1, .vec_rate = 1,
                         .ddr_capacity = 1, .clusters = 1};
    rotor_gtreplay_result r;
    rotor_error err;
    cr_assert_eq(rotor_gtreplay_run(&g, &c, ROTOR_DSA_STEPS, &r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "unknown step") != NULL, "%s", err.msg);
    rotor_graph_free(&g);
}

/* ResNet-50 at 16 images a cluster on stcp920 with the GB's capacity kept
 * (rotor_dsa_cluster.gb_capacity; docs/graphturbo.md, "The GB's capacity"):
 * the weights that found no room stream from DDR at every instance, and the
 * replay of the graphturbo step agrees with the model within 2 % as the
 * default schedule's does (measured 2026-11-30: 20.578 ms modelled, 20.757
 * ms replayed, +0.87 %). */
Test(gtreplay, resnet50_with_the_gb_capacity_kept_replays_within_2_percent) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("stcp920", &chip, &err), ROTOR_OK);
    rotor_pipeline_options po = {.model = "resnet-50", .zoo = {.batch = 16}, .simplify = true};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    rotor_dsa_cluster c;
    cr_assert_eq(rotor_dsa_cluster_of(&chip, &c, &err), ROTOR_OK, "%s", err.msg);
    c.gb_capacity = true;
    rotor_gtreplay_result r;
    cr_assert_eq(rotor_gtreplay_run(&p.graph, &c, ROTOR_DSA_GRAPHTURBO, &r, &err), ROTOR_OK, "%s", err.msg);
    double diff = r.simulated_s / r.model_s - 1;
    cr_assert(diff > -0.02 && diff < 0.02, "model %.3f us, simulated %.3f us", r.model_s * 1e6, r.simulated_s * 1e6);
    cr_assert_geq(r.simulated_s, rotor_gtreplay_busiest_s(&r) - 1e-12);
    rotor_pipeline_free(&p);
}
