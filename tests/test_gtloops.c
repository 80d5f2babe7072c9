/* GraphTurbo §5.1's loop execution within a cluster
 * (src/pipeline/gtloops.c; docs/graphturbo.md, "Loop execution within a
 * cluster"): each step of the DSA schedule at its fastest number of passes
 * of the batch a cluster. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "rotor/pipeline/pipeline.h"

static rotor_chip stcp920(void) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("stcp920", &chip, &err), ROTOR_OK);
    return chip;
}

/* `rotor compile MODEL --chip stcp920 --group graphturbo --batch B [--seq S]`
 * as the CLI runs it, with or without the loops. */
static void run(const char *model, int64_t seq, int64_t batch, bool loops, rotor_pipeline *p) {
    rotor_chip chip = stcp920();
    rotor_error err = {{0}};
    rotor_pipeline_options o = {.model = model, .simplify = true, .graphturbo = true, .dsa_loops = loops};
    o.zoo.batch = batch;
    o.zoo.seq = seq;
    o.zoo.phase = ROTOR_PHASE_PREFILL;
    cr_assert_eq(rotor_pipeline_run(&o, &chip, p, &err), ROTOR_OK, "%s at %lld: %s", model, (long long)batch, err.msg);
}

/* BERT-128 at 8 a cluster (Table 2's batch): one pass spills the FFN's
 * intermediate and 74 values to DDR (179.9 ms); two passes of 4 keep every
 * value but the model's input and output on the chip and take 2 x 21.3 ms,
 * though each reads BERT-Large's weights from DDR again.  The per-layer
 * baseline is fastest in one pass. */
Test(gtloops, bert_128_at_8_a_cluster_runs_fastest_as_two_passes_of_4) {
    rotor_pipeline p, four;
    run("bert-large", 128, 8, true, &p);
    run("bert-large", 128, 4, false, &four);
    const rotor_dsa_loops *l = &p.loops;
    cr_assert(l->ran && !l->file_batch);
    cr_assert_eq(l->batch, 8);
    cr_assert_eq(l->tried, 4, "1, 2, 4 and 8 passes");
    const rotor_dsa_loop *g = &l->step[ROTOR_DSA_GRAPHTURBO];
    cr_assert_eq(g->passes, 2);
    cr_assert_eq(rotor_dsa_loop_s(g), 2 * four.dsa[ROTOR_DSA_GRAPHTURBO].seconds);
    cr_assert_eq(g->pass.tensors[ROTOR_GT_DDR], 1, "nothing but the model's output");
    cr_assert_eq(g->pass.input_values, 1);
    cr_assert_eq(p.dsa[ROTOR_DSA_GRAPHTURBO].tensors[ROTOR_GT_DDR], 73, "one pass of 8");
    cr_assert_lt(rotor_dsa_loop_s(g) * 4, p.dsa[ROTOR_DSA_GRAPHTURBO].seconds, "over 4x faster than one pass");
    const rotor_dsa_loop *b = &l->step[ROTOR_DSA_PER_LAYER];
    cr_assert_eq(b->passes, 1);
    cr_assert_eq(rotor_dsa_loop_s(b), p.dsa[ROTOR_DSA_PER_LAYER].seconds);
    rotor_pipeline_free(&four);
    rotor_pipeline_free(&p);
}

/* The property, on models and batches with several divisors: each step's
 * loop is the fastest of passes x one pass at batch / passes over every
 * divisor, the fewest passes on a tie, never slower than one pass; its
 * pass is that run's schedule (time and values in DDR). */
Test(gtloops, each_step_takes_the_fastest_number_of_passes) {
    static const struct {
        const char *model;
        int64_t batch;
    } cases[] = {{"resnet-18", 12}, {"mobilenet-v2", 8}, {"resnet-50", 16}};
    int looped = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rotor_pipeline p;
        run(cases[c].model, 0, cases[c].batch, true, &p);
        double best[ROTOR_DSA_STEPS];
        int64_t passes[ROTOR_DSA_STEPS];
        int ddr[ROTOR_DSA_STEPS], tried = 0;
        for (int64_t n = 1; n <= cases[c].batch; n++) {
            if (cases[c].batch % n) continue;
            rotor_pipeline q;
            run(cases[c].model, 0, cases[c].batch / n, false, &q);
            tried++;
            for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
                double s = (double)n * q.dsa[k].seconds;
                if (n == 1 || rotor_dsa_faster(s, best[k])) best[k] = s, passes[k] = n, ddr[k] = q.dsa[k].tensors[ROTOR_GT_DDR];
            }
            rotor_pipeline_free(&q);
        }
        cr_assert_eq(p.loops.tried, tried, "%s", cases[c].model);
        for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
            const rotor_dsa_loop *l = &p.loops.step[k];
            cr_assert_eq(l->passes, passes[k], "%s %s", cases[c].model, rotor_dsa_step_name((rotor_dsa_step)k));
            cr_assert_eq(rotor_dsa_loop_s(l), best[k], "%s %s", cases[c].model, rotor_dsa_step_name((rotor_dsa_step)k));
            cr_assert_eq(l->pass.tensors[ROTOR_GT_DDR], ddr[k]);
            cr_assert_leq(rotor_dsa_loop_s(l), p.dsa[k].seconds);
            looped += l->passes > 1;
        }
        rotor_pipeline_free(&p);
    }
    cr_assert_geq(looped, 4, "some step loops (%d)", looped); /* ResNet-50's four DSA steps when written */
}

/* Nothing to split: at batch 1 the loop is the one pass, and an ONNX
 * file's batch is the file's (one pass, said so). */
Test(gtloops, one_image_and_an_onnx_file_run_in_one_pass) {
    rotor_pipeline p;
    run("resnet-18", 0, 1, true, &p);
    cr_assert_eq(p.loops.tried, 1);
    for (int k = 0; k < ROTOR_DSA_STEPS; k++) {
        cr_assert_eq(p.loops.step[k].passes, 1);
        cr_assert_eq(rotor_dsa_loop_s(&p.loops.step[k]), p.dsa[k].seconds);
    }
    rotor_pipeline_free(&p);
    run("examples/tiny-cnn.onnx", 0, 4, true, &p);
    cr_assert(p.loops.ran && p.loops.file_batch);
    cr_assert_eq(p.loops.batch, 0, "the file's batch, not the zoo option's 4");
    cr_assert_eq(p.loops.tried, 1);
    cr_assert_eq(p.loops.step[ROTOR_DSA_GRAPHTURBO].passes, 1);
    rotor_pipeline_free(&p);
}

/* Without dsa_loops nothing is looped (rotor run, simulate and the ICCA
 * path never ask for it). */
Test(gtloops, without_the_option_the_pipeline_leaves_the_loops_empty) {
    rotor_pipeline p;
    run("resnet-18", 0, 4, false, &p);
    cr_assert(!p.loops.ran);
    cr_assert_eq(p.loops.tried, 0);
    rotor_pipeline_free(&p);
}

/* The choice's comparison: faster only beyond a relative 1e-9, so two
 * schedules that sum the same times in another order tie, and a tie keeps
 * the fewer passes. */
Test(gtloops, times_within_rounding_tie_and_a_tie_keeps_fewer_passes) {
    cr_assert(!rotor_dsa_faster(1.0 - 6e-15, 1.0), "ViT-Large's instances against lb: a tie");
    cr_assert(!rotor_dsa_faster(1.0, 1.0));
    cr_assert(rotor_dsa_faster(1.0 - 2e-9, 1.0));
    cr_assert(!rotor_dsa_faster(1.0, 1.0 - 2e-9));
    /* the same in the ratios: speedups over the first step, gains over the one before */
    double s[ROTOR_DSA_STEPS] = {8, 4, 4, 2, 1}, up[ROTOR_DSA_STEPS], gain[ROTOR_DSA_STEPS];
    rotor_dsa_ratios(s, up, gain);
    cr_assert(up[0] == 1 && up[1] == 2 && up[3] == 4 && up[4] == 8);
    cr_assert(gain[0] == 1 && gain[1] == 2 && gain[2] == 1 && gain[3] == 2 && gain[4] == 2);
}

/* Loops of a pipeline that ran no GraphTurbo steps are refused, and a
 * failed call leaves them empty (all or nothing). */
Test(gtloops, loops_without_the_steps_are_refused_and_left_empty) {
    rotor_pipeline p;
    run("resnet-18", 0, 4, false, &p);
    rotor_chip chip = stcp920();
    rotor_error err = {{0}};
    rotor_pipeline_options o = {.model = "resnet-18", .zoo = {.batch = 4}};
    cr_assert_eq(rotor_pipeline_dsa_loops(&o, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "loops: the pipeline ran no GraphTurbo steps to loop");
    cr_assert(!p.loops.ran);
    cr_assert_eq(p.loops.tried, 0);
    rotor_pipeline_free(&p);
}

/* The loops replayed (rotor simulate --group graphturbo): a step in one
 * pass is the plain replay; BERT-128's graphturbo step in two passes of 4
 * is twice the replay of the model built at 4, its model time the loops'
 * own.  The replay finds that pass 8.6 % slower than the model (the
 * cross-layer overlap at 4 sentences; docs/simulator.md, "Agreement"),
 * still 3.9x faster than one pass of 8 replayed. */
Test(gtloops, the_loops_replay_as_passes_times_one_pass) {
    rotor_pipeline p, four;
    run("bert-large", 128, 8, true, &p);
    run("bert-large", 128, 4, false, &four);
    rotor_chip chip = stcp920();
    rotor_error err = {{0}};
    rotor_pipeline_options o = {.model = "bert-large", .simplify = true, .graphturbo = true, .dsa_loops = true};
    o.zoo.batch = 8, o.zoo.seq = 128, o.zoo.phase = ROTOR_PHASE_PREFILL;
    rotor_gtreplay_result lr[ROTOR_DSA_STEPS], one, pass;
    cr_assert_eq(rotor_pipeline_dsa_loops_replay(&o, &chip, &p, NULL, lr, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_gtreplay_run(&p.graph, &p.cluster, ROTOR_DSA_PER_LAYER, &one, &err), ROTOR_OK);
    cr_assert_eq(lr[ROTOR_DSA_PER_LAYER].simulated_s, one.simulated_s, "one pass: the plain replay");
    cr_assert_eq(rotor_gtreplay_run(&four.graph, &four.cluster, ROTOR_DSA_GRAPHTURBO, &pass, &err), ROTOR_OK);
    const rotor_gtreplay_result *g = &lr[ROTOR_DSA_GRAPHTURBO];
    cr_assert_eq(g->simulated_s, 2 * pass.simulated_s);
    cr_assert_eq(g->model_s, rotor_dsa_loop_s(&p.loops.step[ROTOR_DSA_GRAPHTURBO]));
    cr_assert_eq(g->tasks, pass.tasks, "tasks of one pass");
    double diff = g->simulated_s / g->model_s - 1;
    cr_assert(diff > 0.085 && diff < 0.087, "%.4f", diff);
    rotor_gtreplay_result whole;
    cr_assert_eq(rotor_gtreplay_run(&p.graph, &p.cluster, ROTOR_DSA_GRAPHTURBO, &whole, &err), ROTOR_OK);
    cr_assert_gt(whole.simulated_s, 3.9 * g->simulated_s);
    /* the caller's one-pass replays are taken for the steps in one pass,
     * checked as a pass is: a replay of another schedule is refused */
    rotor_gtreplay_result given[ROTOR_DSA_STEPS];
    for (int k = 0; k < ROTOR_DSA_STEPS; k++)
        cr_assert_eq(rotor_gtreplay_run(&p.graph, &p.cluster, (rotor_dsa_step)k, &given[k], &err), ROTOR_OK);
    given[ROTOR_DSA_PER_LAYER].tasks = 7; /* a mark: taken, not replayed again */
    cr_assert_eq(rotor_pipeline_dsa_loops_replay(&o, &chip, &p, given, lr, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(lr[ROTOR_DSA_PER_LAYER].tasks, 7);
    cr_assert_eq(lr[ROTOR_DSA_GRAPHTURBO].simulated_s, g->simulated_s, "the passes replayed as before");
    given[ROTOR_DSA_PER_LAYER].model_s *= 2;
    cr_assert_eq(rotor_pipeline_dsa_loops_replay(&o, &chip, &p, given, lr, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "loops: step per-layer in passes of 8 timed "), "%s", err.msg);
    /* a pass built with other options than the loops' is another schedule: refused, naming the passes */
    rotor_pipeline_options other = o;
    other.zoo.seq = 64;
    cr_assert_eq(rotor_pipeline_dsa_loops_replay(&other, &chip, &p, NULL, lr, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "GraphTurbo's loop of 2 passes of 4 a cluster: loops: step gb in passes of 4 timed "),
              "%s", err.msg);
    /* before the loops are chosen: refused */
    cr_assert_eq(rotor_pipeline_dsa_loops_replay(&o, &chip, &four, NULL, lr, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "loops: replayed before rotor_pipeline_dsa_loops chose them");
    rotor_pipeline_free(&four);
    rotor_pipeline_free(&p);
}

/* Which values the graphturbo step keeps where (rotor_pipeline_dsa_values,
 * `rotor compile --values`): ResNet-50 at 16 a cluster runs as 2 passes of
 * 8, and of a pass's 56 activation values 3 are in DDR: the model's output,
 * and two that wait across stage 2's first block, its input (s1.b3.relu,
 * 25 of its 32 blocks) and conv3's output beside it (6 of 8), for the
 * downsample's residual (docs/graphturbo.md, "Which values"). */
Test(gtloops, the_values_in_ddr_are_named_in_the_pass_the_loops_chose) {
    rotor_chip chip = stcp920();
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_pipeline_options o = {.model = "resnet-50", .simplify = true, .graphturbo = true, .dsa_loops = true,
                                .dsa_values = true};
    o.zoo.batch = 16;
    cr_assert_eq(rotor_pipeline_run(&o, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.values_passes, 2);
    cr_assert_eq(p.loops.step[ROTOR_DSA_GRAPHTURBO].passes, 2);
    const char *ddr[3] = {"s1.b3.relu", "s2.b0.conv3.bn", "fc.biased"};
    const int64_t spilled[3] = {25, 6, 1}, blocks[3] = {32, 8, 1};
    int count[3] = {0}, nddr = 0;
    for (int i = 0; i < p.nvalues; i++) {
        const rotor_dsa_value *v = &p.values[i];
        count[v->level]++;
        int64_t sum = v->blocks[0] + v->blocks[1] + v->blocks[2];
        /* a sub-graph's output at the lowest level a block of it went to */
        if (!v->intermediate) {
            cr_assert_eq(sum, v->instances, "%s", p.graph.values[v->value].name);
            int lowest = v->blocks[ROTOR_GT_DDR] ? ROTOR_GT_DDR : v->blocks[ROTOR_GT_GB] ? ROTOR_GT_GB : ROTOR_GT_LB;
            cr_assert_eq((int)v->level, lowest, "%s", p.graph.values[v->value].name);
        } else {
            cr_assert_eq(sum, 0);
            cr_assert_neq(v->level, ROTOR_GT_DDR);
        }
        if (v->level != ROTOR_GT_DDR) continue;
        cr_assert_lt(nddr, 3);
        cr_assert_str_eq(p.graph.values[v->value].name, ddr[nddr]);
        cr_assert_eq(v->blocks[ROTOR_GT_DDR], spilled[nddr], "%s", ddr[nddr]);
        cr_assert_eq(v->instances, blocks[nddr], "%s", ddr[nddr]);
        /* a pass's bytes: stage 1's output at 8 images (not 16), 512 x 28 x 28 at 2 bytes */
        if (nddr == 0) cr_assert_eq(v->bytes, (int64_t)8 * 512 * 28 * 28 * 2);
        nddr++;
    }
    cr_assert_eq(nddr, 3);
    cr_assert_eq(p.nvalues, 56);
    for (int k = 0; k < 3; k++) cr_assert_eq(count[k], p.loops.step[ROTOR_DSA_GRAPHTURBO].pass.tensors[k]);
    rotor_pipeline_free(&p);
}

/* Without the loops the values are the one pass's, the step's counts. */
Test(gtloops, without_loops_the_values_are_the_batchs_one_pass) {
    rotor_chip chip = stcp920();
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_pipeline_options o = {.model = "mobilenet-v2", .simplify = true, .graphturbo = true, .dsa_values = true};
    o.zoo.batch = 4;
    cr_assert_eq(rotor_pipeline_run(&o, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.values_passes, 1);
    int count[3] = {0};
    for (int i = 0; i < p.nvalues; i++) {
        count[p.values[i].level]++;
        cr_assert_eq(p.values[i].bytes, p.graph.values[p.values[i].value].bytes);
    }
    for (int k = 0; k < 3; k++) cr_assert_eq(count[k], p.dsa[ROTOR_DSA_GRAPHTURBO].tensors[k]);
    cr_assert_gt(p.nvalues, 50);
    rotor_pipeline_free(&p);
}
