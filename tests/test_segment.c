/* test_segment.c — inter-operator pipelining over core groups
 * (src/compile/segment.c, docs/kapla.md "Pipelining"): the segment model's
 * recursion by hand, the segments the compiler picks for NeRF, their
 * invariants (disjoint groups, SRAM, totals), and the program file's
 * segments read back and refused when edited. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/compile/program.h"
#include "rotor/pipeline/pipeline.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* A segment of hand-set stages over C[m,n] += A[m,k] * B[k,n]: stage k
 * runs `runs[k]` times taking exec[k]; tensor A comes as `from[k]`. */
static rotor_segment hand_segment(int n, int64_t micro, const int64_t *runs, const double *exec, const int *from,
                                  const bool *streamed, const bool *per_run, const double *xfer) {
    rotor_segment s = {.first = 0, .last = n - 1, .micro = micro, .nstages = n};
    s.stages = calloc((size_t)n, sizeof *s.stages);
    cr_assert_not_null(s.stages);
    for (int k = 0; k < n; k++) {
        rotor_stage *st = &s.stages[k];
        st->micro = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=64,k=16,n=16");
        st->runs = runs[k];
        st->exec_s = exec[k];
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) st->from[t] = -1;
        st->from[1] = from[k];
        st->streamed[1] = streamed[k];
        st->per_run[1] = per_run[k];
        st->xfer_s[1] = xfer[k];
    }
    return s;
}

Test(segment, a_streamed_pair_follows_the_recursion_run_by_run) {
    /* stage 0: 4 runs of 1.0; stage 1: 4 runs of 2.0, each after run i of
     * stage 0 plus a move of 0.5, moves of A one after another */
    int64_t runs[] = {4, 4};
    double exec[] = {1.0, 2.0}, xfer[] = {0, 0.5};
    int from[] = {-1, 0};
    bool streamed[] = {false, true}, per_run[] = {false, true};
    rotor_segment s = hand_segment(2, 4, runs, exec, from, streamed, per_run, xfer);
    double fin[8], xend[2 * ROTOR_MAX_TENSORS * 4], run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, fin, xend, &run_s, &err), ROTOR_OK, "%s", err.msg);
    double want0[] = {1, 2, 3, 4}, want1[] = {3.5, 5.5, 7.5, 9.5}, wantx[] = {1.5, 2.5, 3.5, 4.5};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(fin[i], want0[i], "stage 0 run %d: %g", i, fin[i]);
        cr_assert_eq(fin[4 + i], want1[i], "stage 1 run %d: %g", i, fin[4 + i]);
        cr_assert_eq(xend[(1 * ROTOR_MAX_TENSORS + 1) * 4 + i], wantx[i], "move %d", i);
    }
    cr_assert_eq(xend[0], -1); /* stage 0 moves nothing */
    cr_assert_eq(run_s, 9.5);
    rotor_segment_free(&s);
}

Test(segment, a_stage_that_is_not_streamed_waits_for_the_producers_last_run) {
    /* stage 1 reads A whole: one move after stage 0's last run, then its
     * four runs back to back */
    int64_t runs[] = {4, 4};
    double exec[] = {1.0, 2.0}, xfer[] = {0, 0.5};
    int from[] = {-1, 0};
    bool streamed[] = {false, false}, per_run[] = {false, false};
    rotor_segment s = hand_segment(2, 4, runs, exec, from, streamed, per_run, xfer);
    double run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(run_s, 4 + 0.5 + 4 * 2.0);
    rotor_segment_free(&s);
}

Test(segment, moves_from_outside_are_chained_from_the_start) {
    /* one stage reading A from before the segment, run by run: the moves
     * follow each other from time 0 and each run waits for its own */
    int64_t runs[] = {3};
    double exec[] = {1.0}, xfer[] = {1.5};
    int from[] = {ROTOR_STAGE_OUTSIDE};
    bool streamed[] = {false}, per_run[] = {true};
    rotor_segment s = hand_segment(1, 3, runs, exec, from, streamed, per_run, xfer);
    double fin[3], run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, fin, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(fin[0], 2.5);
    cr_assert_eq(fin[1], 4.0);
    cr_assert_eq(fin[2], 5.5);
    cr_assert_eq(run_s, 5.5);
    rotor_segment_free(&s);
}

/* NeRF (8 x 256, 192 samples per ray) at `batch`, compiled with pipelining
 * on `threads` search threads, and its program read back. */
static void nerf(int64_t batch, int threads, rotor_pipeline *p) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "nerf", .zoo = {.batch = batch}, .t10 = true, .program = true};
    po.compile.pipeline = true;
    po.compile.threads = threads;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, p, &err), ROTOR_OK, "%s", err.msg);
}

static int op_index(const rotor_graph *g, const char *name) {
    for (int o = 0; o < g->nops; o++)
        if (!strcmp(g->ops[o].name, name)) return o;
    cr_assert_fail("no operator %s", name);
    return -1;
}

/* The invariants of every pipelined schedule: groups disjoint and on the
 * chip, every stage's plan within SRAM, the segment's times the recursion's,
 * and the totals the sum of segments and the other operators. */
static void check_invariants(const rotor_compile_result *r, const rotor_chip *chip) {
    double total = 0;
    for (int o = 0; o < r->nops; o++)
        if (!r->ops[o].segment) total += r->ops[o].setup_s + r->ops[o].exec_s;
    int64_t n = rotor_chip_cores(chip);
    for (int s = 0; s < r->nsegments; s++) {
        const rotor_segment *sg = &r->segments[s];
        cr_assert_eq(sg->nstages, sg->last - sg->first + 1);
        int64_t next = 0;
        double setup = 0;
        for (int k = 0; k < sg->nstages; k++) {
            const rotor_stage *st = &sg->stages[k];
            cr_assert_eq(st->op, sg->first + k);
            cr_assert_eq(r->ops[st->op].segment, s + 1);
            cr_assert_eq(st->first_core, next, "groups follow each other");
            next += st->cores;
            cr_assert_leq(st->plan.info.cores, st->cores, "the plan uses its group only");
            cr_assert_leq(st->plan.info.memory, chip->sram_bytes);
            cr_assert_eq(st->exec_s, st->plan.cost.total);
            if (st->setup_s > setup) setup = st->setup_s;
        }
        cr_assert_leq(next, n);
        double run_s;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_segment_times(sg, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(run_s, sg->run_s);
        cr_assert_eq(setup, sg->setup_s);
        cr_assert_eq(sg->total_s, sg->setup_s + sg->run_s);
        cr_assert_leq(sg->peak_bytes, chip->sram_bytes);
        total += sg->total_s;
    }
    cr_assert_float_eq(total, r->total_s, 1e-12 * r->total_s);
    cr_assert_leq(r->total_s, r->unpipelined_s, "pipelining never makes the schedule slower");
    cr_assert_leq(r->peak_bytes, chip->sram_bytes);
}

Test(segment, nerf_at_batch_8_streams_three_segments) {
    rotor_pipeline p;
    nerf(8, 1, &p);
    const rotor_compile_result *r = &p.t10;
    rotor_chip chip = mk2();
    check_invariants(r, &chip);
    /* fc1..fc3 in 8 micro-batches, fc5..fc6 and fc7..feature in 16, rows
     * streamed (dimension 0, m = 1536 rows), weights kept in the groups */
    cr_assert_eq(r->nsegments, 3);
    const char *first[] = {"fc1", "fc5", "fc7"}, *last[] = {"fc3", "fc6", "feature"};
    int64_t micro[] = {8, 16, 16};
    for (int s = 0; s < 3; s++) {
        const rotor_segment *sg = &r->segments[s];
        cr_assert_eq(sg->first, op_index(&p.graph, first[s]), "segment %d", s);
        cr_assert_eq(sg->last, op_index(&p.graph, last[s]), "segment %d", s);
        cr_assert_eq(sg->micro, micro[s]);
        cr_assert_eq(sg->dim, 0);
        cr_assert(sg->weights_resident);
        for (int k = 0; k < sg->nstages; k++) {
            const rotor_stage *st = &sg->stages[k];
            cr_assert_eq(st->runs, sg->micro);
            cr_assert_eq(st->micro.extent[st->axis], 1536 / sg->micro);
            /* the layer before feeds it run by run; the segment's first
             * stage reads from outside, run by run */
            cr_assert_eq(st->from[1], k == 0 ? ROTOR_STAGE_OUTSIDE : (sg->first + k == op_index(&p.graph, "feature") ? 0 : k - 1));
            cr_assert(st->per_run[1]);
            cr_assert_eq(st->streamed[1], k > 0);
        }
    }
    /* 19.092 us against 21.559 us unpipelined: 1.13x */
    cr_assert_float_eq(r->total_s, 19.092e-6, 0.0005e-6);
    cr_assert_float_eq(r->unpipelined_s, 21.559e-6, 0.0005e-6);
    /* the program read back holds the same segments and total */
    cr_assert_eq(p.program.nsegments, 3);
    cr_assert_float_eq(p.program.total_s, r->total_s, 1e-12 * r->total_s);
    for (int s = 0; s < 3; s++) {
        cr_assert_eq(p.program.segments[s].run_s, r->segments[s].run_s);
        cr_assert_eq(p.program.ops[r->segments[s].first].segment, s + 1);
    }
    rotor_pipeline_free(&p);
}

Test(segment, nerf_at_batch_1_runs_sigma_and_feature_side_by_side) {
    /* At batch 1 every layer is too small to gain from micro-batches (a
     * run's padding to the systolic array costs more than the overlap);
     * only the two heads that both read fc7 run at once, on two groups. */
    rotor_pipeline p;
    nerf(1, 0, &p);
    const rotor_compile_result *r = &p.t10;
    rotor_chip chip = mk2();
    check_invariants(r, &chip);
    cr_assert_eq(r->nsegments, 1);
    const rotor_segment *sg = &r->segments[0];
    cr_assert_eq(sg->first, op_index(&p.graph, "sigma"));
    cr_assert_eq(sg->last, op_index(&p.graph, "feature"));
    cr_assert_eq(sg->micro, 1);
    cr_assert_eq(sg->stages[1].from[1], ROTOR_STAGE_OUTSIDE, "feature reads fc7, outside the segment");
    cr_assert_lt(r->total_s, r->unpipelined_s);
    rotor_pipeline_free(&p);
}

Test(segment, bert_pipelines_every_layer_within_the_invariants) {
    /* two BERT-Base layers at batch 1: per layer qkv..attn_scores (three runs
     * of qkv, one per Q, K and V column block; the scores read Q and K through
     * views, so they wait for the last) and ffn_up..ffn_down (8 micro-batches
     * of 16 tokens) */
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "bert-base", .zoo = {.batch = 1, .layers = 2}, .t10 = true, .program = true};
    po.compile.pipeline = true;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    check_invariants(&p.t10, &chip);
    cr_assert_eq(p.t10.nsegments, 4);
    for (int s = 0; s < 4; s++) {
        const rotor_segment *sg = &p.t10.segments[s];
        const char *want = s % 2 ? "ffn_up" : "qkv";
        cr_assert(strstr(p.graph.ops[sg->first].name, want), "segment %d starts at %s", s, p.graph.ops[sg->first].name);
        cr_assert_eq(sg->micro, s % 2 ? 8 : 3);
        if (s % 2 == 0) {
            const rotor_stage *scores = &sg->stages[1];
            cr_assert(!scores->streamed[1] && !scores->streamed[2], "Q and K are read through views");
        }
    }
    cr_assert_eq(p.program.nsegments, 4);
    cr_assert_float_eq(p.program.total_s, p.t10.total_s, 1e-12 * p.t10.total_s);
    rotor_pipeline_free(&p);
}

Test(segment, the_throughput_objective_prices_a_segment_by_its_interval) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "nerf", .zoo = {.batch = 8}, .t10 = true};
    po.compile.pipeline = true;
    po.compile.objective = ROTOR_OBJECTIVE_THROUGHPUT;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.t10.objective, ROTOR_OBJECTIVE_THROUGHPUT);
    cr_assert_gt(p.t10.nsegments, 0);
    for (int s = 0; s < p.t10.nsegments; s++) {
        const rotor_segment *sg = &p.t10.segments[s];
        /* the interval is the busiest group's work or moves, never more than the latency */
        double busiest = 0;
        for (int k = 0; k < sg->nstages; k++)
            busiest = fmax(busiest, (double)sg->stages[k].runs * sg->stages[k].exec_s);
        cr_assert_geq(sg->interval_s, busiest);
        cr_assert_leq(sg->interval_s, sg->run_s);
    }
    rotor_pipeline_free(&p);
}

Test(segment, pipelining_refuses_chips_it_does_not_model) {
    rotor_chip chip = pod4();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "nerf", .zoo = {.batch = 1}, .t10 = true};
    po.compile.pipeline = true;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--pipeline: chip 'ipu-pod4' is several chips; pipelining over core groups needs one "
                              "chip with an all-to-all exchange (docs/kapla.md)");
    rotor_pipeline_free(&p);
    chip = mk2();
    cr_assert_eq(rotor_chip_set(&chip, "topology=mesh", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&chip, "mesh_width=32", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&chip, "mesh_height=46", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "is a mesh");
    rotor_pipeline_free(&p);
}

/* ---- the program file's segments ------------------------------------------ */

/* `text` with one field of segment 0 (or of its stage 1 when stage is
 * true) replaced by `value` (JSON text), read back: refused with `want`. */
static void refused(const char *text, const char *field, bool stage, const char *value, const char *want) {
    cJSON *root = cJSON_Parse(text);
    cJSON *seg = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "segments"), 0);
    cJSON *obj = stage ? cJSON_GetArrayItem(cJSON_GetObjectItem(seg, "stages"), 1) : seg;
    cr_assert(cJSON_ReplaceItemInObject(obj, field, cJSON_Parse(value)), "no field %s", field);
    char *edited = cJSON_Print(root);
    cJSON_Delete(root);
    rotor_chip chip = mk2();
    rotor_program prog;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_parse(edited, "p.json", &chip, &prog, &err), ROTOR_ERR_INPUT, "%s=%s was read",
                 field, value);
    assert_msg_has(err, want);
    free(edited);
}

Test(segment, the_program_reader_refuses_edited_segments) {
    rotor_pipeline p;
    nerf(8, 2, &p);
    /* the same schedule as on one thread (nerf_at_batch_8_streams_three_segments) */
    cr_assert_float_eq(p.t10.total_s, 19.092e-6, 0.0005e-6);
    cr_assert_eq(p.t10.nsegments, 3);
    rotor_chip chip = mk2();
    char *text;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_write(&p.graph, &chip, &p.t10, &text, &err), ROTOR_OK, "%s", err.msg);
    rotor_pipeline_free(&p);
    refused(text, "micro", false, "5", "segments[0].stages[0].axis: its extent is not a multiple of micro");
    refused(text, "run_s", false, "1e-6", "segments[0].run_s: 1e-06 does not match");
    refused(text, "first", false, "\"nosuch\"", "segments[0].first: names no operator");
    refused(text, "last", false, "\"skip_concat\"", "segments[0].stages: expected an array of 5 stages, one per operator");
    refused(text, "first_core", true, "0", "segments[0].stages[1].first_core: groups must follow each other");
    refused(text, "exec_s", true, "1e-3", "segments[0].stages[1].exec_s: 0.001 does not match");
    refused(text, "runs", true, "1", "segments[0].stages[1].runs: must be micro for a streamed stage, else 1");
    refused(text, "axis", true, "\"k\"",
            "segments[0].stages[1].axis: is not the axis of the output's stream dimension");
    free(text);
}
