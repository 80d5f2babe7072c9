/* Tests of pipeline.c: one call runs the stages a subcommand used to chain by
 * hand, with the same results, and stops where it should. */
#include <criterion/criterion.h>
#include <string.h>

#include "rotor/pipeline/pipeline.h"
#include "fixtures.h"

static const rotor_zoo_options small_bert = {.layers = 1, .seq = 16, .batch = 2};

Test(pipeline, compile_and_program_equal_the_stages_chained_by_hand) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    /* by hand: load, group, compile, vgm */
    rotor_graph raw, g;
    cr_assert_eq(rotor_zoo_build("bert-base", &small_bert, &raw, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&raw, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(&g, &chip, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    rotor_vgm_result v;
    cr_assert_eq(rotor_vgm_compile(&g, &chip, ROTOR_VGM_ROLLER, &v, &err), ROTOR_OK, "%s", err.msg);
    /* in one call */
    rotor_pipeline_options po = {.model = "bert-base", .zoo = small_bert, .t10 = true, .vgm = true, .program = true};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.graph.nops, g.nops);
    cr_assert_eq(p.group.ops_before, raw.nops);
    cr_assert_eq(p.group.ops_after, g.nops);
    cr_assert_eq(p.t10.total_s, r.total_s);
    cr_assert_eq(p.t10.peak_bytes, r.peak_bytes);
    cr_assert_eq(p.vgm_status, ROTOR_OK);
    cr_assert_eq(p.vgm.total_s, v.total_s);
    /* the program read back holds every operator with the compile's total */
    cr_assert_eq(p.program.nops, g.nops);
    cr_assert_float_eq(p.program.total_s, r.total_s, 1e-12 * r.total_s);
    cr_assert_null(p.schedule);
    rotor_pipeline_free(&p);
    rotor_vgm_result_free(&v);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
    rotor_graph_free(&raw);
}

Test(pipeline, no_group_stops_after_loading_and_needs_no_chip) {
    rotor_error err = {{0}};
    rotor_graph raw;
    cr_assert_eq(rotor_zoo_build("bert-base", &small_bert, &raw, &err), ROTOR_OK, "%s", err.msg);
    rotor_pipeline_options po = {.model = "bert-base", .zoo = small_bert, .no_group = true};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, NULL, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.graph.nops, raw.nops);
    cr_assert_eq(p.group.ops_before, 0);
    cr_assert_eq(p.t10.nops, 0);
    rotor_pipeline_free(&p);
    rotor_graph_free(&raw);
}

Test(pipeline, a_failed_load_names_the_model_and_leaves_a_graph_to_free) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "no-such-model", .t10 = true};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "unknown model 'no-such-model'"), "%s", err.msg);
    cr_assert_eq(p.graph.nops, 0);
    rotor_pipeline_free(&p);
    rotor_pipeline_free(&p); /* freeing twice is harmless: free zeroes */
}

Test(pipeline, onnx_dims_are_refused_for_zoo_models) {
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "bert-base", .onnx = {.dims = "batch=2"}};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, NULL, &p, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "shape ONNX files"), "%s", err.msg);
    rotor_pipeline_free(&p);
    static const char *const v[1] = {"shape=1,2"};
    rotor_pipeline_options pv = {.model = "bert-base", .onnx = {.values = v, .nvalues = 1}};
    cr_assert_eq(rotor_pipeline_run(&pv, NULL, &p, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "--dim, --input and --value shape ONNX files"), "%s", err.msg);
    rotor_pipeline_free(&p);
}

Test(pipeline, compiling_without_a_chip_or_a_program_without_t10_is_refused) {
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_pipeline_options po = {.model = "bert-base", .t10 = true};
    cr_assert_eq(rotor_pipeline_run(&po, NULL, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "pipeline: compiling or scheduling needs a chip");
    rotor_pipeline_free(&p);
    rotor_chip chip = mk2();
    po = (rotor_pipeline_options){.model = "bert-base", .program = true};
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "pipeline: a program comes from the T10 compile");
    rotor_pipeline_free(&p);
}

Test(pipeline, a_baseline_that_does_not_fit_is_reported_apart_from_t10) {
    /* 4 KB of SRAM per core: T10 finds no fit, and neither does VGM; the
     * run's status is T10's, the baseline keeps its own */
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(&chip, "sram_bytes=4096", &err), ROTOR_OK, "%s", err.msg);
    rotor_pipeline_options po = {.model = "bert-base", .zoo = small_bert, .t10 = true, .vgm = true};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_NOFIT, "%s", err.msg);
    cr_assert_eq(p.vgm_status, ROTOR_ERR_NOFIT, "%s", p.vgm_err.msg);
    cr_assert_neq(p.vgm_err.msg[0], '\0');
    rotor_pipeline_free(&p);
}

Test(pipeline, model_names_with_a_slash_or_onnx_suffix_are_files) {
    cr_assert(rotor_model_is_onnx("m.onnx"));
    cr_assert(rotor_model_is_onnx("dir/model"));
    cr_assert_not(rotor_model_is_onnx("bert-base"));
    cr_assert_not(rotor_model_is_onnx(".onnx")); /* a zoo-style name of 5 characters */
}

Test(pipeline, schedule_stage_builds_the_hbm_schedule_of_the_grouped_graph) {
    rotor_chip chip;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &chip, NULL), ROTOR_OK);
    rotor_zoo_options zo = {.layers = 1, .batch = 8, .phase = ROTOR_PHASE_DECODE};
    rotor_schedule_options so = {0};
    rotor_pipeline_options po = {.model = "llama2-13b", .zoo = zo, .schedule = &so};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_not_null(p.schedule);
    /* by hand, for the operator count */
    rotor_graph raw, g;
    cr_assert_eq(rotor_zoo_build("llama2-13b", &zo, &raw, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&raw, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_schedule *s;
    cr_assert_eq(rotor_schedule_build(&g, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(p.schedule->nops, s->nops);
    for (int i = 0; i < s->nops; i++) cr_assert_eq(p.schedule->ops[i].hbm_bytes, s->ops[i].hbm_bytes, "op %d", i);
    rotor_schedule_free(s);
    rotor_graph_free(&g);
    rotor_graph_free(&raw);
    rotor_pipeline_free(&p);
}

/* An ONNX file whose one node (Shape) folds to a constant: a graph with no
 * operators, which rotor run executes all the same. */
#define EMPTY_ONNX "/usr/share/libonnx-testdata/data/node/test_shape/model.onnx"

Test(pipeline, a_graph_with_no_operators_compiles_to_an_empty_program) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = EMPTY_ONNX, .no_group = true, .t10 = true, .program = true,
                                 .allow_empty = true, .compile = {.solver = ROTOR_SOLVER_FAST}};
    rotor_pipeline p;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(p.loaded);
    cr_assert_eq(p.graph.nops, 0);
    cr_assert_gt(p.graph.nvalues, 0, "the folded constants are the graph");
    /* the compile's result and the program: no operator, every total zero */
    cr_assert_eq(p.t10.nops, 0);
    cr_assert_null(p.t10.ops);
    cr_assert_eq(p.t10.total_s, 0);
    cr_assert_eq(p.t10.peak_bytes, 0);
    cr_assert_eq(p.t10.solver, ROTOR_SOLVER_FAST);
    cr_assert_eq(p.program.nops, 0);
    cr_assert_null(p.program.ops);
    cr_assert_eq(p.program.nsegments, 0);
    cr_assert_eq(p.program.total_s, 0);
    cr_assert_eq(p.program.idle_bytes, 0);
    /* named as a compiled program would be */
    cr_assert_str_eq(p.program.model, p.graph.name);
    cr_assert_str_eq(p.program.chip, chip.name);
    cr_assert_eq(p.program.cores, rotor_chip_cores(&chip));
    cr_assert_eq(p.program.solver, ROTOR_SOLVER_FAST);
    rotor_pipeline_free(&p);
    /* without allow_empty the compile refuses it, after a good load */
    po.allow_empty = false;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "has no operators"), "%s", err.msg);
    cr_assert(p.loaded);
    cr_assert_eq(p.program.nops, 0);
    rotor_pipeline_free(&p);
    /* a load that fails leaves loaded false */
    po.model = "no-such-dir/none.onnx";
    cr_assert_neq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK);
    cr_assert(!p.loaded);
    rotor_pipeline_free(&p);
}
