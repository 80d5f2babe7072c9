/* test_segmesh.c — pipelined segments on a 2D mesh (issue 41 deliverable 1;
 * src/compile/segment.c, docs/kapla.md "Pipelining"): a group is a band of
 * whole rows, a move between bands is one exchange over the whole mesh's XY
 * routes (rotor_mesh_exchange, worked by hand here), a step's moves follow
 * each other, the replay agrees with the model per segment, and what the
 * mesh cannot hold is refused. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/program.h"
#include "rotor/compile/segment.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/replay.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* ipu-mk2's cores on a w x h mesh, with beta = 1 GB/s and alpha = 10 ns
 * when `round` (numbers a hand can work). */
static rotor_chip mesh_chip(int64_t w, int64_t h, bool round) {
    rotor_chip c = mk2();
    rotor_error err = {{0}};
    char kv[64];
    snprintf(kv, sizeof kv, "cores_per_chip=%lld", (long long)(w * h));
    cr_assert_eq(rotor_chip_set(&c, kv, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&c, "topology=mesh", &err), ROTOR_OK, "%s", err.msg);
    snprintf(kv, sizeof kv, "mesh_width=%lld", (long long)w);
    cr_assert_eq(rotor_chip_set(&c, kv, &err), ROTOR_OK, "%s", err.msg);
    snprintf(kv, sizeof kv, "mesh_height=%lld", (long long)h);
    cr_assert_eq(rotor_chip_set(&c, kv, &err), ROTOR_OK, "%s", err.msg);
    if (round) {
        cr_assert_eq(rotor_chip_set(&c, "link_gbps=1", &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_chip_set(&c, "link_latency_ns=10", &err), ROTOR_OK, "%s", err.msg);
    }
    return c;
}

/* Stage k of s: C[m,n] += A[m,k] * B[k,n] (m=16, k=32, n=16) with F_op
 * [fm, 1, 1] on the band of `cores` cores from first_core, costed there. */
static void mesh_stage(rotor_segment *s, int k, const rotor_chip *chip, int64_t first_core, int64_t cores,
                       int64_t fm) {
    rotor_stage *st = &s->stages[k];
    rotor_error err = {{0}};
    matmul_plan("m=16,k=32,n=16", fm, 1, 1, &st->micro, &st->plan.plan);
    st->op = k;
    st->first_core = first_core;
    st->cores = cores;
    st->runs = 1;
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) st->from[t] = -1;
    rotor_chip gc = rotor_segment_group_chip(chip, cores);
    cr_assert_eq(gc.mesh_height, cores / chip->mesh_width);
    cr_assert_eq(rotor_plan_derive(&st->micro, &gc, &st->plan.plan, &st->plan.info, &err), ROTOR_OK, "%s", err.msg);
}

Test(segmesh, a_move_between_two_bands_is_priced_over_its_routes) {
    /* 4 x 4 mesh, two bands of two rows: stage 0 on cores 0-7 with m split
     * in two, laid along X at (0,0) and (1,0) (no shifts: ties go to X);
     * stage 1 on cores 8-15, one core, at (0,2) = core 8.  Stage 1's A,
     * 16 x 32 x 2 B = 1024 B, comes from stage 0: two pieces of 512 B,
     * core 0 -> 8 (south twice, 2 hops) and core 1 -> 8 (west, then south
     * twice: 3 hops), each cut into packets of 256 B (1024 / 128 rounded up
     * to 64 B, at least 256).  Every packet crosses the link (0,0) -> (0,1),
     * which carries each for 256 B / beta = 256 ns from its head's arrival
     * (pipelined links): by rounds, 0 -> 8 holds it [0, 256], 1 -> 8 from
     * its second hop [256, 512] (starting at 246), 0 -> 8 [512, 768], 1 -> 8
     * [768, 1024], whose head reaches (0,2) 2 hops later: 1,044 ns, the
     * busiest link's bytes and the longest route from it. */
    rotor_chip chip = mesh_chip(4, 4, true);
    rotor_segment s = {.first = 0, .last = 1, .micro = 1, .nstages = 2, .serial_moves = true};
    s.stages = calloc(2, sizeof *s.stages);
    cr_assert_not_null(s.stages);
    mesh_stage(&s, 0, &chip, 0, 8, 2);
    mesh_stage(&s, 1, &chip, 8, 8, 1);
    s.stages[1].from[1] = 0;
    cr_assert_eq(s.stages[1].plan.info.bytes[1], 1024);
    int64_t bytes, np;
    double xs;
    rotor_mesh_packet *pk;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_xfer(&chip, &s, 1, 1, &bytes, &xs, &pk, &np, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(bytes, 1024, "the busiest link, (0,0) -> (0,1), carries all of A: %lld", (long long)bytes);
    cr_assert_eq(np, 4);
    cr_assert_float_eq(xs, 1044e-9, 1e-15, "%.15g", xs);
    for (int64_t i = 0; i < np; i++) {
        cr_assert_eq(pk[i].dst, 8);
        cr_assert(pk[i].src == 0 || pk[i].src == 1);
        cr_assert_eq(pk[i].bytes, 256);
    }
    free(pk);
    /* all-to-all prices the same move by its busier port: 1024 B / beta + alpha */
    rotor_chip a2a = mk2();
    cr_assert_eq(rotor_chip_set(&a2a, "link_gbps=1", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&a2a, "link_latency_ns=10", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_segment_xfer(&a2a, &s, 1, 1, &bytes, &xs, NULL, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(bytes, 1024);
    cr_assert_float_eq(xs, 1034e-9, 1e-15, "%.15g", xs);
    rotor_segment_free(&s);
}

Test(segmesh, a_steps_moves_follow_each_other_on_a_mesh) {
    /* three stages, one run each (1, 2 and 3), stage 1 reading A from
     * stage 0 (a move of 0.5), stage 2 its A (0.25) and B (0.125) */
    rotor_segment s = {.first = 0, .last = 2, .micro = 1, .nstages = 3};
    s.stages = calloc(3, sizeof *s.stages);
    cr_assert_not_null(s.stages);
    double exec[] = {1.0, 2.0, 3.0}, xfer[] = {0, 0.5, 0.25};
    for (int k = 0; k < 3; k++) {
        rotor_stage *st = &s.stages[k];
        st->micro = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=16,n=16");
        st->runs = 1;
        st->exec_s = exec[k];
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) st->from[t] = -1;
        if (k) st->from[1] = 0;
        st->xfer_s[1] = xfer[k];
    }
    s.stages[2].from[2] = 1; /* stage 2's B from stage 1: a step later */
    s.stages[2].xfer_s[2] = 0.125;
    double run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    /* stage 2 waits for stage 1: steps [1], [0.5 + 2], [0.25 + 0.125 + 3] */
    cr_assert_float_eq(run_s, 1 + 0.5 + 2 + 0.25 + 0.125 + 3, 1e-12);
    s.stages[2].from[2] = -1; /* both read stage 0 alone: one step of moves */
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(run_s, 1 + 0.75 + 3, 1e-12, "all-to-all: stage 0's port sends both: %g", run_s);
    s.serial_moves = true; /* a mesh: one exchange after the other, the same here */
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(run_s, 1 + 0.75 + 3, 1e-12, "%g", run_s);
    /* stage 2's A from outside run by run, its B from stage 0: in the
     * step after stage 0's run, moves of 0.5 into stage 1, 0.25 + 0.125
     * into stage 2; all-to-all the busiest port is stage 0's (0.625 out),
     * on a mesh the three exchanges add up (0.875) */
    s.stages[2].from[1] = ROTOR_STAGE_OUTSIDE;
    s.stages[2].per_run[1] = true;
    s.stages[2].from[2] = 0;
    s.serial_moves = false;
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(run_s, 1 + 0.625 + 3, 1e-12, "%g", run_s);
    s.serial_moves = true;
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_float_eq(run_s, 1 + 0.875 + 3, 1e-12, "%g", run_s);
    rotor_segment_free(&s);
}

/* The MLP (fixtures.h) pipelined on a 32 x 8 mesh of ipu-mk2's cores
 * with a link latency of 100 ns, where it streams a segment in
 * micro-batches.  (With links pipelined, docs/simulator.md, the MLP picks
 * no streamed segment at 0 to 50 ns a hop: its hand-offs got as cheap as
 * its moves.)  (On 16 x 16 at ipu-mk2's latency of
 * 0 the reader refuses even the unpipelined program: add3's setup exchange
 * of 192 B, in packets each rounded to the picosecond, comes to 13 ps below
 * its busiest link's time; compile.c's, not the segments'.) */
static void mlp_on_mesh(rotor_chip *chip, rotor_graph *g, rotor_compile_result *r, rotor_program *p) {
    rotor_error err = {{0}};
    *chip = mesh_chip(32, 8, false);
    cr_assert_eq(rotor_chip_set(chip, "link_latency_ns=100", &err), ROTOR_OK, "%s", err.msg);
    int x;
    mlp_graph(g, &x);
    rotor_compile_options o = MLP_PIPELINE;
    compiled_program(g, chip, &o, r, p);
}

Test(segmesh, segments_on_a_mesh_are_bands_and_replay_as_modelled) {
    /* Property over the MLP's segments on 32 x 8: every group a band of
     * whole rows, its plan within its band, and the replay of every
     * segment within 1 % of the model (the replay sends the moves'
     * exchange schedules as priced, and lays each plan on its band as the
     * search priced it there; measured: to the picosecond) */
    rotor_chip chip;
    rotor_graph g;
    rotor_compile_result r;
    rotor_program p;
    mlp_on_mesh(&chip, &g, &r, &p);
    cr_assert_gt(r.nsegments, 0, "the MLP pipelines on the mesh too");
    bool streamed = false;
    for (int s = 0; s < r.nsegments; s++) streamed |= r.segments[s].micro > 1;
    cr_assert(streamed, "some segment streams micro-batches (moves before every run)");
    for (int s = 0; s < r.nsegments; s++)
        for (int k = 0; k < r.segments[s].nstages; k++) {
            const rotor_stage *st = &r.segments[s].stages[k];
            cr_assert_eq(st->first_core % 32, 0, "a band starts a row");
            cr_assert_eq(st->cores % 32, 0, "a band is whole rows");
            rotor_chip gc = rotor_segment_group_chip(&chip, st->cores);
            rotor_mesh_map m;
            rotor_error err = {{0}};
            cr_assert_eq(rotor_mesh_map_plan(&st->micro, &gc, &st->plan.plan, &st->plan.info, &m, &err), ROTOR_OK,
                         "%s", err.msg);
            cr_assert_leq(m.height, gc.mesh_height);
        }
    rotor_replay_result rr;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_replay(&p, &chip, NULL, &rr, NULL, &err), ROTOR_OK, "%s", err.msg);
    int seen = 0;
    for (int o = 0; o < rr.nops; o++) {
        const rotor_replay_op *x = &rr.ops[o];
        if (!x->segment || x->predicted_s == 0) continue;
        seen++;
        cr_assert_float_eq(x->simulated_s, x->predicted_s, 0.01 * x->predicted_s, "segment %d: %g s simulated, %g model",
                           x->segment, x->simulated_s, x->predicted_s);
    }
    cr_assert_eq(seen, r.nsegments);
    /* the energy model counts the bands' plans, setups and moves as the
     * replay sends them: the simulator's event counts, byte-hops included */
    rotor_energy_counts em, es = rotor_sim_energy_counts(&rr.stats);
    cr_assert_eq(rotor_energy_program(&p, &chip, &em, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(es.byte_hops, rr.stats.bytes, "the moves cross several links");
    cr_assert_eq(em.byte_hops, es.byte_hops, "byte-hops: model %lld, simulator %lld", (long long)em.byte_hops,
                 (long long)es.byte_hops);
    cr_assert_eq(em.sram_read_bytes, es.sram_read_bytes);
    cr_assert_eq(em.sram_write_bytes, es.sram_write_bytes);
    cr_assert_eq(em.matrix_flops, es.matrix_flops);
    cr_assert_eq(em.vector_flops, es.vector_flops);
    rotor_replay_result_free(&rr);
    rotor_program_free(&p);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}

Test(segmesh, the_reader_refuses_a_group_that_is_not_whole_rows) {
    rotor_chip chip;
    rotor_graph g;
    rotor_compile_result r;
    rotor_program p;
    mlp_on_mesh(&chip, &g, &r, &p);
    cr_assert_gt(r.nsegments, 0);
    rotor_segment *sg = &r.segments[0];
    int64_t shift = 16; /* half a row from the first group to the second */
    sg->stages[0].cores -= shift;
    sg->stages[1].first_core -= shift;
    sg->stages[1].cores += shift;
    char *text = NULL;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_write(&g, &chip, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    rotor_program q;
    cr_assert_eq(rotor_program_parse(text, "p.json", &chip, &q, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "cores: a group on a mesh is a band of whole rows (docs/kapla.md)");
    free(text);
    rotor_program_free(&p);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}

Test(segmesh, pipelining_still_refuses_several_chips_and_a_mesh_of_one_row) {
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "nerf", .zoo = {.batch = 1}, .t10 = true, .program = true};
    po.compile.pipeline = true;
    rotor_pipeline p;
    rotor_chip chip = pod4();
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--pipeline: chip 'ipu-pod4' is several chips; pipelining over core groups needs one "
                              "chip with an all-to-all exchange (docs/kapla.md)");
    rotor_pipeline_free(&p);
    chip = mesh_chip(64, 1, false);
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--pipeline: chip 'ipu-mk2' is a mesh of 1 row; groups are bands of whole rows and "
                              "need at least 2");
    rotor_pipeline_free(&p);
}
