/* Tests of what the HTML report draws (src/pipeline/report.c,
 * docs/report.md): round ticks, colour scales fitted to the data, operators
 * collapsed by shape, a schedule's rows by layer (issue 46, item 5). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/pipeline/pipeline.h"
#include "rotor/pipeline/report.h"

Test(report, ticks_of_0_to_9316_are_0_to_10000_in_steps_of_2000) {
    /* the op-times chart of issue 46's BERT-Large: its longest bar */
    rotor_report_axis a;
    rotor_report_axis_fit(0, 9316, 5, &a);
    cr_expect_eq(a.step, 2000);
    cr_expect_eq(a.n, 6);
    for (int i = 0; i < a.n; i++) cr_expect_eq(rotor_report_tick(&a, i), 2000.0 * i, "tick %d", i);
    cr_expect_eq(a.hi, 10000);
}

Test(report, steps_are_1_2_or_5_times_a_power_of_ten) {
    cr_expect_eq(rotor_report_nice_step(1, 5), 0.2);
    cr_expect_eq(rotor_report_nice_step(10, 5), 2);
    cr_expect_eq(rotor_report_nice_step(12, 5), 5);  /* 2.4: 5, not 2.5 */
    cr_expect_eq(rotor_report_nice_step(30, 5), 10); /* 6: 10 */
    cr_expect_eq(rotor_report_nice_step(50, 5), 10); /* exactly 10: kept */
    cr_expect_eq(rotor_report_nice_step(0, 5), 1);
    cr_expect_eq(rotor_report_nice_step(NAN, 5), 1);
}

Test(report, an_axis_off_zero_is_rounded_out_to_whole_steps) {
    rotor_report_axis a;
    rotor_report_axis_fit(54.58, 61.39, 5, &a); /* the heat map's busy shares */
    cr_expect_eq(a.step, 2);
    cr_expect_eq(a.lo, 54);
    cr_expect_eq(a.hi, 62);
    cr_expect_eq(a.n, 5);
    rotor_report_axis_fit(-0.3, 0.3, 5, &a);
    cr_expect_float_eq(a.step, 0.2, 1e-12);
    cr_expect_eq(a.n, 5);                  /* -0.4 .. 0.4 */
    cr_expect_eq(rotor_report_tick(&a, 2), 0); /* exactly zero, not 5.6e-17 */
    rotor_report_axis_fit(7, 7, 5, &a);    /* one value: the unit interval above it */
    cr_expect(a.lo <= 7 && a.hi >= 8 && a.n >= 2);
}

Test(report, a_colour_scale_spans_the_data_min_to_max) {
    /* BERT-Large's cores on ipu-mk2, batch 8: 54.58 to 61.39% busy; on
     * 0..100 they were one colour (issue 46) */
    double v[] = {61.39, 59.54, 54.58, NAN, 61.39};
    rotor_report_scale s;
    rotor_report_scale_fit(v, 5, &s);
    cr_expect_eq(s.lo, 54.58);
    cr_expect_eq(s.hi, 61.39);
    cr_expect_not(s.log);
    cr_expect_eq(rotor_report_scale_at(&s, 54.58), 0);
    cr_expect_eq(rotor_report_scale_at(&s, 61.39), 1);
    cr_expect_float_eq(rotor_report_scale_at(&s, 59.54), (59.54 - 54.58) / (61.39 - 54.58), 1e-12);
    cr_expect_eq(rotor_report_scale_at(&s, 100), 1); /* clamped */
    cr_expect_eq(rotor_report_scale_at(&s, NAN), 0);
}

Test(report, a_colour_scale_over_4x_is_logarithmic_and_a_flat_one_sits_mid_way) {
    double v[] = {1, 10, 100};
    rotor_report_scale s;
    rotor_report_scale_fit(v, 3, &s);
    cr_expect(s.log);
    cr_expect_float_eq(rotor_report_scale_at(&s, 10), 0.5, 1e-12);
    double w[] = {1, 4}; /* exactly 4x: linear */
    rotor_report_scale_fit(w, 2, &s);
    cr_expect_not(s.log);
    double flat[] = {3, 3};
    rotor_report_scale_fit(flat, 2, &s);
    cr_expect_eq(rotor_report_scale_at(&s, 3), 0.5);
}

/* BERT-Large, batch 8 (the report of issue 46's acceptance): 145 operators
 * with plans are 7 shapes (QKV, scores, context, attention out, FFN up and
 * down, x24 each; the pooler once); with the vendor ones, 11. */
Test(report, bert_large_batch_8_collapses_145_operators_into_7_shapes) {
    rotor_pipeline_options po = {.model = "bert-large", .zoo = {.batch = 8}};
    rotor_pipeline p = {0};
    rotor_error err = {{0}};
    cr_assert_eq(rotor_pipeline_run(&po, NULL, &p, &err), ROTOR_OK, "%s", err.msg);
    rotor_report_group *g = NULL;
    int n = 0, *of = malloc(sizeof *of * (size_t)p.graph.nops);
    cr_assert(of);
    cr_assert_eq(rotor_report_groups(&p.graph, NULL, false, &g, &n, of, &err), ROTOR_OK);
    cr_expect_eq(n, 7);
    int counts[] = {24, 24, 24, 24, 24, 24, 1}, total = 0;
    for (int i = 0; i < n && i < 7; i++) {
        cr_expect_eq(g[i].count, counts[i], "shape %d (%s): %d", i, p.graph.ops[g[i].first].name, g[i].count);
        cr_expect_eq(of[g[i].first], i);
        total += g[i].count;
    }
    cr_expect_eq(total, 145);
    cr_expect_str_eq(p.graph.ops[g[0].first].name, "l0.qkv");
    for (int o = 0; o < p.graph.nops; o++) cr_expect_eq(of[o] < 0, p.graph.ops[o].vendor, "op %d", o);
    free(g);
    cr_assert_eq(rotor_report_groups(&p.graph, NULL, true, &g, &n, of, &err), ROTOR_OK);
    cr_expect_eq(n, 11);
    for (int o = 0; o < p.graph.nops; o++) cr_expect_geq(of[o], 0);
    free(g);
    free(of);
    rotor_pipeline_free(&p);
}

/* Layers 1 and 2 share id 1 (Elk §4.4: identical layers), so a row starts
 * at each layer_begin, and where operators outside layers start or end. */
Test(report, a_schedule_has_one_row_per_layer_and_per_run_outside_layers) {
    static const int layer[] = {0, 0, 1, 1, 1, 1, 1, 1, 0, 0};
    static const bool begin[] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 0};
    rotor_schedule_op ops[10];
    memset(ops, 0, sizeof ops);
    for (int o = 0; o < 10; o++) {
        ops[o].layer = layer[o];
        ops[o].layer_begin = begin[o];
    }
    rotor_schedule s = {.nops = 10, .ops = ops};
    int row[10], want[] = {0, 0, 1, 1, 1, 2, 2, 2, 3, 3};
    cr_expect_eq(rotor_report_layer_rows(&s, row), 4);
    for (int o = 0; o < 10; o++) cr_expect_eq(row[o], want[o], "op %d", o);
}
