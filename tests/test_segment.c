/* test_segment.c — inter-operator pipelining over core groups
 * (src/compile/segment.c, docs/kapla.md "Pipelining"): the segment model's
 * recursion by hand, the segments the compiler picks for NeRF, their
 * invariants (disjoint groups, SRAM, totals), NeRF's side-by-side segment
 * replayed, and the program file's segments read back and refused when
 * edited. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/compile/program.h"
#include "rotor/compile/segment.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/sim/replay.h"

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

/* Two stages of 4 runs (1.0 and 2.0 each) in 4 micro-batches, the second
 * reading A from the first (a move of 0.5), streamed run by run or whole. */
static rotor_segment pair_segment(bool streamed) {
    int64_t runs[] = {4, 4};
    double exec[] = {1.0, 2.0}, xfer[] = {0, 0.5};
    int from[] = {-1, 0};
    bool stream[] = {false, streamed};
    return hand_segment(2, 4, runs, exec, from, stream, stream, xfer);
}

Test(segment, a_streamed_pair_runs_in_steps) {
    /* stage 0: 4 runs of 1.0; stage 1: 4 runs of 2.0, run i in the step
     * after stage 0's run i, its input moved (0.5) in that step's move phase;
     * a step's compute phase lasts as its slowest run */
    rotor_segment s = pair_segment(true);
    int64_t first[2];
    cr_assert_eq(rotor_segment_steps(&s, first), 5);
    cr_assert_eq(first[0], 0);
    cr_assert_eq(first[1], 1);
    double fin[8], xend[2 * ROTOR_MAX_TENSORS * 4], run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, fin, xend, &run_s, &err), ROTOR_OK, "%s", err.msg);
    /* steps: [1.0], [0.5 + 2.0], [0.5 + 2.0], [0.5 + 2.0], [0.5 + 2.0] */
    double want0[] = {1, 2.5, 5, 7.5}, want1[] = {3.5, 6, 8.5, 11}, wantx[] = {1.5, 4, 6.5, 9};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(fin[i], want0[i], "stage 0 run %d: %g", i, fin[i]);
        cr_assert_eq(fin[4 + i], want1[i], "stage 1 run %d: %g", i, fin[4 + i]);
        cr_assert_eq(xend[(1 * ROTOR_MAX_TENSORS + 1) * 4 + i], wantx[i], "move %d", i);
    }
    cr_assert_eq(xend[0], -1); /* stage 0 moves nothing */
    cr_assert_eq(run_s, 11.0);
    rotor_segment_free(&s);
}

Test(segment, a_stage_that_is_not_streamed_waits_for_the_producers_last_run) {
    /* stage 1 reads A whole: one move after stage 0's last run, then its
     * four runs back to back */
    rotor_segment s = pair_segment(false);
    double run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, NULL, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(run_s, 4 + 0.5 + 4 * 2.0);
    rotor_segment_free(&s);
}

Test(segment, moves_from_outside_come_in_each_steps_move_phase) {
    /* one stage reading A from before the segment, run by run: each step
     * moves its run's slice (1.5), then runs it (1.0) */
    int64_t runs[] = {3};
    double exec[] = {1.0}, xfer[] = {1.5};
    int from[] = {ROTOR_STAGE_OUTSIDE};
    bool streamed[] = {false}, per_run[] = {true};
    rotor_segment s = hand_segment(1, 3, runs, exec, from, streamed, per_run, xfer);
    double fin[3], run_s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_segment_times(&s, fin, NULL, &run_s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(fin[0], 2.5);
    cr_assert_eq(fin[1], 5.0);
    cr_assert_eq(fin[2], 7.5);
    cr_assert_eq(run_s, 7.5);
    rotor_segment_free(&s);
}

/* NeRF (8 x 256, 192 samples per ray) at `batch`, compiled with pipelining
 * in segments of two stages (its choice with the default four too, at a
 * fraction of the searches; cli_compile.sh runs the defaults) on `threads`
 * search threads, and its program read back. */
static void nerf(int64_t batch, int threads, rotor_pipeline *p) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "nerf", .zoo = {.batch = batch}, .t10 = true, .program = true};
    po.compile.pipeline = true;
    po.compile.max_stages = 2;
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

Test(segment, the_mlp_streams_a_matmul_into_its_bias_add) {
    /* On 256 cores the MLP's second MatMul (512 x 256 x 256) and its bias
     * Add run as one segment over the columns (dimension 1) in 8 runs: the
     * Add reads each run's columns as they come */
    rotor_chip chip;
    rotor_graph g;
    rotor_compile_result r;
    rotor_program p;
    mlp_pipelined(&chip, &g, &r, &p);
    check_invariants(&r, &chip);
    cr_assert_eq(r.nsegments, 1);
    const rotor_segment *sg = &r.segments[0];
    cr_assert_str_eq(g.ops[sg->first].name, "mm2");
    cr_assert_str_eq(g.ops[sg->last].name, "add2");
    cr_assert_eq(sg->dim, 1);
    cr_assert_eq(sg->micro, 8);
    const rotor_stage *mm = &sg->stages[0], *add = &sg->stages[1];
    cr_assert_eq(mm->runs, 8);
    cr_assert_eq(add->runs, 8);
    cr_assert_eq(mm->micro.extent[mm->axis], 256 / 8);
    cr_assert_eq(mm->from[1], ROTOR_STAGE_OUTSIDE, "relu1's output, from the even layout");
    cr_assert(!mm->per_run[1], "every run reads all of relu1's output: moved at setup");
    cr_assert_eq(add->from[1], 0);
    cr_assert(add->streamed[1] && add->per_run[1]);
    int64_t first[2];
    cr_assert_eq(rotor_segment_steps(sg, first), 9);
    cr_assert_lt(r.total_s, r.unpipelined_s);
    /* the program read back holds the same segment and total */
    cr_assert_eq(p.nsegments, 1);
    cr_assert_float_eq(p.total_s, r.total_s, 1e-12 * r.total_s);
    cr_assert_eq(p.segments[0].run_s, sg->run_s);
    cr_assert_eq(p.ops[sg->first].segment, 1);
    rotor_program_free(&p);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
}

/* Operators over quantized integers costed apart are no segment's stages:
 * the stage plans are searched, moved and replayed at the chip's element
 * size and matrix rate, not theirs.  The MLP of the test above with every
 * value uint8 keeps T10's schedule, searches no stage plan, and says how
 * many operators it kept out; on a chip whose element size and rate are
 * theirs it pipelines as the float MLP does. */
Test(segment, operators_over_quantized_integers_stay_out_of_segments) {
    rotor_chip chip;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=256", &err), ROTOR_OK, "%s", err.msg);
    rotor_graph g;
    int x;
    mlp_graph(&g, &x);
    all_uint8(&g);
    rotor_compile_options o = MLP_PIPELINE;
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(&g, &chip, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.nsegments, 0);
    cr_assert_eq(r.pipeline_searches, 0);
    int planned = 0;
    for (int k = 0; k < g.nops; k++) planned += !g.ops[k].vendor;
    cr_assert_eq(r.pipeline_kept_out, planned);
    cr_assert_eq(r.total_s, r.unpipelined_s);
    rotor_compile_result_free(&r);
    /* on a chip of 1-byte elements without an int8 rate they are costed as
     * the chip: none kept out, the float MLP's segment chosen there too */
    rotor_chip one = costed_as_uint8(&chip);
    rotor_graph f;
    mlp_graph(&f, &x);
    rotor_compile_result rf;
    cr_assert_eq(rotor_compile(&g, &one, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_compile(&f, &one, &o, &rf, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.pipeline_kept_out, 0);
    cr_assert_geq(rf.nsegments, 1);
    cr_assert_eq(r.nsegments, rf.nsegments);
    cr_assert_eq(r.total_s, rf.total_s);
    rotor_compile_result_free(&rf);
    rotor_compile_result_free(&r);
    rotor_graph_free(&f);
    rotor_graph_free(&g);
}

/* NeRF at batch 1's segment (one micro-batch, sigma and feature side by
 * side) replayed: nothing moves between the groups and every group's setup
 * is a permutation of whole-partition transfers, so no port is shared and
 * the segment takes exactly the slowest group's setup (one transfer of its
 * setup bytes) plus the slowest stage's plan replayed alone on its group,
 * to the picosecond; and that is the model's total within 1 %
 * (docs/simulator.md, "Replay", "Segments"). */
static void side_by_side_replays_exactly(const rotor_program *p, const rotor_chip *chip) {
    rotor_error err = {{0}};
    cr_assert_eq(p->nsegments, 1);
    const rotor_segment *s = &p->segments[0];
    cr_assert_eq(s->micro, 1);
    cr_assert_eq(s->nstages, 2);
    for (int k = 0; k < s->nstages; k++)
        for (int t = 1; t < s->stages[k].micro.ntensors; t++)
            cr_assert(s->stages[k].from[t] < 0, "stage %d reads nothing from the other", k);
    int64_t setup_ps = 0, run_ps = 0;
    for (int k = 0; k < s->nstages; k++) {
        const rotor_stage *sg = &s->stages[k];
        int64_t x = 0, y = 0;
        if (sg->setup_bytes > 0) cr_assert_eq(rotor_replay_shift(chip, 1, sg->setup_bytes, &x, &err), ROTOR_OK);
        rotor_chip gc = rotor_segment_group_chip(chip, sg->cores);
        cr_assert_eq(rotor_replay_plan(&sg->micro, &sg->plan.plan, &sg->plan.info, &gc, 0, &y, NULL, &err), ROTOR_OK,
                     "%s", err.msg);
        if (x > setup_ps) setup_ps = x;
        if (y > run_ps) run_ps = y;
    }
    rotor_replay_result r;
    cr_assert_eq(rotor_replay(p, chip, NULL, &r, NULL, &err), ROTOR_OK, "%s", err.msg);
    const rotor_replay_op *x = &r.ops[s->first];
    cr_assert_eq(x->segment, 1);
    cr_assert_eq(r.ops[s->last].segment, 1);
    cr_assert_eq(r.ops[s->last].simulated_s, 0, "the segment is reported once, on its first operator");
    cr_assert_eq(llround(x->simulated_s * 1e12), setup_ps + run_ps, "simulated %.12g s, setup %lld + run %lld ps",
                 x->simulated_s, (long long)setup_ps, (long long)run_ps);
    cr_assert_eq(llround(x->simulated_setup_s * 1e12), setup_ps);
    cr_assert_eq(x->predicted_s, s->total_s);
    cr_assert(fabs(x->simulated_s / x->predicted_s - 1) < 0.01, "simulated %.6g, model %.6g s", x->simulated_s,
              x->predicted_s);
    rotor_replay_result_free(&r);
}

/* One compile, two checks: the segment the compiler picks, and its replay
 * (side_by_side_replays_exactly: it was tests/test_replay.c's own test,
 * which compiled the same NeRF with the same options again, some 10 s of
 * CPU under ASan). */
Test(segment, nerf_at_batch_1_runs_sigma_and_feature_side_by_side, .timeout = 120) {
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
    side_by_side_replays_exactly(&p.program, &chip);
    rotor_pipeline_free(&p);
}

Test(segment, bert_pipelines_each_layers_qkv_with_its_scores) {
    /* two BERT-Base layers at batch 4, 32 tokens: per layer, qkv and
     * attn_scores on two groups (the scores read Q and K through views of
     * qkv's output, so they follow it).  Each segment wins by itself (4.526
     * against 4.909 us unpipelined): a lost hand-off is never priced below
     * the hand-off it replaces, so at batch 1 and 128 tokens, where the
     * segment alone is slower (5.521 against 5.475 us) and only the gathers
     * after it looked cheaper, nothing pipelines (below) */
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {
        .model = "bert-base", .zoo = {.batch = 4, .seq = 32, .layers = 2}, .t10 = true, .program = true};
    po.compile.pipeline = true;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    check_invariants(&p.t10, &chip);
    cr_assert_eq(p.t10.nsegments, 2);
    for (int s = 0; s < 2; s++) {
        const rotor_segment *sg = &p.t10.segments[s];
        char want[32];
        snprintf(want, sizeof want, "l%d.qkv", s);
        cr_assert_str_eq(p.graph.ops[sg->first].name, want);
        snprintf(want, sizeof want, "l%d.attn_scores", s);
        cr_assert_str_eq(p.graph.ops[sg->last].name, want);
        cr_assert_eq(sg->micro, 2);
        double alone = 0; /* the segment's operators unpipelined */
        for (int o = sg->first; o <= sg->last; o++) alone += p.t10.ops[o].setup_s + p.t10.ops[o].exec_s;
        cr_assert_lt(sg->total_s, alone, "%.9g against %.9g", sg->total_s, alone);
        const rotor_stage *scores = &sg->stages[1];
        cr_assert_eq(scores->from[1], 0);
        cr_assert(!scores->streamed[1] && !scores->streamed[2], "Q and K are read through views");
    }
    cr_assert_eq(p.program.nsegments, 2);
    cr_assert_float_eq(p.program.total_s, p.t10.total_s, 1e-12 * p.t10.total_s);
    rotor_pipeline_free(&p);
    po.zoo = (rotor_zoo_options){.batch = 1, .layers = 2};
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.t10.nsegments, 0);
    cr_assert_eq(p.t10.total_s, p.t10.unpipelined_s);
    rotor_pipeline_free(&p);
}

Test(segment, weights_kept_must_fit_beside_the_highest_segment_peak, .timeout = 120) {
    /* BERT-Base's twelve layers at batch 1: keeping every stage's weights
     * fits beside the unpipelined peak but not beside the segments' own
     * peaks (3,772 B a core over the SRAM), which the program's reader
     * refused; the weights are then gathered at setup, no segment gains,
     * and the schedule is the unpipelined one, within the SRAM */
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "bert-base", .zoo = {.batch = 1}, .t10 = true, .program = true};
    po.compile.pipeline = true;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    check_invariants(&p.t10, &chip);
    cr_assert_leq(p.t10.peak_bytes, rotor_chip_sram(&chip));
    cr_assert_eq(p.t10.nsegments, 0);
    cr_assert_float_eq(p.t10.total_s, p.t10.unpipelined_s, 1e-12 * p.t10.total_s);
    rotor_pipeline_free(&p);
}

/* The NeRF MLP of the zoo at batch `batch`, compiled with pipelining and as
 * T10 alone. */
static rotor_pipeline_options nerf_pipelined(int64_t batch) {
    rotor_pipeline_options po = {.model = "nerf", .zoo = {.batch = batch}, .t10 = true};
    po.compile.pipeline = true;
    return po;
}

/* NeRF at batch 4 (batch 8 before: half again the searches, and every one
 * of its segments ran one micro-batch, so a group's work was one run): the
 * throughput objective picks five segments where latency picks one, two of
 * them in two micro-batches, so a group's work is its runs times a run. */
Test(segment, the_throughput_objective_prices_a_segment_by_its_interval) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = nerf_pipelined(4);
    po.compile.max_stages = 2;
    po.compile.objective = ROTOR_OBJECTIVE_THROUGHPUT;
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.t10.objective, ROTOR_OBJECTIVE_THROUGHPUT);
    cr_assert_gt(p.t10.nsegments, 0);
    bool several_runs = false;
    for (int s = 0; s < p.t10.nsegments; s++) {
        const rotor_segment *sg = &p.t10.segments[s];
        /* the interval is the busiest group's work or moves and the setup
         * that gathers each batch's inputs, never more than the latency */
        double busiest = 0;
        for (int k = 0; k < sg->nstages; k++) {
            busiest = fmax(busiest, (double)sg->stages[k].runs * sg->stages[k].exec_s);
            several_runs |= sg->stages[k].runs > 1;
        }
        cr_assert_geq(sg->interval_s, busiest + sg->setup_s);
        cr_assert_leq(sg->interval_s, sg->total_s * (1 + 1e-12));
    }
    cr_assert(several_runs, "some group runs its stage more than once (else busiest is one run)");
    rotor_pipeline_free(&p);
}

Test(segment, pipelining_refuses_chips_it_does_not_model) {
    rotor_chip chip = pod4();
    rotor_error err = {{0}};
    rotor_pipeline_options po = nerf_pipelined(1);
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "--pipeline: chip 'ipu-pod4' is several chips; pipelining over core groups needs one "
                              "chip with an all-to-all exchange (docs/kapla.md)");
    rotor_pipeline_free(&p);
    /* a mesh pipelines in bands of rows: tests/test_segmesh.c */
}

/* ---- the program file's segments ------------------------------------------ */

/* `text` with one field of segment 0 (or of its stage 1 when stage is
 * true) replaced by `value` (JSON text), read back: refused with `want`. */
static void refused(const rotor_chip *chip, const char *text, const char *field, bool stage, const char *value,
                    const char *want) {
    cJSON *root = cJSON_Parse(text);
    cJSON *seg = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "segments"), 0);
    cJSON *obj = stage ? cJSON_GetArrayItem(cJSON_GetObjectItem(seg, "stages"), 1) : seg;
    cr_assert(cJSON_ReplaceItemInObject(obj, field, cJSON_Parse(value)), "no field %s", field);
    char *edited = cJSON_Print(root);
    cJSON_Delete(root);
    rotor_program prog;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_parse(edited, "p.json", chip, &prog, &err), ROTOR_ERR_INPUT, "%s=%s was read",
                 field, value);
    assert_msg_has(err, want);
    free(edited);
}

Test(segment, the_program_reader_refuses_edited_segments) {
    rotor_chip chip;
    rotor_graph g;
    rotor_compile_result r;
    rotor_program p;
    mlp_pipelined(&chip, &g, &r, &p);
    char *text;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_write(&g, &chip, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    rotor_program_free(&p);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
    refused(&chip, text, "micro", false, "5", "segments[0].stages[0].axis: its extent is not a multiple of micro");
    refused(&chip, text, "run_s", false, "1e-6", "segments[0].run_s: 1e-06 does not match");
    refused(&chip, text, "first", false, "\"nosuch\"", "segments[0].first: names no operator");
    refused(&chip, text, "last", false, "\"relu2\"", "segments[0].stages: expected an array of 3 stages, one per operator");
    refused(&chip, text, "first_core", true, "0", "segments[0].stages[1].first_core: groups must follow each other");
    refused(&chip, text, "exec_s", true, "1e-3", "segments[0].stages[1].exec_s: 0.001 does not match");
    refused(&chip, text, "runs", true, "1", "segments[0].stages[1].runs: must be micro for a streamed stage, else 1");
    refused(&chip, text, "axis", true, "\"m\"",
            "segments[0].stages[1].axis: is not the axis of the output's stream dimension");
    free(text);
}
