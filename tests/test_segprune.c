/* test_segprune.c — the pruning of --pipeline's candidate segments
 * (src/compile/segment.c, "Pruning"; issue 45): a candidate whose floor is
 * above what it must beat is dropped before its stages are searched.  The
 * choice must be the one without pruning (rotor_compile_options
 * .pipeline_no_prune), field for field, with fewer stage searches.  Since
 * the time caps ("Time caps" in segment.c), a stage's frontier is searched
 * only when some plan of it runs fast enough for the candidate to win; the
 * counts below are with them (the floor alone, where measured: in a
 * test's comment; the counts changed on 2026-11-30, when a lost hand-off
 * stopped being priced below the hand-off it replaces). */
#include <criterion/criterion.h>

#include <string.h>

#include "fixtures.h"
#include "rotor/pipeline/pipeline.h"
#include "san.h"

/* model at batch with pipelining (at most max_stages a segment, 0: the
 * default), pruned or not, on chip. */
static void compile_pipelined(const char *model, int64_t batch, int64_t seq, int64_t layers, int max_stages,
                              rotor_pipeline_objective objective, bool no_prune, const rotor_chip *chip,
                              rotor_pipeline *p) {
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = model, .zoo = {.batch = batch, .seq = seq, .layers = layers}, .t10 = true};
    po.compile.pipeline = true;
    po.compile.max_stages = max_stages;
    po.compile.objective = objective;
    po.compile.pipeline_no_prune = no_prune;
    cr_assert_eq(rotor_pipeline_run(&po, chip, p, &err), ROTOR_OK, "%s", err.msg);
}

/* The two schedules are the same: every operator's, every segment's and
 * every stage's figures, to the bit. */
static void assert_same_choice(const rotor_compile_result *a, const rotor_compile_result *b) {
    cr_assert_eq(a->total_s, b->total_s, "total %.17g against %.17g", a->total_s, b->total_s);
    cr_assert_eq(a->peak_bytes, b->peak_bytes);
    cr_assert_eq(a->idle_bytes, b->idle_bytes);
    cr_assert_eq(a->nops, b->nops);
    for (int o = 0; o < a->nops; o++) {
        cr_assert_eq(a->ops[o].segment, b->ops[o].segment, "operator %d", o);
        cr_assert_eq(a->ops[o].setup_s, b->ops[o].setup_s, "operator %d", o);
    }
    cr_assert_eq(a->nsegments, b->nsegments);
    for (int s = 0; s < a->nsegments; s++) {
        const rotor_segment *x = &a->segments[s], *y = &b->segments[s];
        cr_assert_eq(x->first, y->first);
        cr_assert_eq(x->last, y->last);
        cr_assert_eq(x->dim, y->dim);
        cr_assert_eq(x->micro, y->micro);
        cr_assert_eq(x->total_s, y->total_s);
        cr_assert_eq(x->interval_s, y->interval_s);
        cr_assert_eq(x->peak_bytes, y->peak_bytes);
        for (int k = 0; k < x->nstages; k++) {
            cr_assert_eq(x->stages[k].first_core, y->stages[k].first_core);
            cr_assert_eq(x->stages[k].cores, y->stages[k].cores);
            cr_assert_eq(x->stages[k].exec_s, y->stages[k].exec_s);
            cr_assert(!memcmp(&x->stages[k].plan.plan, &y->stages[k].plan.plan, sizeof x->stages[k].plan.plan),
                      "segment %d stage %d: another plan", s, k);
        }
    }
}

/* Pruned and unpruned compiles of one model: the same choice, nseg
 * segments, and the stage searches each made.  Under the sanitizers
 * (tests/san.h) only the bert test (with_all) compiles unpruned too: the
 * others compile pruned and check its segments and search count, the
 * sanitizers' business being memory errors in the pruning code; the
 * unpruned compile, two thirds of each test's time, searches every stage
 * of the same candidates.  The plain build compares every choice. */
static void check_model(const char *model, int64_t batch, int64_t seq, int64_t layers, int max_stages,
                        rotor_pipeline_objective objective, const rotor_chip *chip, int nseg, int searched,
                        int searched_all, bool with_all) {
    rotor_pipeline pruned, all;
    compile_pipelined(model, batch, seq, layers, max_stages, objective, false, chip, &pruned);
    cr_assert_eq(pruned.t10.nsegments, nseg, "%s: %d segments", model, pruned.t10.nsegments);
    cr_assert_eq(pruned.t10.pipeline_searches, searched, "%s: %d stage searches pruned", model,
                 pruned.t10.pipeline_searches);
    if (!ROTOR_TEST_SAN || with_all) {
        compile_pipelined(model, batch, seq, layers, max_stages, objective, true, chip, &all);
        assert_same_choice(&pruned.t10, &all.t10);
        cr_assert_eq(all.t10.pipeline_searches, searched_all, "%s: %d stage searches unpruned", model,
                     all.t10.pipeline_searches);
        rotor_pipeline_free(&all);
    }
    rotor_pipeline_free(&pruned);
}

Test(segprune, nerf_at_batch_8_keeps_its_segment_with_fewer_searches) {
    rotor_chip chip = mk2();
    check_model("nerf", 8, 0, 0, 2, ROTOR_OBJECTIVE_LATENCY, &chip, 1, 74, 176, false);
}

Test(segprune, the_throughput_objective_prunes_by_the_interval) {
    /* by throughput NeRF at batch 8 runs four segments (five before each
     * batch paid its setup again, 2026-12-02; 79 searches pruned) */
    rotor_chip chip = mk2();
    check_model("nerf", 8, 0, 0, 2, ROTOR_OBJECTIVE_THROUGHPUT, &chip, 4, 86, 176, false);
}

Test(segprune, bert_keeps_its_two_segments) {
    /* two BERT-Base layers at batch 4, 32 tokens (at batch 1, 128 tokens
     * nothing pipelines: test_segment.c) */
    rotor_chip chip = mk2();
    check_model("bert-base", 4, 32, 2, 0, ROTOR_OBJECTIVE_LATENCY, &chip, 2, 44, 95, true);
}

Test(segprune, a_mesh_prunes_without_the_move_floors) {
    /* on a mesh a move is an exchange over the whole mesh (no floor is
     * taken for it), the run and setup floors still hold */
    rotor_chip chip;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2-mesh", &chip, &err), ROTOR_OK, "%s", err.msg);
    check_model("bert-base", 1, 0, 1, 0, ROTOR_OBJECTIVE_LATENCY, &chip, 0, 34, 61, false); /* the floor alone: 44 */
}

Test(segprune, the_time_caps_keep_nerfs_three_stage_choice) {
    /* three stages a segment: the candidates close to the winner are many,
     * and their stages' frontiers are searched only when a plan runs within
     * the cap (the floor alone: 163 searches) */
    rotor_chip chip = mk2();
    check_model("nerf", 8, 0, 0, 3, ROTOR_OBJECTIVE_LATENCY, &chip, 1, 116, 272, false);
}

Test(segprune, walks_in_a_tight_budget_choose_as_the_frontier) {
    /* MLP-L at batch 64 on an IPU of 20,000 B a core: the stages' budgets
     * are tight, the fastest plan of a stage often does not fit, and 8
     * stages fit no frontier point (the fallback's capped search).  Pruned,
     * the stages walk the frontier's chain from the budget down ("Walks" in
     * segment.c); unpruned, they search whole frontiers: the same plans,
     * and the count the searching path makes (53, main's binary printed
     * the same before walks) */
    rotor_chip chip = mk2();
    chip.sram_bytes = 20000;
    check_model("mlp-l", 64, 0, 0, 0, ROTOR_OBJECTIVE_LATENCY, &chip, 1, 53, 198, false);
}
